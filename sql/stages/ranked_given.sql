-- A rank column supplied with the recommendations is the position, used as it is.
SELECT
  user_id,
  item_id,
  pos,
  COUNT(*) OVER (PARTITION BY user_id) AS list_length
FROM input_recommendations
QUALIFY pos <= $cutoff
