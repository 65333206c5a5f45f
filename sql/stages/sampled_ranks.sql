-- sampled=: each recommended row, whether it is a held-out positive, its sampled rank (1 + the
-- sampled negatives ranked above it; ties="id": score descending, NULL scores last, equal
-- scores by item id descending; the composer rewrites the order for the other policies) and
-- the sampled negatives of its list. Other positives do not push a positive down: each is
-- ranked among the negatives alone, as a case of its own.
SELECT
  r.user_id,
  CASE WHEN p.item_id IS NULL THEN 0 ELSE 1 END AS positive,
  1 + SUM(CASE WHEN p.item_id IS NULL THEN 1 ELSE 0 END) OVER (
    PARTITION BY r.user_id
    ORDER BY r.score DESC NULLS LAST, r.item_id DESC
    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
  ) AS sampled_rank,
  SUM(CASE WHEN p.item_id IS NULL THEN 1 ELSE 0 END) OVER (PARTITION BY r.user_id) AS negatives
FROM input_recommendations AS r
LEFT JOIN sampled_positives AS p ON r.user_id = p.user_id AND r.item_id = p.item_id
