WITH input_recommendations AS (
  SELECT
    model AS group_1,
    user_id AS user_id,
    item_id AS item_id,
    score AS score
  FROM recommendations
), input_interactions AS (
  SELECT
    interactions.model AS group_1,
    interactions.user_id AS user_id,
    interactions.item_id AS item_id,
    interactions.relevance AS relevance
  FROM interactions AS interactions
), list_counts AS (
  SELECT
    group_1 AS group_1,
    user_id AS user_id,
    COUNT(*) AS list_length
  FROM input_recommendations
  GROUP BY
    group_1,
    user_id
), truth AS (
  SELECT
    group_1 AS group_1,
    user_id AS user_id,
    item_id AS item_id,
    COUNT(*) OVER (PARTITION BY group_1, user_id) AS n_relevant
  FROM input_interactions
  GROUP BY
    group_1,
    user_id,
    item_id
  HAVING
    MAX(relevance) > 0.0
), ranked AS (
  SELECT
    ranked_rows.group_1 AS group_1,
    ranked_rows.user_id AS user_id,
    ranked_rows.item_id AS item_id,
    ranked_rows.pos AS pos,
    list_counts.list_length AS list_length
  FROM (
    SELECT
      group_1 AS group_1,
      user_id AS user_id,
      item_id AS item_id,
      pos AS pos
    FROM (
      SELECT
        group_1 AS group_1,
        user_id AS user_id,
        item_id AS item_id,
        ROW_NUMBER() OVER (
          PARTITION BY group_1, user_id
          ORDER BY score DESC NULLS LAST, item_id DESC NULLS LAST
        ) AS pos
      FROM input_recommendations
    ) AS _t
    WHERE
      pos <= 10
  ) AS ranked_rows
  LEFT JOIN list_counts
    ON (
      ranked_rows.group_1 IS NOT DISTINCT FROM list_counts.group_1
    )
    AND ranked_rows.user_id = list_counts.user_id
), joined AS (
  SELECT
    COALESCE(ranked.group_1, truth.group_1) AS group_1,
    COALESCE(ranked.user_id, truth.user_id) AS user_id,
    ranked.list_length AS list_length,
    truth.n_relevant AS n_relevant
  FROM ranked
  FULL OUTER JOIN truth
    ON (
      ranked.group_1 IS NOT DISTINCT FROM truth.group_1
    )
    AND ranked.user_id = truth.user_id
    AND ranked.item_id = truth.item_id
), judged AS (
  SELECT
    group_1 AS group_1,
    user_id AS user_id,
    n_relevant AS n_relevant,
    list_length AS list_length
  FROM joined
), per_user AS (
  SELECT
    group_1 AS group_1,
    user_id AS user_id,
    MAX(judged.n_relevant) AS n_relevant,
    COALESCE(MAX(judged.list_length), 0) AS list_length
  FROM judged
  GROUP BY
    group_1,
    user_id
  HAVING
    MAX(judged.n_relevant) > 0
), baseline_lists AS (
  SELECT
    user_id AS baseline_user,
    item_id AS item_id,
    pos AS pos
  FROM ranked
  WHERE
    CAST(group_1 AS VARCHAR) = 'pop'
), depths AS (
  SELECT
    depth AS depth,
    POWER(CAST(0.9 AS DOUBLE PRECISION), depth - 1) AS weight
  FROM (
    SELECT
      1 AS depth
    UNION ALL
    SELECT
      2 AS depth
    UNION ALL
    SELECT
      3 AS depth
    UNION ALL
    SELECT
      4 AS depth
    UNION ALL
    SELECT
      5 AS depth
    UNION ALL
    SELECT
      6 AS depth
    UNION ALL
    SELECT
      7 AS depth
    UNION ALL
    SELECT
      8 AS depth
    UNION ALL
    SELECT
      9 AS depth
    UNION ALL
    SELECT
      10 AS depth
  ) AS numbers
), m1_users AS (
  SELECT
    ranked.group_1 AS group_1,
    ranked.user_id AS user_id,
    SUM(COALESCE(CAST(tail.weight AS DOUBLE PRECISION) / NULLIF(total.weight, 0), 0)) AS m1
  FROM ranked
  LEFT JOIN baseline_lists
    ON ranked.user_id = baseline_lists.baseline_user
    AND ranked.item_id = baseline_lists.item_id
    AND baseline_lists.pos <= 10
  LEFT JOIN (
    SELECT
      depth AS depth,
      SUM(CAST(depths.weight AS DOUBLE PRECISION) / NULLIF(depth, 0)) OVER (ORDER BY depth DESC NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS weight
    FROM depths
    WHERE
      depth <= 10
  ) AS tail
    ON tail.depth = CASE
      WHEN ranked.pos > baseline_lists.pos
      THEN ranked.pos
      ELSE baseline_lists.pos
    END
  CROSS JOIN (
    SELECT
      SUM(depths.weight) AS weight
    FROM depths
    WHERE
      depth <= 10
  ) AS total
  WHERE
    ranked.pos <= 10
  GROUP BY
    ranked.group_1,
    ranked.user_id
), m1_groups AS (
  SELECT
    group_1 AS group_1,
    AVG(CAST(m1_users.m1 AS DOUBLE PRECISION)) AS m1
  FROM m1_users
  GROUP BY
    group_1
)
SELECT
  list_groups.group_1 AS "model",
  COUNT(per_user.user_id) AS users,
  MAX(m1_groups.m1) AS "rbo@10"
FROM (
  SELECT DISTINCT
    group_1 AS group_1
  FROM (
    SELECT
      group_1 AS group_1
    FROM per_user
    UNION ALL
    SELECT
      group_1 AS group_1
    FROM m1_groups
  ) AS listed_groups
) AS list_groups
LEFT JOIN per_user
  ON (
    list_groups.group_1 IS NOT DISTINCT FROM per_user.group_1
  )
LEFT JOIN m1_groups
  ON (
    list_groups.group_1 IS NOT DISTINCT FROM m1_groups.group_1
  )
GROUP BY
  list_groups.group_1
ORDER BY
  list_groups.group_1;
