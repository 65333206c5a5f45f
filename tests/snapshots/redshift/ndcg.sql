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
      ORDER BY MAX(input_interactions.relevance) DESC NULLS LAST, item_id DESC NULLS LAST
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
    ranked.pos AS pos,
    ranked.list_length AS list_length,
    COALESCE(truth.relevance, 0) AS relevance,
    truth.ideal_pos AS ideal_pos,
    truth.n_relevant AS n_relevant
  FROM ranked
  FULL OUTER JOIN truth
    ON ranked.user_id = truth.user_id AND ranked.item_id = truth.item_id
  WHERE
    NOT truth.user_id IS NULL OR ranked.pos = 1
), judged AS (
  SELECT
    user_id AS user_id,
    pos AS pos,
    relevance AS gain,
    relevance AS relevance,
    ideal_pos AS ideal_pos,
    n_relevant AS n_relevant,
    list_length AS list_length
  FROM joined
), per_user AS (
  SELECT
    user_id AS user_id,
    MAX(judged.n_relevant) AS n_relevant,
    COALESCE(MAX(judged.list_length), 0) AS list_length,
    COALESCE(
      CAST(SUM(
        CASE
          WHEN pos <= 10
          THEN CAST(gain AS DOUBLE PRECISION) / NULLIF(CAST(LN(pos + 1) AS DOUBLE PRECISION) / 0.6931471805599453, 0)
          ELSE 0
        END
      ) AS DOUBLE PRECISION) / NULLIF(
        SUM(
          CASE
            WHEN ideal_pos <= 10
            THEN CAST(relevance AS DOUBLE PRECISION) / NULLIF(CAST(LN(ideal_pos + 1) AS DOUBLE PRECISION) / 0.6931471805599453, 0)
            ELSE 0
          END
        ),
        0
      ),
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
  AVG(CAST(m1 AS DOUBLE PRECISION)) AS "ndcg@10"
FROM per_user;
