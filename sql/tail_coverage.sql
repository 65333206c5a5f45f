-- name: tail_coverage
-- title: Long-tail coverage
-- definition: distinct long-tail items among the first k positions of all lists / long-tail items in the catalogue; the long tail is every item of the catalogue (coverage's: the items table when given, else every item of the interactions, and every recommended item) outside the short head (aplt's: the most popular items that together make 80% of the (user, item) pairs consumed, in the history table when given, else in the interactions). 0 when the catalogue has no long tail. One value per group.
-- formula: \mathrm{tail\_coverage@}k = \frac{\left|\bigcup_u L_u \cap T\right|}{|T|}, \quad T = \mathrm{catalogue} \setminus \text{short head}
-- cutoff: required
-- aggregate: group
-- better: higher
-- reads: lists
-- ties_average: no
-- aliases: long_tail_coverage
-- references: Abdollahpouri, Burke and Mobasher, "Managing Popularity Bias in Recommender Systems with Personalized Re-ranking", FLAIRS 2019 (long-tail coverage); Elliot's short head (Popularity.get_short_head, pop_ratio 0.8), as aplt; RecBole `TailPercentage` counts tail items per list instead (aplt)
SELECT
  COALESCE(
    COUNT(DISTINCT CASE WHEN short_head.item_id IS NULL THEN ranked.item_id END)
    / NULLIF(MAX(tail.items), 0),
    0
  ) AS tail_coverage
FROM ranked
LEFT JOIN short_head ON ranked.item_id = short_head.item_id
CROSS JOIN (
  SELECT COUNT(*) AS items
  FROM catalogue
  LEFT JOIN short_head ON catalogue.item_id = short_head.item_id
  WHERE short_head.item_id IS NULL
) AS tail
WHERE ranked.pos <= $k
