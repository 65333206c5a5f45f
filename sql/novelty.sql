-- name: novelty
-- title: Novelty (mean inverse user frequency)
-- definition: per user with a list, the mean over its first k items of -log2(users(i) / users), users(i) = distinct users who consumed item i (1 for an item nobody consumed), users = distinct users who consumed any; consumed means the history table when given, else the interactions; averaged over the users with a list.
-- formula: \mathrm{novelty@}k = \frac{1}{|L_u|} \sum_{i \in L_u} -\log_2 \frac{\mathrm{users}(i)}{\mathrm{users}}
-- cutoff: required
-- aggregate: mean
-- better: higher
-- reads: lists
-- ties_average: no
-- aliases: miuf, mean_inv_user_freq
-- references: RecTools `MeanInvUserFreq` (the history, else the interactions, as its prev_interactions); Zhou et al., PNAS 2010 (novelty as self-information); MS Recommenders `novelty` divides by interaction rows and averages over all recommendations instead
-- -log2(users(i) / users) is written log2(users) - log2(users(i)): a logarithm of whole numbers,
-- which every engine takes (PostgreSQL has no LOG of a double with a base). Nobody consumed
-- anything (an empty history): undefined, NULL.
SELECT
  ranked.user_id,
  AVG(LOG2(NULLIF(consuming.users, 0)) - LOG2(COALESCE(popularity.users, 1))) AS novelty
FROM ranked
LEFT JOIN popularity ON ranked.item_id = popularity.item_id
CROSS JOIN (SELECT COUNT(DISTINCT user_id) AS users FROM consumed) AS consuming
WHERE ranked.pos <= $k
GROUP BY ranked.user_id
