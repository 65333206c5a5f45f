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
    ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY score DESC, item_id DESC) AS pos
  FROM input_recommendations
), judgements AS (
  SELECT
    user_id AS user_id,
    pos AS pos,
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
        ORDER BY CASE WHEN pos IS NULL THEN 1 ELSE 0 END, pos
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS nonrelevant_so_far,
      SUM(CASE WHEN hit = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY user_id) AS n_relevant,
      SUM(CASE WHEN hit = 0 THEN 1 ELSE 0 END) OVER (PARTITION BY user_id) AS n_nonrelevant,
      (
        CAST(CASE WHEN judged_relevance > 0.0 THEN judged_relevance ELSE 0 END AS DOUBLE)
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
    SUM(CASE WHEN NOT judgements.pos IS NULL THEN judgements.gain ELSE 0 END) OVER (
      PARTITION BY judgements.user_id
      ORDER BY CASE WHEN judgements.pos IS NULL THEN 1 ELSE 0 END, judgements.pos
      ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS gains_gain_so_far,
    CASE
      WHEN NOT judgements.pos IS NULL
      THEN COALESCE(
        ideal.ideal_excess_through,
        SUM(
          CASE
            WHEN NOT judgements.ideal_gain_pos IS NULL
            THEN GREATEST(COALESCE(judgements.gain, 1), 1) - 1
            ELSE 0
          END
        ) OVER (PARTITION BY judgements.user_id)
      )
    END AS gains_ideal_excess_at_pos,
    judgements.gain AS gain,
    judgements.ideal_gain_pos AS ideal_gain_pos
  FROM judgements
  LEFT JOIN (
    SELECT
      user_id AS user_id,
      ideal_at AS ideal_at,
      ideal_excess_through AS ideal_excess_through
    FROM (
      SELECT
        user_id AS user_id,
        ideal_gain_pos AS ideal_at,
        SUM(GREATEST(COALESCE(gain, 1), 1) - 1) OVER (
          PARTITION BY user_id
          ORDER BY CASE WHEN ideal_gain_pos IS NULL THEN 1 ELSE 0 END, ideal_gain_pos
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS ideal_excess_through
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
      COALESCE(
        CAST(SUM(
          CASE
            WHEN NOT pos IS NULL AND gain <> 0
            THEN CAST(gain AS DOUBLE) / NULLIF(LOG(2, 2 + pos + gains_ideal_excess_at_pos - gains_gain_so_far), 0)
            ELSE 0
          END
        ) AS DOUBLE) / NULLIF(SUM(CASE WHEN NOT ideal_gain_pos IS NULL THEN gain ELSE 0 END), 0),
        0
      ),
      0
    ) AS m1
  FROM judgements_ideal AS judgements
  GROUP BY
    user_id
)
SELECT
  COUNT(*) AS users,
  AVG(CAST(m1 AS DOUBLE)) AS `normalized_gain_gains`
FROM per_user;
