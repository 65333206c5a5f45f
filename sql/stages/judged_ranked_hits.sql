-- DuckDB only: judged.sql's rows under ranked_judged.sql (duckdb_plan.judges_ranked_hits), for
-- metrics that read judged only at hit rows and as per-user counts (pos, hit, hits_so_far,
-- n_relevant, list_length; no relevance, gain or ideal position). The window over
-- joined.sql's rows would sort every relevant item, recommended or not, to number the hits;
-- here it numbers the recommended relevant items only. Rows: each hit (with n_relevant, read
-- there by r_precision's and iprec_at_recall's tests), each list's row of ranked_judged.sql
-- (item_id NULL: list_length, no hit) and one row per user with a relevant item (n_relevant,
-- no position: a user without a hit or without a list keeps its count, as joined.sql's
-- relevant rows that were not recommended give it). The interactions are grouped per pair as
-- judged_pairs_ranked.sql and ranked_judged.sql group them, so that DuckDB groups them once.
SELECT
  user_id,
  pos,
  hit,
  hits_so_far,
  n_relevant,
  list_length
FROM (
  WITH relevant_pairs AS (
    SELECT user_id, item_id
    FROM (
      SELECT user_id, item_id, MAX(relevance) AS relevance
      FROM input_interactions
      GROUP BY user_id, item_id
    ) AS pair_judgements
    WHERE relevance > $threshold
  ),

  relevant_counts AS (
    SELECT user_id, COUNT(*) AS n_relevant
    FROM relevant_pairs
    GROUP BY user_id
  )

  SELECT
    hits.user_id,
    hits.pos,
    1 AS hit,
    SUM(1) OVER (
      PARTITION BY hits.user_id ORDER BY hits.pos ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS hits_so_far,
    relevant_counts.n_relevant,
    hits.list_length
  FROM (
    SELECT ranked.user_id, ranked.pos, ranked.list_length
    FROM ranked
    INNER JOIN relevant_pairs
      ON ranked.user_id = relevant_pairs.user_id AND ranked.item_id = relevant_pairs.item_id
  ) AS hits
  INNER JOIN relevant_counts
    ON hits.user_id = relevant_counts.user_id
  UNION ALL
  SELECT
    user_id,
    pos,
    0 AS hit,
    NULL AS hits_so_far,
    NULL AS n_relevant,
    list_length
  FROM ranked
  WHERE item_id IS NULL
  UNION ALL
  SELECT
    user_id,
    NULL AS pos,
    0 AS hit,
    NULL AS hits_so_far,
    n_relevant,
    NULL AS list_length
  FROM relevant_counts
) AS judged_ranked_hits
