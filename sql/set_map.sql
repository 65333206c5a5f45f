-- name: set_map
-- title: Set average precision (trec_eval)
-- definition: over the whole list, H^2 / (n x |R_u|), n the list's length: the set precision H / n times the set recall H / |R_u|, as if every relevant item listed sat at precision H / n and every other counted 0; 0 without a list.
-- formula: \mathrm{set\_map} = \frac{H}{n_u} \cdot \frac{H}{|R_u|}
-- cutoff: none
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: exact_unranked_avg_prec
-- references: trec_eval `set_map` (m_set_map.c; exact_unranked_avg_prec in its earlier versions)
SELECT
  user_id,
  SUM(CASE WHEN pos IS NOT NULL THEN hit ELSE 0 END)
  * SUM(CASE WHEN pos IS NOT NULL THEN hit ELSE 0 END)
  / NULLIF(list_length * n_relevant, 0) AS set_map
FROM judged
GROUP BY user_id, n_relevant, list_length
