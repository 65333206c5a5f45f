-- name: ideal_dcg
-- title: Ideal discounted cumulative gain
-- definition: the DCG of the user's relevant items in descending relevance: sum over i <= k (every relevant item without a cutoff) of rel_(i) / log2(i + 1), rel_(i) the i-th largest relevance (ndcg's denominator).
-- cutoff: optional
-- aggregate: mean
-- better: none
-- ties_average: yes
-- aliases: idcg
-- references: trec_eval 10 `ideal_dcg` (m_ndcg.c's ideal, gain = rel level); Jarvelin & Kekalainen (2002)
SELECT
  user_id,
  SUM(CASE WHEN ideal_pos <= $k THEN relevance / LOG2(ideal_pos + 1) ELSE 0 END) AS ideal_dcg
FROM judged
GROUP BY user_id, n_relevant, list_length
