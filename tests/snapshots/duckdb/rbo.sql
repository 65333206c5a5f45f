WITH input_recommendations AS NOT MATERIALIZED (
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
), truth AS (
  SELECT
    group_1,
    user_id,
    item_id,
    COUNT(*) OVER (PARTITION BY group_1, user_id) AS n_relevant
  FROM input_interactions
  GROUP BY
    group_1,
    user_id,
    item_id
  HAVING
    MAX(relevance) > 0.0
), top_lists AS (
  SELECT
    group_1,
    user_id,
    items,
    scores,
    list_length,
    scored_length,
    named_length
  FROM (
    WITH lists AS (
      SELECT
        group_1,
        user_id,
        ARG_MAX(item_id, score, 10 + 3) AS top_items,
        MAX(score, 10 + 3) AS top_scores,
        COUNT(score) AS floored_length,
        COUNT(*) AS list_length,
        COUNT(score) AS scored_length,
        COUNT(item_id) AS named_length
      FROM input_recommendations
      GROUP BY
        group_1,
        user_id
    ), checked_lists AS (
      SELECT
        group_1,
        user_id,
        top_items,
        top_scores,
        list_length,
        scored_length,
        named_length,
        COALESCE(
          named_length = list_length
          AND (
            (
              LENGTH(top_scores) = 10 + 3
              AND LIST_EXTRACT(top_scores, 10) > LIST_EXTRACT(top_scores, 10 + 3)
            )
            OR (
              LENGTH(top_scores) < 10 + 3 AND floored_length = list_length
            )
          ),
          FALSE
        ) AS exact
      FROM lists
    ), exact_lists AS (
      SELECT
        group_1,
        user_id,
        list_length,
        scored_length,
        named_length,
        top_items,
        top_scores,
        CASE
          WHEN LIST_BOOL_OR(LIST_TRANSFORM(top_scores[2:], LAMBDA score, i : score = top_scores[i]))
          THEN ARRAY_REVERSE_SORT(
            LIST_TRANSFORM(top_items, LAMBDA item, i : {'score': top_scores[i], 'item': item})
          )
        END AS sorted_ties
      FROM checked_lists
      WHERE
        exact
    ), again AS (
      SELECT
        *
      FROM input_recommendations
      WHERE
        user_id IN (
          SELECT
            user_id AS inexact_user
          FROM checked_lists
          WHERE
            NOT exact
        )
      UNION ALL
      SELECT
        *
      FROM input_recommendations
      WHERE
        user_id IS NULL
    ), ranked_again AS (
      SELECT
        again.group_1,
        again.user_id,
        again.item_id,
        ROW_NUMBER() OVER (
          PARTITION BY again.group_1, again.user_id
          ORDER BY again.score DESC, again.item_id DESC
        ) AS pos,
        again.score,
        checked_lists.list_length,
        checked_lists.scored_length,
        checked_lists.named_length
      FROM again
      INNER JOIN checked_lists
        ON (
          again.group_1 IS NOT DISTINCT FROM checked_lists.group_1
        )
        AND again.user_id IS NOT DISTINCT FROM checked_lists.user_id
      WHERE
        NOT checked_lists.exact
      QUALIFY
        pos <= 10
    )
    SELECT
      group_1,
      user_id,
      CASE
        WHEN sorted_ties IS NULL
        THEN top_items[1:10]
        ELSE LIST_TRANSFORM(sorted_ties[1:10], LAMBDA entry : entry.item)
      END AS items,
      CASE
        WHEN sorted_ties IS NULL
        THEN top_scores[1:10]
        ELSE LIST_TRANSFORM(sorted_ties[1:10], LAMBDA entry : entry.score)
      END AS scores,
      list_length,
      scored_length,
      named_length
    FROM exact_lists
    UNION ALL
    SELECT
      group_1,
      user_id,
      ARRAY_AGG(item_id ORDER BY pos) AS items,
      ARRAY_AGG(score ORDER BY pos) AS scores,
      list_length,
      scored_length,
      named_length
    FROM ranked_again
    GROUP BY
      group_1,
      user_id,
      list_length,
      scored_length,
      named_length
  ) AS top_k
), ranked AS (
  SELECT
    group_1,
    user_id,
    UNNEST(items) AS item_id,
    GENERATE_SUBSCRIPTS(items, 1) AS pos,
    list_length
  FROM top_lists
), joined AS (
  SELECT
    COALESCE(ranked.group_1, truth.group_1) AS group_1,
    COALESCE(ranked.user_id, truth.user_id) AS user_id,
    ranked.list_length,
    truth.n_relevant
  FROM ranked
  FULL OUTER JOIN truth
    ON (
      ranked.group_1 IS NOT DISTINCT FROM truth.group_1
    )
    AND ranked.user_id = truth.user_id
    AND ranked.item_id = truth.item_id
), judged AS (
  SELECT
    group_1,
    user_id,
    n_relevant,
    list_length
  FROM joined
), per_user AS (
  SELECT
    group_1,
    user_id,
    MAX(n_relevant) AS n_relevant,
    COALESCE(MAX(list_length), 0) AS list_length
  FROM judged
  GROUP BY
    group_1,
    user_id
  HAVING
    MAX(n_relevant) > 0
), baseline_lists AS (
  SELECT
    user_id AS baseline_user,
    item_id,
    pos
  FROM ranked
  WHERE
    CAST(group_1 AS TEXT) = 'pop'
), depths AS (
  SELECT
    depth,
    POWER(0.9, depth - 1) AS weight
  FROM (VALUES
    (1),
    (2),
    (3),
    (4),
    (5),
    (6),
    (7),
    (8),
    (9),
    (10)) AS numbers(depth)
), m1_users AS (
  SELECT
    ranked.group_1,
    ranked.user_id,
    SUM(COALESCE(tail.weight / total.weight, 0)) AS m1
  FROM ranked
  LEFT JOIN baseline_lists
    ON ranked.user_id = baseline_lists.baseline_user
    AND ranked.item_id = baseline_lists.item_id
    AND baseline_lists.pos <= 10
  LEFT JOIN (
    SELECT
      depth,
      SUM(weight / depth) OVER (ORDER BY depth DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS weight
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
      SUM(weight) AS weight
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
    group_1,
    AVG(m1) AS m1
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
    group_1
  FROM (
    SELECT
      group_1
    FROM per_user
    UNION ALL
    SELECT
      group_1
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
