-- name: normalized_gain
-- title: Normalized gain G (trec_eval)
-- definition: over the whole list, sum over the items listed with a gain (relevance) of gain_i / log2(2 + C_i - S_i), S_i = the list's gain at positions 1..i, C_i = i + the sum over the ideal positions 1..min(i, |R_u|) of max(relevance, 1) - 1 (the ideal gain so far, each position costing at least 1); divided by the user's total relevance. 0 without a relevant item.
-- cutoff: none
-- reads_whole_list: yes
-- walks_positions: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: g
-- references: trec_eval `G` (m_G.c: results_gain / log2(2 + sum_cost - sum_results), min_cost 1, gains = relevance levels)
SELECT
  user_id,
  SUM(
    CASE
      WHEN pos IS NOT NULL AND gain <> 0
        THEN gain / LOG2(2 + pos + ideal_excess_at_pos - gain_so_far)
      ELSE 0
    END
  )
  / NULLIF(SUM(CASE WHEN ideal_pos IS NOT NULL THEN relevance ELSE 0 END), 0) AS normalized_gain
FROM judged
GROUP BY user_id, n_relevant, list_length
