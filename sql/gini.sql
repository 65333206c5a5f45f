-- name: gini
-- title: Gini index of exposure
-- definition: sum_j (2j - n - 1) e_j / (n sum_j e_j) over the n items of the catalogue sorted by exposure ascending, e_j = appearances among the first k positions of all lists; items never recommended count with exposure 0. 0 = every item equally exposed, near 1 = one item takes all. One value per group.
-- formula: \mathrm{Gini@}k = \frac{\sum_{j=1}^{n} (2j - n - 1)\, e_j}{n \sum_{j=1}^{n} e_j}
-- cutoff: required
-- aggregate: group
-- better: lower
-- reads: lists
-- ties_average: no
-- aliases: gini_index, exposure_gini
-- references: RecBole `GiniIndex` (same n denominator); Castells, Hurley & Vargas, Novelty and Diversity in Recommender Systems (Recommender Systems Handbook) use n - 1
-- The m recommended items sit at positions n - m + 1 .. n of the ascending order (the never
-- recommended ones, at 0, come first), so position r among them is j = n - m + r.
SELECT
  SUM((2 * exposure.position + catalogue.items - 2 * exposure.recommended - 1) * exposure.n)
  / (MAX(catalogue.items) * SUM(exposure.n)) AS gini
FROM (
  SELECT
    item_id,
    COUNT(*) AS n,
    ROW_NUMBER() OVER (ORDER BY COUNT(*), item_id) AS position,
    COUNT(*) OVER () AS recommended
  FROM ranked
  WHERE pos <= $k
  GROUP BY item_id
) AS exposure
CROSS JOIN (SELECT COUNT(*) AS items FROM catalogue) AS catalogue
