-- ranked's rows with the two counts the diagnostics take from ranked (diagnostics.sql's
-- ranked_counts), as flags the metrics' own chain carries to per_user (plan.py's diagnostics
-- "chained": the lists are ranked once for both). repeated_row: 1 on a row among the first
-- $max_k positions whose item an earlier row of the list holds. straddling_tie: 1 on the row at
-- a requested cutoff ($cutoffs) whose score the next row shares, a tie group straddling the
-- cutoff; the composer adds, for each later cutoff, that the group did not straddle the cutoff
-- before (the same score there), so a group is counted once however many cutoffs it straddles.
-- list_length: the rows ranked keeps of the list, its length where shorter than ranked's depth
-- (and every metric reading a whole list's length keeps it whole): the chain reads it where no
-- list_counts.sql counts the lists (diagnostics_chained.sql).
SELECT
  ranked_rows.user_id,
  CASE
    WHEN
      ranked_rows.pos <= $max_k
      AND ranked_rows.item_id IS NOT NULL
      AND ROW_NUMBER() OVER (
        PARTITION BY ranked_rows.user_id, ranked_rows.item_id ORDER BY ranked_rows.pos
      ) > 1
      THEN 1
    ELSE 0
  END AS repeated_row,
  CASE
    WHEN
      ranked_rows.pos IN ($cutoffs)
      AND ranked_rows.score = LEAD(ranked_rows.score) OVER (
        PARTITION BY ranked_rows.user_id ORDER BY ranked_rows.pos
      )
      THEN 1
    ELSE 0
  END AS straddling_tie,
  COUNT(*) OVER (PARTITION BY ranked_rows.user_id) AS list_length
FROM ranked_rows
