-- name: calibration
-- title: Calibration (predicted over observed positives)
-- definition: over all scored rows of the group, the sum of the scores divided by the relevant rows: 1 when the scores, read as probabilities, add up to the positives seen; above 1 they over-predict; NULL when nothing is relevant; scores must lie in [0, 1].
-- formula: \mathrm{calibration} = \frac{\sum_{(u, i)} p_{ui}}{\sum_{(u, i)} y_{ui}}
-- cutoff: none
-- reads: scored
-- probabilities: yes
-- aggregate: micro
-- better: one
-- ties_average: yes
-- references: TorchRec `Calibration` (0 where nothing is relevant, NULL here)
SELECT
  user_id,
  SUM(score * (positives + negatives)) AS numerator,
  SUM(positives) AS denominator
FROM scored
GROUP BY user_id
