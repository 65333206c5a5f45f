-- name: mrr
-- title: Mean reciprocal rank
-- definition: 1 / position of the first relevant item within k, 0 if there is none.
-- formula: \mathrm{RR@}k = \frac{1}{\min\{i \le k : \mathrm{hit}_i = 1\}} \quad (0 \text{ when no } i \le k \text{ is a hit})
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: recip_rank, rr
-- references: seeds 002, 003; trec_eval `recip_rank` (no cutoff); ranx `mrr`
SELECT
  user_id,
  MAX(CASE WHEN pos <= $k AND hit = 1 THEN 1 / pos ELSE 0 END) AS mrr
FROM judged
GROUP BY user_id, n_relevant, list_length
