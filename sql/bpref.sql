-- name: bpref
-- title: Binary preference (trec_eval)
-- definition: over the whole list, skipping the items the interactions do not hold (not judged): for each relevant item recommended, 1 - min(n, |R_u|) / min(N, |R_u|), n = judged non-relevant items (interactions at or below the threshold) recommended above it, N = the user's judged non-relevant items (1 when n = 0); the sum divided by |R_u|.
-- cutoff: none
-- reads: judgements
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- references: trec_eval `bpref` (m_bpref.c; a qrels rel < 0 is a document not judged); Buckley and Voorhees (2004), Retrieval Evaluation with Incomplete Information; ir_measures `Bpref`
SELECT
  user_id,
  SUM(
    CASE
      WHEN pos IS NOT NULL AND hit = 1
        THEN 1 - CASE
          WHEN nonrelevant_so_far = 0 THEN 0
          ELSE LEAST(nonrelevant_so_far, n_relevant) / NULLIF(LEAST(n_nonrelevant, n_relevant), 0)
        END
      ELSE 0
    END
  ) / NULLIF(MAX(n_relevant), 0) AS bpref
FROM judgements
GROUP BY user_id
