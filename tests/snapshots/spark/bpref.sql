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
    hit AS hit,
    nonrelevant_so_far AS nonrelevant_so_far,
    n_relevant AS n_relevant,
    n_nonrelevant AS n_nonrelevant
  FROM (
    SELECT
      pairs.user_id AS user_id,
      pairs.pos AS pos,
      pairs.hit AS hit,
      SUM(CASE WHEN NOT pairs.pos IS NULL AND pairs.hit = 0 THEN 1 ELSE 0 END) OVER (
        PARTITION BY pairs.user_id
        ORDER BY pairs.pos NULLS LAST
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS nonrelevant_so_far,
      SUM(CASE WHEN pairs.hit = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY pairs.user_id) AS n_relevant,
      SUM(CASE WHEN pairs.hit = 0 THEN 1 ELSE 0 END) OVER (PARTITION BY pairs.user_id) AS n_nonrelevant,
      lists.list_length AS list_length
    FROM (
      SELECT
        pair_judgements.user_id AS user_id,
        ranked.pos AS pos,
        CASE
          WHEN pair_judgements.relevance > 0.0
          THEN 1
          WHEN NOT pair_judgements.relevance IS NULL
          THEN 0
        END AS hit
      FROM (
        SELECT
          user_id AS user_id,
          item_id AS item_id,
          MAX(input_interactions.relevance) AS relevance
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
        user_id AS user_id,
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
    user_id AS user_id,
    COALESCE(
      CAST(SUM(
        CASE
          WHEN NOT pos IS NULL AND hit = 1
          THEN 1 - CASE
            WHEN nonrelevant_so_far = 0
            THEN 0
            ELSE CAST(LEAST(COALESCE(nonrelevant_so_far, n_relevant), COALESCE(n_relevant, nonrelevant_so_far)) AS DOUBLE) / NULLIF(LEAST(COALESCE(n_nonrelevant, n_relevant), COALESCE(n_relevant, n_nonrelevant)), 0)
          END
          ELSE 0
        END
      ) AS DOUBLE) / NULLIF(MAX(n_relevant), 0),
      0
    ) AS m1
  FROM judgements
  GROUP BY
    user_id
)
SELECT
  COUNT(*) AS users,
  AVG(CAST(m1 AS DOUBLE)) AS `bpref`
FROM per_user;
