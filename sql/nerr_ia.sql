-- name: nerr_ia
-- title: Normalised intent-aware expected reciprocal rank
-- definition: per user with a list and an intent judgement (ndeval's topics in both the run and the qrels), its intents the values of the interactions' intent column with a relevant item (relevance above the threshold, binary: ndeval's `actualSubtopics`, m); 0 for a user without one. err_ia@k's sum (each item's alpha gains, alpha = 0.5, divided by its position) divided by the same sum for the ideal list (ndeval's nERR-IA@k, collection-dependent normalisation). The ideal list is ndeval's greedy one, not the true ideal (finding that is NP-hard): from the items judged for the user, each position takes the item of the largest gain given the items placed above it, equal gains by the greater item id (ndeval: the greater docno as text). 0 without a relevant item.
-- formula: \mathrm{nERR\text{-}IA@}k = \frac{\sum_{i=1}^{k} G_i / i}{\sum_{i=1}^{k} G^*_i / i}, \quad G_i = \sum_{j} \mathrm{rel}_{i,j} (1 - \alpha)^{c_{i,j}}, \ \alpha = 0.5
-- cutoff: required
-- aggregate: mean
-- better: higher
-- reads: lists
-- needs_intent: yes
-- walks_positions: yes
-- averaged: over users with a list and an intent judgement
-- ties_average: no
-- aliases: nerria, nerr-ia
-- references: Chapelle et al., CIKM 2009 (ERR-IA); Clarke et al., SIGIR 2008 (the greedy ideal list); ndeval's nERR-IA@k (ir_measures' nERR_IA); ndeval 4.5 (TREC Web track diversity task, Clarke et al.), through ir_measures' pyndeval provider (pyndeval 0.0.8), per user to 1e-9 on random judgements (tests/test_intents.py)
SELECT
  judged.user_id,
  COALESCE(SUM(COALESCE(hits.discounted, 0)) / NULLIF(MAX(ideal.discounted), 0), 0) AS nerr_ia
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
LEFT JOIN (
  SELECT
    user_id,
    SUM(gain / pos) AS discounted
  FROM intent_ideal
  WHERE pos <= $k
  GROUP BY user_id
) AS ideal ON judged.user_id = ideal.user_id
GROUP BY judged.user_id
