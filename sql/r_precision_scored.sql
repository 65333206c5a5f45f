-- name: r_precision_scored
-- title: R-precision over the relevant items that were scored
-- definition: relevant items among the first R positions / R, where R is the number of relevant items anywhere in the user's list, not |R_u| (0 when the list holds none).
-- cutoff: none
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- aliases:
-- references: torchmetrics `retrieval_r_precision` (target.sum() over the scored items)
SELECT
  user_id,
  SUM(CASE WHEN pos <= n_relevant_listed THEN hit ELSE 0 END)
  / NULLIF(MAX(n_relevant_listed), 0) AS r_precision_scored
FROM judged
GROUP BY user_id, n_relevant, list_length
