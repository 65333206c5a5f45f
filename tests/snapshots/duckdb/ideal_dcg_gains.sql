WITH input_recommendations AS NOT MATERIALIZED (
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
    user_id,
    UNNEST(items) AS item_id,
    GENERATE_SUBSCRIPTS(items, 1) AS pos
  FROM top_lists
), judgements AS (
  SELECT
    user_id,
    gain,
    CASE
      WHEN gain > 0
      THEN ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY gain DESC)
    END AS ideal_gain_pos
  FROM (
    SELECT
      user_id,
      pos,
      hit,
      SUM(CASE WHEN NOT pos IS NULL AND hit = 0 THEN 1 ELSE 0 END) OVER (PARTITION BY user_id ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS nonrelevant_so_far,
      SUM(CASE WHEN hit = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY user_id) AS n_relevant,
      SUM(CASE WHEN hit = 0 THEN 1 ELSE 0 END) OVER (PARTITION BY user_id) AS n_nonrelevant,
      (
        CAST(CASE WHEN judged_relevance > 0.0 THEN judged_relevance ELSE 0 END AS DOUBLE)
      ) AS gain
    FROM (
      SELECT
        user_id,
        MAX(pos) AS pos,
        CASE WHEN MAX(relevance) > 0.0 THEN 1 WHEN NOT MAX(relevance) IS NULL THEN 0 END AS hit,
        MAX(relevance) AS judged_relevance
      FROM (
        SELECT
          COALESCE(ranked.user_id, input_interactions.user_id) AS user_id,
          COALESCE(ranked.item_id, input_interactions.item_id) AS item_id,
          ranked.pos,
          input_interactions.relevance
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
    user_id,
    COALESCE(
      SUM(CASE WHEN ideal_gain_pos <= 10 THEN gain / LOG(2, ideal_gain_pos + 1) ELSE 0 END),
      0
    ) AS m1
  FROM judgements
  GROUP BY
    user_id
)
SELECT
  COUNT(*) AS users,
  CASE
    WHEN COUNT(CASE WHEN ABS(m1) < POWER(2, 32) THEN CAST(m1 * POWER(2, 64) AS INT128) END) = COUNT(m1)
    THEN CAST(SUM(CASE WHEN ABS(m1) < POWER(2, 32) THEN CAST(m1 * POWER(2, 64) AS INT128) END) AS DOUBLE) / POWER(2, 64)
    ELSE SUM(m1)
  END / COUNT(m1) AS "ideal_dcg_gains@10"
FROM per_user;
