-- name: recall
-- title: Recall
-- definition: H / |R_u|.
-- cutoff: optional
-- aggregate: mean
-- ties_average: yes
-- aliases: r
-- references: seeds 003, 004; trec_eval `recall`; ranx `recall`
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN hit ELSE 0 END) / n_relevant AS recall
FROM judged
GROUP BY user_id, n_relevant, list_length
