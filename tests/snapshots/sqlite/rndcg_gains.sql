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
      ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY score DESC, item_id DESC) AS pos
    FROM input_recommendations
  ) AS ranked_rows
  LEFT JOIN list_counts
    ON ranked_rows.user_id = list_counts.user_id
), judgements AS (
  SELECT
    user_id AS user_id,
    pos AS pos,
    n_relevant AS n_relevant,
    MAX(pos) OVER (PARTITION BY user_id) AS list_length,
    gain AS gain,
    CASE
      WHEN gain > 0
      THEN ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY gain DESC)
    END AS ideal_gain_pos
  FROM (
    SELECT
      user_id AS user_id,
      pos AS pos,
      hit AS hit,
      SUM(CASE WHEN NOT pos IS NULL AND hit = 0 THEN 1 ELSE 0 END) OVER (
        PARTITION BY user_id
        ORDER BY pos NULLS LAST
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS nonrelevant_so_far,
      SUM(CASE WHEN hit = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY user_id) AS n_relevant,
      SUM(CASE WHEN hit = 0 THEN 1 ELSE 0 END) OVER (PARTITION BY user_id) AS n_nonrelevant,
      (
        CAST(CASE WHEN judged_relevance > 0.0 THEN judged_relevance ELSE 0 END AS REAL)
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
        LEFT OUTER JOIN input_interactions
          ON ranked.user_id = input_interactions.user_id
          AND ranked.item_id = input_interactions.item_id
        UNION ALL
        SELECT
          COALESCE(ranked.user_id, input_interactions.user_id) AS user_id,
          COALESCE(ranked.item_id, input_interactions.item_id) AS item_id,
          ranked.pos AS pos,
          input_interactions.relevance AS relevance
        FROM input_interactions
        LEFT JOIN ranked
          ON ranked.user_id = input_interactions.user_id
          AND ranked.item_id = input_interactions.item_id
        WHERE
          ranked.user_id IS NULL
      ) AS listed_or_judged
      GROUP BY
        user_id,
        item_id
    ) AS pairs
  ) AS judged_pairs
  WHERE
    n_relevant > 0
), judgements_ideal AS (
  SELECT
    judgements.user_id AS user_id,
    judgements.pos AS pos,
    COALESCE(ideal.level_weight_from, 0) AS gains_level_weight_at_pos,
    judgements.gain AS gain,
    judgements.ideal_gain_pos AS ideal_gain_pos,
    judgements.list_length AS list_length,
    judgements.n_relevant AS n_relevant
  FROM judgements
  LEFT JOIN (
    SELECT
      user_id AS user_id,
      ideal_at AS ideal_at,
      SUM(
        CASE
          WHEN level_end = 1
          THEN CAST(1 AS REAL) / NULLIF(ideal_dcg_through, 0)
          ELSE 0
        END
      ) OVER (
        PARTITION BY user_id
        ORDER BY ideal_at DESC
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS level_weight_from
    FROM (
      SELECT
        user_id AS user_id,
        ideal_gain_pos AS ideal_at,
        SUM(CAST(gain AS REAL) / NULLIF(LOG(2, ideal_gain_pos + 1), 0)) OVER (
          PARTITION BY user_id
          ORDER BY ideal_gain_pos NULLS LAST
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS ideal_dcg_through,
        CASE
          WHEN LEAD(gain) OVER (PARTITION BY user_id ORDER BY ideal_gain_pos NULLS LAST) = gain
          THEN 0
          ELSE 1
        END AS level_end
      FROM judgements
      WHERE
        NOT ideal_gain_pos IS NULL
    ) AS ideal_prefix
  ) AS ideal
    ON judgements.user_id = ideal.user_id AND judgements.pos = ideal.ideal_at
), per_user AS (
  SELECT
    user_id AS user_id,
    COALESCE(
      CASE
        WHEN MAX(n_relevant) = 0
        THEN 0
        ELSE CAST(SUM(
          CASE
            WHEN NOT pos IS NULL
            THEN CAST(gain AS REAL) / NULLIF(LOG(2, pos + 1), 0) * gains_level_weight_at_pos
            ELSE 0
          END
        ) + CASE
          WHEN MAX(list_length) > COUNT(ideal_gain_pos) + 1
          THEN CAST(SUM(
            CASE
              WHEN NOT pos IS NULL
              THEN CAST(gain AS REAL) / NULLIF(LOG(2, pos + 1), 0)
              ELSE 0
            END
          ) AS REAL) / NULLIF(
            SUM(
              CASE
                WHEN NOT ideal_gain_pos IS NULL
                THEN CAST(gain AS REAL) / NULLIF(LOG(2, ideal_gain_pos + 1), 0)
                ELSE 0
              END
            ),
            0
          )
          ELSE 0
        END AS REAL) / NULLIF(
          COUNT(DISTINCT CASE WHEN NOT ideal_gain_pos IS NULL THEN gain END) + CASE WHEN MAX(list_length) > COUNT(ideal_gain_pos) + 1 THEN 1 ELSE 0 END,
          0
        )
      END,
      0
    ) AS m1
  FROM judgements_ideal AS judgements
  GROUP BY
    user_id
)
SELECT
  COUNT(*) AS users,
  AVG(CAST(m1 AS REAL)) AS "rndcg_gains"
FROM per_user;
