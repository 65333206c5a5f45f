WITH input_recommendations AS (
  SELECT
    user_id AS user_id,
    item_id AS item_id,
    score AS score
  FROM recommendations
), input_interactions AS (
  SELECT
    interactions.user_id AS user_id,
    interactions.item_id AS item_id,
    interactions.relevance AS relevance
  FROM interactions AS interactions
), list_counts AS (
  SELECT
    user_id AS user_id,
    COUNT(*) AS list_length
  FROM input_recommendations
  GROUP BY
    user_id
), truth AS (
  SELECT
    user_id AS user_id,
    item_id AS item_id,
    COUNT(*) OVER (PARTITION BY user_id) AS n_relevant
  FROM input_interactions
  GROUP BY
    user_id,
    item_id
  HAVING
    MAX(relevance) > 0.0
), ranked AS (
  SELECT
    ranked_rows.user_id AS user_id,
    ranked_rows.item_id AS item_id,
    ranked_rows.pos AS pos,
    list_counts.list_length AS list_length
  FROM (
    SELECT
      user_id AS user_id,
      item_id AS item_id,
      pos AS pos
    FROM (
      SELECT
        user_id AS user_id,
        item_id AS item_id,
        ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY score DESC, item_id DESC) AS pos
      FROM input_recommendations
    ) AS _t
    WHERE
      pos <= 10
  ) AS ranked_rows
  LEFT JOIN list_counts
    ON ranked_rows.user_id = list_counts.user_id
), joined AS (
  SELECT
    COALESCE(ranked.user_id, truth.user_id) AS user_id,
    ranked.list_length AS list_length,
    truth.n_relevant AS n_relevant
  FROM ranked
  FULL OUTER JOIN truth
    ON ranked.user_id = truth.user_id AND ranked.item_id = truth.item_id
), judged AS (
  SELECT
    user_id AS user_id,
    n_relevant AS n_relevant,
    list_length AS list_length
  FROM joined
), per_user AS (
  SELECT
    user_id AS user_id,
    MAX(judged.n_relevant) AS n_relevant,
    COALESCE(MAX(judged.list_length), 0) AS list_length
  FROM judged
  GROUP BY
    user_id
  HAVING
    MAX(judged.n_relevant) > 0
), consumed AS (
  SELECT
    user_id AS user_id,
    item_id AS item_id
  FROM input_interactions
  WHERE
    NOT user_id IS NULL AND NOT item_id IS NULL
), popularity AS (
  SELECT
    item_id AS item_id,
    COUNT(DISTINCT user_id) AS users
  FROM consumed
  GROUP BY
    item_id
), m1_users AS (
  SELECT
    ranked.user_id AS user_id,
    CAST(SUM(
      CASE
        WHEN popularity.users IS NULL
        THEN 1.0
        WHEN consuming.users > 1
        THEN CAST(LOG(2, consuming.users) - LOG(2, popularity.users) AS DOUBLE) / NULLIF(LOG(2, consuming.users), 0)
        ELSE 0.0
      END
    ) AS DOUBLE) / 10 AS m1
  FROM ranked
  LEFT JOIN popularity
    ON ranked.item_id = popularity.item_id
  CROSS JOIN (
    SELECT
      COUNT(DISTINCT user_id) AS users
    FROM consumed
  ) AS consuming
  WHERE
    ranked.pos <= 10
  GROUP BY
    ranked.user_id
), m1_groups AS (
  SELECT
    AVG(CAST(m1_users.m1 AS DOUBLE)) AS m1
  FROM m1_users
)
SELECT
  COUNT(*) AS users,
  (
    SELECT
      MAX(m1_groups.m1) AS m1
    FROM m1_groups
  ) AS "surprisal@10"
FROM per_user;
