-- name: err_ia
-- title: Intent-aware expected reciprocal rank
-- definition: per user with a list and an intent judgement (ndeval's topics in both the run and the qrels), its intents the values of the interactions' intent column with a relevant item (relevance above the threshold, binary: ndeval's `actualSubtopics`, m); 0 for a user without one. ndeval's ERR-IA@k: each of the first k items gains, for each intent j it is relevant to, (1 - alpha)^c with alpha = 0.5 and c the items relevant to j above it, divided by its position; the sum over the items and intents is divided by the same sum for an ideal ideal list of k items each relevant to every intent, m times the sum over i = 1..k of 0.5^(i-1) / i (ndeval's collection-independent normalisation; Chapelle et al.'s ERR-IA with binary grades of stop probability 1/2 divided by its value on that list). ndeval leaves position 1 undivided and reports k = 5, 10, 20 only: this divides at every k.
-- formula: \mathrm{ERR\text{-}IA@}k = \frac{\sum_{i=1}^{k} \frac{1}{i} \sum_{j=1}^{m} \mathrm{rel}_{i,j} (1 - \alpha)^{c_{i,j}}}{m \sum_{i=1}^{k} \frac{(1 - \alpha)^{i-1}}{i}}, \quad \alpha = 0.5
-- cutoff: required
-- aggregate: mean
-- better: higher
-- reads: lists
-- needs_intent: yes
-- walks_positions: yes
-- averaged: over users with a list and an intent judgement
-- ties_average: no
-- aliases: erria, err-ia
-- references: Chapelle, Metzler, Zhang and Grinspan, "Expected Reciprocal Rank for Graded Relevance", CIKM 2009 (ERR-IA); Agrawal et al., WSDM 2009 (intent-aware measures); ndeval's ERR-IA@k (ir_measures' ERR_IA); ndeval 4.5 (TREC Web track diversity task, Clarke et al.), through ir_measures' pyndeval provider (pyndeval 0.0.8), per user to 1e-9 on random judgements (tests/test_intents.py)
SELECT
  judged.user_id,
  COALESCE(
    SUM(COALESCE(hits.discounted, 0)) / NULLIF(SUM(CASE WHEN judged.relevant_items > 0 THEN 1 ELSE 0 END) * $err_ia_ideal_of_k, 0), 0
  ) AS err_ia
FROM (
  SELECT
    intents.user_id,
    intents.intent,
    SUM(intents.relevant) AS relevant_items
  FROM intents
  INNER JOIN (
    SELECT user_id FROM ranked GROUP BY user_id
  ) AS listed ON intents.user_id = listed.user_id
  GROUP BY intents.user_id, intents.intent
) AS judged
LEFT JOIN (
  SELECT
    user_id,
    intent,
    SUM(POWER(CAST(0.5 AS DOUBLE), seen - 1) / pos) AS discounted
  FROM (
    SELECT
      ranked.user_id,
      intents.intent,
      ranked.pos,
      ROW_NUMBER() OVER (
        PARTITION BY ranked.user_id, intents.intent ORDER BY ranked.pos, ranked.item_id
      ) AS seen
    FROM ranked
    INNER JOIN intents ON ranked.user_id = intents.user_id AND ranked.item_id = intents.item_id
    WHERE intents.relevant = 1 AND ranked.pos <= $k
  ) AS placed
  GROUP BY user_id, intent
) AS hits ON judged.user_id = hits.user_id AND judged.intent = hits.intent
GROUP BY judged.user_id
