-- name: rprec_mult
-- title: Precision at a multiple of |R_u| (trec_eval)
-- definition: at multiple x (1 without @x, R-precision): relevant items among the first c positions / c, c = floor(x * |R_u| + 0.9); 0 when c is 0.
-- cutoff: level
-- default_level: 1
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: r_prec_mult
-- references: trec_eval `Rprec_mult` (`Rprec_mult_0.20` at x = 0.2; m_Rprec_mult.c, cutoffs (long)(x * num_rel + 0.9), defaults 0.2 .. 2.0)
SELECT
  user_id,
  COALESCE(
    SUM(
      CASE WHEN pos <= FLOOR(CAST($score_threshold AS DOUBLE) * n_relevant + 0.9) THEN hit ELSE 0 END
    )
    / NULLIF(FLOOR(CAST($score_threshold AS DOUBLE) * n_relevant + 0.9), 0),
    0
  ) AS rprec_mult
FROM judged
GROUP BY user_id, n_relevant, list_length
