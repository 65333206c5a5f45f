-- name: q_measure
-- title: Q-measure (Sakai), beta = 1
-- definition: the mean over the user's relevant items of the blended ratio at each one listed at a position r <= k, (C(r) + cg(r)) / (r + cg*(r)); C(r) the relevant items at positions 1..r, cg(r) their gain (the sum of relevance) and cg*(r) the ideal list's gain at positions 1..min(r, |R_u|) (the user's relevances sorted descending); a relevant item not listed within k counts 0, and the mean runs over min(|R_u|, k) items (|R_u| without a cutoff). Gain = relevance (as ndcg and rbp_graded), beta = 1; 0 without a relevant item.
-- formula: \mathrm{Q@}k = \frac{1}{\min(k, |R_u|)} \sum_{r=1}^{k} \mathrm{hit}_r \, \frac{C(r) + \beta \, cg(r)}{r + \beta \, cg^*(r)}, \qquad C(r) = \sum_{i \le r} \mathrm{hit}_i, \; cg(r) = \sum_{i \le r} \mathrm{rel}_i, \; cg^*(r) = \sum_{i \le \min(r, |R_u|)} \mathrm{rel}_{(i)}, \; \beta = 1
-- cutoff: optional
-- walks_positions: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: q, qmeasure
-- references: Sakai (2004), New Performance Metrics Based on Multigrade Relevance, NTCIR-4; Sakai (2007), On the Reliability of Information Retrieval Metrics Based on Graded Relevance, IP&M 43(2); NTCIREVAL's `Q-measure` and `Q@k` (pyNTCIREVAL 0.0.3 `QMeasure`, beta 1 by default: the same per user to 1e-12 on random lists with grade = level, tests/test_q_measure.py; its Q@k divides by min(|R_u|, k) and its ideal list holds every relevant item)
SELECT
  user_id,
  SUM(
    CASE
      WHEN pos <= $k AND hit = 1
        THEN (hits_so_far + gain_so_far) / (pos + ideal_gain_at_pos)
      ELSE 0
    END
  )
  / NULLIF(SUM(CASE WHEN ideal_pos <= $k THEN 1 ELSE 0 END), 0) AS q_measure
FROM judged
GROUP BY user_id, n_relevant, list_length
