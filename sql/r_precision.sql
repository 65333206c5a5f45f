-- name: r_precision
-- title: R-precision
-- definition: relevant items among the first |R_u| positions / |R_u|.
-- formula: \mathrm{R\text{-}precision} = \frac{1}{|R_u|} \sum_{i=1}^{|R_u|} \mathrm{hit}_i
-- cutoff: none
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- aliases: rprec, r-precision
-- references: trec_eval `Rprec`; ranx `r-precision`
SELECT
  user_id,
  SUM(CASE WHEN pos <= n_relevant THEN hit ELSE 0 END) / n_relevant AS r_precision
FROM judged
GROUP BY user_id, n_relevant, list_length
