-- DuckDB only, for ties="id" or "id_text" when every metric has a cutoff: ranked.sql's rows, one per entry of
-- the lists of top_lists.sql.
SELECT
  user_id,
  UNNEST(items) AS item_id,
  GENERATE_SUBSCRIPTS(items, 1) AS pos,
  UNNEST(scores) AS score,
  list_length,
  scored_length,
  named_length
FROM top_lists
