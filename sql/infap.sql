-- name: infap
-- title: Inferred AP (trec_eval)
-- definition: over the whole list, items outside the pool (the interactions lack them) count only as positions; for each relevant item recommended at position p, with r the relevant items at positions 1..p (itself included), n the judged non-relevant ones (relevance >= 0, at or below the threshold) and u the pool's unjudged ones (negative relevance) above it: 1/p + ((r - 1 + n + u) / p) x (r - 1 + 0.00001) / (r - 1 + n + 2 x 0.00001); the sum divided by |R_u|. Only with infap asked is a negative relevance read (every other metric then leaves those rows out).
-- cutoff: none
-- reads: pool
-- reads_whole_list: yes
-- walks_positions: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- references: trec_eval `infAP` (m_infap.c, INFAP_EPSILON 0.00001 in trec_eval.h; form_res_rels.c: a qrels rel < 0 is RELVALUE_UNJUDGED, in the pool but not judged); Yilmaz and Aslam (2006), Estimating Average Precision with Incomplete and Imperfect Judgments
SELECT
  user_id,
  SUM(
    CASE
      WHEN pos IS NOT NULL AND hit = 1
        THEN (
          1 + (relevant_so_far - 1 + nonrelevant_so_far + unjudged_so_far)
          * (relevant_so_far - 1 + 0.00001)
          / (relevant_so_far - 1 + nonrelevant_so_far + 2 * 0.00001)
        ) / pos
      ELSE 0
    END
  ) / NULLIF(MAX(n_relevant), 0) AS infap
FROM pool
GROUP BY user_id
