-- The population: users with at least one relevant item (the composer adds "AND list_length > 0"
-- for population="common") and one column per requested metric.
SELECT
  user_id,
  n_relevant,
  list_length
FROM judged
GROUP BY user_id, n_relevant, list_length
HAVING n_relevant > 0
