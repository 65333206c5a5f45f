-- name: unexpectedness
-- title: Unexpectedness against the baseline's lists
-- definition: per user with a list, 1 - |L_u ∩ B_u| / k, L_u the model's first k items and B_u the first k items the baseline model (baseline=, a value of the first group_by column) lists for the same user and other group columns (a list shorter than k counts its missing positions as unexpected); 0 for a user the baseline has no list for, as RePlay; averaged over the users with a list. The baseline's own row compares its lists with themselves: 0 where they hold k items.
-- formula: \mathrm{unexpectedness@}k = 1 - \frac{|L_u \cap B_u|}{k}
-- cutoff: required
-- aggregate: mean
-- better: none
-- reads: lists
-- walks_positions: yes
-- ties_average: no
-- aliases: unexpectedness_vs_baseline
-- references: RePlay `Unexpectedness` (base_recommendations = the baseline's lists; 0 for a user without base recommendations; the same per user to 1e-12 on random lists, tests/test_overlap.py); Murakami et al., "Metrics for Evaluating the Serendipity of Recommendation Lists", JSAI 2007 (unexpectedness against a primitive recommender)
-- A baseline's list is found by its first position (based): one row per user, so the join
-- multiplies no row; ranks="literal", which may leave a list without a rank 1, is refused.
SELECT
  ranked.user_id,
  CASE
    WHEN COUNT(based.baseline_user) = 0 THEN 0.0
    ELSE 1.0 - COUNT(common.item_id) / $k
  END AS unexpectedness
FROM ranked
LEFT JOIN baseline_lists AS based
  ON ranked.user_id = based.baseline_user AND based.pos = 1
LEFT JOIN baseline_lists AS common
  ON ranked.user_id = common.baseline_user
  AND ranked.item_id = common.item_id
  AND common.pos <= $k
WHERE ranked.pos <= $k
GROUP BY ranked.user_id
