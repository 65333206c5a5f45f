-- name: ndcg_exp
-- title: Normalised discounted cumulative gain, exponential gain
-- definition: dcg_exp@k / idcg_exp@k, the ideal over the user's relevances sorted descending, first min(k, |R_u|).
-- formula: \mathrm{nDCG@}k = \frac{\sum_{i=1}^{k} (2^{\mathrm{rel}_i} - 1) / \log_2(i + 1)}{\sum_{i=1}^{\min(k, |R_u|)} (2^{\mathrm{rel}_{(i)}} - 1) / \log_2(i + 1)}
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- aliases: ndcg_burges
-- references: seeds 001, 003, 004; ranx `ndcg_burges`; Burges et al. (2005)
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN exp_gain / LOG2(pos + 1) ELSE 0 END)
  / NULLIF(
    SUM(CASE WHEN ideal_pos <= $k THEN (POWER(2, relevance) - 1) / LOG2(ideal_pos + 1) ELSE 0 END), 0
  ) AS ndcg_exp
FROM judged
GROUP BY user_id, n_relevant, list_length
