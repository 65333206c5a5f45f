-- name: ne
-- title: Normalised entropy (log loss over the entropy of the base rate)
-- definition: over all scored rows of the group, the log loss (p = the score clipped to [1e-12, 1 - 1e-12], as TorchRec's eta) divided by the entropy of the group's base rate b = relevant rows / rows, -(b ln b + (1 - b) ln(1 - b)); below 1 the scores predict better than the base rate alone; NULL when every row is relevant or none; scores must lie in [0, 1].
-- formula: \mathrm{NE} = \frac{-\sum_{(u, i)} \left[ y_{ui} \ln p_{ui} + (1 - y_{ui}) \ln(1 - p_{ui}) \right]}{-\left( P \ln b + N \ln(1 - b) \right)}, \quad b = \frac{P}{P + N}
-- cutoff: none
-- reads: scored
-- probabilities: yes
-- aggregate: micro
-- better: lower
-- ties_average: yes
-- aliases: normalized_entropy, normalised_entropy
-- references: He et al. 2014, Practical Lessons from Predicting Clicks on Ads at Facebook; TorchRec `NE` (log2 in both terms, the same ratio; the base rate clamped to [eta, 1 - eta] where this gives NULL)
SELECT
  user_id,
  -SUM(
    positives * LN(LEAST(GREATEST(score, 1e-12), 1 - 1e-12))
    + negatives * LN(1 - LEAST(GREATEST(score, 1e-12), 1 - 1e-12))
  ) AS numerator,
  -- ln(1 / b) rather than -ln(b): a group with every row relevant (or none) sums to +0,
  -- where -0.0 would pass DataFusion's NULLIF(x, 0) and divide to -inf
  SUM(
    CASE
      WHEN positives > 0
        THEN positives * LN((positives_in_group + negatives_in_group) / positives_in_group)
      ELSE 0
    END
    + CASE
      WHEN negatives > 0
        THEN negatives * LN((positives_in_group + negatives_in_group) / negatives_in_group)
      ELSE 0
    END
  ) AS denominator
FROM scored
GROUP BY user_id
