-- name: logloss
-- title: Log loss (binary cross-entropy)
-- definition: over all scored rows, the mean of -ln(p) for relevant rows and -ln(1 - p) for the others, p = the score clipped to [1e-15, 1 - 1e-15]; scores must lie in [0, 1].
-- formula: \mathrm{logloss} = -\frac{1}{n} \sum_{(u, i)} \left[ y_{ui} \ln p_{ui} + (1 - y_{ui}) \ln(1 - p_{ui}) \right]
-- cutoff: none
-- reads: scored
-- probabilities: yes
-- aggregate: micro
-- better: lower
-- ties_average: yes
-- aliases: log_loss, cross_entropy
-- references: scikit-learn `log_loss` (which clips at the float64 epsilon instead, since 1.6)
SELECT
  user_id,
  -SUM(
    positives * LN(LEAST(GREATEST(score, 1e-15), 1 - 1e-15))
    + negatives * LN(1 - LEAST(GREATEST(score, 1e-15), 1 - 1e-15))
  ) AS numerator,
  SUM(positives + negatives) AS denominator
FROM scored
GROUP BY user_id
