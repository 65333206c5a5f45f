-- name: rbp_resid
-- title: Rank-biased precision residual (trec_eval)
-- definition: at persistence p (0.9 without @p; 0 <= p < 1), what the unjudged part could add to rbp: p^n + (1 - p) x the sum over the items of the whole list the interactions do not judge of p^(i - 1), n the list's length, i the item's position; 0 when every listed item is judged (as trec_eval).
-- cutoff: level
-- default_level: 0.9
-- level_below: 1
-- level_name: p
-- reads: judgements
-- reads_whole_list: yes
-- aggregate: mean
-- better: none
-- ties_average: no
-- aliases: rbpresid
-- references: trec_eval 10 `rbp_resid` (m_rbp_resid.c: p^num_ret + (1 - p) x the sum over unjudged positions, a qrels rel < 0 unjudged too; 0 without an unjudged document); Moffat and Zobel (2008), section 5 (residuals)
SELECT
  user_id,
  CASE
    WHEN SUM(CASE WHEN pos IS NOT NULL AND hit IS NULL THEN 1 ELSE 0 END) > 0
      THEN POWER(CAST($score_threshold AS DOUBLE), MAX(list_length)) + (1 - CAST($score_threshold AS DOUBLE)) * SUM(
        CASE WHEN pos IS NOT NULL AND hit IS NULL THEN POWER(CAST($score_threshold AS DOUBLE), pos - 1) ELSE 0 END
      )
    ELSE 0
  END AS rbp_resid
FROM judgements
GROUP BY user_id
