-- diagnostics.sql's counts when they ride the metrics' chain and no count needs a row per list
-- (plan.py's diagnostics "chained", chain.py). per_user keeps every user of the ranking (a
-- list's first row, or a relevant item) with its list's length as ranked counts it (the rows
-- ranked keeps: the length itself below the depth, enough for the short lists) and its sums of
-- ranked's flags (the repeated items among the first $max_k, the tie groups straddling a
-- cutoff); interacted is diagnostics.sql's; the recommendations' bad rows are list_checks.sql's
-- one aggregate. A user without a list has list_length 0. The composer carries per_user's
-- metric columns through users and adds their means to the final SELECT, and writes 0 for a
-- flag's sum the chain does not carry.
WITH users AS (
  SELECT
    CASE WHEN per_user.list_length > 0 THEN per_user.user_id END AS listed_user,
    interacted.user_id AS interacted_user,
    per_user.list_length,
    per_user.duplicate_rows,
    per_user.tie_groups,
    interacted.has_relevant,
    interacted.interaction_rows,
    interacted.duplicate_interactions,
    interacted.null_items AS null_interacted_items,
    interacted.bad_relevance,
    interacted.huge_relevance
  FROM per_user
  FULL OUTER JOIN interacted ON per_user.user_id = interacted.user_id
)

SELECT
  COUNT(users.interacted_user) AS users_in_interactions,
  COUNT(users.listed_user) AS users_with_recommendations,
  SUM(
    CASE WHEN users.has_relevant = 1 AND users.listed_user IS NULL THEN 1 ELSE 0 END
  ) AS population_without_recommendations,
  SUM(
    CASE
      WHEN users.listed_user IS NOT NULL AND COALESCE(users.has_relevant, 0) = 0 THEN 1
      ELSE 0
    END
  ) AS recommended_without_relevant,
  -- the NULL user's list too, as diagnostics.sql counts it
  SUM(
    CASE WHEN users.list_length > 0 AND users.list_length < $max_k THEN 1 ELSE 0 END
  ) AS lists_shorter_than_k,
  COALESCE(
    SUM(CASE WHEN users.listed_user IS NOT NULL THEN users.duplicate_rows END), 0
  ) AS duplicate_recommendations,
  COALESCE(SUM(users.duplicate_interactions), 0) AS duplicate_interactions,
  COALESCE(MAX(list_checks.null_scores), 0) AS null_scores,
  COALESCE(
    SUM(CASE WHEN users.listed_user IS NOT NULL THEN users.tie_groups END), 0
  ) AS tied_score_groups,
  0 AS single_class_users,
  COALESCE(MAX(list_checks.null_user_rows), 0) AS bad_recommendation_user_ids,
  COALESCE(MAX(list_checks.null_items), 0) AS bad_recommendation_item_ids,
  COALESCE(MAX(list_checks.nan_scores), 0) AS bad_scores,
  0 AS bad_rank_lists,
  COALESCE(
    SUM(CASE WHEN users.interacted_user IS NULL THEN users.interaction_rows ELSE 0 END), 0
  ) AS bad_interaction_user_ids,
  COALESCE(SUM(users.null_interacted_items), 0) AS bad_interaction_item_ids,
  COALESCE(SUM(users.bad_relevance), 0) AS bad_relevance,
  COALESCE(SUM(users.huge_relevance), 0) AS relevance_over_1000,
  COALESCE(MAX(list_checks.outside_unit_scores), 0) AS scores_outside_0_1,
  0 AS bad_weights
FROM users
CROSS JOIN list_checks
