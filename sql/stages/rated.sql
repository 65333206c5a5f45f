-- What the rating metric files read: one row per recommended (user, item) with a non-NULL
-- score that the interactions rate (a non-NULL rating; repeated interactions of one pair count
-- once, with the largest rating), and the mean rating of those rows over the group (a window
-- without user_id spans the group) for r2's total sum of squares.
SELECT
  user_id,
  score,
  rating,
  AVG(rating) OVER () AS mean_rating
FROM (
  SELECT
    input_recommendations.user_id,
    input_recommendations.score,
    ratings.rating
  FROM input_recommendations
  INNER JOIN (
    SELECT
      user_id,
      item_id,
      MAX(rating) AS rating
    FROM input_interactions
    WHERE rating IS NOT NULL
    GROUP BY user_id, item_id
  ) AS ratings
    ON
      input_recommendations.user_id = ratings.user_id
      AND input_recommendations.item_id = ratings.item_id
  WHERE input_recommendations.score IS NOT NULL
) AS rated_pairs
