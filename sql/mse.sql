-- name: mse
-- title: Mean squared error of the score against the rating
-- definition: mean of (score - rating)^2 over the recommended (user, item) rows the interactions rate.
-- formula: \mathrm{MSE} = \frac{1}{n} \sum_{(u, i)} (s_{ui} - r_{ui})^2
-- cutoff: none
-- reads: rated
-- aggregate: micro
-- better: lower
-- ties_average: yes
-- references: scikit-learn `mean_squared_error`
SELECT
  user_id,
  SUM((score - rating) * (score - rating)) AS numerator,
  COUNT(*) AS denominator
FROM rated
GROUP BY user_id
