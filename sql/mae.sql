-- name: mae
-- title: Mean absolute error of the score against the rating
-- definition: mean of |score - rating| over the recommended (user, item) rows the interactions rate.
-- formula: \mathrm{MAE} = \frac{1}{n} \sum_{(u, i)} |s_{ui} - r_{ui}|
-- cutoff: none
-- reads: rated
-- aggregate: micro
-- better: lower
-- ties_average: yes
-- references: seed 004 `mae`; scikit-learn `mean_absolute_error`; MS Recommenders `mae`
SELECT
  user_id,
  SUM(ABS(score - rating)) AS numerator,
  COUNT(*) AS denominator
FROM rated
GROUP BY user_id
