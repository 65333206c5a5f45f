-- DuckDB's plan for the metrics that read scored.sql only as per-user sums of positives,
-- negatives and positives * negatives_below_in_list (duckdb_plan.SCORED_SUM_METRICS: gauc,
-- user_auc, and the diagnostics' single_class): the same sums from far fewer rows. A row per
-- (user, score) holding a relevant item, with the negatives of that list scored lower plus half
-- those scored the same, counted by joining the list's rows to it; and a row per list with all
-- of its negatives. The join grows as a list's rows times its positive scores, so a list with
-- more than 32 positive scores (a crowded one) takes scored.sql's window over its own rows
-- instead. scored.sql groups every row by (user, score) and sorts those groups for its
-- window, far slower at scale and under a memory limit (docs/benchmark.md). Its other
-- columns are not given here.
SELECT
  user_id,
  score,
  positives,
  negatives,
  negatives_below_in_list
FROM (
  -- read four times: storing it would cost memory in proportion to the input
  WITH labelled AS NOT MATERIALIZED (
    SELECT
      input_recommendations.user_id,
      input_recommendations.score,
      truth.item_id IS NOT NULL AS relevant
    FROM input_recommendations
    LEFT JOIN truth
      ON
        input_recommendations.user_id = truth.user_id
        AND input_recommendations.item_id = truth.item_id
    WHERE input_recommendations.score IS NOT NULL
  ),

  positive_scores AS (
    SELECT
      user_id,
      score,
      COUNT(*) AS positives
    FROM labelled
    WHERE relevant
    GROUP BY user_id, score
  ),

  -- by user id alone (widen_keys leaves these aliases alone): a user crowded in one group takes
  -- the window in all of them, so each list takes exactly one of the two ways
  crowded AS (
    SELECT user_id AS crowded_user
    FROM positive_scores
    GROUP BY user_id
    HAVING COUNT(*) > 32
  ),

  sparse_positives AS (
    SELECT * FROM positive_scores
    WHERE user_id NOT IN (SELECT crowded_user FROM crowded)  -- never NULL: NULL users have no positives
  ),

  crowded_scores AS (
    SELECT
      user_id,
      score,
      COUNT(CASE WHEN relevant THEN 1 END) AS positives,
      COUNT(CASE WHEN NOT relevant THEN 1 END) AS negatives
    FROM labelled
    WHERE user_id IN (SELECT crowded_user FROM crowded)
    GROUP BY user_id, score
  )

  SELECT
    positive_scores.user_id,
    positive_scores.score,
    positive_scores.positives,
    0 AS negatives,
    COUNT(CASE WHEN NOT labelled.relevant AND labelled.score < positive_scores.score THEN 1 END)
    + 0.5 * COUNT(
      CASE WHEN NOT labelled.relevant AND labelled.score = positive_scores.score THEN 1 END
    ) AS negatives_below_in_list
  FROM sparse_positives AS positive_scores
  INNER JOIN labelled ON positive_scores.user_id = labelled.user_id
  GROUP BY positive_scores.user_id, positive_scores.score, positive_scores.positives
  UNION ALL
  SELECT
    user_id,
    score,
    positives,
    0 AS negatives,
    SUM(negatives) OVER (
      PARTITION BY user_id ORDER BY score ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
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
  GROUP BY user_id
) AS scored_sums
