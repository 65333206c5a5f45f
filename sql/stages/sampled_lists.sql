-- sampled=: each list, its sampled negatives and its held-out positives.
SELECT user_id, MAX(negatives) AS negatives, SUM(positive) AS positives
FROM sampled_ranks
GROUP BY user_id
