-- name: score_recall
-- title: Recall at a score threshold
-- definition: over all scored rows, relevant rows with score >= t / relevant scored rows (relevant items never recommended do not count); `score_recall@t`, t = 0.5 when no @ is given.
-- cutoff: threshold
-- reads: scored
-- aggregate: micro
-- better: higher
-- ties_average: yes
-- references: scikit-learn `recall_score` on (relevant, score >= t)
SELECT
  user_id,
  SUM(CASE WHEN score >= $score_threshold THEN positives ELSE 0 END) AS numerator,
  SUM(positives) AS denominator
FROM scored
GROUP BY user_id
