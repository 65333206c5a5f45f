-- DuckDB's hit-rows plan (sqlmetrics/duckdb_plan.py), for metrics that read judged.sql's
-- quantities only at recommended relevant items, at ideal positions and as per-user counts:
-- judged's columns on three kinds of rows instead of on every recommended or relevant item.
-- Each relevant item within the deepest cutoff (pos, its relevance, hits_so_far), each of the user's largest
-- relevances down to the deepest cutoff (ideal_pos, n_relevant), each list (list_length).
SELECT
  user_id,
  pos,
  hit,
  gain,
  exp_gain,
  relevance,
  ideal_pos,
  hits_so_far,
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
        UNNEST(items[1:$cutoff]) AS item_id,
        GENERATE_SUBSCRIPTS(items[1:$cutoff], 1) AS pos
      FROM top_lists
    ) AS listed
    INNER JOIN input_interactions
      ON listed.user_id = input_interactions.user_id
      AND listed.item_id = input_interactions.item_id
    GROUP BY listed.user_id, listed.pos
    HAVING MAX(input_interactions.relevance) > $threshold
  ),

  ideal AS (
    SELECT
      user_id,
      UNNEST(top_relevances) AS relevance,
      GENERATE_SUBSCRIPTS(top_relevances, 1) AS ideal_pos,
      n_relevant
    FROM truth_lists
    WHERE n_relevant > 0
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
