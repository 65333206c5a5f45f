-- name: f1
-- title: F1 score
-- definition: 2PR / (P + R), 0 when P + R = 0; equal to 2H / (k + |R_u|).
-- formula: \mathrm{F_1@}k = \frac{2PR}{P + R} = \frac{2H}{k + |R_u|}
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- aliases: f1_score
-- references: seed 004; ranx `f1`
SELECT
  user_id,
  2 * SUM(CASE WHEN pos <= $k THEN hit ELSE 0 END) / ($k + n_relevant) AS f1
FROM judged
GROUP BY user_id, n_relevant, list_length
