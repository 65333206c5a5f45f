-- The recommendations' bad rows the diagnostics count, when they ride the metrics' chain and no
-- count needs a row per list (plan.py's diagnostics "chained"): one aggregate over every row,
-- beside the ranking, which may then keep only each list's first rows (Spark's
-- WindowGroupLimit). The lists' lengths and repeated items come from ranked's own rows
-- (ranked_checks.sql), the users from per_user (diagnostics_chained.sql).
SELECT
  COUNT(*) - COUNT(user_id) AS null_user_rows,
  COUNT(*) - COUNT(score) AS null_scores,
  COUNT(*) - COUNT(item_id) AS null_items,
  SUM(CASE WHEN ISNAN(score) THEN 1 ELSE 0 END) AS nan_scores,
  SUM(CASE WHEN score < 0 OR score > 1 THEN 1 ELSE 0 END) AS outside_unit_scores
FROM input_recommendations
