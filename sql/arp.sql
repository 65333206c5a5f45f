-- name: arp
-- title: Average recommendation popularity
-- definition: per user with a list, the mean over its first k items of users(i), the distinct users who consumed item i (0 for an item nobody consumed), in the history table when given, else in the interactions; averaged over the users with a list.
-- cutoff: required
-- aggregate: mean
-- better: lower
-- reads: lists
-- ties_average: no
-- aliases: avg_rec_popularity, average_recommendation_popularity
-- references: RecTools `AvgRecPopularity(k)` (the history, else the interactions, as its prev_interactions; its popularity counts rows: the same when each (user, item) appears once); Abdollahpouri et al., FLAIRS 2019
SELECT
  ranked.user_id,
  AVG(COALESCE(popularity.users, 0)) AS arp
FROM ranked
LEFT JOIN popularity ON ranked.item_id = popularity.item_id
WHERE ranked.pos <= $k
GROUP BY ranked.user_id
