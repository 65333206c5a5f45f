-- name: recall
-- title: Recall
-- definition: H / |R_u|.
-- formula: \mathrm{recall@}k = \frac{H}{|R_u|}, \qquad H = \sum_{i=1}^{k} \mathrm{hit}_i
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- aliases: r
-- references: seeds 003, 004; trec_eval `recall`; ranx `recall`
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN hit ELSE 0 END) / n_relevant AS recall
FROM judged
GROUP BY user_id, n_relevant, list_length
