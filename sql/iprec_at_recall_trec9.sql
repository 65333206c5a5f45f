-- name: iprec_at_recall_trec9
-- title: Interpolated precision at a recall level (trec_eval 9)
-- definition: at level x (0 without @x): with c = floor(x * |R_u| + 0.9) relevant items (at least 1), the largest precision j / p_j over the j-th relevant item of the list at position p_j, j >= c; 0 when fewer than c relevant items are listed.
-- cutoff: level
-- default_level: 0
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: iprec_trec9, iprec
-- references: trec_eval `iprec_at_recall` (m_iprec_at_recall.c: Int_Prec(rank X) = max Prec(rank Y), Y >= X, v9.0.8, cutoffs (long)(x * num_rel + 0.9)); ir_measures `IPrec@x`, which its pytrec_eval provider computes (pytrec-eval-terrier 0.5.11, trec_eval 9.0.8's code: ir_measures 0.4.3 gives IPrec@0.8 = 0 where trec_eval 10 prints 0.5, relevant a, b, c and run x, a, y, b), so sqlmetrics' `IPrec@x` (`iprec@x`) is this metric, under every profile; trec_eval 10 rounds instead: `iprec_at_recall`
SELECT
  user_id,
  MAX(
    CASE
      WHEN pos IS NOT NULL
      AND hit = 1
      AND hits_so_far >= GREATEST(FLOOR(CAST($score_threshold AS DOUBLE) * n_relevant + 0.9), 1)
        THEN hits_so_far / pos
      ELSE 0
    END
  ) AS iprec_at_recall_trec9
FROM judged
GROUP BY user_id, n_relevant, list_length
