-- One row per list (user): the counts over the whole list that the metrics and the diagnostics
-- read, from one GROUP BY instead of windows over every row (so an engine can keep only the
-- first K rows of each list before ranking them: Spark's WindowGroupLimit).
-- duplicate_rows counts the rows repeating an item found elsewhere in the same list, anywhere
-- in it; broken_ranks (only with a rank column: the composer sets it to 0 otherwise) flags a
-- list whose ranks are not 1, 2, ..., n; under ranks="literal" the composer puts
-- broken_literal_ranks in its place (a rank NULL, below 1 or not whole), and drops it
-- otherwise.
SELECT
  user_id,
  COUNT(*) AS list_length,
  COUNT(score) AS scored_length,
  COUNT(item_id) AS named_length,
  COUNT(item_id) - COUNT(DISTINCT item_id) AS duplicate_rows,
  SUM(CASE WHEN ISNAN(score) THEN 1 ELSE 0 END) AS nan_scores,
  SUM(CASE WHEN score < 0 OR score > 1 THEN 1 ELSE 0 END) AS outside_unit_scores,
  CASE
    WHEN MIN(pos) = 1 AND MAX(pos) = COUNT(*) AND COUNT(DISTINCT pos) = COUNT(*) THEN 0 ELSE 1
  END AS broken_ranks,
  CASE
    WHEN COUNT(pos) = COUNT(*) AND MIN(pos) >= 1 AND MAX(pos - FLOOR(pos)) = 0 THEN 0 ELSE 1
  END AS broken_literal_ranks
FROM input_recommendations
GROUP BY user_id
