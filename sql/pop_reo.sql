-- name: pop_reo
-- title: Popularity-based ranking-based equal opportunity
-- definition: how unequally the relevant items of the short head and of the long tail are recommended, summed over the users with a list and a relevant item: P(head) = relevant head items among the first k positions of their lists / their relevant head items not consumed before (in the history table when given; every one otherwise), P(tail) the same for the long tail; the value is their relative standard deviation, std / mean = |P(head) - P(tail)| / (P(head) + P(tail)), 0 when both are found at the same rate. The short head as aplt's; the long tail every other item (a relevant item counts there even when an items table lacks it). Undefined (NULL, as Elliot's nan) when a group has no relevant item left or neither group's is found. One value per group.
-- formula: \mathrm{pop\_reo@}k = \frac{\mathrm{std}(P_H, P_T)}{\mathrm{mean}(P_H, P_T)}, \quad P_G = \frac{\sum_u |L_u \cap R_u \cap G|}{\sum_u |(R_u \cap G) \setminus \mathrm{history}_u|}
-- cutoff: required
-- aggregate: group
-- better: lower
-- reads: lists
-- needs_history: optional
-- ties_average: no
-- aliases: popreo, popularity_reo
-- references: Zhu, Wang and Caverlee, "Measuring and Mitigating Item Under-Recommendation Bias in Personalized Ranking Systems", SIGIR 2020 (REO); Elliot `PopREO` (the same sums over the users with a relevant item, numpy's population std over the two groups)
-- Each user's parts (the relevant items found in the list, the relevant items, the list) are
-- rows of one union, summed per user: the users kept are those with a list and a relevant item.
SELECT
  ABS(head_rate - tail_rate) / NULLIF(head_rate + tail_rate, 0) AS pop_reo
FROM (
  SELECT
    SUM(head_found) / NULLIF(SUM(head_relevant), 0) AS head_rate,
    SUM(tail_found) / NULLIF(SUM(tail_relevant), 0) AS tail_rate
  FROM (
    SELECT
      user_id,
      SUM(head_found) AS head_found,
      SUM(tail_found) AS tail_found,
      SUM(head_relevant) AS head_relevant,
      SUM(tail_relevant) AS tail_relevant
    FROM (
      SELECT
        ranked.user_id,
        CASE WHEN short_head.item_id IS NULL THEN 0 ELSE 1 END AS head_found,
        CASE WHEN short_head.item_id IS NULL THEN 1 ELSE 0 END AS tail_found,
        0 AS head_relevant,
        0 AS tail_relevant,
        0 AS listed,
        0 AS relevant
      FROM ranked
      INNER JOIN truth ON ranked.user_id = truth.user_id AND ranked.item_id = truth.item_id
      LEFT JOIN short_head ON ranked.item_id = short_head.item_id
      WHERE ranked.pos <= $k
      UNION ALL
      SELECT
        truth.user_id,
        0 AS head_found,
        0 AS tail_found,
        CASE WHEN seen.item_id IS NULL AND short_head.item_id IS NOT NULL THEN 1 ELSE 0 END
          AS head_relevant,
        CASE WHEN seen.item_id IS NULL AND short_head.item_id IS NULL THEN 1 ELSE 0 END
          AS tail_relevant,
        0 AS listed,
        1 AS relevant
      FROM truth
      LEFT JOIN short_head ON truth.item_id = short_head.item_id
      LEFT JOIN (
        SELECT DISTINCT
          user_id AS history_user,
          item_id
        FROM input_history
      ) AS seen ON truth.user_id = seen.history_user AND truth.item_id = seen.item_id
      UNION ALL
      SELECT
        ranked.user_id,
        0 AS head_found,
        0 AS tail_found,
        0 AS head_relevant,
        0 AS tail_relevant,
        1 AS listed,
        0 AS relevant
      FROM ranked
      WHERE ranked.pos = 1
    ) AS parts
    GROUP BY user_id
    HAVING MAX(listed) = 1 AND MAX(relevant) = 1
  ) AS users
) AS rates
