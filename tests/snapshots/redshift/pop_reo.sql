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
), input_history AS (
  SELECT
    user_id AS user_id,
    item_id AS item_id
  FROM input_interactions
  WHERE
    1 = 0
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
        ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY score DESC NULLS LAST, item_id DESC NULLS LAST) AS pos
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
), short_head AS (
  SELECT
    item_id AS item_id
  FROM (
    SELECT
      item_id AS item_id,
      SUM(users) OVER (
        ORDER BY users DESC NULLS LAST, item_id
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
      ) AS users_before,
      SUM(users) OVER () AS all_users
    FROM popularity
  ) AS by_popularity
  WHERE
    5 * COALESCE(users_before, 0) < 4 * all_users
), m1_groups AS (
  SELECT
    CAST(ABS(head_rate - tail_rate) AS DOUBLE PRECISION) / NULLIF(head_rate + tail_rate, 0) AS m1
  FROM (
    SELECT
      CAST(SUM(head_found) AS DOUBLE PRECISION) / NULLIF(SUM(head_relevant), 0) AS head_rate,
      CAST(SUM(tail_found) AS DOUBLE PRECISION) / NULLIF(SUM(tail_relevant), 0) AS tail_rate
    FROM (
      SELECT
        user_id AS user_id,
        SUM(head_found) AS head_found,
        SUM(tail_found) AS tail_found,
        SUM(head_relevant) AS head_relevant,
        SUM(tail_relevant) AS tail_relevant
      FROM (
        SELECT
          ranked.user_id AS user_id,
          CASE WHEN short_head.item_id IS NULL THEN 0 ELSE 1 END AS head_found,
          CASE WHEN short_head.item_id IS NULL THEN 1 ELSE 0 END AS tail_found,
          0 AS head_relevant,
          0 AS tail_relevant,
          0 AS listed,
          0 AS relevant
        FROM ranked
        INNER JOIN truth
          ON ranked.user_id = truth.user_id AND ranked.item_id = truth.item_id
        LEFT JOIN short_head
          ON ranked.item_id = short_head.item_id
        WHERE
          ranked.pos <= 10
        UNION ALL
        SELECT
          truth.user_id AS user_id,
          0 AS head_found,
          0 AS tail_found,
          CASE WHEN seen.item_id IS NULL AND NOT short_head.item_id IS NULL THEN 1 ELSE 0 END AS head_relevant,
          CASE WHEN seen.item_id IS NULL AND short_head.item_id IS NULL THEN 1 ELSE 0 END AS tail_relevant,
          0 AS listed,
          1 AS relevant
        FROM truth
        LEFT JOIN short_head
          ON truth.item_id = short_head.item_id
        LEFT JOIN (
          SELECT DISTINCT
            user_id AS history_user,
            item_id AS item_id
          FROM input_history
        ) AS seen
          ON truth.user_id = seen.history_user AND truth.item_id = seen.item_id
        UNION ALL
        SELECT
          ranked.user_id AS user_id,
          0 AS head_found,
          0 AS tail_found,
          0 AS head_relevant,
          0 AS tail_relevant,
          1 AS listed,
          0 AS relevant
        FROM ranked
        WHERE
          ranked.pos = 1
      ) AS parts
      GROUP BY
        user_id
      HAVING
        MAX(listed) = 1 AND MAX(relevant) = 1
    ) AS users
  ) AS rates
)
SELECT
  COUNT(*) AS users,
  (
    SELECT
      MAX(m1_groups.m1) AS m1
    FROM m1_groups
  ) AS "pop_reo@10"
FROM per_user;
