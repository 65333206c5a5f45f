-- name: user_average_precision
-- title: Mean per-user average precision over scored rows
-- definition: each user's average_precision over their own scored rows (one step per distinct score, ties entering together), the plain mean over the users with a relevant scored row (the others are skipped).
-- cutoff: none
-- reads: scored
-- aggregate: micro
-- better: higher
-- averaged: over users with a relevant scored row
-- ties_average: yes
-- aliases: mean_user_average_precision, user_ap
-- references: scikit-learn `average_precision_score` per user; the per-user counterpart of average_precision as user_auc is of auc; unlike `map` it reads the scored rows only (a relevant item without a score counts nowhere)
SELECT
  user_id,
  CASE
    WHEN SUM(positives) > 0
      THEN
        SUM(
          positives * positives_at_or_above_in_list
          / NULLIF(positives_at_or_above_in_list + negatives_at_or_above_in_list, 0)
        )
        / SUM(positives)
    ELSE 0
  END AS numerator,
  CASE WHEN SUM(positives) > 0 THEN 1 ELSE 0 END AS denominator
FROM scored
GROUP BY user_id
