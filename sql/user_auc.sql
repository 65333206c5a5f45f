-- name: user_auc
-- title: Mean per-user AUC
-- definition: each user's AUC over their own scored rows (ties 1/2), the plain mean over users with both relevant and non-relevant scored rows (the others are skipped, diagnostic single_class_users).
-- cutoff: none
-- reads: scored
-- aggregate: micro
-- better: higher
-- averaged: over users with both classes
-- ties_average: yes
-- aliases: mean_user_auc
-- references: seed 003 (rank-sum formula, per user); torchmetrics `RetrievalAUROC`
SELECT
  user_id,
  CASE
    WHEN SUM(positives) > 0 AND SUM(negatives) > 0
      THEN SUM(positives * negatives_below_in_list) / (SUM(positives) * SUM(negatives))
    ELSE 0
  END AS numerator,
  CASE WHEN SUM(positives) > 0 AND SUM(negatives) > 0 THEN 1 ELSE 0 END AS denominator
FROM scored
GROUP BY user_id
