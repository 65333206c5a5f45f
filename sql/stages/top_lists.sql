-- DuckDB only, for ties="id" or "id_text" when every metric has a cutoff: each user's first $rows items and
-- their scores ($rows is $cutoff, or $cutoff + 1 for the diagnostics, which read only the score
-- there), in ranked.sql's order, as two lists, with the counts of the whole list; without
-- sorting every row. A top-k aggregate keyed on the plain score (a double compares far faster
-- than a composite sort key) keeps each user's $cutoff + 3 best. When the score at $cutoff is
-- above the last one kept, every item of a score that reaches $cutoff was kept, and sorting
-- those few (equal scores by item id descending) gives the exact order. Otherwise (a tie of
-- three or more items across the cutoff), or when NULL scores or NULL items reach the list, the
-- user is ranked again by ranked.sql's window: so few users that reading only their rows again
-- costs little.
-- $score_floor (run._score_floor; the FILTERs are dropped without one) lets only scores
-- at or above it into the top-k aggregate, which costs per row it takes: a user with
-- $cutoff + 3 such scores has all of its best among them, and one with fewer is exact only if
-- every score passed; the others are ranked again. The floor only decides which users take
-- the window, never a number.
-- The diagnostics' counts over each whole list (list_counts.sql's) come from the same
-- aggregate: NaN scores and scores outside [0, 1] (the composer drops them when no diagnostics
-- are asked for). Repeated items are counted where the metrics read ($listed_repeats: among
-- the first $cutoff items, duckdb_plan.repeats_among), or under checks="full" anywhere in the
-- list ($repeats, found in the list of its items, which the composer drops otherwise).
SELECT
  user_id,
  items,
  scores,
  list_length,
  scored_length,
  named_length,
  $listed_repeats AS duplicate_rows,
  nan_scores,
  outside_unit_scores
FROM (
  WITH lists AS (
    SELECT
      user_id,
      MAX_BY(item_id, score, $cutoff + 3) FILTER (WHERE score >= $score_floor) AS top_items,
      MAX(score, $cutoff + 3) FILTER (WHERE score >= $score_floor) AS top_scores,
      COUNT(score) FILTER (WHERE score >= $score_floor) AS floored_length,
      COUNT(*) AS list_length,
      COUNT(score) AS scored_length,
      COUNT(item_id) AS named_length,
      LIST(item_id) AS listed_items,
      -- a FILTER: DuckDB folds SUM(CASE WHEN ISNAN(score) ...) to 0 over a Parquet file whose
      -- statistics (which leave NaN out) put every score in a finite range
      COUNT(*) FILTER (WHERE ISNAN(score)) AS nan_scores,
      SUM(CASE WHEN score < 0 OR score > 1 THEN 1 ELSE 0 END) AS outside_unit_scores
    FROM input_recommendations
    GROUP BY user_id
  ),

  checked_lists AS (
    SELECT
      user_id,
      top_items,
      top_scores,
      list_length,
      scored_length,
      named_length,
      -- the rows repeating an item found earlier in the list (duckdb_plan.repeated_items)
      $repeats AS duplicate_rows,
      nan_scores,
      outside_unit_scores,
      COALESCE(
        named_length = list_length
        AND (
          (
            LEN(top_scores) = $cutoff + 3
            AND LIST_EXTRACT(top_scores, $cutoff) > LIST_EXTRACT(top_scores, $cutoff + 3)
          )
          OR (LEN(top_scores) < $cutoff + 3 AND floored_length = list_length)
        ),
        FALSE  -- top_scores is NULL when every score is
      ) AS exact
    FROM lists
  ),

  exact_lists AS (
    SELECT
      user_id,
      list_length,
      scored_length,
      named_length,
      duplicate_rows,
      nan_scores,
      outside_unit_scores,
      top_items,
      top_scores,
      CASE
        -- equal neighbours in the (descending) scores: a tie to order by item id
        WHEN LIST_BOOL_OR(LIST_TRANSFORM(top_scores[2:], LAMBDA score, i: score = top_scores[i]))
          THEN LIST_SORT(
            LIST_TRANSFORM(top_items, LAMBDA item, i: {'score': top_scores[i], 'item': item}), 'DESC'
          )
      END AS sorted_ties
    FROM checked_lists
    WHERE exact
  ),

  -- only the rows of the users ranked again (an IN that DuckDB filters the scan with: a join
  -- on IS NOT DISTINCT FROM reads every row into the join, twice the time at 1e8 rows), and
  -- the NULL user's, which IN cannot match (free on Parquet: row group statistics skip them)
  again AS (
    SELECT * FROM input_recommendations
    -- (aliased: widen_keys widens a projection named user_id, and IN takes one column)
    WHERE user_id IN (SELECT user_id AS inexact_user FROM checked_lists WHERE NOT exact)
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
      checked_lists.list_length,
      checked_lists.scored_length,
      checked_lists.named_length,
      checked_lists.duplicate_rows,
      checked_lists.nan_scores,
      checked_lists.outside_unit_scores
    FROM again
    -- a NULL user is a list too, which the diagnostics count
    INNER JOIN checked_lists
      ON again.user_id IS NOT DISTINCT FROM checked_lists.user_id
    WHERE NOT checked_lists.exact
    QUALIFY pos <= $rows
  )

  SELECT
    user_id,
    CASE
      WHEN sorted_ties IS NULL THEN top_items[1:$rows]
      ELSE LIST_TRANSFORM(sorted_ties[1:$rows], LAMBDA entry: entry.item)
    END AS items,
    CASE
      WHEN sorted_ties IS NULL THEN top_scores[1:$rows]
      ELSE LIST_TRANSFORM(sorted_ties[1:$rows], LAMBDA entry: entry.score)
    END AS scores,
    list_length,
    scored_length,
    named_length,
    duplicate_rows,
    nan_scores,
    outside_unit_scores
  FROM exact_lists
  UNION ALL
  SELECT
    user_id,
    LIST(item_id ORDER BY pos) AS items,
    LIST(score ORDER BY pos) AS scores,
    list_length,
    scored_length,
    named_length,
    duplicate_rows,
    nan_scores,
    outside_unit_scores
  FROM ranked_again
  GROUP BY
    user_id, list_length, scored_length, named_length, duplicate_rows, nan_scores,
    outside_unit_scores
) AS top_k
