-- name: ild
-- title: Intra-list diversity over item categories
-- definition: per user with a list, the share of pairs among its first k items whose categories differ (items table column category): 1 - sum_c n_c (n_c - 1) / (n (n - 1)), n_c = items of category c among the n; 0 for a list of one item; averaged over the users with a list.
-- formula: \mathrm{ILD@}k = 1 - \sum_{c} \frac{n_c (n_c - 1)}{n (n - 1)}
-- cutoff: required
-- aggregate: mean
-- better: higher
-- reads: lists
-- needs_items: category
-- ties_average: no
-- aliases: intra_list_diversity
-- references: RecTools `IntraListDiversity(k, PairwiseHammingDistanceCalculator)` over a single category feature (distance 1 when categories differ); Ziegler et al., WWW 2005; MS Recommenders `diversity` with one-hot category features
SELECT
  user_id,
  CASE
    WHEN SUM(n) > 1 THEN 1 - SUM(n * (n - 1)) / (SUM(n) * (SUM(n) - 1)) ELSE 0
  END AS ild
FROM (
  SELECT
    ranked.user_id,
    input_items.category,
    COUNT(*) AS n
  FROM ranked
  INNER JOIN input_items ON ranked.item_id = input_items.item_id
  WHERE ranked.pos <= $k
  GROUP BY ranked.user_id, input_items.category
) AS categories
GROUP BY user_id
