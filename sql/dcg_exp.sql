-- name: dcg_exp
-- title: Discounted cumulative gain, exponential gain
-- definition: sum over i <= k of (2^rel_i - 1) / log2(i + 1).
-- formula: \mathrm{DCG@}k = \sum_{i=1}^{k} \frac{2^{\mathrm{rel}_i} - 1}{\log_2(i + 1)}
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- aliases: dcg_burges
-- references: seeds 001, 003, 004; ranx `dcg_burges`; Burges et al. (2005)
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN exp_gain / LOG2(pos + 1) ELSE 0 END) AS dcg_exp
FROM judged
GROUP BY user_id, n_relevant, list_length
