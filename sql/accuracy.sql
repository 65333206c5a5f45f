-- name: accuracy
-- title: Accuracy at a score threshold
-- definition: over all scored rows, the share predicted right: a row with score >= t is predicted relevant; `accuracy@t`, t = 0.5 when no @ is given.
-- cutoff: threshold
-- reads: scored
-- aggregate: micro
-- better: higher
-- ties_average: yes
-- references: scikit-learn `accuracy_score` on (relevant, score >= t)
SELECT
  user_id,
  SUM(CASE WHEN score >= $score_threshold THEN positives ELSE negatives END) AS numerator,
  SUM(positives + negatives) AS denominator
FROM scored
GROUP BY user_id
