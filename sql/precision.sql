-- name: precision
-- title: Precision
-- definition: H / k, dividing by k even when the list is shorter; without a cutoff, H / list length.
-- formula: \mathrm{precision@}k = \frac{H}{k}, \qquad H = \sum_{i=1}^{k} \mathrm{hit}_i
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- aliases: p
-- references: seeds 001, 003, 004; trec_eval `P`; ranx `precision`
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN hit ELSE 0 END) / NULLIF($k, 0) AS precision
FROM judged
GROUP BY user_id, n_relevant, list_length
