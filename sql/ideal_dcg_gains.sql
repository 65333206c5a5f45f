-- name: ideal_dcg_gains
-- title: Ideal DCG with custom gains of the relevance levels (trec_eval's ideal_dcg.1=3,2=9)
-- definition: the DCG of the user's judged items sorted by gain descending, those of positive gain only: sum over i <= k (all of them without a cutoff) of g_(i) / log2(i + 1), g_(i) the i-th largest positive gain; a level given in gains takes that gain, a level not given its relevance when relevant, else 0. Without gains it is ideal_dcg.
-- formula: \mathrm{IDCG@}k = \sum_{i=1}^{k} \frac{g_{(i)}^{+}}{\log_2(i + 1)}
-- cutoff: optional
-- parameters: gains={}
-- asked_as: ideal_dcg
-- reads: judgements
-- aggregate: mean
-- better: none
-- ties_average: no
-- references: trec_eval 10 `ideal_dcg` with rel_level=gain parameters (m_ndcg.c, gain_init.c: the ideal order sorts the levels by gain, positive gains only; its comparator truncates the difference of two gains to an integer, so levels whose gains differ by less than 1 may take either order there, where sqlmetrics sorts by the gain); ndcg_gains' denominator; Jarvelin & Kekalainen (2002)
SELECT
  user_id,
  SUM(CASE WHEN ideal_gain_pos <= $k THEN gain / LOG2(ideal_gain_pos + 1) ELSE 0 END) AS ideal_dcg_gains
FROM judgements
GROUP BY user_id
