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
), rated AS (
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
      WHERE
        NOT rating IS NULL
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
    user_id,
    SUM((
      rating - mean_rating
    ) * (
      rating - mean_rating
    )) - SUM((
      rating - score
    ) * (
      rating - score
    )) AS m1_numerator,
    SUM((
      rating - mean_rating
    ) * (
      rating - mean_rating
    )) AS m1_denominator
  FROM rated
  GROUP BY
    user_id
)
SELECT
  COUNT(*) AS users,
  CASE
    WHEN COUNT(
      CASE
        WHEN ABS(m1_numerator) < POWER(2, 32)
        THEN CAST(m1_numerator * POWER(2, 64) AS INT128)
      END
    ) = COUNT(m1_numerator)
    THEN CAST(SUM(
      CASE
        WHEN ABS(m1_numerator) < POWER(2, 32)
        THEN CAST(m1_numerator * POWER(2, 64) AS INT128)
      END
    ) AS DOUBLE) / POWER(2, 64)
    ELSE SUM(m1_numerator)
  END / NULLIF(
    CASE
      WHEN COUNT(
        CASE
          WHEN ABS(m1_denominator) < POWER(2, 32)
          THEN CAST(m1_denominator * POWER(2, 64) AS INT128)
        END
      ) = COUNT(m1_denominator)
      THEN CAST(SUM(
        CASE
          WHEN ABS(m1_denominator) < POWER(2, 32)
          THEN CAST(m1_denominator * POWER(2, 64) AS INT128)
        END
      ) AS DOUBLE) / POWER(2, 64)
      ELSE SUM(m1_denominator)
    END,
    0
  ) AS "r2"
FROM per_user;
