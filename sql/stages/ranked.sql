-- ties="id": score descending, NULL scores last, equal scores broken by item id descending
-- (trec_eval's rule), kept down to the deepest cutoff requested. (The composer joins
-- list_counts.sql's list_length when a metric reads it.)
SELECT
  user_id,
  item_id,
  ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY score DESC NULLS LAST, item_id DESC) AS pos,
  score
FROM input_recommendations
QUALIFY pos <= $cutoff
