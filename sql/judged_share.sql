-- name: judged_share
-- title: Judged share of the top k (ir_measures Judged)
-- definition: the share of the first min(k, list length) items that the interactions judge, any judgement counting (a relevance of 0 or a negative one, trec_eval's in-pool unjudged, too); 0 without a list; without a cutoff, over the whole list.
-- cutoff: optional
-- reads: pool
-- walks_positions: yes
-- aggregate: mean
-- better: none
-- ties_average: no
-- aliases: judged, judged_at_k
-- references: ir_measures `Judged@k` (judged_at_k: the results in the top k with a qrels entry, divided by the number of results up to k)
SELECT
  user_id,
  COALESCE(
    SUM(CASE WHEN pos <= $k AND hit IS NOT NULL THEN 1 ELSE 0 END) / NULLIF(LEAST($k, MAX(list_length)), 0), 0
  ) AS judged_share
FROM pool
GROUP BY user_id
