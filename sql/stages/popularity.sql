-- Item popularity for novelty, ARP and the long tail: how many distinct users consumed each
-- item (consumed.sql: the history when given, else the interactions; any row, relevant or not,
-- over all groups). Counting distinct users, not rows, keeps a repeated (user, item) row once,
-- as everywhere else.
SELECT
  item_id,
  COUNT(DISTINCT user_id) AS users
FROM consumed
GROUP BY item_id
