-- name: precision_listed
-- title: Precision over the items listed within k
-- definition: H / min(k, list length): a list shorter than k is not penalised (0 for an empty list); without a cutoff, H / list length.
-- formula: \mathrm{precision\_listed@}k = \frac{H}{\min(k, n_u)}, \qquad n_u \text{ the length of } u\text{'s list}
-- cutoff: optional
-- aggregate: mean
-- better: higher
-- ties_average: yes
-- aliases:
-- references: LensKit `Precision` ("uses len(recs) as the denominator"); Hivemall `precision`; torchmetrics `adaptive_k=True`
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN hit ELSE 0 END) / NULLIF(LEAST($k, list_length), 0) AS precision_listed
FROM judged
GROUP BY user_id, n_relevant, list_length
