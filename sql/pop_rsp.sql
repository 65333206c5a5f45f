-- name: pop_rsp
-- title: Popularity-based ranking-based statistical parity
-- definition: how unequally the short head and the long tail are recommended, over every list: P(head) = head items among the first k positions of the lists / the sum over users with a list of the head items they had not consumed before (in the history table when given; every head item otherwise), P(tail) the same for the long tail; the value is their relative standard deviation, std / mean = |P(head) - P(tail)| / (P(head) + P(tail)), 0 at parity, 1 when one group is never recommended. The short head as aplt's, the long tail every other item of the catalogue (coverage's). Undefined (NULL, as Elliot's nan) when a group has no item left to recommend or neither is recommended. One value per group.
-- formula: \mathrm{pop\_rsp@}k = \frac{\mathrm{std}(P_H, P_T)}{\mathrm{mean}(P_H, P_T)}, \quad P_G = \frac{\sum_u |L_u \cap G|}{\sum_u |G \setminus \mathrm{history}_u|}
-- cutoff: required
-- aggregate: group
-- better: lower
-- reads: lists
-- needs_history: optional
-- ties_average: no
-- aliases: poprsp, popularity_rsp
-- references: Zhu, Wang and Caverlee, "Measuring and Mitigating Item Under-Recommendation Bias in Personalized Ranking Systems", SIGIR 2020 (RSP); Elliot `PopRSP` (the same sums and numpy's population std over the two groups; its long tail is the items of its training data outside the head, here the catalogue's)
-- Each user's list holds no item twice within the positions read (the checks refuse a repeat
-- there), so counting rows counts items.
SELECT
  ABS(head_rate - tail_rate) / NULLIF(head_rate + tail_rate, 0) AS pop_rsp
FROM (
  SELECT
    SUM(lists.head_items)
      / NULLIF(COUNT(*) * MAX(head.items) - SUM(COALESCE(seen.head_items, 0)), 0) AS head_rate,
    SUM(lists.tail_items)
      / NULLIF(COUNT(*) * MAX(tail.items) - SUM(COALESCE(seen.tail_items, 0)), 0) AS tail_rate
  FROM (
    SELECT
      ranked.user_id,
      SUM(CASE WHEN short_head.item_id IS NULL THEN 0 ELSE 1 END) AS head_items,
      SUM(CASE WHEN short_head.item_id IS NULL THEN 1 ELSE 0 END) AS tail_items
    FROM ranked
    LEFT JOIN short_head ON ranked.item_id = short_head.item_id
    WHERE ranked.pos <= $k
    GROUP BY ranked.user_id
  ) AS lists
  LEFT JOIN (
    SELECT
      input_history.user_id AS history_user,
      COUNT(DISTINCT CASE WHEN short_head.item_id IS NOT NULL THEN input_history.item_id END)
        AS head_items,
      COUNT(
        DISTINCT CASE
          WHEN short_head.item_id IS NULL AND catalogue.item_id IS NOT NULL
            THEN input_history.item_id
        END
      ) AS tail_items
    FROM input_history
    LEFT JOIN short_head ON input_history.item_id = short_head.item_id
    LEFT JOIN catalogue ON input_history.item_id = catalogue.item_id
    GROUP BY input_history.user_id
  ) AS seen ON lists.user_id = seen.history_user
  CROSS JOIN (SELECT COUNT(*) AS items FROM short_head) AS head
  CROSS JOIN (
    SELECT COUNT(*) AS items
    FROM catalogue
    LEFT JOIN short_head ON catalogue.item_id = short_head.item_id
    WHERE short_head.item_id IS NULL
  ) AS tail
) AS rates
