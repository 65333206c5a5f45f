-- name: ndcg_exp_scored
-- title: NDCG, exponential gain, with the ideal over the scored items
-- definition: dcg_exp@k / the exponential-gain DCG of the user's recommended items sorted by relevance, first k.
-- cutoff: optional
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- aliases:
-- references: seed 001 worked example (exponential gain)
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN exp_gain / LOG2(pos + 1) ELSE 0 END)
  / NULLIF(
    SUM(
      CASE
        WHEN scored_ideal_pos <= $k THEN (POWER(2, relevance) - 1) / LOG2(scored_ideal_pos + 1)
        ELSE 0
      END
    ),
    0
  ) AS ndcg_exp_scored
FROM judged
GROUP BY user_id, n_relevant, list_length
