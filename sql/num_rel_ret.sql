-- name: num_rel_ret
-- title: Relevant items retrieved (trec_eval)
-- definition: H over the whole list, the relevant items recommended; summed over users (hits is the same count, averaged).
-- cutoff: none
-- reads_whole_list: yes
-- aggregate: sum
-- better: higher
-- ties_average: no
-- aliases: numrelret
-- references: trec_eval `num_rel_ret` (m_num_rel_ret.c; its 'all' line is the sum over topics); ir_measures `NumRelRet`
SELECT
  user_id,
  SUM(CASE WHEN pos IS NOT NULL THEN hit ELSE 0 END) AS num_rel_ret
FROM judged
GROUP BY user_id, n_relevant, list_length
