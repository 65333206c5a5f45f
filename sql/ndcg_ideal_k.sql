-- name: ndcg_ideal_k
-- title: Binary NDCG against a list of k relevant items
-- definition: binary DCG@k (1 / log2(i + 1) for each relevant item at position i <= k) divided by the DCG of k relevant items, the sum over i = 1..k of 1 / log2(i + 1), whatever |R_u|: a user with fewer than k relevant items cannot reach 1. Relevance only decides what is relevant (gain 1).
-- formula: \mathrm{nDCG@}k = \frac{\sum_{i=1}^{k} \mathrm{hit}_i / \log_2(i + 1)}{\sum_{i=1}^{k} 1 / \log_2(i + 1)}
-- cutoff: required
-- aggregate: mean
-- ties_average: yes
-- aliases:
-- references: RecTools `NDCG` (its default divide_by_achievable=False)
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN hit / LOG2(pos + 1) ELSE 0 END) / $ideal_dcg_of_k AS ndcg_ideal_k
FROM judged
GROUP BY user_id, n_relevant, list_length
