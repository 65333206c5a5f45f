-- DuckDB's hit-rows plan over score_lists.sql (sqlmetrics/duckdb_plan.py): judged_hits.sql's
-- hits, each relevant item recommended within the deepest cutoff with its position, found
-- from its score instead of by sorting every list. A hit's position in ranked.sql's order is
-- 1 + the rows above it: the scores greater than its own, which is where its score first
-- appears in the list's scores (descending), plus the rows of an equal score and a greater
-- item id, counted only for the few hits whose score appears twice there. The lists that
-- score_lists.sql ranked by the window carry their items in order: their hits are found there.
SELECT
  user_id,
  pos,
  relevance
FROM (
  WITH relevant AS (
    SELECT user_id, item_id, MAX(relevance) AS relevance
    FROM input_interactions
    GROUP BY user_id, item_id
    HAVING MAX(relevance) > $threshold
  ),

  -- every recommended relevant item, with its score (materialized: else DuckDB joins every
  -- recommended row to its list's scores before it finds the few that are relevant)
  recommended AS MATERIALIZED (
    SELECT
      input_recommendations.user_id,
      input_recommendations.item_id,
      input_recommendations.score,
      relevant.relevance
    FROM input_recommendations
    INNER JOIN relevant
      ON input_recommendations.user_id = relevant.user_id
      AND input_recommendations.item_id = relevant.item_id
  ),

  placed AS (
    SELECT
      recommended.user_id,
      recommended.item_id,
      recommended.score,
      recommended.relevance,
      LIST_POSITION(top_lists.scores, recommended.score) AS first_pos,
      LIST_EXTRACT(top_lists.scores, LIST_POSITION(top_lists.scores, recommended.score) + 1)
        = recommended.score AS tied
    FROM recommended
    INNER JOIN top_lists
      ON recommended.user_id = top_lists.user_id
    WHERE top_lists.items IS NULL
  ),

  -- the rows of a tied hit's score placed before it: those of a greater item id
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
  ),

  positioned AS (
    SELECT
      placed.user_id,
      placed.first_pos + COALESCE(tied_above.rows_above, 0) AS pos,
      placed.relevance
    FROM placed
    LEFT JOIN tied_above
      ON placed.user_id = tied_above.user_id
      AND placed.item_id = tied_above.item_id
  ),

  -- the lists ranked by the window: their items in order
  listed AS (
    SELECT
      user_id,
      UNNEST(items[1:$cutoff]) AS item_id,
      GENERATE_SUBSCRIPTS(items[1:$cutoff], 1) AS pos
    FROM top_lists
    WHERE items IS NOT NULL
  )

  SELECT user_id, pos, relevance FROM positioned
  WHERE pos <= $cutoff
  UNION ALL
  SELECT listed.user_id, listed.pos, relevant.relevance
  FROM listed
  INNER JOIN relevant
    ON listed.user_id = relevant.user_id
    AND listed.item_id = relevant.item_id
) AS placed_hits
