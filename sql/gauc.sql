-- name: gauc
-- title: Group AUC (per-user AUC weighted by list size)
-- definition: each user's AUC over their own scored rows (ties 1/2), averaged with weights = the user's scored rows; users whose scored rows are all relevant or none are skipped (diagnostic single_class_users).
-- cutoff: none
-- reads: scored
-- aggregate: micro
-- better: higher
-- averaged: over users, weighted by their scored rows
-- ties_average: yes
-- aliases: group_auc
-- references: seed 003 (rank-sum formula, per user); RecBole `GAUC` (which weights by positives instead)
SELECT
  user_id,
  CASE
    WHEN SUM(positives) > 0 AND SUM(negatives) > 0
      THEN
        (SUM(positives) + SUM(negatives)) * SUM(positives * negatives_below_in_list)
        / (SUM(positives) * SUM(negatives))
    ELSE 0
  END AS numerator,
  CASE
    WHEN SUM(positives) > 0 AND SUM(negatives) > 0 THEN SUM(positives) + SUM(negatives) ELSE 0
  END AS denominator
FROM scored
GROUP BY user_id
