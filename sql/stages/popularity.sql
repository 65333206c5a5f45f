-- Item popularity for novelty and ARP: how many distinct users interacted with each item (any
-- interaction, relevant or not, over all groups). Counting distinct users, not rows, keeps a
-- repeated (user, item) row once, as everywhere else.
SELECT
  item_id,
  COUNT(DISTINCT user_id) AS users
FROM input_interactions
GROUP BY item_id
