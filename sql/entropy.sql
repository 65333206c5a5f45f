-- name: entropy
-- title: Shannon entropy of exposure
-- definition: -sum_i p(i) log2 p(i), p(i) = appearances of item i among the first k positions of all lists / all those positions. Items never recommended have p = 0 and add nothing. One value per group.
-- formula: \mathrm{entropy@}k = -\sum_{i} p(i) \log_2 p(i)
-- cutoff: required
-- aggregate: group
-- better: higher
-- reads: lists
-- ties_average: no
-- aliases: exposure_entropy, distributional_coverage, shannon_entropy
-- references: MS Recommenders `distributional_coverage`; RecBole `ShannonEntropy`; Shani & Gunawardana, Evaluating Recommendation Systems (2011)
-- With n(i) appearances and T = sum n(i): -sum (n/T) log2(n/T) = log2 T - sum n log2 n / T,
-- which needs no window over the groups.
SELECT
  LOG2(SUM(exposure.n)) - SUM(exposure.n * LOG2(exposure.n)) / SUM(exposure.n) AS entropy
FROM (
  SELECT
    item_id,
    COUNT(*) AS n
  FROM ranked
  WHERE pos <= $k
  GROUP BY item_id
) AS exposure
