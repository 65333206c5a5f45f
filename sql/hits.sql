-- name: hits
-- title: Hits
-- definition: H = number of relevant items among the first k positions.
-- cutoff: optional
-- aggregate: mean
-- ties_average: yes
-- aliases: num_rel_ret
-- references: ranx `hits`; trec_eval `num_rel_ret` (no cutoff)
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN hit ELSE 0 END) AS hits
FROM judged
GROUP BY user_id, n_relevant, list_length
