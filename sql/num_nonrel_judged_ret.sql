-- name: num_nonrel_judged_ret
-- title: Judged non-relevant items retrieved (trec_eval)
-- definition: the items of the user's whole list that the interactions judge non-relevant (an interaction at or below the threshold; an item the interactions lack is not judged); summed over users.
-- cutoff: none
-- reads: judgements
-- reads_whole_list: yes
-- aggregate: sum
-- better: none
-- ties_average: no
-- aliases: numnonreljudgedret
-- references: trec_eval `num_nonrel_judged_ret` (m_num_nonrel_judged_ret.c: num_ret - num_rel_ret - num_nonpool - num_unjudged_in_pool; its 'all' line is the sum over topics)
SELECT
  user_id,
  SUM(CASE WHEN pos IS NOT NULL AND hit = 0 THEN 1 ELSE 0 END) AS num_nonrel_judged_ret
FROM judgements
GROUP BY user_id
