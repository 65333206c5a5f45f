-- DuckDB only, for ties="id" or "id_text" when the deepest cutoff is beyond what top_lists.sql's
-- top-k aggregate serves (compose.TOP_K_MAX_CUTOFF) and every metric reads hit rows only
-- (judged_hits.sql): each user's first $rows scores in ranked.sql's order, as a list, with the
-- counts of the whole list, and no items. placed_hits.sql finds each hit's position from its
-- score instead: a top-k aggregate of the plain scores costs less than sorting each whole list
-- of {score, item} structs (sorted_lists.sql; at 1e7 rows, 1.3 s against 2.3 s). The lists
-- with a NULL score or item, and the NULL user's, are ranked by ranked.sql's window instead,
-- and only they carry their items in order (`items`; NULL for every other list).
-- Repeated items are found in each whole list ($repeats, from the list of its items); a
-- list with one goes to the window too when only its first $cutoff count ($again_if_repeated,
-- the default checks="read"), which counts them there ($again_repeats).
SELECT
  user_id,
  items,
  scores,
  list_length,
  scored_length,
  named_length,
  duplicate_rows,
  nan_scores,
  outside_unit_scores
FROM (
  WITH lists AS (
    SELECT
      user_id,
      top_scores,
      list_length,
      scored_length,
      named_length,
      -- the rows repeating an item found earlier in the list (duckdb_plan.repeated_items)
      $repeats AS duplicate_rows,
      nan_scores,
      outside_unit_scores
    FROM (
      SELECT
        user_id,
        MAX(score, $rows) AS top_scores,
        COUNT(*) AS list_length,
        COUNT(score) AS scored_length,
        COUNT(item_id) AS named_length,
        LIST(item_id) AS listed_items,
        -- a FILTER: DuckDB folds SUM(CASE WHEN ISNAN(score) ...) to 0 over a Parquet file
        -- whose statistics (which leave NaN out) put every score in a finite range
        COUNT(*) FILTER (WHERE ISNAN(score)) AS nan_scores,
        SUM(CASE WHEN score < 0 OR score > 1 THEN 1 ELSE 0 END) AS outside_unit_scores
      FROM input_recommendations
      GROUP BY user_id
    ) AS grouped
  ),

  -- the lists with a NULL: only their rows, through an IN DuckDB filters the scan with
  -- (top_lists.sql), and the NULL user's
  again AS (
    SELECT * FROM input_recommendations
    WHERE user_id IN (
      SELECT user_id AS unsorted_user FROM lists
      WHERE scored_length < list_length OR named_length < list_length OR $again_if_repeated
    )
    UNION ALL
    SELECT * FROM input_recommendations
    WHERE user_id IS NULL
  ),

  ranked_again AS (
    SELECT
      again.user_id,
      again.item_id,
      ROW_NUMBER() OVER (
        PARTITION BY again.user_id
        ORDER BY again.score DESC NULLS LAST, again.item_id DESC
      ) AS pos,
      again.score,
      lists.list_length,
      lists.scored_length,
      lists.named_length,
      lists.duplicate_rows,
      lists.nan_scores,
      lists.outside_unit_scores
    FROM again
    INNER JOIN lists
      ON again.user_id IS NOT DISTINCT FROM lists.user_id
    QUALIFY pos <= $rows
  )

  SELECT
    user_id,
    NULL AS items,
    top_scores AS scores,
    list_length,
    scored_length,
    named_length,
    duplicate_rows,
    nan_scores,
    outside_unit_scores
  FROM lists
  WHERE
    user_id IS NOT NULL AND scored_length = list_length AND named_length = list_length
    AND NOT $again_if_repeated
  UNION ALL
  SELECT
    user_id,
    LIST(item_id ORDER BY pos) AS items,
    LIST(score ORDER BY pos) AS scores,
    list_length,
    scored_length,
    named_length,
    $again_repeats AS duplicate_rows,
    nan_scores,
    outside_unit_scores
  FROM ranked_again
  GROUP BY
    user_id, list_length, scored_length, named_length, duplicate_rows, nan_scores,
    outside_unit_scores
) AS score_lists
