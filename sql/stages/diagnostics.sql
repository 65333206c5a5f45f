-- Counts reported beside the metrics (evaluate runs them in the same query), and the counts of
-- bad rows it refuses. List lengths, NULL scores and NULL items count whole lists; the rest count the
-- positions the metrics read (the first K, K the deepest cutoff or the whole list; ties also
-- the position after K, where a tie decides what falls inside). With a rank column, "scores"
-- are the ranks. NaN sorts above every number, so a NaN score is always among those positions.
WITH listed AS (
  SELECT
    user_id,
    MAX(list_length) AS list_length,
    MAX(list_length) - MAX(scored_length) AS null_scores,
    COUNT(CASE WHEN pos <= $cutoff THEN item_id END)
    - COUNT(DISTINCT CASE WHEN pos <= $cutoff THEN item_id END) AS duplicate_rows,
    MAX(list_length) - MAX(named_length) AS null_items,
    SUM(CASE WHEN ISNAN(score) THEN 1 ELSE 0 END) AS nan_scores,
    CASE
      WHEN MIN(pos) = 1 AND MAX(pos) = COUNT(*) AND COUNT(DISTINCT pos) = COUNT(*) THEN 0 ELSE 1
    END AS broken_ranks
  FROM ranked
  GROUP BY user_id
),

tied AS (
  SELECT
    user_id,
    COUNT(*) AS tie_groups
  FROM (
    SELECT
      user_id,
      score
    FROM ranked
    WHERE score IS NOT NULL
    GROUP BY user_id, score
    HAVING COUNT(*) > 1
  ) AS tied_scores
  GROUP BY user_id
),

interacted AS (
  SELECT
    user_id,
    MAX(CASE WHEN relevance > $threshold THEN 1 ELSE 0 END) AS has_relevant,
    COUNT(*) AS interaction_rows,
    COUNT(item_id) - COUNT(DISTINCT item_id) AS duplicate_interactions,
    COUNT(*) - COUNT(item_id) AS null_items,
    SUM(
      CASE WHEN relevance IS NULL OR relevance < 0 OR ISNAN(relevance) THEN 1 ELSE 0 END
    ) AS bad_relevance,
    SUM(CASE WHEN relevance > 1000 THEN 1 ELSE 0 END) AS huge_relevance
  FROM input_interactions
  GROUP BY user_id
)

SELECT
  COUNT(interacted.user_id) AS users_in_interactions,
  COUNT(listed.user_id) AS users_with_recommendations,
  SUM(
    CASE WHEN interacted.has_relevant = 1 AND listed.user_id IS NULL THEN 1 ELSE 0 END
  ) AS population_without_recommendations,
  SUM(
    CASE WHEN listed.user_id IS NOT NULL AND COALESCE(interacted.has_relevant, 0) = 0 THEN 1 ELSE 0 END
  ) AS recommended_without_relevant,
  SUM(CASE WHEN listed.list_length < $max_k THEN 1 ELSE 0 END) AS lists_shorter_than_k,
  COALESCE(SUM(listed.duplicate_rows), 0) AS duplicate_recommendations,
  COALESCE(SUM(interacted.duplicate_interactions), 0) AS duplicate_interactions,
  COALESCE(SUM(listed.null_scores), 0) AS null_scores,
  COALESCE(SUM(tied.tie_groups), 0) AS tied_score_groups,
  COALESCE(
    SUM(CASE WHEN listed.user_id IS NULL THEN listed.list_length ELSE 0 END), 0
  ) AS bad_recommendation_user_ids,
  COALESCE(SUM(listed.null_items), 0) AS bad_recommendation_item_ids,
  COALESCE(SUM(listed.nan_scores), 0) AS bad_scores,
  COALESCE(SUM(listed.broken_ranks), 0) AS bad_rank_lists,
  COALESCE(
    SUM(CASE WHEN interacted.user_id IS NULL THEN interacted.interaction_rows ELSE 0 END), 0
  ) AS bad_interaction_user_ids,
  COALESCE(SUM(interacted.null_items), 0) AS bad_interaction_item_ids,
  COALESCE(SUM(interacted.bad_relevance), 0) AS bad_relevance,
  COALESCE(SUM(interacted.huge_relevance), 0) AS relevance_over_1000
FROM listed
FULL OUTER JOIN interacted ON listed.user_id = interacted.user_id
LEFT JOIN tied ON listed.user_id = tied.user_id
