-- What infap reads (reads: pool): judgements.sql's rows, with the pool's unjudged documents.
-- input_pool is every interaction, a negative relevance included (a document of the pool left
-- unjudged, trec_eval's qrels rel < 0); the other stages read input_interactions, the same
-- rows without those (compose binds both only when a metric reads this stage). One row per
-- (user, item) that the user's whole list recommends or the interactions hold, for the users
-- with a relevant judgement (the population): hit 1 relevant (above the threshold), 0 judged
-- non-relevant (at or below it, >= 0), -1 in the pool but not judged (negative), NULL outside
-- the pool (the interactions lack it). pos is NULL for an item not recommended. Per row, at
-- positions 1..pos: relevant_so_far, nonrelevant_so_far and unjudged_so_far. Per user, on
-- every row: n_relevant (|R_u|), n_nonrelevant (the judged non-relevant items, recommended or
-- not) and list_length (the last position; NULL without a list). Unused columns are pruned
-- per query.
SELECT
  user_id,
  pos,
  hit,
  relevant_so_far,
  nonrelevant_so_far,
  unjudged_so_far,
  n_relevant,
  n_nonrelevant,
  MAX(pos) OVER (PARTITION BY user_id) AS list_length
FROM (
  SELECT
    user_id,
    pos,
    hit,
    SUM(CASE WHEN pos IS NOT NULL AND hit = 1 THEN 1 ELSE 0 END) OVER (
      PARTITION BY user_id ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS relevant_so_far,
    SUM(CASE WHEN pos IS NOT NULL AND hit = 0 THEN 1 ELSE 0 END) OVER (
      PARTITION BY user_id ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS nonrelevant_so_far,
    SUM(CASE WHEN pos IS NOT NULL AND hit = -1 THEN 1 ELSE 0 END) OVER (
      PARTITION BY user_id ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS unjudged_so_far,
    SUM(CASE WHEN hit = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY user_id) AS n_relevant,
    SUM(CASE WHEN hit = 0 THEN 1 ELSE 0 END) OVER (PARTITION BY user_id) AS n_nonrelevant
  FROM (
    SELECT
      user_id,
      MAX(pos) AS pos,
      CASE
        WHEN MAX(relevance) > $threshold THEN 1
        WHEN MAX(relevance) >= 0 THEN 0
        WHEN MAX(relevance) < 0 THEN -1
      END AS hit
    FROM (
      SELECT
        COALESCE(ranked.user_id, input_pool.user_id) AS user_id,
        COALESCE(ranked.item_id, input_pool.item_id) AS item_id,
        ranked.pos,
        input_pool.relevance
      FROM ranked
      FULL OUTER JOIN input_pool
        ON
          ranked.user_id = input_pool.user_id
          AND ranked.item_id = input_pool.item_id
    ) AS listed_or_pooled
    GROUP BY user_id, item_id
  ) AS pairs
) AS pooled_pairs
WHERE n_relevant > 0
