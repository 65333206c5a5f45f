-- DuckDB only (plan.py's ranked "ranked_judged"), ties="id" or "id_text", for inputs whose
-- reader checked every row (a TREC run: no NULL id or score, no NaN, no repeated item) and
-- metrics that read a position only where the interactions judge the item (joined_hits'
-- relevant rows, judged_pairs_ranked.sql's pairs): ranked.sql's rows of the judged items
-- only, with ranked.sql's positions, and one row per list (item_id NULL, pos 1: the first
-- position, which joined_hits keeps) carrying its list_length, as every row does. Sorting
-- every row by score and item id costs far more than sorting each list's scores alone, and
-- most rows are never judged. A row's position in ranked.sql's order is 1 + the rows above
-- it: the scores greater than its own, which is where its score first appears in the list's
-- scores sorted descending, plus the rows of an equal score and a greater item id, counted
-- only for the few rows whose score appears twice there (as placed_hits.sql does).
SELECT
  user_id,
  item_id,
  pos,
  list_length
FROM (
  -- judged_pairs.sql's grouping, written the same so that DuckDB groups the interactions once
  -- for both (an item whose relevance is NULL is read by no metric)
  WITH judged_items AS (
    SELECT user_id, item_id, MAX(relevance) AS relevance
    FROM input_interactions
    GROUP BY user_id, item_id
  ),

  -- each list's length, its scores sorted and its judged items with their scores, from one
  -- aggregate (a row per judged item joined to its list's scores would copy the list)
  lists AS (
    SELECT
      input_recommendations.user_id,
      COUNT(*) AS list_length,
      LIST_SORT(LIST(input_recommendations.score), 'DESC') AS scores,
      LIST({'item_id': input_recommendations.item_id, 'score': input_recommendations.score})
        FILTER (WHERE judged_items.relevance IS NOT NULL) AS judged
    FROM input_recommendations
    LEFT JOIN judged_items
      ON input_recommendations.user_id = judged_items.user_id
      AND input_recommendations.item_id = judged_items.item_id
    GROUP BY input_recommendations.user_id
  ),

  placed AS MATERIALIZED (
    SELECT
      user_id,
      item_id,
      score,
      list_length,
      LIST_POSITION(scores, score) AS first_pos,
      LIST_EXTRACT(scores, LIST_POSITION(scores, score) + 1) = score AS tied
    FROM (
      SELECT user_id, list_length, scores, UNNEST(judged, recursive := TRUE)
      FROM lists
    ) AS unnested
  ),

  -- the rows of a tied item's score placed before it: those of a greater item id
  tied_above AS (
    SELECT
      placed.user_id,
      placed.item_id,
      COUNT(*) AS rows_above
    FROM placed
    INNER JOIN input_recommendations
      ON placed.user_id = input_recommendations.user_id
      AND placed.score = input_recommendations.score
      AND input_recommendations.item_id > placed.item_id
    WHERE placed.tied
    GROUP BY placed.user_id, placed.item_id
  )

  SELECT
    placed.user_id,
    placed.item_id,
    placed.first_pos + COALESCE(tied_above.rows_above, 0) AS pos,
    placed.list_length
  FROM placed
  LEFT JOIN tied_above
    ON placed.user_id = tied_above.user_id
    AND placed.item_id = tied_above.item_id
  UNION ALL
  SELECT
    user_id,
    NULL AS item_id,
    1 AS pos,
    list_length
  FROM lists
) AS ranked_judged
