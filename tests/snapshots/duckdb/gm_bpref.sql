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
), judgements AS (
  SELECT
    user_id,
    pos,
    hit,
    nonrelevant_so_far,
    n_relevant,
    n_nonrelevant
  FROM (
    SELECT
      pairs.user_id,
      pairs.pos,
      pairs.hit,
      SUM(CASE WHEN NOT pairs.pos IS NULL AND pairs.hit = 0 THEN 1 ELSE 0 END) OVER (
        PARTITION BY pairs.user_id
        ORDER BY pairs.pos
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS nonrelevant_so_far,
      SUM(CASE WHEN pairs.hit = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY pairs.user_id) AS n_relevant,
      SUM(CASE WHEN pairs.hit = 0 THEN 1 ELSE 0 END) OVER (PARTITION BY pairs.user_id) AS n_nonrelevant,
      lists.list_length
    FROM (
      SELECT
        pair_judgements.user_id,
        ranked.pos,
        CASE
          WHEN pair_judgements.relevance > 0.0
          THEN 1
          WHEN NOT pair_judgements.relevance IS NULL
          THEN 0
        END AS hit
      FROM (
        SELECT
          user_id,
          item_id,
          MAX(relevance) AS relevance
        FROM input_interactions
        GROUP BY
          user_id,
          item_id
      ) AS pair_judgements
      LEFT JOIN ranked
        ON pair_judgements.user_id = ranked.user_id
        AND pair_judgements.item_id = ranked.item_id
    ) AS pairs
    LEFT JOIN (
      SELECT
        user_id,
        MAX(pos) AS list_length
      FROM ranked
      GROUP BY
        user_id
    ) AS lists
      ON pairs.user_id = lists.user_id
  ) AS judged_pairs
  WHERE
    n_relevant > 0
), per_user AS (
  SELECT
    user_id,
    COALESCE(
      LN(
        GREATEST(
          COALESCE(
            SUM(
              CASE
                WHEN NOT pos IS NULL AND hit = 1
                THEN 1 - CASE
                  WHEN nonrelevant_so_far = 0
                  THEN 0
                  ELSE LEAST(nonrelevant_so_far, n_relevant) / NULLIF(LEAST(n_nonrelevant, n_relevant), 0)
                END
                ELSE 0
              END
            ) / NULLIF(MAX(n_relevant), 0),
            0
          ),
          0.00001
        )
      ),
      0
    ) AS m1
  FROM judgements
  GROUP BY
    user_id
)
SELECT
  COUNT(*) AS users,
  EXP(
    CASE
      WHEN COUNT(CASE WHEN ABS(m1) < POWER(2, 32) THEN CAST(m1 * POWER(2, 64) AS INT128) END) = COUNT(m1)
      THEN CAST(SUM(CASE WHEN ABS(m1) < POWER(2, 32) THEN CAST(m1 * POWER(2, 64) AS INT128) END) AS DOUBLE) / POWER(2, 64)
      ELSE SUM(m1)
    END / COUNT(m1)
  ) AS "gm_bpref"
FROM per_user;
