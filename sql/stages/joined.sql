-- Every recommended item within the cutoff and every relevant item: pos is NULL for a relevant
-- item not recommended, relevance 0 and ideal_pos NULL for a recommended item not relevant.
-- ideal_dcg_through, ideal_gain_through, ideal_excess_through and level_weight_from (the ideal
-- order read at the recommended item's position: ranked_ideal.sql) are read only by ndcg_rel,
-- normalized_gain, rndcg and q_measure; for them the composer reads ranked_ideal in ranked's place.
SELECT
  COALESCE(ranked.user_id, truth.user_id) AS user_id,
  ranked.pos,
  ranked.list_length,
  COALESCE(truth.relevance, 0) AS relevance,
  truth.ideal_pos,
  truth.n_relevant,
  truth.max_relevance,
  ranked.ideal_dcg_through,
  ranked.ideal_gain_through,
  ranked.ideal_excess_through,
  ranked.level_weight_from
FROM ranked
FULL OUTER JOIN truth
  ON ranked.user_id = truth.user_id AND ranked.item_id = truth.item_id
