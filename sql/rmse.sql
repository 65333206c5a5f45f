-- name: rmse
-- title: Root mean squared error of the score against the rating
-- definition: the square root of the mean of (score - rating)^2 over the recommended (user, item) rows the interactions rate.
-- formula: \mathrm{RMSE} = \sqrt{\frac{1}{n} \sum_{(u, i)} (s_{ui} - r_{ui})^2}
-- cutoff: none
-- reads: rated
-- aggregate: micro
-- better: lower
-- finish: sqrt
-- ties_average: yes
-- references: seed 004 `rmse`; scikit-learn `root_mean_squared_error`; MS Recommenders `rmse`
SELECT
  user_id,
  SUM((score - rating) * (score - rating)) AS numerator,
  COUNT(*) AS denominator
FROM rated
GROUP BY user_id
