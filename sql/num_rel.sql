-- name: num_rel
-- title: Relevant items (trec_eval)
-- definition: |R_u|, the user's relevant items; summed over users.
-- cutoff: none
-- aggregate: sum
-- better: none
-- ties_average: no
-- aliases: numrel
-- references: trec_eval `num_rel` (m_num_rel.c; its 'all' line is the sum over topics); ir_measures `NumRel`
SELECT
  user_id,
  n_relevant AS num_rel
FROM judged
GROUP BY user_id, n_relevant, list_length
