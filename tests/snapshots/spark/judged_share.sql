WITH input_recommendations AS (
  SELECT
    user_id AS user_id,
    item_id AS item_id,
    score AS score
  FROM recommendations
), input_pool AS (
  SELECT
    interactions.user_id AS user_id,
    interactions.item_id AS item_id,
    interactions.relevance AS relevance
  FROM interactions AS interactions
), input_interactions AS (
  SELECT
    interactions.user_id AS user_id,
    interactions.item_id AS item_id,
    interactions.relevance AS relevance
  FROM interactions AS interactions
  WHERE
    CASE
      WHEN interactions.relevance < 0 AND interactions.relevance * 0 = 0
      THEN 1
      ELSE 0
    END = 0
  DISTRIBUTE BY
    interactions.user_id
), ranked AS (
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
), pool AS (
  SELECT
    user_id AS user_id,
    pos AS pos,
    hit AS hit,
    MAX(pos) OVER (PARTITION BY user_id) AS list_length
  FROM (
    SELECT
      user_id AS user_id,
      pos AS pos,
      hit AS hit,
      SUM(CASE WHEN NOT pos IS NULL AND hit = 1 THEN 1 ELSE 0 END) OVER (
        PARTITION BY user_id
        ORDER BY pos NULLS LAST
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS relevant_so_far,
      SUM(CASE WHEN NOT pos IS NULL AND hit = 0 THEN 1 ELSE 0 END) OVER (
        PARTITION BY user_id
        ORDER BY pos NULLS LAST
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS nonrelevant_so_far,
      SUM(CASE WHEN NOT pos IS NULL AND hit = -1 THEN 1 ELSE 0 END) OVER (
        PARTITION BY user_id
        ORDER BY pos NULLS LAST
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS unjudged_so_far,
      SUM(CASE WHEN hit = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY user_id) AS n_relevant,
      SUM(CASE WHEN hit = 0 THEN 1 ELSE 0 END) OVER (PARTITION BY user_id) AS n_nonrelevant
    FROM (
      SELECT
        user_id AS user_id,
        MAX(pos) AS pos,
        CASE
          WHEN MAX(relevance) > 0.0
          THEN 1
          WHEN MAX(relevance) >= 0
          THEN 0
          WHEN MAX(relevance) < 0
          THEN -1
        END AS hit
      FROM (
        SELECT
          COALESCE(ranked.user_id, input_pool.user_id) AS user_id,
          COALESCE(ranked.item_id, input_pool.item_id) AS item_id,
          ranked.pos AS pos,
          input_pool.relevance AS relevance
        FROM ranked
        FULL OUTER JOIN input_pool
          ON ranked.user_id = input_pool.user_id
          AND (
            ranked.item_id = input_pool.item_id
          ) IS TRUE
      ) AS listed_or_pooled
      GROUP BY
        user_id,
        item_id
    ) AS pairs
  ) AS pooled_pairs
  WHERE
    n_relevant > 0
), per_user AS (
  SELECT
    user_id AS user_id,
    COALESCE(
      COALESCE(
        CAST(SUM(CASE WHEN pos <= 10 AND NOT hit IS NULL THEN 1 ELSE 0 END) AS DOUBLE) / NULLIF(LEAST(10, COALESCE(MAX(list_length), 10)), 0),
        0
      ),
      0
    ) AS m1
  FROM pool
  GROUP BY
    user_id
)
SELECT
  COUNT(*) AS users,
  AVG(CAST(m1 AS DOUBLE)) AS `judged_share@10`
FROM per_user;
