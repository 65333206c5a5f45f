-- name: map_listed
-- title: Mean average precision, divided by min(|R_u|, items listed within k)
-- definition: the AP sum of `map` divided by min(|R_u|, k, list length) (0 for an empty list); without a cutoff, by min(|R_u|, list length).
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases:
-- references: LensKit `AveragePrecision` (`min(len(test), len(recs))` after truncating to k)
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k AND hit = 1 THEN hits_so_far / pos ELSE 0 END)
  / NULLIF(LEAST(n_relevant, LEAST($k, list_length)), 0) AS map_listed
FROM judged
GROUP BY user_id, n_relevant, list_length
