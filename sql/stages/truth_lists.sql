-- DuckDB's hit-rows plan (sqlmetrics/duckdb_plan.py): per user of the interactions, truth.sql's
-- |R_u| and the $cutoff largest relevances of its relevant items (the ideal order), with
-- aggregates instead of windows; and the counts diagnostics.sql's interacted takes per user.
SELECT
  user_id,
  COUNT(CASE WHEN relevance > $threshold THEN 1 END) AS n_relevant,
  MAX(CASE WHEN relevance > $threshold THEN relevance END, $cutoff) AS top_relevances,
  MAX(CASE WHEN relevance > $threshold THEN 1 ELSE 0 END) AS has_relevant,
  SUM(interaction_rows) AS interaction_rows,
  SUM(CASE WHEN item_id IS NOT NULL THEN interaction_rows - 1 ELSE 0 END) AS duplicate_interactions,
  SUM(CASE WHEN item_id IS NULL THEN interaction_rows ELSE 0 END) AS null_items,
  SUM(bad_relevance) AS bad_relevance,
  SUM(huge_relevance) AS huge_relevance
FROM (
  -- each (user, item) once, with its largest relevance, as truth.sql
  SELECT
    user_id,
    item_id,
    MAX(relevance) AS relevance,
    COUNT(*) AS interaction_rows,
    SUM(
      CASE WHEN relevance IS NULL OR relevance < 0 OR ISNAN(relevance) THEN 1 ELSE 0 END
    ) AS bad_relevance,
    SUM(CASE WHEN relevance > 1000 THEN 1 ELSE 0 END) AS huge_relevance
  FROM input_interactions
  GROUP BY user_id, item_id
) AS pairs
GROUP BY user_id
