-- ties="optimistic": among equal scores the more relevant items first (the composer flips the
-- relevance key to ascending for ties="pessimistic"), then item id descending.
SELECT
  input_recommendations.user_id,
  input_recommendations.item_id,
  ROW_NUMBER() OVER (
    PARTITION BY input_recommendations.user_id
    ORDER BY
      input_recommendations.score DESC NULLS LAST,
      COALESCE(truth.relevance, 0) DESC,
      input_recommendations.item_id DESC
  ) AS pos,
  input_recommendations.score
FROM input_recommendations
LEFT JOIN truth
  ON
    input_recommendations.user_id = truth.user_id
    AND input_recommendations.item_id = truth.item_id
QUALIFY pos <= $cutoff
