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
    interactions.relevance AS relevance,
    interactions.intent AS intent
  FROM interactions AS interactions
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
), intents AS (
  SELECT
    user_id,
    intent,
    item_id,
    MAX(CASE WHEN relevance > 0.0 THEN 1 ELSE 0 END) AS relevant
  FROM input_interactions
  WHERE
    NOT intent IS NULL AND NOT user_id IS NULL AND NOT item_id IS NULL
  GROUP BY
    user_id,
    intent,
    item_id
), m1_users AS (
  SELECT
    judged.user_id,
    COALESCE(
      SUM(COALESCE(hits.discounted, 0)) / NULLIF(SUM(CASE WHEN judged.relevant_items > 0 THEN 1 ELSE 0 END) * 1.3861297123015872, 0),
      0
    ) AS m1
  FROM (
    SELECT
      intents.user_id,
      intents.intent,
      SUM(intents.relevant) AS relevant_items
    FROM intents
    INNER JOIN (
      SELECT
        user_id
      FROM ranked
      GROUP BY
        user_id
    ) AS listed
      ON intents.user_id = listed.user_id
    GROUP BY
      intents.user_id,
      intents.intent
  ) AS judged
  LEFT JOIN (
    SELECT
      user_id,
      intent,
      SUM(POWER(CAST(0.5 AS DOUBLE), seen - 1) / pos) AS discounted
    FROM (
      SELECT
        ranked.user_id,
        intents.intent,
        ranked.pos,
        ROW_NUMBER() OVER (PARTITION BY ranked.user_id, intents.intent ORDER BY ranked.pos, ranked.item_id) AS seen
      FROM ranked
      INNER JOIN intents
        ON ranked.user_id = intents.user_id AND ranked.item_id = intents.item_id
      WHERE
        intents.relevant = 1 AND ranked.pos <= 10
    ) AS placed
    GROUP BY
      user_id,
      intent
  ) AS hits
    ON judged.user_id = hits.user_id AND judged.intent = hits.intent
  GROUP BY
    judged.user_id
), m1_groups AS (
  SELECT
    AVG(m1) AS m1
  FROM m1_users
)
SELECT
  COUNT(*) AS users,
  (
    SELECT
      MAX(m1_groups.m1) AS m1
    FROM m1_groups
  ) AS "err_ia@10"
FROM per_user;
