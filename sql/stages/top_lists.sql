-- DuckDB only, for ties="id" when every metric has a cutoff: each user's first $cutoff items
-- and their scores, in ranked.sql's order, as two lists, with the counts of the whole list;
-- without sorting every row. A top-k aggregate keyed on the plain score (a double compares far
-- faster than a composite sort key) keeps each user's $cutoff + 1 best; their order is then made
-- exact (equal scores by item id descending) by sorting those few. Its answer is the exact top
-- $cutoff unless the scores at $cutoff and $cutoff + 1 are equal (which items of that score fall
-- inside depends on item ids the aggregate may have dropped) or NULL scores or NULL items reach
-- the list: those few users are ranked again by ranked.sql's window.
SELECT
  user_id,
  items,
  scores,
  list_length,
  scored_length,
  named_length
FROM (
  WITH lists AS (
    SELECT
      user_id,
      MAX_BY(item_id, score, $cutoff + 1) AS top_items,
      MAX(score, $cutoff + 1) AS top_scores,
      COUNT(*) AS list_length,
      COUNT(score) AS scored_length,
      COUNT(item_id) AS named_length
    FROM input_recommendations
    GROUP BY user_id
  ),

  checked_lists AS (
    SELECT
      user_id,
      top_items,
      top_scores,
      list_length,
      scored_length,
      named_length,
      COALESCE(
        named_length = list_length
        AND (
          (
            LEN(top_scores) > $cutoff
            AND LIST_EXTRACT(top_scores, $cutoff) > LIST_EXTRACT(top_scores, $cutoff + 1)
          )
          OR (LEN(top_scores) <= $cutoff AND scored_length = list_length)
        ),
        FALSE  -- top_scores is NULL when every score is
      ) AS exact
    FROM lists
  ),

  exact_lists AS (
    SELECT
      user_id,
      list_length,
      scored_length,
      named_length,
      top_items,
      top_scores,
      CASE
        -- equal neighbours in the (descending) scores: a tie to order by item id
        WHEN LIST_BOOL_OR(LIST_TRANSFORM(top_scores[2:], LAMBDA score, i: score = top_scores[i]))
          THEN LIST_SORT(
            LIST_TRANSFORM(top_items, LAMBDA item, i: {'score': top_scores[i], 'item': item}), 'DESC'
          )
      END AS sorted_ties
    FROM checked_lists
    WHERE exact
  ),

  ranked_again AS (
    SELECT
      input_recommendations.user_id,
      input_recommendations.item_id,
      ROW_NUMBER() OVER (
        PARTITION BY input_recommendations.user_id
        ORDER BY input_recommendations.score DESC NULLS LAST, input_recommendations.item_id DESC
      ) AS pos,
      input_recommendations.score,
      checked_lists.list_length,
      checked_lists.scored_length,
      checked_lists.named_length
    FROM input_recommendations
    -- a NULL user is a list too, which the diagnostics count
    INNER JOIN checked_lists
      ON input_recommendations.user_id IS NOT DISTINCT FROM checked_lists.user_id
    WHERE NOT checked_lists.exact
    QUALIFY pos <= $cutoff
  )

  SELECT
    user_id,
    CASE
      WHEN sorted_ties IS NULL THEN top_items[1:$cutoff]
      ELSE LIST_TRANSFORM(sorted_ties[1:$cutoff], LAMBDA entry: entry.item)
    END AS items,
    CASE
      WHEN sorted_ties IS NULL THEN top_scores[1:$cutoff]
      ELSE LIST_TRANSFORM(sorted_ties[1:$cutoff], LAMBDA entry: entry.score)
    END AS scores,
    list_length,
    scored_length,
    named_length
  FROM exact_lists
  UNION ALL
  SELECT
    user_id,
    LIST(item_id ORDER BY pos) AS items,
    LIST(score ORDER BY pos) AS scores,
    list_length,
    scored_length,
    named_length
  FROM ranked_again
  GROUP BY user_id, list_length, scored_length, named_length
) AS top_k
