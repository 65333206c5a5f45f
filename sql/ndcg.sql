-- name: ndcg
-- title: Normalised discounted cumulative gain
-- definition: dcg@k / idcg@k; idcg@k is the same sum over the user's relevances sorted descending, first min(k, |R_u|).
-- formula: \mathrm{nDCG@}k = \frac{\sum_{i=1}^{k} \mathrm{rel}_i / \log_2(i + 1)}{\sum_{i=1}^{\min(k, |R_u|)} \mathrm{rel}_{(i)} / \log_2(i + 1)}, \qquad \mathrm{rel}_{(i)} \text{ the user's } i\text{-th largest relevance}
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- aliases: ndcg_cut
-- references: seeds 001, 003, 004; trec_eval `ndcg_cut`; ranx `ndcg`; Jarvelin & Kekalainen (2002)
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN gain / LOG2(pos + 1) ELSE 0 END)
  / NULLIF(SUM(CASE WHEN ideal_pos <= $k THEN relevance / LOG2(ideal_pos + 1) ELSE 0 END), 0) AS ndcg
FROM judged
GROUP BY user_id, n_relevant, list_length
