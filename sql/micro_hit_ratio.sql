-- name: micro_hit_ratio
-- title: Hit ratio over all interactions (micro average)
-- definition: sum over users of H / sum over users of |R_u|.
-- formula: \mathrm{HR@}k = \frac{\sum_u H_u}{\sum_u |R_u|}
-- cutoff: optional
-- aggregate: micro
-- better: higher
-- ties_average: yes
-- aliases: hr_micro
-- references: seed 000 "HR@K = hits / GT"
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN hit ELSE 0 END) AS numerator,
  n_relevant AS denominator
FROM judged
GROUP BY user_id, n_relevant, list_length
