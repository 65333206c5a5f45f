-- judgements, each listed item with the user's ideal order by gain read at its position (for
-- ndcg_rel_gains, normalized_gain_gains and rndcg_gains, which compare a list with its ideal
-- position by position, as trec_eval's ndcg_rel, G and Rndcg do with rel=gain parameters). On
-- the listed rows: gains_dcg_so_far and gains_gain_so_far, the list's DCG and gain at positions 1..pos;
-- gains_ideal_dcg_at_pos, the ideal DCG of positions 1..min(pos, G_u) (G_u the user's items of
-- positive gain: the ideal list stops at a gain of 0 or less); gains_ideal_excess_at_pos, the sum
-- over those positions of max(gain, 1) - 1; gains_level_weight_at_pos, the sum over the ideal
-- positions b >= pos that end a gain (the last of its gain in the ideal order) of 1 / the
-- ideal DCG of 1..b, 0 beyond G_u. The composer reads it in judgements' place only for those
-- metrics, with judgements' other columns they read.
SELECT
  judgements.user_id,
  judgements.pos,
  SUM(CASE WHEN judgements.pos IS NOT NULL THEN judgements.gain / LOG2(judgements.pos + 1) ELSE 0 END) OVER (
    PARTITION BY judgements.user_id ORDER BY judgements.pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
  ) AS gains_dcg_so_far,
  SUM(CASE WHEN judgements.pos IS NOT NULL THEN judgements.gain ELSE 0 END) OVER (
    PARTITION BY judgements.user_id ORDER BY judgements.pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
  ) AS gains_gain_so_far,
  CASE
    WHEN judgements.pos IS NOT NULL
      THEN COALESCE(
        ideal.ideal_dcg_through,
        SUM(
          CASE
            WHEN judgements.ideal_gain_pos IS NOT NULL
              THEN judgements.gain / LOG2(judgements.ideal_gain_pos + 1)
            ELSE 0
          END
        ) OVER (PARTITION BY judgements.user_id)
      )
  END AS gains_ideal_dcg_at_pos,
  CASE
    WHEN judgements.pos IS NOT NULL
      THEN COALESCE(
        ideal.ideal_excess_through,
        SUM(
          CASE
            WHEN judgements.ideal_gain_pos IS NOT NULL THEN GREATEST(judgements.gain, 1) - 1
            ELSE 0
          END
        ) OVER (PARTITION BY judgements.user_id)
      )
  END AS gains_ideal_excess_at_pos,
  COALESCE(ideal.level_weight_from, 0) AS gains_level_weight_at_pos
FROM judgements
LEFT JOIN (
  SELECT
    user_id,
    ideal_at,
    ideal_dcg_through,
    ideal_excess_through,
    SUM(CASE WHEN level_end = 1 THEN 1 / ideal_dcg_through ELSE 0 END) OVER (
      PARTITION BY user_id ORDER BY ideal_at DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS level_weight_from
  FROM (
    SELECT
      user_id,
      ideal_gain_pos AS ideal_at,
      SUM(gain / LOG2(ideal_gain_pos + 1)) OVER (
        PARTITION BY user_id ORDER BY ideal_gain_pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS ideal_dcg_through,
      SUM(GREATEST(gain, 1) - 1) OVER (
        PARTITION BY user_id ORDER BY ideal_gain_pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS ideal_excess_through,
      CASE
        WHEN LEAD(gain) OVER (PARTITION BY user_id ORDER BY ideal_gain_pos) = gain THEN 0
        ELSE 1
      END AS level_end
    FROM judgements
    WHERE ideal_gain_pos IS NOT NULL
  ) AS ideal_prefix
) AS ideal
  ON judgements.user_id = ideal.user_id AND judgements.pos = ideal.ideal_at
