-- name: err
-- title: Expected reciprocal rank
-- definition: sum over positions i <= k of (1 / i) x R_i x the product over positions j < i of (1 - R_j), R = (2^min(rel, gmax) - 1) / 2^gmax for a relevant item (0 otherwise): the expected reciprocal of the position where a user who stops at each item with probability R stops. gmax is 4 without a parameter (gdeval's), a number with err(gmax=3)@k, or each user's largest relevance with err(gmax=query)@k.
-- formula: \mathrm{ERR@}k = \sum_{i=1}^{k} \frac{R_i}{i} \prod_{j=1}^{i-1} (1 - R_j), \qquad R_i = \frac{2^{\min(\mathrm{rel}_i, g_{\max})} - 1}{2^{g_{\max}}}
-- cutoff: optional
-- parameters: gmax=4
-- walks_positions: yes
-- aggregate: mean
-- better: higher
-- ties_average: no
-- aliases: expected_reciprocal_rank
-- references: Chapelle, Metzler, Zhang and Grinspan (2009), Expected Reciprocal Rank for Graded Relevance, CIKM; gdeval.pl (TREC Web track; ir_measures `ERR@k`: gmax fixed at 4, a grade above it refused); Elasticsearch rank_eval `expected_reciprocal_rank` (maximum_relevance = gmax); pyNTCIREVAL 0.0.3 `ERR` with grade 2^level - 1 for the levels 1..gmax (the same per user to 1e-12 on random lists: tests/test_err.py)
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN err_stop / pos ELSE 0 END) AS err
FROM judged
GROUP BY user_id, n_relevant, list_length
