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
), truth AS (
  SELECT
    user_id,
    item_id,
    MAX(relevance) AS relevance,
    ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY MAX(relevance) DESC, item_id DESC) AS ideal_pos,
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
), ranked_ideal AS (
  SELECT
    ranked.user_id,
    ranked.item_id,
    ranked.pos,
    ranked.list_length,
    ideal.ideal_gain_through
  FROM ranked
  LEFT JOIN (
    SELECT
      user_id,
      ideal_pos,
      ideal_gain_through
    FROM (
      SELECT
        user_id,
        ideal_pos,
        SUM(relevance) OVER (
          PARTITION BY user_id
          ORDER BY ideal_pos
          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS ideal_gain_through
      FROM truth
    ) AS ideal_prefix
  ) AS ideal
    ON ranked.user_id = ideal.user_id AND ranked.pos = ideal.ideal_pos
), joined AS (
  SELECT
    COALESCE(ranked.user_id, truth.user_id) AS user_id,
    ranked.pos,
    ranked.list_length,
    COALESCE(truth.relevance, 0) AS relevance,
    truth.ideal_pos,
    truth.n_relevant,
    ranked.ideal_gain_through
  FROM ranked_ideal AS ranked
  FULL OUTER JOIN truth
    ON ranked.user_id = truth.user_id AND ranked.item_id = truth.item_id
), judged AS (
  SELECT
    user_id,
    pos,
    CASE WHEN relevance > 0 THEN 1 ELSE 0 END AS hit,
    ideal_pos,
    SUM(CASE WHEN relevance > 0 THEN 1 ELSE 0 END) OVER (PARTITION BY user_id ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS hits_so_far,
    n_relevant,
    list_length,
    SUM(CASE WHEN NOT pos IS NULL THEN relevance ELSE 0 END) OVER (PARTITION BY user_id ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS gain_so_far,
    CASE
      WHEN NOT pos IS NULL
      THEN COALESCE(
        ideal_gain_through,
        SUM(CASE WHEN NOT ideal_pos IS NULL THEN relevance ELSE 0 END) OVER (PARTITION BY user_id)
      )
    END AS ideal_gain_at_pos
  FROM joined
), per_user AS (
  SELECT
    user_id,
    MAX(n_relevant) AS n_relevant,
    COALESCE(MAX(list_length), 0) AS list_length,
    COALESCE(
      CASE
        WHEN COUNT(
          CASE
            WHEN ABS((
              hits_so_far + gain_so_far
            ) / (
              pos + ideal_gain_at_pos
            )) < POWER(2, 32)
            THEN 1
          END
        ) = COUNT((
          hits_so_far + gain_so_far
        ) / (
          pos + ideal_gain_at_pos
        ))
        THEN CAST(SUM(
          CASE
            WHEN (
              pos <= 10 AND hit = 1
            )
            AND ABS((
              hits_so_far + gain_so_far
            ) / (
              pos + ideal_gain_at_pos
            )) < POWER(2, 32)
            THEN CAST((
              hits_so_far + gain_so_far
            ) / (
              pos + ideal_gain_at_pos
            ) * POWER(2, 64) AS INT128)
            ELSE 0
          END
        ) AS DOUBLE) / POWER(2, 64)
        ELSE SUM(
          CASE
            WHEN pos <= 10 AND hit = 1
            THEN (
              hits_so_far + gain_so_far
            ) / (
              pos + ideal_gain_at_pos
            )
            ELSE 0
          END
        )
      END / NULLIF(SUM(CASE WHEN ideal_pos <= 10 THEN 1 ELSE 0 END ORDER BY ideal_pos), 0),
      0
    ) AS m1
  FROM judged
  GROUP BY
    user_id
  HAVING
    MAX(n_relevant) > 0
)
SELECT
  COUNT(*) AS users,
  CASE
    WHEN COUNT(CASE WHEN ABS(m1) < POWER(2, 32) THEN CAST(m1 * POWER(2, 64) AS INT128) END) = COUNT(m1)
    THEN CAST(SUM(CASE WHEN ABS(m1) < POWER(2, 32) THEN CAST(m1 * POWER(2, 64) AS INT128) END) AS DOUBLE) / POWER(2, 64)
    ELSE SUM(m1)
  END / COUNT(m1) AS "q_measure@10"
FROM per_user;
