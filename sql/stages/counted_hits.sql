-- DuckDB's counted plan (sqlmetrics/plan.py, lists "counted_hits"), for the hit-rows metrics
-- at cutoffs deeper than top_lists.sql serves: each recommended relevant item with its position
-- as 1 + the number of the user's items ranked above it in ranked.sql's order (score
-- descending, NULL scores last, equal scores by item id descending), counted over the unsorted
-- list. Hits are few, so joining each with its user's list costs less than sorting every
-- list, and one count serves every cutoff. Kept within the deepest cutoff ($cutoff).
-- A list that repeats an item with the same score (evaluate refuses it unless
-- duplicates="first", which removes the repeat first) gives both rows the first one's position.
SELECT
  hit.user_id,
  1 + COUNT(*) FILTER (
    WHERE listed.score > hit.score
    OR (hit.score IS NULL AND listed.score IS NOT NULL)
    OR (listed.score IS NOT DISTINCT FROM hit.score AND listed.item_id > hit.item_id)
  ) AS pos,
  hit.relevance
FROM (
  SELECT
    input_recommendations.user_id,
    input_recommendations.item_id,
    input_recommendations.score,
    relevant.relevance
  FROM input_recommendations
  INNER JOIN (
    SELECT
      user_id,
      item_id,
      MAX(relevance) AS relevance
    FROM input_interactions
    GROUP BY user_id, item_id
    HAVING MAX(relevance) > $threshold
  ) AS relevant
    ON input_recommendations.user_id = relevant.user_id
    AND input_recommendations.item_id = relevant.item_id
) AS hit
INNER JOIN input_recommendations AS listed
  ON hit.user_id = listed.user_id
GROUP BY hit.user_id, hit.item_id, hit.score, hit.relevance
HAVING pos <= $cutoff
