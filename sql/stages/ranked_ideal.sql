-- ranked, each recommended item with the user's ideal order read at its position (for
-- trec_eval's ndcg_rel, normalized_gain and rndcg, and q_measure, which compare a list with its
-- ideal position by position), from the relevant item whose ideal_pos is that position (NULL
-- beyond |R_u|): ideal_dcg_through, the ideal DCG of positions 1..pos; ideal_gain_through, the
-- ideal cumulative gain (the sum of relevance) of those positions; ideal_excess_through, the
-- sum over them of max(relevance, 1) - 1; level_weight_from, the sum over the ideal positions
-- b >= pos that end a relevance level (the last of its relevance in the ideal order) of 1 /
-- the ideal DCG of 1..b. joined reads it in ranked's place only for those metrics.
SELECT
  ranked.user_id,
  ranked.item_id,
  ranked.pos,
  ranked.list_length,
  ideal.ideal_dcg_through,
  ideal.ideal_gain_through,
  ideal.ideal_excess_through,
  ideal.level_weight_from
FROM ranked
LEFT JOIN (
  SELECT
    user_id,
    ideal_pos,
    ideal_dcg_through,
    ideal_gain_through,
    ideal_excess_through,
    SUM(CASE WHEN level_end = 1 THEN 1 / ideal_dcg_through ELSE 0 END) OVER (
      PARTITION BY user_id ORDER BY ideal_pos DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS level_weight_from
  FROM (
    SELECT
      user_id,
      ideal_pos,
      SUM(relevance / LOG2(ideal_pos + 1)) OVER (
        PARTITION BY user_id ORDER BY ideal_pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS ideal_dcg_through,
      SUM(relevance) OVER (
        PARTITION BY user_id ORDER BY ideal_pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS ideal_gain_through,
      SUM(GREATEST(relevance, 1) - 1) OVER (
        PARTITION BY user_id ORDER BY ideal_pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS ideal_excess_through,
      CASE
        WHEN LEAD(relevance) OVER (PARTITION BY user_id ORDER BY ideal_pos) = relevance THEN 0
        ELSE 1
      END AS level_end
    FROM truth
  ) AS ideal_prefix
) AS ideal
  ON ranked.user_id = ideal.user_id AND ranked.pos = ideal.ideal_pos
