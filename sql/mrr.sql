-- name: mrr
-- title: Mean reciprocal rank
-- definition: 1 / position of the first relevant item within k, 0 if there is none.
-- cutoff: optional
-- aggregate: mean
-- ties_average: no
-- aliases: recip_rank, rr
-- references: seeds 002, 003; trec_eval `recip_rank` (no cutoff); ranx `mrr`
SELECT
  user_id,
  MAX(CASE WHEN pos <= $k AND hit = 1 THEN 1 / pos ELSE 0 END) AS mrr
FROM judged
GROUP BY user_id, n_relevant, list_length
