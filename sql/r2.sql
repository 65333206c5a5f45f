-- name: r2
-- title: Coefficient of determination of the score against the rating
-- definition: 1 - SSE / SST over the recommended (user, item) rows the interactions rate: SSE = sum of (rating - score)^2, SST = sum of (rating - the group's mean rating)^2; NULL when SST = 0.
-- formula: R^2 = 1 - \frac{\sum_{(u, i)} (r_{ui} - s_{ui})^2}{\sum_{(u, i)} (r_{ui} - \bar{r})^2}
-- cutoff: none
-- reads: rated
-- aggregate: micro
-- better: higher
-- ties_average: yes
-- aliases: rsquared, r_squared
-- references: scikit-learn `r2_score` (which gives 1 or 0 where this is NULL); MS Recommenders `rsquared`
SELECT
  user_id,
  SUM((rating - mean_rating) * (rating - mean_rating))
  - SUM((rating - score) * (rating - score)) AS numerator,
  SUM((rating - mean_rating) * (rating - mean_rating)) AS denominator
FROM rated
GROUP BY user_id
