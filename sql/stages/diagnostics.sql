-- Counts reported beside the metrics (evaluate runs them in the same query), and the counts of
-- bad rows it refuses. Lengths, NULL scores, NULL items and NaN scores count whole lists
-- (list_counts.sql). Repeated items count where the metrics read, the first $max_k positions
-- (ranked_counts; plan.repeats_depth says when), or anywhere in the list (list_counts.sql's,
-- when the composer drops ranked_counts' count: checks="full", metrics reading whole lists). Tied scores count where they can change a number: a tie group
-- (a list's items with one score) holding the positions k and k + 1 of a requested cutoff k,
-- counted once however many cutoffs it straddles ($cutoffs; with no cutoff, every tie group of
-- the list). With a rank column, "scores" are the ranks.
-- single_class counts the scored lists (scored.sql) gauc and user_auc skip: all relevant or
-- none; the composer drops it when no metric reads scored. Its bad_weights are the scored
-- rows' refused weights (compose/weights.py), 0 without a weight column.
WITH counted AS (
  SELECT
    user_id,
    list_length,
    list_length - scored_length AS null_scores,
    duplicate_rows,
    list_length - named_length AS null_items,
    nan_scores,
    outside_unit_scores,
    broken_ranks
  FROM list_counts
),

-- One pass over ranked's rows for both counts ranked gives, so that an engine inlining a CTE at
-- each reference (Spark) ranks the lists once for them: the tie groups straddling a requested
-- cutoff, and the rows repeating an item found earlier among the first $max_k of the list.
ranked_counts AS (
  SELECT
    user_id,
    COUNT(DISTINCT CASE WHEN score = next_score AND pos IN ($cutoffs) THEN score END)
      AS tie_groups,
    COUNT(CASE WHEN pos <= $max_k THEN item_id END)
      - COUNT(DISTINCT CASE WHEN pos <= $max_k THEN item_id END) AS duplicate_rows
  FROM (
    SELECT
      user_id,
      item_id,
      pos,
      score,
      LEAD(score) OVER (PARTITION BY user_id ORDER BY pos) AS next_score
    FROM ranked
  ) AS neighbours
  GROUP BY user_id
),

single_class AS (
  SELECT
    user_id,
    CASE WHEN SUM(positives) = 0 OR SUM(negatives) = 0 THEN 1 ELSE 0 END AS skipped,
    SUM(bad_weights) AS bad_weights
  FROM scored
  GROUP BY user_id
),

-- Kept apart from the FULL OUTER JOIN below: SQLite and MySQL write that join as two joins,
-- which they can only do when it is the select's one join.
listed AS (
  SELECT
    counted.user_id,
    counted.list_length,
    counted.null_scores,
    COALESCE(ranked_counts.duplicate_rows, 0) AS duplicate_rows,
    counted.null_items,
    counted.nan_scores,
    counted.broken_ranks,
    counted.outside_unit_scores,
    COALESCE(ranked_counts.tie_groups, 0) AS tie_groups,
    COALESCE(single_class.skipped, 0) AS single_class,
    COALESCE(single_class.bad_weights, 0) AS bad_weights
  FROM counted
  LEFT JOIN ranked_counts ON counted.user_id = ranked_counts.user_id
  LEFT JOIN single_class ON counted.user_id = single_class.user_id
),

interacted AS (
  SELECT
    user_id,
    MAX(CASE WHEN relevance > $threshold THEN 1 ELSE 0 END) AS has_relevant,
    COUNT(*) AS interaction_rows,
    COUNT(item_id) - COUNT(DISTINCT item_id) AS duplicate_interactions,
    COUNT(*) - COUNT(item_id) AS null_items,
    -- x * 0 = 0 holds for every finite number: not for NaN or infinity (nor for SQLite's
    -- infinity, whose product with 0 is NULL).
    SUM(
      CASE
        WHEN relevance IS NULL OR relevance < 0 OR ISNAN(relevance) THEN 1
        WHEN relevance * 0 = 0 THEN 0
        ELSE 1
      END
    ) AS bad_relevance,
    SUM(CASE WHEN relevance > 1000 THEN 1 ELSE 0 END) AS huge_relevance
  FROM input_interactions
  GROUP BY user_id
),

-- Every user of either input, in a select of its own: SQLite and MySQL write a FULL OUTER JOIN
-- as two joins, which they can do only for a plain select with one join.
users AS (
  SELECT
    COALESCE(listed.user_id, interacted.user_id) AS user_id,
    listed.user_id AS listed_user,
    interacted.user_id AS interacted_user,
    listed.list_length,
    listed.null_scores,
    listed.duplicate_rows,
    listed.null_items AS null_listed_items,
    listed.nan_scores,
    listed.broken_ranks,
    listed.tie_groups,
    listed.outside_unit_scores,
    listed.single_class,
    listed.bad_weights,
    interacted.has_relevant,
    interacted.interaction_rows,
    interacted.duplicate_interactions,
    interacted.null_items AS null_interacted_items,
    interacted.bad_relevance,
    interacted.huge_relevance
  FROM listed
  FULL OUTER JOIN interacted ON listed.user_id = interacted.user_id
)

SELECT
  COUNT(interacted_user) AS users_in_interactions,
  COUNT(listed_user) AS users_with_recommendations,
  SUM(
    CASE WHEN has_relevant = 1 AND listed_user IS NULL THEN 1 ELSE 0 END
  ) AS population_without_recommendations,
  SUM(
    CASE WHEN listed_user IS NOT NULL AND COALESCE(has_relevant, 0) = 0 THEN 1 ELSE 0 END
  ) AS recommended_without_relevant,
  SUM(CASE WHEN list_length < $max_k THEN 1 ELSE 0 END) AS lists_shorter_than_k,
  COALESCE(SUM(duplicate_rows), 0) AS duplicate_recommendations,
  COALESCE(SUM(duplicate_interactions), 0) AS duplicate_interactions,
  COALESCE(SUM(null_scores), 0) AS null_scores,
  COALESCE(SUM(tie_groups), 0) AS tied_score_groups,
  COALESCE(SUM(single_class), 0) AS single_class_users,
  COALESCE(
    SUM(CASE WHEN listed_user IS NULL THEN list_length ELSE 0 END), 0
  ) AS bad_recommendation_user_ids,
  COALESCE(SUM(null_listed_items), 0) AS bad_recommendation_item_ids,
  COALESCE(SUM(nan_scores), 0) AS bad_scores,
  COALESCE(SUM(broken_ranks), 0) AS bad_rank_lists,
  COALESCE(
    SUM(CASE WHEN interacted_user IS NULL THEN interaction_rows ELSE 0 END), 0
  ) AS bad_interaction_user_ids,
  COALESCE(SUM(null_interacted_items), 0) AS bad_interaction_item_ids,
  COALESCE(SUM(bad_relevance), 0) AS bad_relevance,
  COALESCE(SUM(huge_relevance), 0) AS relevance_over_1000,
  COALESCE(SUM(outside_unit_scores), 0) AS scores_outside_0_1,
  COALESCE(SUM(bad_weights), 0) AS bad_weights
FROM users
