-- name: normalized_gain_gains
-- title: Normalized gain G with custom gains of the relevance levels (trec_eval's G.1=3,2=9)
-- definition: normalized_gain with each item's gain set by its relevance level (a level given in gains takes that gain, 0 or negative allowed; a level not given its relevance when relevant, else 0; an item the interactions do not judge 0), over the whole list: sum over the items listed with a gain other than 0 of gain_i / log2(2 + C_i - S_i), S_i = the list's gain at positions 1..i, C_i = i + the sum over the ideal positions 1..min(i, G_u) of max(g_(j), 1) - 1 (the ideal: the judged items by gain descending, positive gains only, each position costing at least 1); divided by the sum of the positive gains; 0 when there is none. Without gains it is normalized_gain.
-- formula: G = \frac{\sum_{i \le n,\ g_i \ne 0} g_i / \log_2(2 + C_i - S_i)}{\sum_{j \le G_u} g_{(j)}^{+}}
-- cutoff: none
-- parameters: gains={}
-- asked_as: normalized_gain
-- reads: judgements
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- references: trec_eval `G` with rel_level=gain parameters (m_G.c, gain_init.c: a level not given keeps gain = level; the ideal order sorts the levels by gain and stops at a gain of 0 or less; min_cost 1; the -l level does not apply; its comparator truncates the difference of two gains to an integer, so two levels whose gains differ by less than 1 may take either order in its ideal list, where sqlmetrics sorts by the gain)
SELECT
  user_id,
  COALESCE(
    SUM(
      CASE
        WHEN pos IS NOT NULL AND gain <> 0
          THEN gain / LOG2(2 + pos + gains_ideal_excess_at_pos - gains_gain_so_far)
        ELSE 0
      END
    )
    / NULLIF(SUM(CASE WHEN ideal_gain_pos IS NOT NULL THEN gain ELSE 0 END), 0),
    0
  ) AS normalized_gain_gains
FROM judgements
GROUP BY user_id
