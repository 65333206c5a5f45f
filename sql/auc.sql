-- name: auc
-- title: ROC AUC over every scored row
-- definition: over all scored (user, item) rows of the group, relevant = positive: (sum over positives of the negatives scored lower + half those scored equal) / (positives x negatives); whole lists, NULL scores left out.
-- cutoff: none
-- reads: scored
-- aggregate: micro
-- better: higher
-- ties_average: yes
-- references: seed 003 (rank-sum formula); scikit-learn `roc_auc_score`; MS Recommenders `auc`
SELECT
  user_id,
  SUM(positives * negatives_below_in_group) AS numerator,
  SUM(positives) * MAX(negatives_in_group) AS denominator
FROM scored
GROUP BY user_id
