-- The short head of the catalogue, for the long-tail metrics (aplt, aclt, tail_coverage,
-- pop_rsp, pop_reo): the most popular items (popularity.sql's distinct users per item, most
-- first; equal popularity by item id ascending) that together make 80% of the (user, item)
-- pairs consumed (consumed.sql: the history when given, else the interactions), the item
-- that reaches 80% included, as Elliot's Popularity.get_short_head builds it (pop_ratio 0.8).
-- Every other item is in the long tail, an item nobody consumed too. An item is in the head while
-- the users of the items before it are under 80% of all: 5 * before < 4 * all, exact in
-- integers where 0.8 * all would round.
SELECT item_id
FROM (
  SELECT
    item_id,
    SUM(users) OVER (
      ORDER BY users DESC, item_id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
    ) AS users_before,
    SUM(users) OVER () AS all_users
  FROM popularity
) AS by_popularity
WHERE 5 * COALESCE(users_before, 0) < 4 * all_users
