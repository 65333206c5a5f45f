-- name: surprisal
-- title: Surprisal (normalised self-information)
-- definition: per user with a list, the sum over its first k items of log2(users / users(i)) / log2(users), divided by k (a list shorter than k adds nothing for its missing positions); users(i) = distinct users who consumed item i, users = distinct users who consumed any; an item nobody consumed scores 1, and with one user every consumed item scores 0; consumed means the history table when given, else the interactions; averaged over the users with a list.
-- formula: \mathrm{surprisal@}k = \frac{1}{k} \sum_{i \in L_u} \frac{\log_2 (\mathrm{users} / \mathrm{users}(i))}{\log_2 \mathrm{users}}
-- cutoff: required
-- aggregate: mean
-- better: higher
-- reads: lists
-- ties_average: no
-- aliases: self_information
-- references: RePlay `Surprisal` (train = the history, else the interactions; RePlay divides 0 by 0 for a consumed item when one user consumed everything); Zhou et al., PNAS 2010 (self-information); novelty is the same sum unnormalised, averaged over the list
-- log2(users / users(i)) is written log2(users) - log2(users(i)): a logarithm of whole numbers,
-- which every engine takes. With one user, log2(users) is 0 and so is every consumed item's
-- self-information: 0 / 0 is taken as 0, as sqlmetrics takes it everywhere.
SELECT
  ranked.user_id,
  SUM(
    CASE
      WHEN popularity.users IS NULL THEN 1.0
      WHEN consuming.users > 1
        THEN (LOG2(consuming.users) - LOG2(popularity.users)) / LOG2(consuming.users)
      ELSE 0.0
    END
  ) / $k AS surprisal
FROM ranked
LEFT JOIN popularity ON ranked.item_id = popularity.item_id
CROSS JOIN (SELECT COUNT(DISTINCT user_id) AS users FROM consumed) AS consuming
WHERE ranked.pos <= $k
GROUP BY ranked.user_id
