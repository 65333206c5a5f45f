-- What the metric files read. Per row: pos, hit (0/1), gain (rel), exp_gain (2^rel - 1),
-- relevance and ideal_pos (for the ideal DCG), hits_so_far (hits at positions 1..pos),
-- scored_ideal_pos (position among the recommended items by relevance). Per user: n_relevant
-- (|R_u|, carried by the relevant rows), n_relevant_listed (the relevant items of the list read,
-- on every row) and list_length (carried by the recommended rows);
-- per_user takes each user's value, so a metric file may read both as per-user constants.
-- Under ranks="literal" (a rank column read as given, repeats included) the composer puts
-- hits_through_position in hits_so_far's place: the relevant items at positions 1..pos, a
-- repeated position's rows all included, carried by one relevant row of each position (0 on
-- the others), so a sum over the relevant rows counts each position once (RecTools' MAP) and a
-- MAX over them reads each position's precision once. Otherwise it is dropped.
-- For trec_eval's ndcg_rel, normalized_gain and rndcg, and q_measure, on the recommended rows:
-- dcg_so_far and gain_so_far (the list's DCG and gain at positions 1..pos), ideal_dcg_at_pos
-- (the ideal DCG of positions 1..min(pos, |R_u|)), ideal_gain_at_pos (the ideal gain of those
-- positions, the sum of their relevance), ideal_excess_at_pos (the sum over those positions of
-- max(relevance, 1) - 1) and level_weight_at_pos (joined.sql's level_weight_from, 0 beyond
-- |R_u|).
-- For err and nerr (the cascade of Chapelle et al.: the user stops at an item of relevance g
-- with probability R = (2^min(g, gmax) - 1) / 2^gmax, 0 for an item not relevant; $gmax is
-- bound by the composer to the requests' number, or to max_relevance, the user's largest):
-- err_stop, on a recommended row, the chance to stop there, R x the product over the positions
-- above it of (1 - R); ideal_err_stop, on a relevant row, the same at its ideal position.
-- Unused columns are pruned per query.
SELECT
  user_id,
  pos,
  CASE WHEN relevance > 0 THEN 1 ELSE 0 END AS hit,
  relevance AS gain,
  POWER(2, relevance) - 1 AS exp_gain,
  relevance,
  ideal_pos,
  SUM(CASE WHEN relevance > 0 THEN 1 ELSE 0 END) OVER (
    PARTITION BY user_id ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
  ) AS hits_so_far,
  CASE
    WHEN ROW_NUMBER() OVER (PARTITION BY user_id, pos ORDER BY relevance DESC) = 1
      THEN SUM(CASE WHEN relevance > 0 THEN 1 ELSE 0 END) OVER (
        PARTITION BY user_id ORDER BY pos RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      )
    ELSE 0
  END AS hits_through_position,
  CASE
    WHEN pos IS NOT NULL
      THEN ROW_NUMBER() OVER (
        PARTITION BY user_id ORDER BY CASE WHEN pos IS NULL THEN 1 ELSE 0 END, relevance DESC
      )
  END AS scored_ideal_pos,
  n_relevant,
  SUM(CASE WHEN pos IS NOT NULL AND relevance > 0 THEN 1 ELSE 0 END) OVER (
    PARTITION BY user_id
  ) AS n_relevant_listed,
  list_length,
  SUM(CASE WHEN pos IS NOT NULL THEN relevance / LOG2(pos + 1) ELSE 0 END) OVER (
    PARTITION BY user_id ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
  ) AS dcg_so_far,
  SUM(CASE WHEN pos IS NOT NULL THEN relevance ELSE 0 END) OVER (
    PARTITION BY user_id ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
  ) AS gain_so_far,
  CASE
    WHEN pos IS NOT NULL
      THEN COALESCE(
        ideal_dcg_through,
        SUM(CASE WHEN ideal_pos IS NOT NULL THEN relevance / LOG2(ideal_pos + 1) ELSE 0 END) OVER (
          PARTITION BY user_id
        )
      )
  END AS ideal_dcg_at_pos,
  CASE
    WHEN pos IS NOT NULL
      THEN COALESCE(
        ideal_gain_through,
        SUM(CASE WHEN ideal_pos IS NOT NULL THEN relevance ELSE 0 END) OVER (PARTITION BY user_id)
      )
  END AS ideal_gain_at_pos,
  CASE
    WHEN pos IS NOT NULL
      THEN COALESCE(
        ideal_excess_through,
        SUM(CASE WHEN ideal_pos IS NOT NULL THEN GREATEST(relevance, 1) - 1 ELSE 0 END) OVER (
          PARTITION BY user_id
        )
      )
  END AS ideal_excess_at_pos,
  COALESCE(level_weight_from, 0) AS level_weight_at_pos,
  CASE
    WHEN pos IS NOT NULL AND relevance > 0
      THEN (POWER(CAST(2 AS DOUBLE), CASE WHEN relevance < $gmax THEN CAST(relevance AS DOUBLE) ELSE CAST($gmax AS DOUBLE) END) - 1) / POWER(CAST(2 AS DOUBLE), $gmax)
      * EXP(COALESCE(SUM(
        CASE
          WHEN pos IS NOT NULL AND relevance > 0
            THEN LN(
              (POWER(CAST(2 AS DOUBLE), $gmax) - POWER(CAST(2 AS DOUBLE), CASE WHEN relevance < $gmax THEN CAST(relevance AS DOUBLE) ELSE CAST($gmax AS DOUBLE) END) + 1)
              / POWER(CAST(2 AS DOUBLE), $gmax)
            )
          ELSE 0
        END
      ) OVER (PARTITION BY user_id ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0))
    ELSE 0
  END AS err_stop,
  CASE
    WHEN ideal_pos IS NOT NULL AND relevance > 0
      THEN (POWER(CAST(2 AS DOUBLE), CASE WHEN relevance < $gmax THEN CAST(relevance AS DOUBLE) ELSE CAST($gmax AS DOUBLE) END) - 1) / POWER(CAST(2 AS DOUBLE), $gmax)
      * EXP(COALESCE(SUM(
        CASE
          WHEN ideal_pos IS NOT NULL AND relevance > 0
            THEN LN(
              (POWER(CAST(2 AS DOUBLE), $gmax) - POWER(CAST(2 AS DOUBLE), CASE WHEN relevance < $gmax THEN CAST(relevance AS DOUBLE) ELSE CAST($gmax AS DOUBLE) END) + 1)
              / POWER(CAST(2 AS DOUBLE), $gmax)
            )
          ELSE 0
        END
      ) OVER (PARTITION BY user_id ORDER BY ideal_pos ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0))
    ELSE 0
  END AS ideal_err_stop
FROM joined
