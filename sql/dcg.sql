-- name: dcg
-- title: Discounted cumulative gain
-- definition: sum over i <= k of rel_i / log2(i + 1).
-- formula: \mathrm{DCG@}k = \sum_{i=1}^{k} \frac{\mathrm{rel}_i}{\log_2(i + 1)}
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- aliases:
-- references: seeds 000, 001, 003; ranx `dcg`; Jarvelin & Kekalainen (2002)
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN gain / LOG2(pos + 1) ELSE 0 END) AS dcg
FROM judged
GROUP BY user_id, n_relevant, list_length
