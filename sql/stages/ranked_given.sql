-- A rank column supplied with the recommendations is the position, used as it is. It is also
-- the "score" the diagnostics look at: NULL ranks and repeated ranks are reported.
SELECT
  user_id,
  item_id,
  pos,
  pos AS score,
  COUNT(*) OVER (PARTITION BY user_id) AS list_length,
  COUNT(pos) OVER (PARTITION BY user_id) AS scored_length,
  COUNT(item_id) OVER (PARTITION BY user_id) AS named_length
FROM input_recommendations
QUALIFY pos <= $cutoff
