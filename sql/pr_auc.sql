-- name: pr_auc
-- title: Area under the precision-recall curve (trapezoidal)
-- definition: over all scored rows of the group, the trapezoidal area under the precision-recall points of every distinct score (recall and precision among the rows scored >= s), starting from recall 0 at precision 1; NULL when nothing is relevant. average_precision takes each step's precision instead of the mean of its two ends, so it never interpolates between points.
-- formula: \mathrm{PR\text{-}AUC} = \sum_{s} \frac{P_s}{P} \cdot \frac{\mathrm{prec}_{\ge s} + \mathrm{prec}_{> s}}{2}
-- cutoff: none
-- reads: scored
-- aggregate: micro
-- better: higher
-- ties_average: yes
-- aliases: area_under_pr_curve, pr_auc_trapezoidal
-- references: scikit-learn `auc(recall, precision)` over `precision_recall_curve`; the trapezoids BigQuery users sum over their own thresholds' precision and recall; TorchRec's `AUPRC` is not this but average_precision (a Riemann sum)
SELECT
  user_id,
  SUM(
    positives
    * (
      positives_at_or_above_in_group
      / NULLIF(positives_at_or_above_in_group + negatives_at_or_above_in_group, 0)
      + COALESCE(
        (positives_at_or_above_in_group - positives_at_score_in_group)
        / NULLIF(
          positives_at_or_above_in_group + negatives_at_or_above_in_group
          - positives_at_score_in_group - negatives_at_score_in_group,
          0
        ),
        1
      )
    )
    / 2
  ) AS numerator,
  SUM(positives) AS denominator
FROM scored
GROUP BY user_id
