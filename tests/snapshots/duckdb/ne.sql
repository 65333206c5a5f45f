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
    interactions.relevance AS relevance
  FROM interactions AS interactions
), truth AS (
  SELECT
    user_id,
    item_id
  FROM input_interactions
  GROUP BY
    user_id,
    item_id
  HAVING
    MAX(relevance) > 0.0
), scored AS (
  SELECT
    user_id,
    score,
    positives,
    negatives,
    SUM(negatives) OVER () AS negatives_in_group,
    SUM(positives) OVER () AS positives_in_group
  FROM (
    SELECT
      input_recommendations.user_id,
      input_recommendations.score,
      SUM(CASE WHEN truth.item_id IS NULL THEN 0 ELSE 1 END) AS positives,
      SUM(CASE WHEN truth.item_id IS NULL THEN 1 ELSE 0 END) AS negatives
    FROM input_recommendations
    LEFT JOIN truth
      ON input_recommendations.user_id = truth.user_id
      AND input_recommendations.item_id = truth.item_id
    WHERE
      NOT input_recommendations.score IS NULL
    GROUP BY
      input_recommendations.user_id,
      input_recommendations.score
  ) AS tie_groups
), per_user AS (
  SELECT
    user_id,
    -SUM(
      positives * LN(LEAST(GREATEST(score, 1e-12), 1 - 1e-12)) + negatives * LN(1 - LEAST(GREATEST(score, 1e-12), 1 - 1e-12))
    ) AS m1_numerator,
    SUM(
      CASE
        WHEN positives > 0
        THEN positives * LN((
          positives_in_group + negatives_in_group
        ) / positives_in_group)
        ELSE 0
      END + CASE
        WHEN negatives > 0
        THEN negatives * LN((
          positives_in_group + negatives_in_group
        ) / negatives_in_group)
        ELSE 0
      END
    ) AS m1_denominator
  FROM scored
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
  ) AS "ne"
FROM per_user;
