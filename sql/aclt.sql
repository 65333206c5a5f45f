-- name: aclt
-- title: Average coverage of long-tail items
-- definition: per user with a list, how many of its first min(k, list length) items are in the long tail, every item outside the short head: the most popular items (by the distinct users who consumed each, in the history table when given, else in the interactions; equal popularity by item id ascending) that together make 80% of the (user, item) pairs consumed, the item reaching 80% included; averaged over the users with a list.
-- formula: \mathrm{aclt@}k = |L_u \cap T|, \quad T = \text{items outside the short head}
-- cutoff: required
-- aggregate: mean
-- better: higher
-- reads: lists
-- ties_average: no
-- aliases: avg_coverage_long_tail, average_coverage_of_long_tail_items
-- references: Abdollahpouri, Burke and Mobasher, "Controlling Popularity Bias in Learning-to-Rank Recommendation", RecSys 2017 (ACLT); Elliot `ACLT` (its short head from Popularity.get_short_head with pop_ratio 0.8 over the training data, here the history when given, else the interactions; ties in popularity keep Elliot's internal item order, here item id ascending)
SELECT
  ranked.user_id,
  SUM(CASE WHEN short_head.item_id IS NULL THEN 1.0 ELSE 0.0 END) AS aclt
FROM ranked
LEFT JOIN short_head ON ranked.item_id = short_head.item_id
WHERE ranked.pos <= $k
GROUP BY ranked.user_id
