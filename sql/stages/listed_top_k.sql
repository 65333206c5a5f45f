-- DuckDB's hit-rows plan (sqlmetrics/duckdb_plan.py): diagnostics.sql's tied, per list of
-- top_lists.sql instead of over ranked's rows. Its scores are in rank order, so a tie group
-- straddles the cutoff k when the scores at k and k + 1 are equal; a group straddling several
-- requested cutoffs ($cutoffs, a list) counts once.
SELECT
  user_id,
  LEN(
    LIST_DISTINCT(
      LIST_TRANSFORM($cutoffs, LAMBDA k: CASE WHEN scores[k] = scores[k + 1] THEN scores[k] END)
    )
  ) AS tie_groups
FROM top_lists
