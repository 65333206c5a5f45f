-- name: rbp_scaled
-- title: Rank-biased precision, gain scaled to the user's largest relevance (trec_eval 10)
-- definition: at persistence p (0.9 without @p; 0 <= p < 1): (1 - p) x the sum over the relevant items of the whole list of g_i x p^(i - 1), i their position, g_i = rel_i / the user's largest relevance when that exceeds 1, else rel_i (so every gain is at most 1, and binary relevance gives rbp).
-- formula: \mathrm{RBP@}p = \frac{1 - p}{\max(1, \max_j \mathrm{rel}_j)} \sum_{i} \mathrm{rel}_i \, \mathrm{hit}_i \, p^{i - 1}
-- cutoff: level
-- default_level: 0.9
-- level_below: 1
-- level_name: p
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: rbp_normalised, rbp_normalized
-- references: trec_eval 10 `rbp` (m_rbp.c, "normalize gains to [0,1]": (gain - min) / (max - min) over the query's rel levels 0..max when max > 1; trec_eval's own test output out.test.aql holds these values; its min and max are read uninitialised, so a build may print others); Moffat and Zobel (2008)
SELECT
  user_id,
  (1 - CAST($score_threshold AS DOUBLE)) * SUM(
    CASE WHEN pos IS NOT NULL AND hit = 1 THEN gain * POWER(CAST($score_threshold AS DOUBLE), pos - 1) ELSE 0 END
  ) / GREATEST(MAX(relevance), 1) AS rbp_scaled
FROM judged
GROUP BY user_id, n_relevant, list_length
