-- name: hit_rate
-- title: Hit rate (user-level hit ratio)
-- definition: 1 if at least one relevant item is among the first k positions, else 0.
-- formula: \mathrm{hit\_rate@}k = \mathbf{1}\left[\sum_{i=1}^{k} \mathrm{hit}_i > 0\right]
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: success, hr, hit_ratio
-- references: seed 002 HR; trec_eval `success`; ranx `hit_rate`
SELECT
  user_id,
  MAX(CASE WHEN pos <= $k THEN hit ELSE 0 END) AS hit_rate
FROM judged
GROUP BY user_id, n_relevant, list_length
