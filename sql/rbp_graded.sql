-- name: rbp_graded
-- title: Rank-biased precision, graded gain (ranx)
-- definition: at persistence p (0.9 without @p; 0 <= p < 1): (1 - p) x the sum over the relevant items of the whole list of rel_i x p^(i - 1), i their position: rbp with each relevant item's relevance as its gain (rbp's is 1).
-- formula: \mathrm{RBP@}p = (1 - p) \sum_{i} \mathrm{rel}_i \, \mathrm{hit}_i \, p^{i - 1}
-- cutoff: level
-- default_level: 0.9
-- level_below: 1
-- level_name: p
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: rbp_raw
-- references: ranx `rbp.p` (rank_biased_precision.py: the qrels grade of each retrieved document at or above rel_lvl times p^(i - 1)); Moffat and Zobel (2008), section 4 (graded relevance as a fraction of a document's utility)
SELECT
  user_id,
  (1 - CAST($score_threshold AS DOUBLE)) * SUM(
    CASE WHEN pos IS NOT NULL AND hit = 1 THEN gain * POWER(CAST($score_threshold AS DOUBLE), pos - 1) ELSE 0 END
  ) AS rbp_graded
FROM judged
GROUP BY user_id, n_relevant, list_length
