-- sampled=: the (user, item) pairs a list holds more than once. The histogram reads whole
-- lists, where evaluate's own check reads only as deep as the metrics' cutoff: a repeated
-- positive would be counted twice, a repeated negative taken for another sampled one.
SELECT user_id, item_id
FROM input_recommendations
GROUP BY user_id, item_id
HAVING COUNT(*) > 1
