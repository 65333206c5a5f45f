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
), ranked AS (
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
), judgements AS (
  SELECT
    user_id AS user_id,
    pos AS pos,
    gain AS gain
  FROM (
    SELECT
      user_id AS user_id,
      pos AS pos,
      hit AS hit,
      SUM(CASE WHEN NOT pos IS NULL AND hit = 0 THEN 1 ELSE 0 END) OVER (PARTITION BY user_id ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS nonrelevant_so_far,
      SUM(CASE WHEN hit = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY user_id) AS n_relevant,
      SUM(CASE WHEN hit = 0 THEN 1 ELSE 0 END) OVER (PARTITION BY user_id) AS n_nonrelevant,
      (
        CAST(CASE WHEN judged_relevance > 0.0 THEN judged_relevance ELSE 0 END AS DOUBLE PRECISION)
      ) AS gain
    FROM (
      SELECT
        user_id AS user_id,
        MAX(pos) AS pos,
        CASE WHEN MAX(relevance) > 0.0 THEN 1 WHEN NOT MAX(relevance) IS NULL THEN 0 END AS hit,
        MAX(relevance) AS judged_relevance
      FROM (
        SELECT
          COALESCE(ranked.user_id, input_interactions.user_id) AS user_id,
          COALESCE(ranked.item_id, input_interactions.item_id) AS item_id,
          ranked.pos AS pos,
          input_interactions.relevance AS relevance
        FROM ranked
        FULL OUTER JOIN input_interactions
          ON ranked.user_id = input_interactions.user_id
          AND ranked.item_id = input_interactions.item_id
      ) AS listed_or_judged
      GROUP BY
        user_id,
        item_id
    ) AS pairs
  ) AS judged_pairs
  WHERE
    n_relevant > 0
), per_user AS (
  SELECT
    user_id AS user_id,
    COALESCE(
      SUM(
        CASE
          WHEN pos <= 10
          THEN CAST(gain AS DOUBLE PRECISION) / NULLIF(CAST(LN(pos + 1) AS DOUBLE PRECISION) / 0.6931471805599453, 0)
          ELSE 0
        END
      ),
      0
    ) AS m1
  FROM judgements
  GROUP BY
    user_id
)
SELECT
  COUNT(*) AS users,
  AVG(CAST(m1 AS DOUBLE PRECISION)) AS "dcg_gains@10"
FROM per_user;
