-- ties="id": score descending, NULL scores last, equal scores broken by item id descending
-- (trec_eval's rule), kept down to the deepest cutoff requested.
SELECT
  user_id,
  item_id,
  ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY score DESC NULLS LAST, item_id DESC) AS pos,
  score,
  COUNT(*) OVER (PARTITION BY user_id) AS list_length,
  COUNT(score) OVER (PARTITION BY user_id) AS scored_length,
  COUNT(item_id) OVER (PARTITION BY user_id) AS named_length
FROM input_recommendations
QUALIFY pos <= $cutoff
