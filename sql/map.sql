-- name: map
-- title: Mean average precision
-- definition: sum over positions i <= k holding a relevant item of (hits in 1..i) / i, divided by |R_u|.
-- formula: \mathrm{AP@}k = \frac{1}{|R_u|} \sum_{i=1}^{k} \mathrm{hit}_i \, \frac{\sum_{j=1}^{i} \mathrm{hit}_j}{i}
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: ap, map_cut
-- references: seeds 000, 001, 003; trec_eval `map`, `map_cut`; ranx `map`
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k AND hit = 1 THEN hits_so_far / pos ELSE 0 END) / n_relevant AS map
FROM judged
GROUP BY user_id, n_relevant, list_length
