-- name: ndcg_rel_gains
-- title: NDCG averaged over the items of positive gain, with custom gains of the relevance levels (trec_eval's ndcg_rel.1=3,2=9)
-- definition: ndcg_rel with each item's gain set by its relevance level (a level given in gains takes that gain, 0 or negative allowed; a level not given its relevance when relevant, else 0; an item the interactions do not judge 0), over the whole list of n items: the mean over the user's G_u judged items of positive gain of an ndcg: for one listed at position i, dcg of positions 1..i / the ideal dcg of positions 1..min(i, G_u) (the ideal: the judged items by gain descending, positive gains only); for one not listed, dcg of the whole list / the ideal dcg of all G_u. 0 when that sum is 0 or less (a negative gain can make it so) or G_u is 0. Without gains it is ndcg_rel.
-- formula: \frac{1}{G_u} \Big( \sum_{i \le n,\ g_i > 0} \frac{\mathrm{DCG}_{1..i}}{\mathrm{IDCG}_{1..\min(i, G_u)}} + (G_u - |\{i \le n : g_i > 0\}|) \frac{\mathrm{DCG}_{1..n}}{\mathrm{IDCG}_{1..G_u}} \Big)
-- cutoff: none
-- parameters: gains={}
-- asked_as: ndcg_rel
-- reads: judgements
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- references: trec_eval `ndcg_rel` with rel_level=gain parameters (m_ndcg_rel.c, gain_init.c: a level not given keeps gain = level; the ideal order sorts the levels by gain and stops at a gain of 0 or less; relevant means a positive gain; a sum of 0 or less leaves the value 0; the -l level does not apply; its comparator truncates the difference of two gains to an integer, so two levels whose gains differ by less than 1 may take either order in its ideal list, where sqlmetrics sorts by the gain); Jarvelin & Kekalainen (2002)
SELECT
  user_id,
  CASE
    WHEN
      SUM(CASE WHEN pos IS NOT NULL AND gain > 0 THEN gains_dcg_so_far / gains_ideal_dcg_at_pos ELSE 0 END)
      + (COUNT(ideal_gain_pos) - SUM(CASE WHEN pos IS NOT NULL AND gain > 0 THEN 1 ELSE 0 END))
      * SUM(CASE WHEN pos IS NOT NULL THEN gain / LOG2(pos + 1) ELSE 0 END)
      / NULLIF(SUM(CASE WHEN ideal_gain_pos IS NOT NULL THEN gain / LOG2(ideal_gain_pos + 1) ELSE 0 END), 0)
      > 0
      THEN (
        SUM(CASE WHEN pos IS NOT NULL AND gain > 0 THEN gains_dcg_so_far / gains_ideal_dcg_at_pos ELSE 0 END)
        + (COUNT(ideal_gain_pos) - SUM(CASE WHEN pos IS NOT NULL AND gain > 0 THEN 1 ELSE 0 END))
        * SUM(CASE WHEN pos IS NOT NULL THEN gain / LOG2(pos + 1) ELSE 0 END)
        / NULLIF(SUM(CASE WHEN ideal_gain_pos IS NOT NULL THEN gain / LOG2(ideal_gain_pos + 1) ELSE 0 END), 0)
      ) / COUNT(ideal_gain_pos)
    ELSE 0
  END AS ndcg_rel_gains
FROM judgements
GROUP BY user_id
