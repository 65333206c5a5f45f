-- name: bin_g
-- title: Binary G (trec_eval)
-- definition: over the whole list, each relevant item listed at position i scores 1 / log2(2 + n_i), n_i = the items listed above it that are not relevant (judged or not); the sum divided by |R_u|, 0 without a relevant item listed.
-- cutoff: none
-- reads_whole_list: yes
-- walks_positions: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: bing
-- references: trec_eval `binG` (m_binG.c: 1 / log2(3 + i - rel_so_far) at 0-based rank i, rel_so_far counting the item itself; the sum over num_rel)
SELECT
  user_id,
  SUM(CASE WHEN pos IS NOT NULL AND hit = 1 THEN 1 / LOG2(pos + 2 - hits_so_far) ELSE 0 END)
  / n_relevant AS bin_g
FROM judged
GROUP BY user_id, n_relevant, list_length
