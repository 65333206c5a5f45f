-- name: personalization
-- title: Personalization (inter-list diversity)
-- definition: 1 - the mean over all pairs of users with a list of |L_u ∩ L_v| / k, L_u the first k items of u's list. Exact, with no sampling: the overlaps of all pairs add up to sum_i n(i) (n(i) - 1) / 2, n(i) = lists holding item i. NULL with fewer than two lists. One value per group.
-- formula: \mathrm{personalization@}k = 1 - \frac{2}{m(m - 1)} \sum_{u < v} \frac{|L_u \cap L_v|}{k}, \qquad m \text{ the lists}
-- cutoff: required
-- aggregate: group
-- better: higher
-- reads: lists
-- ties_average: no
-- aliases: inter_list_diversity
-- references: Zhou et al., PNAS 2010 (personalization h = 1 - q_uv / L, mean over pairs); Evidently `PersonalizationMetric`; recmetrics `personalization` uses cosine (the same when every list has k items)
-- A user's list has exactly one first position, so the users are counted by it; with one user
-- there is no pair and the value is NULL.
SELECT
  1 - SUM(exposure.n * (exposure.n - 1))
  / NULLIF(SUM(exposure.firsts) * (SUM(exposure.firsts) - 1) * $k, 0) AS personalization
FROM (
  SELECT
    item_id,
    COUNT(*) AS n,
    SUM(CASE WHEN pos = 1 THEN 1 ELSE 0 END) AS firsts
  FROM ranked
  WHERE pos <= $k
  GROUP BY item_id
) AS exposure
