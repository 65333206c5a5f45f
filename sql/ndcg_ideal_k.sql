-- name: ndcg_ideal_k
-- title: Binary NDCG against a list of k relevant items
-- definition: binary DCG@k (1 / log2(i + 1) for each relevant item at position i <= k) divided by the DCG of k relevant items, the sum over i = 1..k of 1 / log2(i + 1), whatever |R_u|: a user with fewer than k relevant items cannot reach 1. Relevance only decides what is relevant (gain 1).
-- formula: \mathrm{nDCG@}k = \frac{\sum_{i=1}^{k} \mathrm{hit}_i / \log_2(i + 1)}{\sum_{i=1}^{k} 1 / \log_2(i + 1)}
-- cutoff: required
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- aliases: sdcg
-- references: RecTools `NDCG` (its default divide_by_achievable=False); ir_measures `SDCG(max_rel=1)@k` (cwl_eval's scaled DCG, Moffat et al. 2015: gains scaled to 0..1 by max_rel, divided by the DCG of k items of the top grade; with max_rel=1 every relevant item gains 1); sdcg is its alias
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN hit / LOG2(pos + 1) ELSE 0 END) / $ideal_dcg_of_k AS ndcg_ideal_k
FROM judged
GROUP BY user_id, n_relevant, list_length
