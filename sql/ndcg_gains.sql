-- name: ndcg_gains
-- title: NDCG with custom gains of the relevance levels (trec_eval's ndcg.1=3,2=9)
-- definition: dcg@k / idcg@k with each item's gain set by its relevance level: a level given in gains takes that gain (0 or negative allowed: a negative gain lowers the DCG), a level not given its relevance when relevant, else 0; an item the interactions do not judge 0. dcg@k sums gain_i / log2(i + 1) over positions i <= k; idcg@k the same over the user's judged items sorted by gain descending, first k, those of positive gain only; 0 when idcg is 0. Without gains it is ndcg.
-- formula: \mathrm{nDCG@}k = \frac{\sum_{i=1}^{k} g(\mathrm{rel}_i) / \log_2(i + 1)}{\sum_{i=1}^{k} g_{(i)}^{+} / \log_2(i + 1)}, \qquad g_{(i)}^{+} \text{ the user's } i\text{-th largest positive gain}
-- cutoff: optional
-- parameters: gains={}
-- asked_as: ndcg
-- reads: judgements
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: ndcg_custom_gains
-- references: trec_eval `ndcg` with rel_level=gain parameters (m_ndcg.c, gain_init.c: a level not given keeps gain = level; the ideal order sorts the levels by gain; the -l level does not apply; its comparator truncates the difference of two gains to an integer, so two levels whose gains differ by less than 1 may take either order in its ideal list, where sqlmetrics sorts by the gain); ir_measures `nDCG(gains={0:0,1:3,2:9})@10` (rewrites the qrels' rel through gains for pytrec_eval: the same for gains of at least 0, a negative gain counts 0 there); Jarvelin & Kekalainen (2002)
SELECT
  user_id,
  COALESCE(
    SUM(CASE WHEN pos <= $k THEN gain / LOG2(pos + 1) ELSE 0 END)
    / NULLIF(SUM(CASE WHEN ideal_gain_pos <= $k THEN gain / LOG2(ideal_gain_pos + 1) ELSE 0 END), 0),
    0
  ) AS ndcg_gains
FROM judgements
GROUP BY user_id
