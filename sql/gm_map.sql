-- name: gm_map
-- title: Geometric mean average precision (trec_eval)
-- definition: the geometric mean over users of max(AP, 0.00001), AP over the whole list as map (0 without a relevant item): the file computes ln(max(AP, 0.00001)) per user, and the summary is exp of its mean (per user exp of the log: max(AP, 0.00001)).
-- formula: \mathrm{GM\_MAP} = \exp\left(\frac{1}{|U|} \sum_{u} \ln \max(\mathrm{AP}_u, 10^{-5})\right)
-- cutoff: none
-- reads_whole_list: yes
-- aggregate: mean
-- better: higher
-- finish: exp
-- averaged: over users, geometric (exp of the mean of the logs)
-- ties_average: no
-- aliases: gm_ap
-- references: trec_eval `gm_map` (m_gm_map.c, MIN_GEO_MEAN 1e-5; pytrec_eval's per-query value is the log); Robertson (2006) GMAP
SELECT
  user_id,
  LN(
    GREATEST(
      COALESCE(
        SUM(CASE WHEN pos IS NOT NULL AND hit = 1 THEN hits_so_far / pos ELSE 0 END) / n_relevant,
        0
      ),
      0.00001
    )
  ) AS gm_map
FROM judged
GROUP BY user_id, n_relevant, list_length
