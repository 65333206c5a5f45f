WITH input_recommendations AS (
  SELECT
    user_id AS user_id,
    item_id AS item_id,
    score AS score
  FROM recommendations
), input_interactions AS (
  SELECT
    interactions.user_id AS user_id,
    interactions.item_id AS item_id,
    interactions.relevance AS relevance
  FROM interactions AS interactions
), truth AS (
  SELECT
    user_id,
    item_id,
    MAX(relevance) AS relevance,
    COUNT(*) OVER (PARTITION BY user_id) AS n_relevant
  FROM input_interactions
  GROUP BY
    user_id,
    item_id
  HAVING
    MAX(relevance) > 0.0
), ranked AS (
  SELECT
    user_id,
    UNNEST(top_items) AS item_id,
    GENERATE_SUBSCRIPTS(top_items, 1) AS pos,
    list_length
  FROM (
    SELECT
      user_id,
      ARG_MIN(item_id, CREATE_SORT_KEY(score, 'DESC NULLS LAST', item_id, 'DESC NULLS LAST'), 10) AS top_items,
      ARG_MIN(score, CREATE_SORT_KEY(score, 'DESC NULLS LAST', item_id, 'DESC NULLS LAST'), 10) AS top_scores,
      COUNT(*) AS list_length,
      COUNT(score) AS scored_length,
      COUNT(item_id) AS named_length
    FROM input_recommendations
    GROUP BY
      user_id
  ) AS lists
), joined AS (
  SELECT
    COALESCE(ranked.user_id, truth.user_id) AS user_id,
    ranked.pos,
    ranked.list_length,
    COALESCE(truth.relevance, 0) AS relevance,
    truth.n_relevant
  FROM ranked
  FULL OUTER JOIN truth
    ON ranked.user_id = truth.user_id AND ranked.item_id = truth.item_id
), judged AS (
  SELECT
    user_id,
    pos,
    CASE WHEN relevance > 0 THEN 1 ELSE 0 END AS hit,
    n_relevant,
    list_length
  FROM joined
), per_user AS (
  SELECT
    user_id,
    MAX(n_relevant) AS n_relevant,
    COALESCE(MAX(list_length), 0) AS list_length,
    COALESCE(
      SUM(CASE WHEN pos <= 10 THEN hit ELSE 0 END) / NULLIF(LEAST(MAX(n_relevant), 10), 0),
      0
    ) AS m1
  FROM judged
  GROUP BY
    user_id
  HAVING
    MAX(n_relevant) > 0
)
SELECT
  COUNT(*) AS users,
  AVG(m1 ORDER BY user_id) AS "recall_capped@10"
FROM per_user;
