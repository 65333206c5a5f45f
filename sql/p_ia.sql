-- name: p_ia
-- title: Intent-aware precision
-- definition: per user with a list and an intent judgement (ndeval's topics in both the run and the qrels), its intents the values of the interactions' intent column with a relevant item (relevance above the threshold, binary: ndeval's `actualSubtopics`, m); 0 for a user without one. The relevant (item, intent) pairs among the first k items, divided by k m: precision@k averaged over the intents with uniform weights, k the cutoff whatever the list length.
-- formula: \mathrm{P\text{-}IA@}k = \frac{1}{m} \sum_{j=1}^{m} \frac{|\{i \le k : \mathrm{rel}_{i,j}\}|}{k}
-- cutoff: required
-- aggregate: mean
-- better: higher
-- reads: lists
-- needs_intent: yes
-- walks_positions: yes
-- averaged: over users with a list and an intent judgement
-- ties_average: no
-- aliases: precision_ia, p-ia
-- references: Agrawal et al., "Diversifying Search Results", WSDM 2009 (intent-aware measures, here with uniform intent weights); ndeval's P-IA@k (ir_measures' P_IA); ndeval 4.5 (TREC Web track diversity task, Clarke et al.), through ir_measures' pyndeval provider (pyndeval 0.0.8), per user to 1e-9 on random judgements (tests/test_intents.py)
SELECT
  judged.user_id,
  COALESCE(
    CAST(SUM(COALESCE(hits.relevant_hits, 0)) AS DOUBLE) / NULLIF(SUM(CASE WHEN judged.relevant_items > 0 THEN 1 ELSE 0 END) * $k, 0), 0
  ) AS p_ia
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
    COUNT(*) AS relevant_hits
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
