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
  DISTRIBUTE BY
    interactions.user_id
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
    ON ranked.user_id = truth.user_id AND (
      ranked.item_id = truth.item_id
    ) IS TRUE
), judged AS (
  SELECT
    user_id AS user_id,
    pos AS pos,
    ideal_pos AS ideal_pos,
    n_relevant AS n_relevant,
    list_length AS list_length,
    CASE
      WHEN NOT pos IS NULL AND relevance > 0
      THEN CAST(POWER(
        CAST(2 AS DOUBLE),
        CASE
          WHEN relevance < 4.0
          THEN CAST(relevance AS DOUBLE)
          ELSE CAST(4.0 AS DOUBLE)
        END
      ) - 1 AS DOUBLE) / NULLIF(POWER(CAST(2 AS DOUBLE), 4.0), 0) * EXP(
        COALESCE(
          SUM(
            CASE
              WHEN NOT pos IS NULL AND relevance > 0
              THEN LN(
                CAST(POWER(CAST(2 AS DOUBLE), 4.0) - POWER(
                  CAST(2 AS DOUBLE),
                  CASE
                    WHEN relevance < 4.0
                    THEN CAST(relevance AS DOUBLE)
                    ELSE CAST(4.0 AS DOUBLE)
                  END
                ) + 1 AS DOUBLE) / NULLIF(POWER(CAST(2 AS DOUBLE), 4.0), 0)
              )
              ELSE 0
            END
          ) OVER (
            PARTITION BY user_id
            ORDER BY pos NULLS LAST
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
          ),
          0
        )
      )
      ELSE 0
    END AS err_stop,
    CASE
      WHEN NOT ideal_pos IS NULL AND relevance > 0
      THEN CAST(POWER(
        CAST(2 AS DOUBLE),
        CASE
          WHEN relevance < 4.0
          THEN CAST(relevance AS DOUBLE)
          ELSE CAST(4.0 AS DOUBLE)
        END
      ) - 1 AS DOUBLE) / NULLIF(POWER(CAST(2 AS DOUBLE), 4.0), 0) * EXP(
        COALESCE(
          SUM(
            CASE
              WHEN NOT ideal_pos IS NULL AND relevance > 0
              THEN LN(
                CAST(POWER(CAST(2 AS DOUBLE), 4.0) - POWER(
                  CAST(2 AS DOUBLE),
                  CASE
                    WHEN relevance < 4.0
                    THEN CAST(relevance AS DOUBLE)
                    ELSE CAST(4.0 AS DOUBLE)
                  END
                ) + 1 AS DOUBLE) / NULLIF(POWER(CAST(2 AS DOUBLE), 4.0), 0)
              )
              ELSE 0
            END
          ) OVER (
            PARTITION BY user_id
            ORDER BY ideal_pos NULLS LAST
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
          ),
          0
        )
      )
      ELSE 0
    END AS ideal_err_stop
  FROM joined
), per_user AS (
  SELECT
    user_id AS user_id,
    MAX(judged.n_relevant) AS n_relevant,
    COALESCE(MAX(judged.list_length), 0) AS list_length,
    COALESCE(
      CAST(SUM(CASE WHEN pos <= 10 THEN CAST(err_stop AS DOUBLE) / NULLIF(pos, 0) ELSE 0 END) AS DOUBLE) / NULLIF(
        SUM(
          CASE
            WHEN ideal_pos <= 10
            THEN CAST(ideal_err_stop AS DOUBLE) / NULLIF(ideal_pos, 0)
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
  AVG(CAST(m1 AS DOUBLE)) AS `nerr@10`
FROM per_user;
