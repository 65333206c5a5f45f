-- sampled=: the held-out positives absent from their user's list (no sampled rank).
SELECT p.user_id
FROM sampled_positives AS p
LEFT JOIN input_recommendations AS r ON p.user_id = r.user_id AND p.item_id = r.item_id
WHERE r.item_id IS NULL
