-- judgements.sql for metrics that read the judged (user, item) pairs only (bpref, gm_bpref,
-- num_nonrel_judged_ret: plan.JUDGED_PAIRS_METRICS): the same rows without the recommended
-- items the interactions lack (hit NULL), which those metrics read as nothing, and list_length
-- (the last position) from ranked per user. Its windows sort the judged pairs, not every
-- recommended item. Unused columns are pruned per query.
SELECT
  user_id,
  pos,
  hit,
  nonrelevant_so_far,
  n_relevant,
  n_nonrelevant,
  list_length
FROM (
  SELECT
    pairs.user_id,
    pairs.pos,
    pairs.hit,
    SUM(CASE WHEN pairs.pos IS NOT NULL AND pairs.hit = 0 THEN 1 ELSE 0 END) OVER (
      PARTITION BY pairs.user_id
      ORDER BY pairs.pos
      ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS nonrelevant_so_far,
    SUM(CASE WHEN pairs.hit = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY pairs.user_id) AS n_relevant,
    SUM(CASE WHEN pairs.hit = 0 THEN 1 ELSE 0 END) OVER (
      PARTITION BY pairs.user_id
    ) AS n_nonrelevant,
    lists.list_length
  FROM (
    SELECT
      input_interactions.user_id,
      MAX(ranked.pos) AS pos,
      CASE
        WHEN MAX(input_interactions.relevance) > $threshold THEN 1
        WHEN MAX(input_interactions.relevance) IS NOT NULL THEN 0
      END AS hit
    FROM input_interactions
    LEFT JOIN ranked
      ON
        input_interactions.user_id = ranked.user_id
        AND input_interactions.item_id = ranked.item_id
    GROUP BY input_interactions.user_id, input_interactions.item_id
  ) AS pairs
  LEFT JOIN (
    SELECT
      user_id,
      MAX(pos) AS list_length
    FROM ranked
    GROUP BY user_id
  ) AS lists
    ON pairs.user_id = lists.user_id
) AS judged_pairs
WHERE n_relevant > 0
