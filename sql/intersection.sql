-- name: intersection
-- title: Intersection with the baseline's lists
-- definition: per user with a list, |L_u ∩ B_u| / |L_u|, L_u the model's first min(k, list length) items and B_u the first k items the baseline model (baseline=, a value of the first group_by column) lists for the same user and other group columns; 0 for a user the baseline has no list for, and a user only the baseline lists is left out; averaged over the users with a list. The baseline's own row compares its lists with themselves: 1.
-- formula: \mathrm{intersection@}k = \frac{|L_u \cap B_u|}{|L_u|}, \qquad B_u \text{ the baseline's first } k
-- cutoff: required
-- aggregate: mean
-- better: none
-- reads: lists
-- ties_average: no
-- aliases: overlap
-- references: RecTools `Intersection` (ref_k = k, its default: Recall@ref_k of the reference's lists over the model's top k as the relevant items, per user of the model, 0 where the reference has no list; the same per user to 1e-12 on random lists, tests/test_overlap.py); Kaminskas and Bridge, "Diversity, Serendipity, Novelty, and Coverage", ACM TiiS 2016 (overlap with a baseline's lists)
-- baseline_lists is ranked's rows of the baseline model (the composer joins it on the user and
-- the group columns past the model's); it is the same relation for every model.
SELECT
  ranked.user_id,
  COUNT(baseline_lists.item_id) / COUNT(*) AS intersection
FROM ranked
LEFT JOIN baseline_lists
  ON ranked.user_id = baseline_lists.baseline_user
  AND ranked.item_id = baseline_lists.item_id
  AND baseline_lists.pos <= $k
WHERE ranked.pos <= $k
GROUP BY ranked.user_id
