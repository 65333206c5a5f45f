WITH input_recommendations AS (
  SELECT
    model AS group_1,
    `day` AS group_2,
    user_id AS user_id,
    item_id AS item_id,
    score AS score
  FROM recommendations
), input_interactions AS (
  SELECT
    arms.group_1 AS group_1,
    interactions.`day` AS group_2,
    interactions.user_id AS user_id,
    interactions.item_id AS item_id,
    interactions.relevance AS relevance
  FROM interactions AS interactions
  CROSS JOIN (
    SELECT DISTINCT
      group_1 AS group_1
    FROM input_recommendations
  ) AS arms
), input_items AS (
  SELECT
    item_id AS item_id,
    provider AS item_group
  FROM items
), list_counts AS (
  SELECT
    group_1 AS group_1,
    group_2 AS group_2,
    user_id AS user_id,
    COUNT(*) AS list_length
  FROM input_recommendations
  GROUP BY
    group_1,
    group_2,
    user_id
), truth AS (
  SELECT
    group_1 AS group_1,
    group_2 AS group_2,
    user_id AS user_id,
    item_id AS item_id,
    MAX(input_interactions.relevance) AS relevance,
    COUNT(*) OVER (PARTITION BY group_1, group_2, user_id) AS n_relevant
  FROM input_interactions
  GROUP BY
    group_1,
    group_2,
    user_id,
    item_id
  HAVING
    MAX(input_interactions.relevance) > 0.0
), ranked AS (
  SELECT
    ranked_rows.group_1 AS group_1,
    ranked_rows.group_2 AS group_2,
    ranked_rows.user_id AS user_id,
    ranked_rows.item_id AS item_id,
    ranked_rows.pos AS pos,
    list_counts.list_length AS list_length
  FROM (
    SELECT
      group_1 AS group_1,
      group_2 AS group_2,
      user_id AS user_id,
      item_id AS item_id,
      pos AS pos
    FROM (
      SELECT
        group_1 AS group_1,
        group_2 AS group_2,
        user_id AS user_id,
        item_id AS item_id,
        ROW_NUMBER() OVER (PARTITION BY group_1, group_2, user_id ORDER BY score DESC, item_id DESC) AS pos
      FROM input_recommendations
    ) AS _t
    WHERE
      pos <= 10
  ) AS ranked_rows
  LEFT JOIN list_counts
    ON (
      ranked_rows.group_1 <=> list_counts.group_1
    )
    AND (
      ranked_rows.group_2 <=> list_counts.group_2
    )
    AND ranked_rows.user_id = list_counts.user_id
), item_groups AS (
  SELECT
    all_items.item_id AS item_id,
    input_items.item_group AS item_group
  FROM (
    SELECT DISTINCT
      item_id AS item_id
    FROM (
      SELECT
        item_id AS item_id
      FROM input_items
      UNION ALL
      SELECT
        item_id AS item_id
      FROM input_recommendations
      UNION ALL
      SELECT
        item_id AS item_id
      FROM truth
    ) AS items
  ) AS all_items
  LEFT JOIN input_items
    ON all_items.item_id = input_items.item_id
), item_group_sizes AS (
  SELECT
    item_group AS item_group,
    COUNT(*) AS items
  FROM item_groups
  GROUP BY
    item_group
), exposed AS (
  SELECT
    ranked.group_1 AS group_1,
    ranked.group_2 AS group_2,
    item_groups.item_group AS item_group,
    SUM(POWER(CAST(0.85 AS DOUBLE), ranked.pos - 1)) AS exposure
  FROM ranked
  INNER JOIN item_groups
    ON ranked.item_id = item_groups.item_id
  WHERE
    ranked.pos <= 10
  GROUP BY
    ranked.group_1,
    ranked.group_2,
    item_groups.item_group
), relevant_items AS (
  SELECT
    truth.group_1 AS group_1,
    truth.group_2 AS group_2,
    item_groups.item_group AS item_group,
    COUNT(*) AS relevant
  FROM truth
  INNER JOIN item_groups
    ON truth.item_id = item_groups.item_id
  GROUP BY
    truth.group_1,
    truth.group_2,
    item_groups.item_group
), model_groups AS (
  SELECT DISTINCT
    group_1 AS group_1,
    group_2 AS group_2
  FROM (
    SELECT
      group_1 AS group_1,
      group_2 AS group_2
    FROM ranked
    UNION ALL
    SELECT
      group_1 AS group_1,
      group_2 AS group_2
    FROM truth
  ) AS grouped
), exposure_rows AS (
  SELECT
    model_groups.group_1 AS group_1,
    model_groups.group_2 AS group_2,
    item_group_sizes.item_group AS item_group,
    item_group_sizes.items AS items,
    COALESCE(exposed.exposure, 0) AS exposure,
    COALESCE(relevant_items.relevant, 0) AS relevant
  FROM model_groups
  CROSS JOIN item_group_sizes
  LEFT JOIN exposed
    ON (
      exposed.group_1 <=> model_groups.group_1
    )
    AND (
      exposed.group_2 <=> model_groups.group_2
    )
    AND (
      exposed.item_group <=> item_group_sizes.item_group
    )
  LEFT JOIN relevant_items
    ON (
      relevant_items.group_1 <=> model_groups.group_1
    )
    AND (
      relevant_items.group_2 <=> model_groups.group_2
    )
    AND (
      relevant_items.item_group <=> item_group_sizes.item_group
    )
)
SELECT
  group_1 AS `model`,
  group_2 AS `day`,
  item_group AS item_group,
  items AS items,
  CAST(items AS DOUBLE) / NULLIF(SUM(items) OVER (PARTITION BY group_1, group_2), 0) AS catalogue_share,
  exposure AS exposure,
  CAST(exposure AS DOUBLE) / NULLIF(SUM(exposure) OVER (PARTITION BY group_1, group_2), 0) AS exposure_share,
  relevant AS relevant,
  CAST(relevant AS DOUBLE) / NULLIF(SUM(relevant) OVER (PARTITION BY group_1, group_2), 0) AS relevant_share
FROM exposure_rows
ORDER BY
  CASE WHEN group_1 IS NULL THEN 1 ELSE 0 END,
  group_1,
  CASE WHEN group_2 IS NULL THEN 1 ELSE 0 END,
  group_2,
  CASE WHEN item_group IS NULL THEN 1 ELSE 0 END,
  item_group;
