-- name: serendipity
-- title: Serendipity (relevant and unlike the user's history)
-- definition: per user with a list and a history, the mean over its first k items i of rel(i) * (1 - share of the user's history items in i's category), rel(i) = 1 if i is relevant in the interactions; averaged over those users. Needs a history table (user, item: what the user consumed before) and the items table's category.
-- cutoff: required
-- aggregate: mean
-- better: higher
-- reads: lists
-- needs_items: category
-- needs_history: yes
-- averaged: over users with a list and a history
-- ties_average: no
-- aliases: user_serendipity
-- references: MS Recommenders `serendipity` with item_sim_measure="item_feature_vector" over one-hot categories (cosine = 1 for the same category, else 0), train_df = the history, col_relevance = relevant in the interactions; Zhang et al., Auralist, WSDM 2012
-- The history is the same for every group: its user column is named history_user so that the
-- group columns are not added to its joins.
SELECT
  ranked.user_id,
  AVG(
    CASE
      WHEN truth.item_id IS NULL THEN 0
      ELSE 1 - COALESCE(profile.n, 0) / history.n
    END
  ) AS serendipity
FROM ranked
INNER JOIN (
  SELECT
    user_id AS history_user,
    COUNT(*) AS n
  FROM input_history
  GROUP BY user_id
) AS history ON ranked.user_id = history.history_user
INNER JOIN input_items ON ranked.item_id = input_items.item_id
LEFT JOIN (
  SELECT
    input_history.user_id AS history_user,
    input_items.category,
    COUNT(*) AS n
  FROM input_history
  INNER JOIN input_items ON input_history.item_id = input_items.item_id
  GROUP BY input_history.user_id, input_items.category
) AS profile
  ON ranked.user_id = profile.history_user AND input_items.category = profile.category
LEFT JOIN truth ON ranked.user_id = truth.user_id AND ranked.item_id = truth.item_id
WHERE ranked.pos <= $k
GROUP BY ranked.user_id
