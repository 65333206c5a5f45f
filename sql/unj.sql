-- name: unj
-- title: Unjudged at k (trec_eval)
-- definition: the share of the first k positions holding an item the interactions do not judge (trec_eval's qrels rel < 0 is not judged either): the unjudged items at positions 1..k divided by k (positions beyond the list count as judged); without a cutoff, over the whole list.
-- cutoff: optional
-- reads: judgements
-- aggregate: mean
-- better: none
-- ties_average: no
-- aliases: unjudged
-- references: trec_eval 10 `unj` (m_unjudged.c: cutoffs 5, 10, 20; RELVALUE_NONPOOL and RELVALUE_UNJUDGED count, divided by the cutoff)
SELECT
  user_id,
  COALESCE(SUM(CASE WHEN pos <= $k AND hit IS NULL THEN 1 ELSE 0 END) / NULLIF($k, 0), 0) AS unj
FROM judgements
GROUP BY user_id
