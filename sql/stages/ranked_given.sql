-- A rank column supplied with the recommendations is the position, used as it is. It is also
-- the "score" the diagnostics look at: repeated ranks across a cutoff are tied scores.
SELECT
  user_id,
  item_id,
  pos,
  pos AS score
FROM input_recommendations
WHERE pos <= $cutoff
