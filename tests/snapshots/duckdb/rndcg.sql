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
    user_id,
    COUNT(*) AS list_length
  FROM input_recommendations
  GROUP BY
    user_id
), truth AS (
  SELECT
    user_id,
    item_id,
    MAX(relevance) AS relevance,
    ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY MAX(relevance) DESC, item_id DESC) AS ideal_pos,
    COUNT(*) OVER (PARTITION BY user_id) AS n_relevant
  FROM input_interactions
  GROUP BY
    user_id,
    item_id
  HAVING
    MAX(relevance) > 0.0
), ranked AS (
  SELECT
    ranked_rows.user_id,
    ranked_rows.item_id,
    ranked_rows.pos,
    list_counts.list_length
  FROM (
    SELECT
      user_id,
      item_id,
      ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY score DESC, item_id DESC) AS pos
    FROM input_recommendations
  ) AS ranked_rows
  LEFT JOIN list_counts
    ON ranked_rows.user_id = list_counts.user_id
), ranked_ideal AS (
  SELECT
    ranked.user_id,
    ranked.item_id,
    ranked.pos,
    ranked.list_length,
    ideal.level_weight_from
  FROM ranked
  LEFT JOIN (
    SELECT
      user_id,
      ideal_pos,
      SUM(CASE WHEN level_end = 1 THEN 1 / ideal_dcg_through ELSE 0 END) OVER (
        PARTITION BY user_id
        ORDER BY ideal_pos DESC
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS level_weight_from
    FROM (
      SELECT
        user_id,
        ideal_pos,
        SUM(relevance / LOG(2, ideal_pos + 1)) OVER (
          PARTITION BY user_id
          ORDER BY ideal_pos
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS ideal_dcg_through,
        CASE
          WHEN LEAD(relevance) OVER (PARTITION BY user_id ORDER BY ideal_pos) = relevance
          THEN 0
          ELSE 1
        END AS level_end
      FROM truth
    ) AS ideal_prefix
  ) AS ideal
    ON ranked.user_id = ideal.user_id AND ranked.pos = ideal.ideal_pos
), joined AS (
  SELECT
    COALESCE(ranked.user_id, truth.user_id) AS user_id,
    ranked.pos,
    ranked.list_length,
    COALESCE(truth.relevance, 0) AS relevance,
    truth.ideal_pos,
    truth.n_relevant,
    ranked.level_weight_from
  FROM ranked_ideal AS ranked
  FULL OUTER JOIN truth
    ON ranked.user_id = truth.user_id AND ranked.item_id = truth.item_id
), judged AS (
  SELECT
    user_id,
    pos,
    relevance AS gain,
    relevance,
    ideal_pos,
    n_relevant,
    list_length,
    COALESCE(level_weight_from, 0) AS level_weight_at_pos
  FROM joined
), per_user AS (
  SELECT
    user_id,
    MAX(n_relevant) AS n_relevant,
    COALESCE(MAX(list_length), 0) AS list_length,
    COALESCE(
      (
        CASE
          WHEN COUNT(
            CASE
              WHEN ABS(gain / LOG(2, pos + 1) * level_weight_at_pos) < POWER(2, 32)
              THEN 1
            END
          ) = COUNT(gain / LOG(2, pos + 1) * level_weight_at_pos)
          THEN CAST(SUM(
            CASE
              WHEN NOT pos IS NULL
              AND ABS(gain / LOG(2, pos + 1) * level_weight_at_pos) < POWER(2, 32)
              THEN CAST(gain / LOG(2, pos + 1) * level_weight_at_pos * POWER(2, 64) AS INT128)
              ELSE 0
            END
          ) AS DOUBLE) / POWER(2, 64)
          ELSE SUM(
            CASE
              WHEN NOT pos IS NULL
              THEN gain / LOG(2, pos + 1) * level_weight_at_pos
              ELSE 0
            END
          )
        END + CASE
          WHEN COALESCE(MAX(list_length), 0) > MAX(n_relevant) + 1
          THEN CASE
            WHEN COUNT(CASE WHEN ABS(gain / LOG(2, pos + 1)) < POWER(2, 32) THEN 1 END) = COUNT(gain / LOG(2, pos + 1))
            THEN CAST(SUM(
              CASE
                WHEN NOT pos IS NULL AND ABS(gain / LOG(2, pos + 1)) < POWER(2, 32)
                THEN CAST(gain / LOG(2, pos + 1) * POWER(2, 64) AS INT128)
                ELSE 0
              END
            ) AS DOUBLE) / POWER(2, 64)
            ELSE SUM(CASE WHEN NOT pos IS NULL THEN gain / LOG(2, pos + 1) ELSE 0 END)
          END / NULLIF(
            CASE
              WHEN COUNT(CASE WHEN ABS(relevance / LOG(2, ideal_pos + 1)) < POWER(2, 32) THEN 1 END) = COUNT(relevance / LOG(2, ideal_pos + 1))
              THEN CAST(SUM(
                CASE
                  WHEN NOT ideal_pos IS NULL AND ABS(relevance / LOG(2, ideal_pos + 1)) < POWER(2, 32)
                  THEN CAST(relevance / LOG(2, ideal_pos + 1) * POWER(2, 64) AS INT128)
                  ELSE 0
                END
              ) AS DOUBLE) / POWER(2, 64)
              ELSE SUM(
                CASE WHEN NOT ideal_pos IS NULL THEN relevance / LOG(2, ideal_pos + 1) ELSE 0 END
              )
            END,
            0
          )
          ELSE 0
        END
      ) / NULLIF(
        COUNT(DISTINCT CASE WHEN NOT ideal_pos IS NULL THEN relevance END) + CASE WHEN COALESCE(MAX(list_length), 0) > MAX(n_relevant) + 1 THEN 1 ELSE 0 END,
        0
      ),
      0
    ) AS m1
  FROM judged
  GROUP BY
    user_id
  HAVING
    MAX(n_relevant) > 0
)
SELECT
  COUNT(*) AS users,
  CASE
    WHEN COUNT(CASE WHEN ABS(m1) < POWER(2, 32) THEN CAST(m1 * POWER(2, 64) AS INT128) END) = COUNT(m1)
    THEN CAST(SUM(CASE WHEN ABS(m1) < POWER(2, 32) THEN CAST(m1 * POWER(2, 64) AS INT128) END) AS DOUBLE) / POWER(2, 64)
    ELSE SUM(m1)
  END / COUNT(m1) AS "rndcg"
FROM per_user;
