-- The population: users with at least one relevant item (the composer adds
-- "AND list_length > 0" for population="common"), and one column per requested metric, where
-- the composer reads n_relevant and list_length as these per-user aggregates.
SELECT
  user_id,
  MAX(n_relevant) AS n_relevant,
  COALESCE(MAX(list_length), 0) AS list_length
FROM judged
GROUP BY user_id
HAVING MAX(n_relevant) > 0
