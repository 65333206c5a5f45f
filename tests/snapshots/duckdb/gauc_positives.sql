WITH input_recommendations AS NOT MATERIALIZED (
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
    negatives_below_in_list
  FROM (
    WITH labelled AS NOT MATERIALIZED (
      SELECT
        input_recommendations.user_id,
        input_recommendations.score,
        NOT truth.item_id IS NULL AS relevant
      FROM input_recommendations
      LEFT JOIN truth
        ON input_recommendations.user_id = truth.user_id
        AND input_recommendations.item_id = truth.item_id
      WHERE
        NOT input_recommendations.score IS NULL
    ), positive_scores AS (
      SELECT
        user_id,
        score,
        COUNT(*) AS positives
      FROM labelled
      WHERE
        relevant
      GROUP BY
        user_id,
        score
    ), crowded AS (
      SELECT
        user_id AS crowded_user
      FROM positive_scores
      GROUP BY
        user_id
      HAVING
        COUNT(*) > 32
    ), sparse_positives AS (
      SELECT
        *
      FROM positive_scores
      WHERE
        NOT user_id IN (
          SELECT
            crowded_user
          FROM crowded
        )
    ), crowded_scores AS (
      SELECT
        user_id,
        score,
        COUNT(CASE WHEN relevant THEN 1 END) AS positives,
        COUNT(CASE WHEN NOT relevant THEN 1 END) AS negatives
      FROM labelled
      WHERE
        user_id IN (
          SELECT
            crowded_user
          FROM crowded
        )
      GROUP BY
        user_id,
        score
    )
    SELECT
      positive_scores.user_id,
      positive_scores.score,
      positive_scores.positives,
      0 AS negatives,
      COUNT(
        CASE
          WHEN NOT labelled.relevant AND labelled.score < positive_scores.score
          THEN 1
        END
      ) + 0.5 * COUNT(
        CASE
          WHEN NOT labelled.relevant AND labelled.score = positive_scores.score
          THEN 1
        END
      ) AS negatives_below_in_list
    FROM sparse_positives AS positive_scores
    INNER JOIN labelled
      ON positive_scores.user_id = labelled.user_id
    GROUP BY
      positive_scores.user_id,
      positive_scores.score,
      positive_scores.positives
    UNION ALL
    SELECT
      user_id,
      score,
      positives,
      0 AS negatives,
      SUM(negatives) OVER (
        PARTITION BY user_id
        ORDER BY score
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) - 0.5 * negatives AS negatives_below_in_list
    FROM crowded_scores
    UNION ALL
    SELECT
      user_id,
      NULL AS score,
      0 AS positives,
      COUNT(CASE WHEN NOT relevant THEN 1 END) AS negatives,
      0 AS negatives_below_in_list
    FROM labelled
    GROUP BY
      user_id
  ) AS scored_sums
), per_user AS (
  SELECT
    user_id,
    CASE
      WHEN SUM(positives) > 0 AND SUM(negatives) > 0
      THEN SUM(positives * negatives_below_in_list) / SUM(negatives)
      ELSE 0
    END AS m1_numerator,
    CASE WHEN SUM(positives) > 0 AND SUM(negatives) > 0 THEN SUM(positives) ELSE 0 END AS m1_denominator
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
  ) AS "gauc_positives"
FROM per_user;
