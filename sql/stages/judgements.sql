-- What bpref reads (reads: judgements): one row per (user, item) that the user's whole list
-- recommends or the interactions judge, for the users with a relevant judgement (the
-- population). Every interaction is a judgement: relevant above the threshold (hit 1), judged
-- non-relevant at or below it (hit 0); an item of the list the interactions lack is not judged
-- (hit NULL), as trec_eval treats a document outside its pool. pos is NULL for an item not
-- recommended. Per row: nonrelevant_so_far, the judged non-relevant items recommended at
-- positions 1..pos. Per user, on every row: n_relevant (|R_u|), n_nonrelevant (the judged
-- non-relevant items, recommended or not) and list_length (the last position; NULL without a
-- list). For ndcg_gains, dcg_gains and ideal_dcg_gains: gain, the item's gain ($gain, which the
-- composer binds to the requests' gains of judged_relevance, the item's largest relevance: 0
-- for an item not judged), and ideal_gain_pos, its position in the user's items by gain
-- descending (NULL for a gain of 0 or less: the ideal list stops there). Unused columns are
-- pruned per query; gain and judged_relevance too when nothing reads them.
SELECT
  user_id,
  pos,
  hit,
  nonrelevant_so_far,
  n_relevant,
  n_nonrelevant,
  MAX(pos) OVER (PARTITION BY user_id) AS list_length,
  gain,
  CASE
    WHEN gain > 0 THEN ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY gain DESC)
  END AS ideal_gain_pos
FROM (
  SELECT
    user_id,
    pos,
    hit,
    SUM(CASE WHEN pos IS NOT NULL AND hit = 0 THEN 1 ELSE 0 END) OVER (
      PARTITION BY user_id ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS nonrelevant_so_far,
    SUM(CASE WHEN hit = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY user_id) AS n_relevant,
    SUM(CASE WHEN hit = 0 THEN 1 ELSE 0 END) OVER (PARTITION BY user_id) AS n_nonrelevant,
    $gain AS gain
  FROM (
    SELECT
      user_id,
      MAX(pos) AS pos,
      CASE
        WHEN MAX(relevance) > $threshold THEN 1
        WHEN MAX(relevance) IS NOT NULL THEN 0
      END AS hit,
      MAX(relevance) AS judged_relevance
    FROM (
      SELECT
        COALESCE(ranked.user_id, input_interactions.user_id) AS user_id,
        COALESCE(ranked.item_id, input_interactions.item_id) AS item_id,
        ranked.pos,
        input_interactions.relevance
      FROM ranked
      FULL OUTER JOIN input_interactions
        ON
          ranked.user_id = input_interactions.user_id
          AND ranked.item_id = input_interactions.item_id
    ) AS listed_or_judged
    GROUP BY user_id, item_id
  ) AS pairs
) AS judged_pairs
WHERE n_relevant > 0
