-- name: hits
-- title: Hits
-- definition: H = number of relevant items among the first k positions.
-- formula: H = \sum_{i=1}^{k} \mathrm{hit}_i, \qquad \mathrm{hit}_i = \mathbf{1}[\mathrm{rel}_i > 0]
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- references: ranx `hits`; trec_eval `num_rel_ret` per topic (no cutoff; summed over topics it is the metric num_rel_ret)
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN hit ELSE 0 END) AS hits
FROM judged
GROUP BY user_id, n_relevant, list_length
