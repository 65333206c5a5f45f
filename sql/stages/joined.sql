-- Every recommended item within the cutoff and every relevant item: pos is NULL for a relevant
-- item not recommended, relevance 0 and ideal_pos NULL for a recommended item not relevant.
SELECT
  COALESCE(ranked.user_id, truth.user_id) AS user_id,
  ranked.pos,
  ranked.list_length,
  COALESCE(truth.relevance, 0) AS relevance,
  truth.ideal_pos,
  truth.n_relevant
FROM ranked
FULL OUTER JOIN truth
  ON ranked.user_id = truth.user_id AND ranked.item_id = truth.item_id
