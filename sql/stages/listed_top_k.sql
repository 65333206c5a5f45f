-- DuckDB's hit-rows plan (sqlmetrics/duckdb_plan.py): diagnostics.sql's counted and tied, per
-- list of top_lists.sql instead of over ranked's rows. Its scores are in rank order (NaN
-- first, NULL last), so equal scores are neighbours, a NaN is first and a score outside [0, 1]
-- is first or the smallest: the few lists that need it are searched.
SELECT
  user_id,
  list_length,
  list_length - scored_length AS null_scores,
  -- a repeat: an item found earlier in the list (LIST_UNIQUE would build a hash set per list)
  LEN(
    LIST_FILTER(items[1:$cutoff], LAMBDA item, i: item IS NOT NULL AND LIST_POSITION(items, item) < i)
  ) AS duplicate_rows,
  list_length - named_length AS null_items,
  CASE
    WHEN ISNAN(scores[1]) THEN LEN(LIST_FILTER(scores, LAMBDA score: ISNAN(score))) ELSE 0
  END AS nan_scores,
  CASE
    WHEN scores[1] > 1 OR LIST_MIN(scores) < 0
      THEN LEN(LIST_FILTER(scores, LAMBDA score: score < 0 OR score > 1))
    ELSE 0
  END AS outside_unit_scores,
  0 AS broken_ranks,
  -- a tie group: a distinct score equal to the score before it
  LIST_UNIQUE(LIST_FILTER(scores[2:], LAMBDA score, i: score = scores[i])) AS tie_groups
FROM top_lists
