-- What the items' popularity is counted over (popularity.sql, and the number of users of
-- novelty and surprisal): what each user consumed before the period evaluated, the history
-- table, when one is given (RecTools' prev_interactions, RePlay's and Elliot's training data);
-- else the interactions. The composer reads input_history in input_interactions' place when a
-- history is given. A row without a user or an item says nothing of who consumed what: evaluate
-- refuses it (engines/checks.py), and the query alone (to_sql, dbt) leaves it out.
SELECT
  user_id,
  item_id
FROM input_interactions
WHERE user_id IS NOT NULL AND item_id IS NOT NULL
