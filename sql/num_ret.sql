-- name: num_ret
-- title: Items retrieved (trec_eval)
-- definition: the length of the user's whole list; summed over users.
-- cutoff: none
-- reads_whole_list: yes
-- aggregate: sum
-- better: none
-- ties_average: no
-- aliases: numret
-- references: trec_eval `num_ret` (m_num_ret.c; its 'all' line is the sum over topics); ir_measures `NumRet`
SELECT
  user_id,
  list_length AS num_ret
FROM judged
GROUP BY user_id, n_relevant, list_length
