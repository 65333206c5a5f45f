-- name: rbo
-- title: Rank-biased overlap with the baseline's lists
-- definition: per user with a list, the sum over depths d = 1..k of p^(d - 1) x |L_u[:d] ∩ B_u[:d]| / d, divided by the sum of p^(d - 1) over the same depths, L_u[:d] the model's first d items and B_u[:d] the first d the baseline model (baseline=, a value of the first group_by column) lists for the same user and other group columns (a list shorter than d is taken whole); p = 0.9 without a parameter, another with rbo(p=0.8)@k; 0 for a user the baseline has no list for; averaged over the users with a list. The baseline's own row compares its lists with themselves: 1 where they hold k items.
-- formula: \mathrm{rbo@}k = \frac{\sum_{d=1}^{k} p^{d-1} \, |L_u[{:}d] \cap B_u[{:}d]| / d}{\sum_{d=1}^{k} p^{d-1}}
-- cutoff: required
-- aggregate: mean
-- better: none
-- reads: lists
-- walks_positions: yes
-- parameters: p=0.9
-- ties_average: no
-- aliases: rank_biased_overlap
-- references: Webber, Moffat and Zobel, "A Similarity Measure for Indefinite Rankings", ACM TOIS 2010 (RBO truncated at depth k, here normalised by the weights' sum so that identical lists of k items score 1); LensKit `rank_biased_overlap` (weight GeometricRankWeight(p), n = k, reference = the baseline's list; LensKit's default p is 0.85; the same per user to 1e-12 on random lists, tests/test_overlap.py)
-- An item in both lists, at positions a and b, is in the overlap at every depth from max(a, b)
-- to k: it adds tail.weight, the sum of p^(d - 1) / d over those depths. depths holds 1, 2, ...
-- with weight p^(d - 1) (the composer binds p there), to the deepest cutoff.
SELECT
  ranked.user_id,
  SUM(COALESCE(tail.weight / total.weight, 0)) AS rbo
FROM ranked
LEFT JOIN baseline_lists
  ON ranked.user_id = baseline_lists.baseline_user
  AND ranked.item_id = baseline_lists.item_id
  AND baseline_lists.pos <= $k
LEFT JOIN (
  SELECT
    depth,
    SUM(weight / depth) OVER (ORDER BY depth DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS weight
  FROM depths
  WHERE depth <= $k
) AS tail
  ON tail.depth = CASE
    WHEN ranked.pos > baseline_lists.pos THEN ranked.pos
    ELSE baseline_lists.pos
  END
CROSS JOIN (
  SELECT SUM(weight) AS weight
  FROM depths
  WHERE depth <= $k
) AS total
WHERE ranked.pos <= $k
GROUP BY ranked.user_id
