-- DuckDB's hit-rows plan (sqlmetrics/duckdb_plan.py): per user of the interactions, truth.sql's
-- |R_u| and the $cutoff largest relevances of its relevant items (the ideal order), with
-- aggregates instead of windows; and the counts diagnostics.sql's interacted takes per user.
-- truth.sql counts each (user, item) once, with its largest relevance. Grouping every row by
-- (user, item) for that costs a hash table as large as the interactions (1e8 rows: 1.8 of 9.6
-- CPU seconds), so a user whose items are all different is counted from its rows directly,
-- which gives the same numbers. Each item sets one of 2,048 bits chosen by its hash: a
-- repeated item sets the same bit twice, so a user with fewer bits set than items may repeat
-- one and is grouped by (user, item) as before, with the NULL user and any user with more than
-- one NULL item. Different items share a bit rarely (~3% of users with 10 items), and such a
-- user only takes the slower way; the bits never decide a number.
SELECT
  user_id,
  n_relevant,
  top_relevances,
  has_relevant,
  interaction_rows,
  duplicate_interactions,
  null_items,
  bad_relevance,
  huge_relevance
FROM (
  WITH user_counts AS (
    SELECT
      user_id,
      COUNT(CASE WHEN relevance > $threshold THEN 1 END) AS n_relevant,
      MAX(CASE WHEN relevance > $threshold THEN relevance END, $cutoff) AS top_relevances,
      MAX(CASE WHEN relevance > $threshold THEN 1 ELSE 0 END) AS has_relevant,
      COUNT(*) AS interaction_rows,
      0 AS duplicate_interactions,
      COUNT(*) - COUNT(item_id) AS null_items,
      SUM(
        CASE
          WHEN relevance IS NULL OR relevance < 0 OR ISNAN(relevance) THEN 1
          WHEN relevance * 0 = 0 THEN 0  -- not NaN or infinite (diagnostics.sql)
          ELSE 1
        END
      ) AS bad_relevance,
      SUM(CASE WHEN relevance > 1000 THEN 1 ELSE 0 END) AS huge_relevance,
      user_id IS NOT NULL
      AND COUNT(*) - COUNT(item_id) <= 1
      AND COUNT(item_id) = COALESCE(
        BIT_COUNT(
          BITSTRING_AGG(CAST(HASH(item_id) % 2048 AS INTEGER), 0, 2047)
            FILTER (WHERE item_id IS NOT NULL)
        ),
        0  -- without an item BITSTRING_AGG is NULL
      ) AS distinct_items
    FROM input_interactions
    GROUP BY user_id
  ),

  -- the other users' rows, through an IN DuckDB filters the scan with (top_lists.sql)
  again AS (
    SELECT * FROM input_interactions
    WHERE user_id IN (SELECT user_id AS repeating_user FROM user_counts WHERE NOT distinct_items)
    UNION ALL
    SELECT * FROM input_interactions
    WHERE user_id IS NULL
  ),

  -- each (user, item) once, with its largest relevance, as truth.sql
  pairs AS (
    SELECT
      again.user_id,
      again.item_id,
      MAX(again.relevance) AS relevance,
      COUNT(*) AS interaction_rows,
      SUM(
        CASE
          WHEN again.relevance IS NULL OR again.relevance < 0 OR ISNAN(again.relevance) THEN 1
          WHEN again.relevance * 0 = 0 THEN 0
          ELSE 1
        END
      ) AS bad_relevance,
      SUM(CASE WHEN again.relevance > 1000 THEN 1 ELSE 0 END) AS huge_relevance
    FROM again
    INNER JOIN user_counts
      ON again.user_id IS NOT DISTINCT FROM user_counts.user_id
    WHERE NOT user_counts.distinct_items
    GROUP BY again.user_id, again.item_id
  )

  SELECT
    user_id,
    n_relevant,
    top_relevances,
    has_relevant,
    interaction_rows,
    duplicate_interactions,
    null_items,
    bad_relevance,
    huge_relevance
  FROM user_counts
  WHERE distinct_items
  UNION ALL
  SELECT
    user_id,
    COUNT(CASE WHEN relevance > $threshold THEN 1 END) AS n_relevant,
    MAX(CASE WHEN relevance > $threshold THEN relevance END, $cutoff) AS top_relevances,
    MAX(CASE WHEN relevance > $threshold THEN 1 ELSE 0 END) AS has_relevant,
    SUM(interaction_rows) AS interaction_rows,
    SUM(CASE WHEN item_id IS NOT NULL THEN interaction_rows - 1 ELSE 0 END)
      AS duplicate_interactions,
    SUM(CASE WHEN item_id IS NULL THEN interaction_rows ELSE 0 END) AS null_items,
    SUM(bad_relevance) AS bad_relevance,
    SUM(huge_relevance) AS huge_relevance
  FROM pairs
  GROUP BY user_id
) AS truth_by_user
