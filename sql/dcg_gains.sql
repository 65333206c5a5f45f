-- name: dcg_gains
-- title: DCG with custom gains of the relevance levels (trec_eval's dcg.1=3,2=9)
-- definition: sum over positions i <= k of gain_i / log2(i + 1), each item's gain set by its relevance level: a level given in gains takes that gain (0 or negative allowed), a level not given its relevance when relevant, else 0; an item the interactions do not judge 0. Without gains it is dcg.
-- formula: \mathrm{DCG@}k = \sum_{i=1}^{k} \frac{g(\mathrm{rel}_i)}{\log_2(i + 1)}
-- cutoff: optional
-- parameters: gains={}
-- asked_as: dcg
-- reads: judgements
-- aggregate: mean
-- better: higher
-- ties_average: no
-- references: trec_eval 10 `dcg` with rel_level=gain parameters (m_ndcg.c, gain_init.c: a level not given keeps gain = level); ndcg_gains' numerator; Jarvelin & Kekalainen (2002)
SELECT
  user_id,
  SUM(CASE WHEN pos <= $k THEN gain / LOG2(pos + 1) ELSE 0 END) AS dcg_gains
FROM judgements
GROUP BY user_id
