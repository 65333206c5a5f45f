-- name: iprec_11pt_avg_trec9
-- title: 11-point interpolated average precision (trec_eval 9)
-- definition: the mean of iprec_at_recall_trec9 at the levels 0.0, 0.1, ..., 1.0 (cutoffs floor(x * |R_u| + 0.9)).
-- cutoff: none
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: 11pt_avg_trec9
-- references: trec_eval `11pt_avg` v9.0.8 (m_11pt_avg.c, default levels 0.0 .. 1.0, cutoffs (long)(x * num_rel + 0.9)); trec_eval 10 rounds instead: `iprec_11pt_avg`
SELECT
  user_id,
  (
    MAX(
      CASE
        WHEN pos IS NOT NULL AND hit = 1 AND hits_so_far >= GREATEST(FLOOR(CAST(0.0 AS DOUBLE) * n_relevant + 0.9), 1)
          THEN hits_so_far / pos
        ELSE 0
      END
    )
    + MAX(
      CASE
        WHEN pos IS NOT NULL AND hit = 1 AND hits_so_far >= GREATEST(FLOOR(CAST(0.1 AS DOUBLE) * n_relevant + 0.9), 1)
          THEN hits_so_far / pos
        ELSE 0
      END
    )
    + MAX(
      CASE
        WHEN pos IS NOT NULL AND hit = 1 AND hits_so_far >= GREATEST(FLOOR(CAST(0.2 AS DOUBLE) * n_relevant + 0.9), 1)
          THEN hits_so_far / pos
        ELSE 0
      END
    )
    + MAX(
      CASE
        WHEN pos IS NOT NULL AND hit = 1 AND hits_so_far >= GREATEST(FLOOR(CAST(0.3 AS DOUBLE) * n_relevant + 0.9), 1)
          THEN hits_so_far / pos
        ELSE 0
      END
    )
    + MAX(
      CASE
        WHEN pos IS NOT NULL AND hit = 1 AND hits_so_far >= GREATEST(FLOOR(CAST(0.4 AS DOUBLE) * n_relevant + 0.9), 1)
          THEN hits_so_far / pos
        ELSE 0
      END
    )
    + MAX(
      CASE
        WHEN pos IS NOT NULL AND hit = 1 AND hits_so_far >= GREATEST(FLOOR(CAST(0.5 AS DOUBLE) * n_relevant + 0.9), 1)
          THEN hits_so_far / pos
        ELSE 0
      END
    )
    + MAX(
      CASE
        WHEN pos IS NOT NULL AND hit = 1 AND hits_so_far >= GREATEST(FLOOR(CAST(0.6 AS DOUBLE) * n_relevant + 0.9), 1)
          THEN hits_so_far / pos
        ELSE 0
      END
    )
    + MAX(
      CASE
        WHEN pos IS NOT NULL AND hit = 1 AND hits_so_far >= GREATEST(FLOOR(CAST(0.7 AS DOUBLE) * n_relevant + 0.9), 1)
          THEN hits_so_far / pos
        ELSE 0
      END
    )
    + MAX(
      CASE
        WHEN pos IS NOT NULL AND hit = 1 AND hits_so_far >= GREATEST(FLOOR(CAST(0.8 AS DOUBLE) * n_relevant + 0.9), 1)
          THEN hits_so_far / pos
        ELSE 0
      END
    )
    + MAX(
      CASE
        WHEN pos IS NOT NULL AND hit = 1 AND hits_so_far >= GREATEST(FLOOR(CAST(0.9 AS DOUBLE) * n_relevant + 0.9), 1)
          THEN hits_so_far / pos
        ELSE 0
      END
    )
    + MAX(
      CASE
        WHEN pos IS NOT NULL AND hit = 1 AND hits_so_far >= GREATEST(FLOOR(CAST(1.0 AS DOUBLE) * n_relevant + 0.9), 1)
          THEN hits_so_far / pos
        ELSE 0
      END
    )
  ) / 11 AS iprec_11pt_avg_trec9
FROM judged
GROUP BY user_id, n_relevant, list_length
