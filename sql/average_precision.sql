-- name: average_precision
-- title: Average precision over every scored row (step-wise, scikit-learn's)
-- definition: over all scored (user, item) rows of the group, relevant = positive: the sum over each distinct score s, from the highest, of (the share of the positives scored s) x (the precision among the rows scored >= s), one step per distinct score, so tied rows enter together; NULL when nothing is relevant.
-- formula: \mathrm{AP} = \sum_{s} \frac{P_s}{P} \cdot \frac{TP_{\ge s}}{TP_{\ge s} + FP_{\ge s}}
-- cutoff: none
-- reads: scored
-- aggregate: micro
-- better: higher
-- ties_average: yes
-- aliases: ap_score
-- references: scikit-learn `average_precision_score` (the same steps, ties as one threshold); TorchRec `AUPRC` (the same Riemann sum over the distinct scores, from recall 0 at precision 1); pr_auc takes the trapezoids instead; not `map`, which averages per user over the ranked list and counts relevant items never scored
SELECT
  user_id,
  SUM(
    positives * positives_at_or_above_in_group
    / NULLIF(positives_at_or_above_in_group + negatives_at_or_above_in_group, 0)
  ) AS numerator,
  SUM(positives) AS denominator
FROM scored
GROUP BY user_id
