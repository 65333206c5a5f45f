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
), input_history AS (
  SELECT
    user_id,
    item_id
  FROM input_interactions
  WHERE
    1 = 0
), truth AS (
  SELECT
    user_id,
    item_id,
    COUNT(*) OVER (PARTITION BY user_id) AS n_relevant
  FROM input_interactions
  GROUP BY
    user_id,
    item_id
  HAVING
    MAX(relevance) > 0.0
), top_lists AS (
  SELECT
    user_id,
    items,
    scores,
    list_length,
    scored_length,
    named_length
  FROM (
    WITH lists AS (
      SELECT
        user_id,
        ARG_MAX(item_id, score, 10 + 3) AS top_items,
        MAX(score, 10 + 3) AS top_scores,
        COUNT(score) AS floored_length,
        COUNT(*) AS list_length,
        COUNT(score) AS scored_length,
        COUNT(item_id) AS named_length
      FROM input_recommendations
      GROUP BY
        user_id
    ), checked_lists AS (
      SELECT
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
        again.user_id,
        again.item_id,
        ROW_NUMBER() OVER (PARTITION BY again.user_id ORDER BY again.score DESC, again.item_id DESC) AS pos,
        again.score,
        checked_lists.list_length,
        checked_lists.scored_length,
        checked_lists.named_length
      FROM again
      INNER JOIN checked_lists
        ON again.user_id IS NOT DISTINCT FROM checked_lists.user_id
      WHERE
        NOT checked_lists.exact
      QUALIFY
        pos <= 10
    )
    SELECT
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
      user_id,
      ARRAY_AGG(item_id ORDER BY pos) AS items,
      ARRAY_AGG(score ORDER BY pos) AS scores,
      list_length,
      scored_length,
      named_length
    FROM ranked_again
    GROUP BY
      user_id,
      list_length,
      scored_length,
      named_length
  ) AS top_k
), ranked AS (
  SELECT
    user_id,
    UNNEST(items) AS item_id,
    GENERATE_SUBSCRIPTS(items, 1) AS pos,
    list_length
  FROM top_lists
), joined AS (
  SELECT
    COALESCE(ranked.user_id, truth.user_id) AS user_id,
    ranked.list_length,
    truth.n_relevant
  FROM ranked
  FULL OUTER JOIN truth
    ON ranked.user_id = truth.user_id AND ranked.item_id = truth.item_id
), judged AS (
  SELECT
    user_id,
    n_relevant,
    list_length
  FROM joined
), per_user AS (
  SELECT
    user_id,
    MAX(n_relevant) AS n_relevant,
    COALESCE(MAX(list_length), 0) AS list_length
  FROM judged
  GROUP BY
    user_id
  HAVING
    MAX(n_relevant) > 0
), consumed AS (
  SELECT
    user_id,
    item_id
  FROM input_interactions
  WHERE
    NOT user_id IS NULL AND NOT item_id IS NULL
), popularity AS (
  SELECT
    item_id,
    COUNT(DISTINCT user_id) AS users
  FROM consumed
  GROUP BY
    item_id
), short_head AS (
  SELECT
    item_id
  FROM (
    SELECT
      item_id,
      SUM(users) OVER (ORDER BY users DESC, item_id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS users_before,
      SUM(users) OVER () AS all_users
    FROM popularity
  ) AS by_popularity
  WHERE
    5 * COALESCE(users_before, 0) < 4 * all_users
), m1_groups AS (
  SELECT
    ABS(head_rate - tail_rate) / NULLIF(head_rate + tail_rate, 0) AS m1
  FROM (
    SELECT
      SUM(head_found) / NULLIF(SUM(head_relevant), 0) AS head_rate,
      SUM(tail_found) / NULLIF(SUM(tail_relevant), 0) AS tail_rate
    FROM (
      SELECT
        user_id,
        SUM(head_found) AS head_found,
        SUM(tail_found) AS tail_found,
        SUM(head_relevant) AS head_relevant,
        SUM(tail_relevant) AS tail_relevant
      FROM (
        SELECT
          ranked.user_id,
          CASE WHEN short_head.item_id IS NULL THEN 0 ELSE 1 END AS head_found,
          CASE WHEN short_head.item_id IS NULL THEN 1 ELSE 0 END AS tail_found,
          0 AS head_relevant,
          0 AS tail_relevant,
          0 AS listed,
          0 AS relevant
        FROM ranked
        INNER JOIN truth
          ON ranked.user_id = truth.user_id AND ranked.item_id = truth.item_id
        LEFT JOIN short_head
          ON ranked.item_id = short_head.item_id
        WHERE
          ranked.pos <= 10
        UNION ALL
        SELECT
          truth.user_id,
          0 AS head_found,
          0 AS tail_found,
          CASE WHEN seen.item_id IS NULL AND NOT short_head.item_id IS NULL THEN 1 ELSE 0 END AS head_relevant,
          CASE WHEN seen.item_id IS NULL AND short_head.item_id IS NULL THEN 1 ELSE 0 END AS tail_relevant,
          0 AS listed,
          1 AS relevant
        FROM truth
        LEFT JOIN short_head
          ON truth.item_id = short_head.item_id
        LEFT JOIN (
          SELECT DISTINCT
            user_id AS history_user,
            item_id
          FROM input_history
        ) AS seen
          ON truth.user_id = seen.history_user AND truth.item_id = seen.item_id
        UNION ALL
        SELECT
          ranked.user_id,
          0 AS head_found,
          0 AS tail_found,
          0 AS head_relevant,
          0 AS tail_relevant,
          1 AS listed,
          0 AS relevant
        FROM ranked
        WHERE
          ranked.pos = 1
      ) AS parts
      GROUP BY
        user_id
      HAVING
        MAX(listed) = 1 AND MAX(relevant) = 1
    ) AS users
  ) AS rates
)
SELECT
  COUNT(*) AS users,
  (
    SELECT
      MAX(m1_groups.m1) AS m1
    FROM m1_groups
  ) AS "pop_reo@10"
FROM per_user;
