-- name: ndcg_rel
-- title: NDCG averaged over the relevant items (trec_eval)
-- definition: over the whole list of n items, the mean over the user's relevant items of an ndcg: for one listed at position i, dcg of positions 1..i / the ideal dcg of positions 1..min(i, |R_u|); for one not listed, dcg of the whole list / the ideal dcg of all |R_u|. Gain = relevance (as ndcg); 0 without a relevant item.
-- cutoff: none
-- reads_whole_list: yes
-- walks_positions: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- references: trec_eval `ndcg_rel` (m_ndcg_rel.c, gains = relevance levels); Jarvelin & Kekalainen (2002)
SELECT
  user_id,
  (
    SUM(CASE WHEN pos IS NOT NULL AND hit = 1 THEN dcg_so_far / ideal_dcg_at_pos ELSE 0 END)
    + (n_relevant - SUM(CASE WHEN pos IS NOT NULL THEN hit ELSE 0 END))
    * SUM(CASE WHEN pos IS NOT NULL THEN gain / LOG2(pos + 1) ELSE 0 END)
    / NULLIF(SUM(CASE WHEN ideal_pos IS NOT NULL THEN relevance / LOG2(ideal_pos + 1) ELSE 0 END), 0)
  ) / n_relevant AS ndcg_rel
FROM judged
GROUP BY user_id, n_relevant, list_length
