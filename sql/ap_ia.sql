-- name: ap_ia
-- title: Intent-aware average precision
-- definition: per user with a list and an intent judgement (ndeval's topics in both the run and the qrels), its intents the values of the interactions' intent column with a relevant item (relevance above the threshold, binary: ndeval's `actualSubtopics`, m); 0 for a user without one. Over the whole list, the average precision of each intent j (the sum, at each item relevant to j, of the items relevant to j so far divided by its position, over the n_j items relevant to j) averaged over the m intents with uniform weights.
-- formula: \mathrm{AP\text{-}IA} = \frac{1}{m} \sum_{j=1}^{m} \frac{1}{n_j} \sum_{i : \mathrm{rel}_{i,j}} \frac{|\{i' \le i : \mathrm{rel}_{i',j}\}|}{i}
-- cutoff: none
-- aggregate: mean
-- better: higher
-- reads: lists
-- needs_intent: yes
-- reads_whole_list: yes
-- walks_positions: yes
-- averaged: over users with a list and an intent judgement
-- ties_average: no
-- aliases: map_ia, map-ia
-- references: Agrawal et al., "Diversifying Search Results", WSDM 2009 (MAP-IA, uniform intent weights); ndeval's MAP-IA (ir_measures' AP_IA); ndeval 4.5 (TREC Web track diversity task, Clarke et al.), through ir_measures' pyndeval provider (pyndeval 0.0.8), per user to 1e-9 on random judgements (tests/test_intents.py)
SELECT
  judged.user_id,
  COALESCE(
    SUM(
      CASE
        WHEN judged.relevant_items > 0
          THEN COALESCE(hits.precisions, 0) / judged.relevant_items
        ELSE 0
      END
    ) / NULLIF(SUM(CASE WHEN judged.relevant_items > 0 THEN 1 ELSE 0 END), 0),
    0
  ) AS ap_ia
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
    SUM(CAST(seen AS DOUBLE) / pos) AS precisions
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
