-- name: rndcg
-- title: NDCG averaged at the R levels (trec_eval)
-- definition: over the whole list of n items, the mean of ndcg at each R level b (the count of the user's relevant items at or above each distinct relevance: dcg of positions 1..min(b, n) / the ideal dcg of 1..b), plus, when n > |R_u| + 1, the point dcg of the whole list / the ideal dcg of all |R_u|. Gain = relevance (as ndcg); 0 without a relevant item.
-- cutoff: none
-- reads_whole_list: yes
-- walks_positions: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- references: trec_eval `Rndcg` (m_Rndcg.c, gains = relevance levels); Jarvelin & Kekalainen (2002)
SELECT
  user_id,
  (
    SUM(CASE WHEN pos IS NOT NULL THEN gain / LOG2(pos + 1) * level_weight_at_pos ELSE 0 END)
    + CASE
      WHEN list_length > n_relevant + 1
        THEN SUM(CASE WHEN pos IS NOT NULL THEN gain / LOG2(pos + 1) ELSE 0 END)
        / NULLIF(
          SUM(CASE WHEN ideal_pos IS NOT NULL THEN relevance / LOG2(ideal_pos + 1) ELSE 0 END), 0
        )
      ELSE 0
    END
  )
  / NULLIF(
    COUNT(DISTINCT CASE WHEN ideal_pos IS NOT NULL THEN relevance END)
    + CASE WHEN list_length > n_relevant + 1 THEN 1 ELSE 0 END,
    0
  ) AS rndcg
FROM judged
GROUP BY user_id, n_relevant, list_length
