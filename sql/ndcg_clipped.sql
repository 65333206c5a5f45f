-- name: ndcg_clipped
-- title: NDCG with the discount log2(max(i, 2))
-- definition: as `ndcg` (ideal over min(k, |R_u|) of the user's relevances sorted descending), but position i is discounted by log2(max(i, 2)): positions 1 and 2 are both undiscounted.
-- formula: \mathrm{nDCG@}k = \frac{\sum_{i=1}^{k} \mathrm{rel}_i / \log_2 \max(i, 2)}{\sum_{i=1}^{\min(k, |R_u|)} \mathrm{rel}_{(i)} / \log_2 \max(i, 2)}
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- aliases:
-- references: LensKit `NDCG` (`LogRankWeight`, clipped ranks); Jarvelin & Kekalainen (2002) with b = 2
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN gain / CASE WHEN pos <= 2 THEN 1 ELSE LOG2(pos) END ELSE 0 END)
  / NULLIF(
    SUM(
      CASE
        WHEN ideal_pos <= $k THEN relevance / CASE WHEN ideal_pos <= 2 THEN 1 ELSE LOG2(ideal_pos) END
        ELSE 0
      END
    ),
    0
  ) AS ndcg_clipped
FROM judged
GROUP BY user_id, n_relevant, list_length
