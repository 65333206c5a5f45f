-- name: cg
-- title: Cumulative gain
-- definition: sum of rel_i over the first k positions.
-- formula: \mathrm{CG@}k = \sum_{i=1}^{k} \mathrm{rel}_i
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- aliases:
-- references: seeds 000, 003
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN gain ELSE 0 END) AS cg
FROM judged
GROUP BY user_id, n_relevant, list_length
