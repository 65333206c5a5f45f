-- name: score_f1
-- title: F1 at a score threshold
-- definition: over all scored rows, 2 TP / (rows with score >= t + relevant scored rows), TP = relevant rows with score >= t; `score_f1@t`, t = 0.5 when no @ is given.
-- cutoff: threshold
-- reads: scored
-- aggregate: micro
-- better: higher
-- ties_average: yes
-- references: scikit-learn `f1_score` on (relevant, score >= t)
SELECT
  user_id,
  2 * SUM(CASE WHEN score >= $score_threshold THEN positives ELSE 0 END) AS numerator,
  SUM(CASE WHEN score >= $score_threshold THEN positives + negatives ELSE 0 END)
  + SUM(positives) AS denominator
FROM scored
GROUP BY user_id
