-- name: utility
-- title: Set utility (trec_eval, default coefficients)
-- definition: over the whole list, 1 x (relevant items listed) - 1 x (other items listed) + 0 x (relevant items not listed) + 0 x (the rest of the collection) = 2H - n, n the list's length: trec_eval's default coefficients 1, -1, 0, 0; averaged over users.
-- formula: \mathrm{utility} = H - (n_u - H) = 2H - n_u
-- cutoff: none
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases:
-- references: trec_eval `utility` (m_utility.c, default -m utility.1.0,-1.0,0.0,0.0; its 'all' line is the mean over topics)
SELECT
  user_id,
  2 * SUM(CASE WHEN pos IS NOT NULL THEN hit ELSE 0 END) - list_length AS utility
FROM judged
GROUP BY user_id, n_relevant, list_length
