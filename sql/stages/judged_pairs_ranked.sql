-- judged_pairs.sql over ranked_judged.sql (plan.py's judgements "judged_pairs_ranked", DuckDB):
-- the same rows for every metric reading them, with nonrelevant_so_far's window over the
-- judged pairs recommended only (ranked_judged.sql holds no other row), and each user's
-- counts of relevant and non-relevant judged pairs from an aggregate instead of windows over
-- every judged pair. A user whose judged pairs are none recommended keeps a row (pos and hit
-- NULL) with its counts. The interactions are grouped per pair as judged_pairs.sql and
-- ranked_judged.sql group them, so that DuckDB groups them once for all three readers; an
-- item whose relevance is NULL is counted nowhere, as there. list_length is ranked's own.
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
    counts.user_id,
    recommended.pos,
    recommended.hit,
    recommended.nonrelevant_so_far,
    counts.n_relevant,
    counts.n_nonrelevant,
    lists.list_length
  FROM (
    SELECT
      user_id,
      COUNT(CASE WHEN relevance > $threshold THEN 1 END) AS n_relevant,
      COUNT(CASE WHEN relevance <= $threshold THEN 1 END) AS n_nonrelevant
    FROM (
      SELECT user_id, item_id, MAX(relevance) AS relevance
      FROM input_interactions
      GROUP BY user_id, item_id
    ) AS pair_judgements
    GROUP BY user_id
  ) AS counts
  LEFT JOIN (
    SELECT
      pair_judgements.user_id,
      ranked.pos,
      CASE WHEN pair_judgements.relevance > $threshold THEN 1 ELSE 0 END AS hit,
      SUM(CASE WHEN pair_judgements.relevance > $threshold THEN 0 ELSE 1 END) OVER (
        PARTITION BY pair_judgements.user_id
        ORDER BY ranked.pos
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
      ) AS nonrelevant_so_far
    FROM (
      SELECT user_id, item_id, MAX(relevance) AS relevance
      FROM input_interactions
      GROUP BY user_id, item_id
    ) AS pair_judgements
    INNER JOIN ranked
      ON
        pair_judgements.user_id = ranked.user_id
        AND pair_judgements.item_id = ranked.item_id
    WHERE pair_judgements.relevance IS NOT NULL
  ) AS recommended
    ON counts.user_id = recommended.user_id
  LEFT JOIN (
    SELECT
      user_id,
      MAX(list_length) AS list_length
    FROM ranked
    GROUP BY user_id
  ) AS lists
    ON counts.user_id = lists.user_id
) AS judged_pairs
WHERE n_relevant > 0
