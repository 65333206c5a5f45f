-- judgements.sql for metrics that read the judged (user, item) pairs only (bpref, gm_bpref,
-- num_nonrel_judged_ret: plan.JUDGED_PAIRS_METRICS): the same rows without the recommended
-- items the interactions lack (hit NULL), which those metrics read as nothing, and list_length
-- (the last position) from ranked per user. Its windows sort the judged pairs, not every
-- recommended item. The interactions are grouped per pair before the join: ranked holds each
-- (user, item) once whenever a number is reported (a repeated recommendation is refused, or
-- dropped by duplicates="first"; bpref's lists have no cutoff to hide one below), so the
-- join's rows need no grouping again. Unused columns are pruned per query.
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
      pair_judgements.user_id,
      ranked.pos,
      CASE
        WHEN pair_judgements.relevance > $threshold THEN 1
        WHEN pair_judgements.relevance IS NOT NULL THEN 0
      END AS hit
    FROM (
      SELECT
        user_id,
        item_id,
        MAX(relevance) AS relevance
      FROM input_interactions
      GROUP BY user_id, item_id
    ) AS pair_judgements
    LEFT JOIN ranked
      ON
        pair_judgements.user_id = ranked.user_id
        AND pair_judgements.item_id = ranked.item_id
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
