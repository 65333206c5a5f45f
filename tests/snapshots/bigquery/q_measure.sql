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
    MAX(input_interactions.relevance) AS relevance,
    ROW_NUMBER() OVER (
      PARTITION BY user_id
      ORDER BY MAX(input_interactions.relevance) DESC, item_id DESC
    ) AS ideal_pos,
    COUNT(*) OVER (PARTITION BY user_id) AS n_relevant
  FROM input_interactions
  GROUP BY
    user_id,
    item_id
  HAVING
    MAX(input_interactions.relevance) > 0.0
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
), ranked_ideal AS (
  SELECT
    ranked.user_id AS user_id,
    ranked.item_id AS item_id,
    ranked.pos AS pos,
    ranked.list_length AS list_length,
    ideal.ideal_gain_through AS ideal_gain_through
  FROM ranked
  LEFT JOIN (
    SELECT
      user_id AS user_id,
      ideal_pos AS ideal_pos,
      ideal_gain_through AS ideal_gain_through
    FROM (
      SELECT
        user_id AS user_id,
        ideal_pos AS ideal_pos,
        SUM(relevance) OVER (
          PARTITION BY user_id
          ORDER BY CASE WHEN ideal_pos IS NULL THEN 1 ELSE 0 END, ideal_pos
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS ideal_gain_through
      FROM truth
    ) AS ideal_prefix
  ) AS ideal
    ON ranked.user_id = ideal.user_id AND ranked.pos = ideal.ideal_pos
), joined AS (
  SELECT
    COALESCE(ranked.user_id, truth.user_id) AS user_id,
    ranked.pos AS pos,
    ranked.list_length AS list_length,
    COALESCE(truth.relevance, 0) AS relevance,
    truth.ideal_pos AS ideal_pos,
    truth.n_relevant AS n_relevant,
    ranked.ideal_gain_through AS ideal_gain_through
  FROM ranked_ideal AS ranked
  FULL OUTER JOIN truth
    ON ranked.user_id = truth.user_id AND ranked.item_id = truth.item_id
), judged AS (
  SELECT
    user_id AS user_id,
    pos AS pos,
    CASE WHEN relevance > 0 THEN 1 ELSE 0 END AS hit,
    ideal_pos AS ideal_pos,
    SUM(CASE WHEN relevance > 0 THEN 1 ELSE 0 END) OVER (
      PARTITION BY user_id
      ORDER BY CASE WHEN pos IS NULL THEN 1 ELSE 0 END, pos
      ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS hits_so_far,
    n_relevant AS n_relevant,
    list_length AS list_length,
    SUM(CASE WHEN NOT pos IS NULL THEN relevance ELSE 0 END) OVER (
      PARTITION BY user_id
      ORDER BY CASE WHEN pos IS NULL THEN 1 ELSE 0 END, pos
      ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS gain_so_far,
    CASE
      WHEN NOT pos IS NULL
      THEN COALESCE(
        ideal_gain_through,
        SUM(CASE WHEN NOT ideal_pos IS NULL THEN relevance ELSE 0 END) OVER (PARTITION BY user_id)
      )
    END AS ideal_gain_at_pos
  FROM joined
), per_user AS (
  SELECT
    user_id AS user_id,
    MAX(judged.n_relevant) AS n_relevant,
    COALESCE(MAX(judged.list_length), 0) AS list_length,
    COALESCE(
      CAST(SUM(
        CASE
          WHEN pos <= 10 AND hit = 1
          THEN CAST(hits_so_far + gain_so_far AS FLOAT64) / NULLIF(pos + ideal_gain_at_pos, 0)
          ELSE 0
        END
      ) AS FLOAT64) / NULLIF(SUM(CASE WHEN ideal_pos <= 10 THEN 1 ELSE 0 END), 0),
      0
    ) AS m1
  FROM judged
  GROUP BY
    user_id
  HAVING
    MAX(judged.n_relevant) > 0
)
SELECT
  COUNT(*) AS users,
  AVG(CAST(m1 AS FLOAT64)) AS `q_measure@10`
FROM per_user;
