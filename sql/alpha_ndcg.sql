-- name: alpha_ndcg
-- title: Alpha-nDCG (novelty- and diversity-aware nDCG)
-- definition: per user with a list and an intent judgement (ndeval's topics in both the run and the qrels), its intents the values of the interactions' intent column with a relevant item (relevance above the threshold, binary: ndeval's `actualSubtopics`, m); 0 for a user without one. Each item's gain is the sum, over the intents j it is relevant to, of (1 - alpha)^c with alpha = 0.5 and c the items relevant to j above it; alpha-DCG@k sums the gains of the first k items over log2(position + 1), and alpha-nDCG@k divides it by the alpha-DCG@k of the ideal list (ndeval's collection-dependent normalisation). The ideal list is ndeval's greedy one, not the true ideal (finding that is NP-hard): from the items judged for the user, each position takes the item of the largest gain given the items placed above it, equal gains by the greater item id (ndeval: the greater docno as text). 0 without a relevant item.
-- formula: \alpha\mathrm{\text{-}nDCG@}k = \frac{\sum_{i=1}^{k} G_i / \log_2(i + 1)}{\sum_{i=1}^{k} G^*_i / \log_2(i + 1)}, \quad G_i = \sum_{j} \mathrm{rel}_{i,j} (1 - \alpha)^{c_{i,j}}, \ \alpha = 0.5
-- cutoff: required
-- aggregate: mean
-- better: higher
-- reads: lists
-- needs_intent: yes
-- walks_positions: yes
-- averaged: over users with a list and an intent judgement
-- ties_average: no
-- aliases: alpha-ndcg, andcg, a_ndcg
-- references: Clarke et al., "Novelty and Diversity in Information Retrieval Evaluation", SIGIR 2008 (alpha-nDCG; its greedy ideal); ndeval's alpha-nDCG@k (alpha 0.5; ir_measures' alpha_nDCG); ndeval 4.5 (TREC Web track diversity task, Clarke et al.), through ir_measures' pyndeval provider (pyndeval 0.0.8), per user to 1e-9 on random judgements (tests/test_intents.py)
SELECT
  judged.user_id,
  COALESCE(SUM(COALESCE(hits.discounted, 0)) / NULLIF(MAX(ideal.discounted), 0), 0) AS alpha_ndcg
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
    SUM(POWER(CAST(0.5 AS DOUBLE), seen - 1) / LOG2(pos + 1)) AS discounted
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
    SUM(gain / LOG2(pos + 1)) AS discounted
  FROM intent_ideal
  WHERE pos <= $k
  GROUP BY user_id
) AS ideal ON judged.user_id = ideal.user_id
GROUP BY judged.user_id
