-- name: map_min
-- title: Mean average precision, divided by min(|R_u|, k)
-- definition: the AP sum of `map` divided by min(|R_u|, k); without a cutoff, by min(|R_u|, list length).
-- formula: \mathrm{AP@}k = \frac{1}{\min(|R_u|, k)} \sum_{i=1}^{k} \mathrm{hit}_i \, \frac{\sum_{j=1}^{i} \mathrm{hit}_j}{i}
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: map_spark
-- references: Spark `meanAveragePrecisionAt`; MS Recommenders `map_at_k`; RePlay `MAP`; RecBole `MAP`
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k AND hit = 1 THEN hits_so_far / pos ELSE 0 END)
  / NULLIF(LEAST(n_relevant, $k), 0) AS map_min
FROM judged
GROUP BY user_id, n_relevant, list_length
