-- name: iprec_at_recall
-- title: Interpolated precision at a recall level (trec_eval)
-- definition: at level x (0 without @x): with c = floor(x * |R_u| + 0.5) relevant items (trec_eval 10's lround; at least 1), the largest precision j / p_j over the j-th relevant item of the list at position p_j, j >= c; 0 when fewer than c relevant items are listed.
-- cutoff: level
-- default_level: 0
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases:
-- references: trec_eval `iprec_at_recall` (`iprec_at_recall_0.10` at x = 0.1; m_iprec_at_recall.c: Int_Prec(rank X) = max Prec(rank Y), Y >= X, cutoffs lround(x * num_rel) since trec_eval 10.0, commit 2a9e214); ir_measures `IPrec@x` takes 9's cutoffs: sqlmetrics' `IPrec@x` (`iprec@x`) is `iprec_at_recall_trec9`
SELECT
  user_id,
  MAX(
    CASE
      WHEN pos IS NOT NULL
      AND hit = 1
      AND hits_so_far >= GREATEST(FLOOR(CAST($score_threshold AS DOUBLE) * n_relevant + 0.5), 1)
        THEN hits_so_far / pos
      ELSE 0
    END
  ) AS iprec_at_recall
FROM judged
GROUP BY user_id, n_relevant, list_length
