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
    positives AS positives,
    SUM(positives) OVER (ORDER BY score DESC RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS positives_at_or_above_in_group,
    SUM(negatives) OVER (ORDER BY score DESC RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS negatives_at_or_above_in_group,
    SUM(positives) OVER (PARTITION BY score) AS positives_at_score_in_group,
    SUM(negatives) OVER (PARTITION BY score) AS negatives_at_score_in_group
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
    SUM(
      CAST(positives * (
        CAST(positives_at_or_above_in_group AS DOUBLE) / NULLIF(positives_at_or_above_in_group + negatives_at_or_above_in_group, 0) + COALESCE(
          CAST(positives_at_or_above_in_group - positives_at_score_in_group AS DOUBLE) / NULLIF(
            positives_at_or_above_in_group + negatives_at_or_above_in_group - positives_at_score_in_group - negatives_at_score_in_group,
            0
          ),
          1
        )
      ) AS DOUBLE) / 2
    ) AS m1_numerator,
    SUM(positives) AS m1_denominator
  FROM scored
  GROUP BY
    user_id
)
SELECT
  COUNT(*) AS users,
  CAST(SUM(m1_numerator) AS DOUBLE) / NULLIF(SUM(m1_denominator), 0) AS `pr_auc`
FROM per_user;
