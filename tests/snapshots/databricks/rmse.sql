WITH input_recommendations AS (
  SELECT
    user_id AS user_id,
    item_id AS item_id,
    score AS score
  FROM recommendations
), input_interactions AS (
  SELECT
    interactions.user_id AS user_id,
    interactions.item_id AS item_id,
    interactions.relevance AS relevance,
    interactions.rating AS rating
  FROM interactions AS interactions
  DISTRIBUTE BY
    interactions.user_id
), rated AS (
  SELECT
    user_id AS user_id,
    score AS score,
    rating AS rating
  FROM (
    SELECT
      input_recommendations.user_id AS user_id,
      input_recommendations.score AS score,
      ratings.rating AS rating
    FROM input_recommendations
    INNER JOIN (
      SELECT
        user_id AS user_id,
        item_id AS item_id,
        MAX(input_interactions.rating) AS rating
      FROM input_interactions
      WHERE
        NOT input_interactions.rating IS NULL
      GROUP BY
        user_id,
        item_id
    ) AS ratings
      ON input_recommendations.user_id = ratings.user_id
      AND input_recommendations.item_id = ratings.item_id
    WHERE
      NOT input_recommendations.score IS NULL
  ) AS rated_pairs
), per_user AS (
  SELECT
    user_id AS user_id,
    SUM((
      score - rating
    ) * (
      score - rating
    )) AS m1_numerator,
    COUNT(*) AS m1_denominator
  FROM rated
  GROUP BY
    user_id
)
SELECT
  COUNT(*) AS users,
  SQRT(CAST(SUM(m1_numerator) AS DOUBLE) / NULLIF(SUM(m1_denominator), 0)) AS `rmse`
FROM per_user;
