-- name: micro_mrr
-- title: Reciprocal rank per relevant interaction (micro average)
-- definition: mean over all (user, relevant item) of 1 / its position within k, 0 when absent.
-- cutoff: optional
-- aggregate: micro
-- better: higher
-- ties_average: yes
-- aliases: mrr_micro
-- references: seed 000 MRR (N = all interactions, p_i = position of item i)
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN hit / pos ELSE 0 END) AS numerator,
  n_relevant AS denominator
FROM judged
GROUP BY user_id, n_relevant, list_length
