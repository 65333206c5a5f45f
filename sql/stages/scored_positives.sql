-- DuckDB's plan for the metrics that read scored.sql only as per-user sums of positives,
-- negatives and positives * negatives_below_in_list (duckdb_plan.SCORED_SUM_METRICS: gauc,
-- user_auc, and the diagnostics' single_class): the same sums from far fewer rows. A row per
-- (user, score) holding a relevant item, with the negatives of that list scored lower plus half
-- those scored the same, counted by joining the list's rows to it (a few positives per list);
-- and a row per list with all of its negatives. scored.sql instead groups every row by
-- (user, score) and sorts those groups for its window: at 1e8 rows about 1000 s under an 8 GB
-- limit. Its other columns are not given here.
SELECT
  user_id,
  score,
  positives,
  negatives,
  negatives_below_in_list
FROM (
  -- read three times: storing it would cost memory in proportion to the input
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
  FROM positive_scores
  INNER JOIN labelled ON positive_scores.user_id = labelled.user_id
  GROUP BY positive_scores.user_id, positive_scores.score, positive_scores.positives
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
