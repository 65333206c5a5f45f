-- name: rndcg_gains
-- title: NDCG averaged at the gain levels, with custom gains of the relevance levels (trec_eval's Rndcg.1=3,2=9)
-- definition: rndcg with each item's gain set by its relevance level (a level given in gains takes that gain, 0 or negative allowed; a level not given its relevance when relevant, else 0; an item the interactions do not judge 0), over the whole list of n items: the mean of ndcg at each point b of the ideal list (the judged items by gain descending, positive gains only, G_u of them) where the gain changes or the list ends (dcg of positions 1..min(b, n) / the ideal dcg of 1..b), plus, when n > G_u + 1, the point dcg of the whole list / the ideal dcg of all G_u. 0 without a relevant item, and 0 when the user has relevant items but none of positive gain (no point: 0 / 0, which trec_eval prints -nan and sqlmetrics' trec_eval report too). Without gains it is rndcg.
-- formula: \frac{1}{|B| + [n > G_u + 1]} \Big( \sum_{b \in B} \frac{\mathrm{DCG}_{1..\min(b, n)}}{\mathrm{IDCG}_{1..b}} + [n > G_u + 1] \frac{\mathrm{DCG}_{1..n}}{\mathrm{IDCG}_{1..G_u}} \Big)
-- cutoff: none
-- parameters: gains={}
-- asked_as: rndcg
-- reads: judgements
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- references: trec_eval `Rndcg` with rel_level=gain parameters (m_Rndcg.c, gain_init.c: a level not given keeps gain = level; the ideal order sorts the levels by gain and stops at a gain of 0 or less; two levels of one gain make one point; 0 when no rel reaches -l; its comparator truncates the difference of two gains to an integer, so two levels whose gains differ by less than 1 may take either order in its ideal list, where sqlmetrics sorts by the gain); Jarvelin & Kekalainen (2002)
SELECT
  user_id,
  CASE
    WHEN MAX(n_relevant) = 0 THEN 0
    ELSE (
      SUM(CASE WHEN pos IS NOT NULL THEN gain / LOG2(pos + 1) * gains_level_weight_at_pos ELSE 0 END)
      + CASE
        WHEN MAX(list_length) > COUNT(ideal_gain_pos) + 1
          THEN SUM(CASE WHEN pos IS NOT NULL THEN gain / LOG2(pos + 1) ELSE 0 END)
          / NULLIF(
            SUM(CASE WHEN ideal_gain_pos IS NOT NULL THEN gain / LOG2(ideal_gain_pos + 1) ELSE 0 END), 0
          )
        ELSE 0
      END
    )
    / NULLIF(
      COUNT(DISTINCT CASE WHEN ideal_gain_pos IS NOT NULL THEN gain END)
      + CASE WHEN MAX(list_length) > COUNT(ideal_gain_pos) + 1 THEN 1 ELSE 0 END,
      0
    )
  END AS rndcg_gains
FROM judgements
GROUP BY user_id
