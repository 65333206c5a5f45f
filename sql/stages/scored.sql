-- What the auc and classification metric files read: one row per (user, score) of the user's
-- scored recommendations (every row of the list with a non-NULL score, no cutoff), with how
-- many of those rows are relevant (positives) and how many are not (negatives: not relevant,
-- or not in the interactions). Equal scores share a row, so ties count once, half each way:
-- negatives_below_in_list is, for a positive at this score, the negatives of the same list
-- scored lower plus half those scored the same (the rank-sum formula's count); the _in_group
-- columns do the same over every list of the group together (a window without user_id spans
-- the group). With a weight column (columns={"weight": ...}) each row counts its weight in
-- positives and negatives, and so in every sum and ratio over them; without one the composer
-- writes 1 for input_recommendations.weight (compose/weights.py). The _at_or_above columns count the rows scored at least this score (the points of
-- the precision-recall curve: in the list, and over the group, where a threshold's rows of every
-- list count together), _at_score_in_group the group's rows at this very score, and
-- positives_in_group all its relevant rows. Unused columns are pruned per query.
SELECT
  user_id,
  score,
  positives,
  negatives,
  SUM(negatives) OVER (
    PARTITION BY user_id ORDER BY score ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
  ) - 0.5 * negatives AS negatives_below_in_list,
  SUM(negatives) OVER (ORDER BY score RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
  - 0.5 * SUM(negatives) OVER (PARTITION BY score) AS negatives_below_in_group,
  SUM(negatives) OVER () AS negatives_in_group,
  SUM(positives) OVER () AS positives_in_group,
  SUM(positives) OVER (
    PARTITION BY user_id ORDER BY score DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
  ) AS positives_at_or_above_in_list,
  SUM(negatives) OVER (
    PARTITION BY user_id ORDER BY score DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
  ) AS negatives_at_or_above_in_list,
  SUM(positives) OVER (
    ORDER BY score DESC RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
  ) AS positives_at_or_above_in_group,
  SUM(negatives) OVER (
    ORDER BY score DESC RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
  ) AS negatives_at_or_above_in_group,
  SUM(positives) OVER (PARTITION BY score) AS positives_at_score_in_group,
  SUM(negatives) OVER (PARTITION BY score) AS negatives_at_score_in_group
FROM (
  SELECT
    input_recommendations.user_id,
    input_recommendations.score,
    SUM(CASE WHEN truth.item_id IS NULL THEN 0 ELSE input_recommendations.weight END) AS positives,
    SUM(CASE WHEN truth.item_id IS NULL THEN input_recommendations.weight ELSE 0 END) AS negatives
  FROM input_recommendations
  LEFT JOIN truth
    ON
      input_recommendations.user_id = truth.user_id
      AND input_recommendations.item_id = truth.item_id
  WHERE input_recommendations.score IS NOT NULL
  GROUP BY input_recommendations.user_id, input_recommendations.score
) AS tie_groups
