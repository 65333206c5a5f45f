-- name: map_hits
-- title: Mean average precision, divided by the hits in the list
-- definition: the AP sum of `map` divided by H, the relevant items among the first k (0 when H = 0).
-- formula: \mathrm{AP@}k = \frac{1}{H} \sum_{i=1}^{k} \mathrm{hit}_i \, \frac{\sum_{j=1}^{i} \mathrm{hit}_j}{i} \quad (0 \text{ when } H = 0)
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: map_torchmetrics
-- references: seed 001 (sum P(k) rel(k) / sum rel(k)); torchmetrics `retrieval_average_precision`
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k AND hit = 1 THEN hits_so_far / pos ELSE 0 END)
  / NULLIF(SUM(CASE WHEN pos <= $k THEN hit ELSE 0 END), 0) AS map_hits
FROM judged
GROUP BY user_id, n_relevant, list_length
