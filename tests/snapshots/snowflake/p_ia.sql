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
    interactions.relevance AS relevance,
    interactions.intent AS intent
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
      ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY score DESC NULLS LAST, item_id DESC NULLS LAST) AS pos
    FROM input_recommendations
    QUALIFY
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
), intents AS (
  SELECT
    user_id AS user_id,
    intent AS intent,
    item_id AS item_id,
    MAX(CASE WHEN relevance > 0.0 THEN 1 ELSE 0 END) AS relevant
  FROM input_interactions
  WHERE
    NOT intent IS NULL AND NOT user_id IS NULL AND NOT item_id IS NULL
  GROUP BY
    user_id,
    intent,
    item_id
), m1_users AS (
  SELECT
    judged.user_id AS user_id,
    COALESCE(
      CAST(SUM(COALESCE(hits.relevant_hits, 0)) AS DOUBLE) / NULLIF(SUM(CASE WHEN judged.relevant_items > 0 THEN 1 ELSE 0 END) * 10, 0),
      0
    ) AS m1
  FROM (
    SELECT
      intents.user_id AS user_id,
      intents.intent AS intent,
      SUM(intents.relevant) AS relevant_items
    FROM intents
    INNER JOIN (
      SELECT
        user_id AS user_id
      FROM ranked
      GROUP BY
        user_id
    ) AS listed
      ON intents.user_id = listed.user_id
    GROUP BY
      intents.user_id,
      intents.intent
  ) AS judged
  LEFT JOIN (
    SELECT
      user_id AS user_id,
      intent AS intent,
      COUNT(*) AS relevant_hits
    FROM (
      SELECT
        ranked.user_id AS user_id,
        intents.intent AS intent,
        ranked.pos AS pos,
        ROW_NUMBER() OVER (PARTITION BY ranked.user_id, intents.intent ORDER BY ranked.pos, ranked.item_id) AS seen
      FROM ranked
      INNER JOIN intents
        ON ranked.user_id = intents.user_id AND ranked.item_id = intents.item_id
      WHERE
        intents.relevant = 1 AND ranked.pos <= 10
    ) AS placed
    GROUP BY
      user_id,
      intent
  ) AS hits
    ON judged.user_id = hits.user_id AND judged.intent = hits.intent
  GROUP BY
    judged.user_id
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
  ) AS "p_ia@10"
FROM per_user;
