-- name: recall_capped
-- title: Recall capped at k
-- definition: H / min(|R_u|, k), so a user with more than k relevant items can reach 1; without a cutoff, H / min(|R_u|, list length).
-- formula: \mathrm{recall\_capped@}k = \frac{H}{\min(|R_u|, k)}
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- aliases: r_cap, relative_p
-- references: LensKit `Recall`; BEIR `R_cap@k`; trec_eval `relative_P` (and `set_relative_P` without a cutoff)
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN hit ELSE 0 END) / NULLIF(LEAST(n_relevant, $k), 0) AS recall_capped
FROM judged
GROUP BY user_id, n_relevant, list_length
