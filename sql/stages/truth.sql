-- Relevant interactions: each (user, item) once with its largest relevance, when above the
-- threshold; its position in the user's ideal order, the user's count |R_u| and largest
-- relevance (err's gmax=query).
SELECT
  user_id,
  item_id,
  MAX(relevance) AS relevance,
  ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY MAX(relevance) DESC, item_id DESC) AS ideal_pos,
  COUNT(*) OVER (PARTITION BY user_id) AS n_relevant,
  MAX(MAX(relevance)) OVER (PARTITION BY user_id) AS max_relevance
FROM input_interactions
GROUP BY user_id, item_id
HAVING MAX(relevance) > $threshold
