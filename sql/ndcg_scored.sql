-- name: ndcg_scored
-- title: NDCG with the ideal over the scored items
-- definition: dcg@k / the DCG of the relevances of the user's recommended items sorted descending, first k; 0 when that ideal is 0.
-- cutoff: optional
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- aliases: ndcg_sklearn
-- references: seeds 000, 004 worked examples; scikit-learn `ndcg_score`
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN gain / LOG2(pos + 1) ELSE 0 END)
  / NULLIF(
    SUM(CASE WHEN scored_ideal_pos <= $k THEN relevance / LOG2(scored_ideal_pos + 1) ELSE 0 END), 0
  ) AS ndcg_scored
FROM judged
GROUP BY user_id, n_relevant, list_length
