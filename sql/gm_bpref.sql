-- name: gm_bpref
-- title: Geometric mean bpref (trec_eval)
-- definition: the geometric mean over users of max(bpref, 0.00001), bpref as its own file defines it (0 without a relevant item): the file computes ln(max(bpref, 0.00001)) per user, and the summary is exp of its mean (per user exp of the log: max(bpref, 0.00001)).
-- cutoff: none
-- reads: judgements
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- finish: exp
-- averaged: over users, geometric (exp of the mean of the logs)
-- ties_average: no
-- references: trec_eval `gm_bpref` (m_gm_bpref.c, MIN_GEO_MEAN 1e-5; pytrec_eval's per-query value is the log)
SELECT
  user_id,
  LN(
    GREATEST(
      COALESCE(
        SUM(
          CASE
            WHEN pos IS NOT NULL AND hit = 1
              THEN 1 - CASE
                WHEN nonrelevant_so_far = 0 THEN 0
                ELSE LEAST(nonrelevant_so_far, n_relevant) / NULLIF(LEAST(n_nonrelevant, n_relevant), 0)
              END
            ELSE 0
          END
        ) / NULLIF(MAX(n_relevant), 0),
        0
      ),
      0.00001
    )
  ) AS gm_bpref
FROM judgements
GROUP BY user_id
