-- sampled=: each held-out positive (a relevant interaction) once per user.
SELECT DISTINCT user_id, item_id
FROM input_interactions
WHERE relevance > $threshold
