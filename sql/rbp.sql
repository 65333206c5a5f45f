-- name: rbp
-- title: Rank-biased precision
-- definition: at persistence p (0.9 without @p; 0 <= p < 1): (1 - p) x the sum over the relevant items of the whole list of p^(i - 1), i their position (gain 1 for a relevant item, 0 otherwise).
-- formula: \mathrm{RBP@}p = (1 - p) \sum_{i} \mathrm{hit}_i \, p^{i - 1}
-- cutoff: level
-- default_level: 0.9
-- level_below: 1
-- level_name: p
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: rank_biased_precision
-- references: Moffat and Zobel (2008), Rank-Biased Precision for Measurement of Retrieval Effectiveness, ACM TOIS 27(1); trec_eval 10 `rbp` on binary qrels (m_rbp.c, p = 0.9; on graded ones it is rbp_scaled); ir_measures `RBP(p=...)`; LensKit `RBP`; ranx `rbp` (binary relevance)
SELECT
  user_id,
  (1 - CAST($score_threshold AS DOUBLE)) * SUM(
    CASE WHEN pos IS NOT NULL AND hit = 1 THEN POWER(CAST($score_threshold AS DOUBLE), pos - 1) ELSE 0 END
  ) AS rbp
FROM judged
GROUP BY user_id, n_relevant, list_length
