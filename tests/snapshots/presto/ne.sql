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
    user_id AS user_id,
    item_id AS item_id
  FROM input_interactions
  GROUP BY
    user_id,
    item_id
  HAVING
    MAX(relevance) > 0.0
), scored AS (
  SELECT
    user_id AS user_id,
    score AS score,
    positives AS positives,
    negatives AS negatives,
    SUM(negatives) OVER () AS negatives_in_group,
    SUM(positives) OVER () AS positives_in_group
  FROM (
    SELECT
      input_recommendations.user_id AS user_id,
      input_recommendations.score AS score,
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
    user_id AS user_id,
    -SUM(
      positives * LN(
        LEAST(
          COALESCE(GREATEST(COALESCE(score, 1e-12), 1e-12), 1 - 1e-12),
          COALESCE(1 - 1e-12, GREATEST(COALESCE(score, 1e-12), 1e-12))
        )
      ) + negatives * LN(
        1 - LEAST(
          COALESCE(GREATEST(COALESCE(score, 1e-12), 1e-12), 1 - 1e-12),
          COALESCE(1 - 1e-12, GREATEST(COALESCE(score, 1e-12), 1e-12))
        )
      )
    ) AS m1_numerator,
    SUM(
      CASE
        WHEN positives > 0
        THEN positives * LN(
          CAST(positives_in_group + negatives_in_group AS DOUBLE) / NULLIF(positives_in_group, 0)
        )
        ELSE 0
      END + CASE
        WHEN negatives > 0
        THEN negatives * LN(
          CAST(positives_in_group + negatives_in_group AS DOUBLE) / NULLIF(negatives_in_group, 0)
        )
        ELSE 0
      END
    ) AS m1_denominator
  FROM scored
  GROUP BY
    user_id
)
SELECT
  COUNT(*) AS users,
  CAST(SUM(m1_numerator) AS DOUBLE) / NULLIF(SUM(m1_denominator), 0) AS "ne"
FROM per_user;
