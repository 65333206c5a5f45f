-- name: gauc_positives
-- title: Group AUC weighted by positives (RecBole's GAUC)
-- definition: each user's AUC over their own scored rows (ties 1/2), averaged with weights = the user's relevant scored rows; users whose scored rows are all relevant or none are skipped (diagnostic single_class_users).
-- cutoff: none
-- reads: scored
-- aggregate: micro
-- better: higher
-- averaged: over users, weighted by their relevant scored rows
-- ties_average: yes
-- references: RecBole `GAUC` (recbole/evaluator/metrics.py: each user's AUC weighted by its positives, users of one class skipped); gauc weighs by the scored rows, user_auc (TorchRec's GAUC) not at all
SELECT
  user_id,
  CASE
    WHEN SUM(positives) > 0 AND SUM(negatives) > 0
      THEN SUM(positives * negatives_below_in_list) / SUM(negatives)
    ELSE 0
  END AS numerator,
  CASE WHEN SUM(positives) > 0 AND SUM(negatives) > 0 THEN SUM(positives) ELSE 0 END AS denominator
FROM scored
GROUP BY user_id
