-- intents: one row per judged (user, intent, item) of the interactions that have an intent
-- (the intent-aware metrics: alpha_ndcg, err_ia, nerr_ia, p_ia, ap_ia, s_recall). relevant is 1
-- when the largest relevance of the row's judgements is above the threshold (ndeval's binary
-- judgement: any positive grade), else 0: a judged intent without a relevant item stays, as a
-- judged user without a relevant intent does (ndeval counts such a topic, at 0). A row without
-- an intent judges no intent.
SELECT
  user_id,
  intent,
  item_id,
  MAX(CASE WHEN relevance > $threshold THEN 1 ELSE 0 END) AS relevant
FROM input_interactions
WHERE intent IS NOT NULL AND user_id IS NOT NULL AND item_id IS NOT NULL
GROUP BY user_id, intent, item_id
