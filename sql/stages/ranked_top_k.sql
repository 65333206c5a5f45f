-- DuckDB only, for ties="id" when every metric has a cutoff: the same first $cutoff items as
-- ranked.sql, found with a top-k aggregate per user instead of sorting every row. The sort key
-- orders by score descending (NULLs last), then item id descending, exactly as ranked.sql.
SELECT
  user_id,
  UNNEST(top_items) AS item_id,
  GENERATE_SUBSCRIPTS(top_items, 1) AS pos,
  UNNEST(top_scores) AS score,
  list_length,
  scored_length,
  named_length
FROM (
  SELECT
    user_id,
    ARG_MIN(
      item_id, CREATE_SORT_KEY(score, 'DESC NULLS LAST', item_id, 'DESC NULLS LAST'), $cutoff
    ) AS top_items,
    ARG_MIN(
      score, CREATE_SORT_KEY(score, 'DESC NULLS LAST', item_id, 'DESC NULLS LAST'), $cutoff
    ) AS top_scores,
    COUNT(*) AS list_length,
    COUNT(score) AS scored_length,
    COUNT(item_id) AS named_length
  FROM input_recommendations
  GROUP BY user_id
) AS lists
