WITH input_recommendations AS NOT MATERIALIZED (
  SELECT
    user_id AS user_id,
    item_id AS item_id,
    score AS score
  FROM recommendations
), input_interactions AS NOT MATERIALIZED (
  SELECT
    interactions.user_id AS user_id,
    interactions.item_id AS item_id,
    interactions.relevance AS relevance
  FROM interactions AS interactions
), truth_lists AS (
  SELECT
    user_id,
    n_relevant,
    top_relevances
  FROM (
    WITH user_counts AS (
      SELECT
        user_id,
        COUNT(CASE WHEN relevance > 0.0 THEN 1 END) AS n_relevant,
        MAX(CASE WHEN relevance > 0.0 THEN relevance END, 10) AS top_relevances,
        MAX(CASE WHEN relevance > 0.0 THEN 1 ELSE 0 END) AS has_relevant,
        COUNT(*) AS interaction_rows,
        0 AS duplicate_interactions,
        COUNT(*) - COUNT(item_id) AS null_items,
        SUM(
          CASE
            WHEN relevance IS NULL OR relevance < 0 OR ISNAN(relevance)
            THEN 1
            WHEN relevance * 0 = 0
            THEN 0
            ELSE 1
          END
        ) AS bad_relevance,
        SUM(CASE WHEN relevance > 1000 THEN 1 ELSE 0 END) AS huge_relevance,
        NOT user_id IS NULL
        AND COUNT(*) - COUNT(item_id) <= 1
        AND COUNT(item_id) = COALESCE(
          BIT_COUNT(
            BITSTRING_AGG(CAST(HASH(item_id) % 2048 AS INT), 0, 2047) FILTER(WHERE
              NOT item_id IS NULL)
          ),
          0
        ) AS distinct_items
      FROM input_interactions
      GROUP BY
        user_id
    ), again AS (
      SELECT
        *
      FROM input_interactions
      WHERE
        user_id IN (
          SELECT
            user_id AS repeating_user
          FROM user_counts
          WHERE
            NOT distinct_items
        )
      UNION ALL
      SELECT
        *
      FROM input_interactions
      WHERE
        user_id IS NULL
    ), pairs AS (
      SELECT
        again.user_id,
        again.item_id,
        MAX(again.relevance) AS relevance,
        COUNT(*) AS interaction_rows,
        SUM(
          CASE
            WHEN again.relevance IS NULL OR again.relevance < 0 OR ISNAN(again.relevance)
            THEN 1
            WHEN again.relevance * 0 = 0
            THEN 0
            ELSE 1
          END
        ) AS bad_relevance,
        SUM(CASE WHEN again.relevance > 1000 THEN 1 ELSE 0 END) AS huge_relevance
      FROM again
      INNER JOIN user_counts
        ON again.user_id IS NOT DISTINCT FROM user_counts.user_id
      WHERE
        NOT user_counts.distinct_items
      GROUP BY
        again.user_id,
        again.item_id
    )
    SELECT
      user_id,
      n_relevant,
      top_relevances,
      has_relevant,
      interaction_rows,
      duplicate_interactions,
      null_items,
      bad_relevance,
      huge_relevance
    FROM user_counts
    WHERE
      distinct_items
    UNION ALL
    SELECT
      user_id,
      COUNT(CASE WHEN relevance > 0.0 THEN 1 END) AS n_relevant,
      MAX(CASE WHEN relevance > 0.0 THEN relevance END, 10) AS top_relevances,
      MAX(CASE WHEN relevance > 0.0 THEN 1 ELSE 0 END) AS has_relevant,
      SUM(interaction_rows) AS interaction_rows,
      SUM(CASE WHEN NOT item_id IS NULL THEN interaction_rows - 1 ELSE 0 END) AS duplicate_interactions,
      SUM(CASE WHEN item_id IS NULL THEN interaction_rows ELSE 0 END) AS null_items,
      SUM(bad_relevance) AS bad_relevance,
      SUM(huge_relevance) AS huge_relevance
    FROM pairs
    GROUP BY
      user_id
  ) AS truth_by_user
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
), judged AS (
  SELECT
    user_id,
    pos,
    gain,
    n_relevant,
    list_length
  FROM (
    WITH hits AS (
      SELECT
        listed.user_id,
        listed.pos,
        MAX(input_interactions.relevance) AS relevance
      FROM (
        SELECT
          user_id,
          UNNEST(items[1:10]) AS item_id,
          GENERATE_SUBSCRIPTS(items[1:10], 1) AS pos
        FROM top_lists
      ) AS listed
      INNER JOIN input_interactions
        ON listed.user_id = input_interactions.user_id
        AND listed.item_id = input_interactions.item_id
      GROUP BY
        listed.user_id,
        listed.pos
      HAVING
        MAX(input_interactions.relevance) > 0.0
    ), ideal AS (
      SELECT
        user_id,
        UNNEST(top_relevances) AS relevance,
        GENERATE_SUBSCRIPTS(top_relevances, 1) AS ideal_pos,
        n_relevant
      FROM truth_lists
      WHERE
        n_relevant > 0
    )
    SELECT
      user_id,
      pos,
      1 AS hit,
      relevance AS gain,
      POWER(2, relevance) - 1 AS exp_gain,
      relevance,
      NULL AS ideal_pos,
      ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY pos) AS hits_so_far,
      NULL AS n_relevant,
      NULL AS list_length
    FROM hits
    UNION ALL
    SELECT
      user_id,
      NULL AS pos,
      1 AS hit,
      relevance AS gain,
      POWER(2, relevance) - 1 AS exp_gain,
      relevance,
      ideal_pos,
      NULL AS hits_so_far,
      n_relevant,
      NULL AS list_length
    FROM ideal
    UNION ALL
    SELECT
      user_id,
      NULL AS pos,
      0 AS hit,
      0 AS gain,
      0 AS exp_gain,
      0 AS relevance,
      NULL AS ideal_pos,
      NULL AS hits_so_far,
      NULL AS n_relevant,
      list_length
    FROM top_lists
  ) AS judged
), per_user AS (
  SELECT
    user_id,
    MAX(n_relevant) AS n_relevant,
    COALESCE(MAX(list_length), 0) AS list_length,
    COALESCE(SUM(CASE WHEN pos <= 10 THEN gain ELSE 0 END ORDER BY pos), 0) AS m1
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
  END / COUNT(m1) AS "cg@10"
FROM per_user;
