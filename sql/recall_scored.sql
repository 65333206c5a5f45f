-- name: recall_scored
-- title: Recall over the relevant items that were scored
-- definition: H / the relevant items anywhere in the user's list (0 when the list holds none): relevant items never recommended do not count.
-- cutoff: optional
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- aliases:
-- references: torchmetrics `retrieval_recall` (target.sum() over the scored items)
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN hit ELSE 0 END)
  / NULLIF(SUM(CASE WHEN pos IS NOT NULL THEN hit ELSE 0 END), 0) AS recall_scored
FROM judged
GROUP BY user_id, n_relevant, list_length
