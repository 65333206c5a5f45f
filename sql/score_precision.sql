-- name: score_precision
-- title: Precision at a score threshold
-- definition: over all scored rows, relevant rows with score >= t / rows with score >= t; `score_precision@t`, t = 0.5 when no @ is given; NULL when no row reaches t.
-- cutoff: threshold
-- reads: scored
-- aggregate: micro
-- better: higher
-- ties_average: yes
-- references: scikit-learn `precision_score` on (relevant, score >= t) (which gives 0 with a warning where this is NULL)
SELECT
  user_id,
  SUM(CASE WHEN score >= $score_threshold THEN positives ELSE 0 END) AS numerator,
  SUM(CASE WHEN score >= $score_threshold THEN positives + negatives ELSE 0 END) AS denominator
FROM scored
GROUP BY user_id
