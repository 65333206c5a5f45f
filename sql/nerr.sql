-- name: nerr
-- title: Normalised expected reciprocal rank
-- definition: err@k divided by the err@k of the ideal list (the user's relevant items by relevance, descending), with the same gmax; 0 without a relevant item.
-- formula: \mathrm{nERR@}k = \frac{\mathrm{ERR@}k}{\mathrm{ERR@}k \text{ of the relevances sorted descending}}
-- cutoff: optional
-- parameters: gmax=4
-- walks_positions: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: normalized_err, normalised_err
-- references: Chapelle et al. (2009) (err); the normalisation by the ideal ranking's ERR of NTCIR's nERR (Sakai, Metrics, Statistics, Tests, 2014) and ndeval's nERR-IA (TREC Web track, one intent); pyNTCIREVAL 0.0.3 `nERR` (NTCIREVAL's, stop probability grade / (largest grade + 1)) with grade 2^level - 1 for the levels 1..gmax gives the same values, per user to 1e-12 on random lists, at gmax 4 and gmax=query (tests/test_err.py); ir_measures' NERR8..NERR11 (cwl_eval) are another metric, Azzopardi et al.'s C/W/L approximations of ERR, not this normalisation
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN err_stop / pos ELSE 0 END)
  / NULLIF(SUM(CASE WHEN ideal_pos <= $k THEN ideal_err_stop / ideal_pos ELSE 0 END), 0) AS nerr
FROM judged
GROUP BY user_id, n_relevant, list_length
