WITH input_recommendations AS (
  SELECT
    user_id AS user_id,
    item_id AS item_id,
    score AS score
  FROM recommendations
), input_interactions AS (
  SELECT
    interactions.user_id AS user_id,
    interactions.item_id AS item_id,
    interactions.relevance AS relevance,
    interactions.intent AS intent
  FROM interactions interactions
), list_counts AS (
  SELECT
    user_id AS user_id,
    COUNT(*) AS list_length
  FROM input_recommendations
  GROUP BY
    user_id
), truth AS (
  SELECT
    user_id AS user_id,
    item_id AS item_id,
    COUNT(*) OVER (PARTITION BY user_id) AS n_relevant
  FROM input_interactions
  GROUP BY
    user_id,
    item_id
  HAVING
    MAX(relevance) > 0.0
), ranked AS (
  SELECT
    ranked_rows.user_id AS user_id,
    ranked_rows.item_id AS item_id,
    ranked_rows.pos AS pos,
    list_counts.list_length AS list_length
  FROM (
    SELECT
      user_id AS user_id,
      item_id AS item_id,
      pos AS pos
    FROM (
      SELECT
        user_id AS user_id,
        item_id AS item_id,
        ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY score DESC NULLS LAST, item_id DESC NULLS LAST) AS pos
      FROM input_recommendations
    ) _t
    WHERE
      pos <= 10
  ) ranked_rows
  LEFT JOIN list_counts
    ON ranked_rows.user_id = list_counts.user_id
), joined AS (
  SELECT
    COALESCE(ranked.user_id, truth.user_id) AS user_id,
    ranked.list_length AS list_length,
    truth.n_relevant AS n_relevant
  FROM ranked
  FULL OUTER JOIN truth
    ON ranked.user_id = truth.user_id AND ranked.item_id = truth.item_id
), judged AS (
  SELECT
    user_id AS user_id,
    n_relevant AS n_relevant,
    list_length AS list_length
  FROM joined
), per_user AS (
  SELECT
    user_id AS user_id,
    MAX(judged.n_relevant) AS n_relevant,
    COALESCE(MAX(judged.list_length), 0) AS list_length
  FROM judged
  GROUP BY
    user_id
  HAVING
    MAX(judged.n_relevant) > 0
), intents AS (
  SELECT
    user_id AS user_id,
    intent AS intent,
    item_id AS item_id,
    MAX(CASE WHEN relevance > 0.0 THEN 1 ELSE 0 END) AS relevant
  FROM input_interactions
  WHERE
    NOT intent IS NULL AND NOT user_id IS NULL AND NOT item_id IS NULL
  GROUP BY
    user_id,
    intent,
    item_id
), intent_greedy_0 AS (
  SELECT
    user_id AS user_id,
    intent AS intent,
    item_id AS item_id,
    CAST(NULL AS INT) AS placed,
    CAST(NULL AS DOUBLE PRECISION) AS gain
  FROM intents
  WHERE
    relevant = 1
), intent_greedy_1 AS (
  SELECT
    user_id AS user_id,
    intent AS intent,
    item_id AS item_id,
    CASE WHEN placed IS NULL AND choice = 1 THEN 1 ELSE placed END AS placed,
    CASE WHEN placed IS NULL AND choice = 1 THEN item_gain ELSE gain END AS gain
  FROM (
    SELECT
      user_id AS user_id,
      intent AS intent,
      item_id AS item_id,
      placed AS placed,
      gain AS gain,
      item_gain AS item_gain,
      RANK() OVER (
        PARTITION BY user_id
        ORDER BY CASE WHEN placed IS NULL THEN 0 ELSE 1 END, item_gain DESC NULLS LAST, item_id DESC NULLS LAST
      ) AS choice
    FROM (
      SELECT
        user_id AS user_id,
        intent AS intent,
        item_id AS item_id,
        placed AS placed,
        gain AS gain,
        SUM(POWER(CAST(0.5 AS DOUBLE PRECISION), covered)) OVER (PARTITION BY user_id, item_id) AS item_gain
      FROM (
        SELECT
          user_id AS user_id,
          intent AS intent,
          item_id AS item_id,
          placed AS placed,
          gain AS gain,
          SUM(CASE WHEN placed IS NULL THEN 0 ELSE 1 END) OVER (PARTITION BY user_id, intent) AS covered
        FROM intent_greedy_0
      ) covered_intents
    ) item_gains
  ) choices
), intent_greedy_2 AS (
  SELECT
    user_id AS user_id,
    intent AS intent,
    item_id AS item_id,
    CASE WHEN placed IS NULL AND choice = 1 THEN 2 ELSE placed END AS placed,
    CASE WHEN placed IS NULL AND choice = 1 THEN item_gain ELSE gain END AS gain
  FROM (
    SELECT
      user_id AS user_id,
      intent AS intent,
      item_id AS item_id,
      placed AS placed,
      gain AS gain,
      item_gain AS item_gain,
      RANK() OVER (
        PARTITION BY user_id
        ORDER BY CASE WHEN placed IS NULL THEN 0 ELSE 1 END, item_gain DESC NULLS LAST, item_id DESC NULLS LAST
      ) AS choice
    FROM (
      SELECT
        user_id AS user_id,
        intent AS intent,
        item_id AS item_id,
        placed AS placed,
        gain AS gain,
        SUM(POWER(CAST(0.5 AS DOUBLE PRECISION), covered)) OVER (PARTITION BY user_id, item_id) AS item_gain
      FROM (
        SELECT
          user_id AS user_id,
          intent AS intent,
          item_id AS item_id,
          placed AS placed,
          gain AS gain,
          SUM(CASE WHEN placed IS NULL THEN 0 ELSE 1 END) OVER (PARTITION BY user_id, intent) AS covered
        FROM intent_greedy_1
      ) covered_intents
    ) item_gains
  ) choices
), intent_greedy_3 AS (
  SELECT
    user_id AS user_id,
    intent AS intent,
    item_id AS item_id,
    CASE WHEN placed IS NULL AND choice = 1 THEN 3 ELSE placed END AS placed,
    CASE WHEN placed IS NULL AND choice = 1 THEN item_gain ELSE gain END AS gain
  FROM (
    SELECT
      user_id AS user_id,
      intent AS intent,
      item_id AS item_id,
      placed AS placed,
      gain AS gain,
      item_gain AS item_gain,
      RANK() OVER (
        PARTITION BY user_id
        ORDER BY CASE WHEN placed IS NULL THEN 0 ELSE 1 END, item_gain DESC NULLS LAST, item_id DESC NULLS LAST
      ) AS choice
    FROM (
      SELECT
        user_id AS user_id,
        intent AS intent,
        item_id AS item_id,
        placed AS placed,
        gain AS gain,
        SUM(POWER(CAST(0.5 AS DOUBLE PRECISION), covered)) OVER (PARTITION BY user_id, item_id) AS item_gain
      FROM (
        SELECT
          user_id AS user_id,
          intent AS intent,
          item_id AS item_id,
          placed AS placed,
          gain AS gain,
          SUM(CASE WHEN placed IS NULL THEN 0 ELSE 1 END) OVER (PARTITION BY user_id, intent) AS covered
        FROM intent_greedy_2
      ) covered_intents
    ) item_gains
  ) choices
), intent_greedy_4 AS (
  SELECT
    user_id AS user_id,
    intent AS intent,
    item_id AS item_id,
    CASE WHEN placed IS NULL AND choice = 1 THEN 4 ELSE placed END AS placed,
    CASE WHEN placed IS NULL AND choice = 1 THEN item_gain ELSE gain END AS gain
  FROM (
    SELECT
      user_id AS user_id,
      intent AS intent,
      item_id AS item_id,
      placed AS placed,
      gain AS gain,
      item_gain AS item_gain,
      RANK() OVER (
        PARTITION BY user_id
        ORDER BY CASE WHEN placed IS NULL THEN 0 ELSE 1 END, item_gain DESC NULLS LAST, item_id DESC NULLS LAST
      ) AS choice
    FROM (
      SELECT
        user_id AS user_id,
        intent AS intent,
        item_id AS item_id,
        placed AS placed,
        gain AS gain,
        SUM(POWER(CAST(0.5 AS DOUBLE PRECISION), covered)) OVER (PARTITION BY user_id, item_id) AS item_gain
      FROM (
        SELECT
          user_id AS user_id,
          intent AS intent,
          item_id AS item_id,
          placed AS placed,
          gain AS gain,
          SUM(CASE WHEN placed IS NULL THEN 0 ELSE 1 END) OVER (PARTITION BY user_id, intent) AS covered
        FROM intent_greedy_3
      ) covered_intents
    ) item_gains
  ) choices
), intent_greedy_5 AS (
  SELECT
    user_id AS user_id,
    intent AS intent,
    item_id AS item_id,
    CASE WHEN placed IS NULL AND choice = 1 THEN 5 ELSE placed END AS placed,
    CASE WHEN placed IS NULL AND choice = 1 THEN item_gain ELSE gain END AS gain
  FROM (
    SELECT
      user_id AS user_id,
      intent AS intent,
      item_id AS item_id,
      placed AS placed,
      gain AS gain,
      item_gain AS item_gain,
      RANK() OVER (
        PARTITION BY user_id
        ORDER BY CASE WHEN placed IS NULL THEN 0 ELSE 1 END, item_gain DESC NULLS LAST, item_id DESC NULLS LAST
      ) AS choice
    FROM (
      SELECT
        user_id AS user_id,
        intent AS intent,
        item_id AS item_id,
        placed AS placed,
        gain AS gain,
        SUM(POWER(CAST(0.5 AS DOUBLE PRECISION), covered)) OVER (PARTITION BY user_id, item_id) AS item_gain
      FROM (
        SELECT
          user_id AS user_id,
          intent AS intent,
          item_id AS item_id,
          placed AS placed,
          gain AS gain,
          SUM(CASE WHEN placed IS NULL THEN 0 ELSE 1 END) OVER (PARTITION BY user_id, intent) AS covered
        FROM intent_greedy_4
      ) covered_intents
    ) item_gains
  ) choices
), intent_greedy_6 AS (
  SELECT
    user_id AS user_id,
    intent AS intent,
    item_id AS item_id,
    CASE WHEN placed IS NULL AND choice = 1 THEN 6 ELSE placed END AS placed,
    CASE WHEN placed IS NULL AND choice = 1 THEN item_gain ELSE gain END AS gain
  FROM (
    SELECT
      user_id AS user_id,
      intent AS intent,
      item_id AS item_id,
      placed AS placed,
      gain AS gain,
      item_gain AS item_gain,
      RANK() OVER (
        PARTITION BY user_id
        ORDER BY CASE WHEN placed IS NULL THEN 0 ELSE 1 END, item_gain DESC NULLS LAST, item_id DESC NULLS LAST
      ) AS choice
    FROM (
      SELECT
        user_id AS user_id,
        intent AS intent,
        item_id AS item_id,
        placed AS placed,
        gain AS gain,
        SUM(POWER(CAST(0.5 AS DOUBLE PRECISION), covered)) OVER (PARTITION BY user_id, item_id) AS item_gain
      FROM (
        SELECT
          user_id AS user_id,
          intent AS intent,
          item_id AS item_id,
          placed AS placed,
          gain AS gain,
          SUM(CASE WHEN placed IS NULL THEN 0 ELSE 1 END) OVER (PARTITION BY user_id, intent) AS covered
        FROM intent_greedy_5
      ) covered_intents
    ) item_gains
  ) choices
), intent_greedy_7 AS (
  SELECT
    user_id AS user_id,
    intent AS intent,
    item_id AS item_id,
    CASE WHEN placed IS NULL AND choice = 1 THEN 7 ELSE placed END AS placed,
    CASE WHEN placed IS NULL AND choice = 1 THEN item_gain ELSE gain END AS gain
  FROM (
    SELECT
      user_id AS user_id,
      intent AS intent,
      item_id AS item_id,
      placed AS placed,
      gain AS gain,
      item_gain AS item_gain,
      RANK() OVER (
        PARTITION BY user_id
        ORDER BY CASE WHEN placed IS NULL THEN 0 ELSE 1 END, item_gain DESC NULLS LAST, item_id DESC NULLS LAST
      ) AS choice
    FROM (
      SELECT
        user_id AS user_id,
        intent AS intent,
        item_id AS item_id,
        placed AS placed,
        gain AS gain,
        SUM(POWER(CAST(0.5 AS DOUBLE PRECISION), covered)) OVER (PARTITION BY user_id, item_id) AS item_gain
      FROM (
        SELECT
          user_id AS user_id,
          intent AS intent,
          item_id AS item_id,
          placed AS placed,
          gain AS gain,
          SUM(CASE WHEN placed IS NULL THEN 0 ELSE 1 END) OVER (PARTITION BY user_id, intent) AS covered
        FROM intent_greedy_6
      ) covered_intents
    ) item_gains
  ) choices
), intent_greedy_8 AS (
  SELECT
    user_id AS user_id,
    intent AS intent,
    item_id AS item_id,
    CASE WHEN placed IS NULL AND choice = 1 THEN 8 ELSE placed END AS placed,
    CASE WHEN placed IS NULL AND choice = 1 THEN item_gain ELSE gain END AS gain
  FROM (
    SELECT
      user_id AS user_id,
      intent AS intent,
      item_id AS item_id,
      placed AS placed,
      gain AS gain,
      item_gain AS item_gain,
      RANK() OVER (
        PARTITION BY user_id
        ORDER BY CASE WHEN placed IS NULL THEN 0 ELSE 1 END, item_gain DESC NULLS LAST, item_id DESC NULLS LAST
      ) AS choice
    FROM (
      SELECT
        user_id AS user_id,
        intent AS intent,
        item_id AS item_id,
        placed AS placed,
        gain AS gain,
        SUM(POWER(CAST(0.5 AS DOUBLE PRECISION), covered)) OVER (PARTITION BY user_id, item_id) AS item_gain
      FROM (
        SELECT
          user_id AS user_id,
          intent AS intent,
          item_id AS item_id,
          placed AS placed,
          gain AS gain,
          SUM(CASE WHEN placed IS NULL THEN 0 ELSE 1 END) OVER (PARTITION BY user_id, intent) AS covered
        FROM intent_greedy_7
      ) covered_intents
    ) item_gains
  ) choices
), intent_greedy_9 AS (
  SELECT
    user_id AS user_id,
    intent AS intent,
    item_id AS item_id,
    CASE WHEN placed IS NULL AND choice = 1 THEN 9 ELSE placed END AS placed,
    CASE WHEN placed IS NULL AND choice = 1 THEN item_gain ELSE gain END AS gain
  FROM (
    SELECT
      user_id AS user_id,
      intent AS intent,
      item_id AS item_id,
      placed AS placed,
      gain AS gain,
      item_gain AS item_gain,
      RANK() OVER (
        PARTITION BY user_id
        ORDER BY CASE WHEN placed IS NULL THEN 0 ELSE 1 END, item_gain DESC NULLS LAST, item_id DESC NULLS LAST
      ) AS choice
    FROM (
      SELECT
        user_id AS user_id,
        intent AS intent,
        item_id AS item_id,
        placed AS placed,
        gain AS gain,
        SUM(POWER(CAST(0.5 AS DOUBLE PRECISION), covered)) OVER (PARTITION BY user_id, item_id) AS item_gain
      FROM (
        SELECT
          user_id AS user_id,
          intent AS intent,
          item_id AS item_id,
          placed AS placed,
          gain AS gain,
          SUM(CASE WHEN placed IS NULL THEN 0 ELSE 1 END) OVER (PARTITION BY user_id, intent) AS covered
        FROM intent_greedy_8
      ) covered_intents
    ) item_gains
  ) choices
), intent_greedy_10 AS (
  SELECT
    user_id AS user_id,
    intent AS intent,
    item_id AS item_id,
    CASE WHEN placed IS NULL AND choice = 1 THEN 10 ELSE placed END AS placed,
    CASE WHEN placed IS NULL AND choice = 1 THEN item_gain ELSE gain END AS gain
  FROM (
    SELECT
      user_id AS user_id,
      intent AS intent,
      item_id AS item_id,
      placed AS placed,
      gain AS gain,
      item_gain AS item_gain,
      RANK() OVER (
        PARTITION BY user_id
        ORDER BY CASE WHEN placed IS NULL THEN 0 ELSE 1 END, item_gain DESC NULLS LAST, item_id DESC NULLS LAST
      ) AS choice
    FROM (
      SELECT
        user_id AS user_id,
        intent AS intent,
        item_id AS item_id,
        placed AS placed,
        gain AS gain,
        SUM(POWER(CAST(0.5 AS DOUBLE PRECISION), covered)) OVER (PARTITION BY user_id, item_id) AS item_gain
      FROM (
        SELECT
          user_id AS user_id,
          intent AS intent,
          item_id AS item_id,
          placed AS placed,
          gain AS gain,
          SUM(CASE WHEN placed IS NULL THEN 0 ELSE 1 END) OVER (PARTITION BY user_id, intent) AS covered
        FROM intent_greedy_9
      ) covered_intents
    ) item_gains
  ) choices
), intent_ideal AS (
  SELECT
    user_id AS user_id,
    placed AS pos,
    MAX(intent_greedy_10.gain) AS gain
  FROM intent_greedy_10
  WHERE
    NOT placed IS NULL
  GROUP BY
    user_id,
    placed
), m1_users AS (
  SELECT
    judged.user_id AS user_id,
    COALESCE(
      CAST(SUM(COALESCE(hits.discounted, 0)) AS DOUBLE PRECISION) / NULLIF(MAX(ideal.discounted), 0),
      0
    ) AS m1
  FROM (
    SELECT
      intents.user_id AS user_id,
      intents.intent AS intent,
      SUM(intents.relevant) AS relevant_items
    FROM intents
    INNER JOIN (
      SELECT
        user_id AS user_id
      FROM ranked
      GROUP BY
        user_id
    ) listed
      ON intents.user_id = listed.user_id
    GROUP BY
      intents.user_id,
      intents.intent
  ) judged
  LEFT JOIN (
    SELECT
      user_id AS user_id,
      intent AS intent,
      SUM(
        CAST(POWER(CAST(0.5 AS DOUBLE PRECISION), seen - 1) AS DOUBLE PRECISION) / NULLIF(LOG(2, pos + 1), 0)
      ) AS discounted
    FROM (
      SELECT
        ranked.user_id AS user_id,
        intents.intent AS intent,
        ranked.pos AS pos,
        ROW_NUMBER() OVER (PARTITION BY ranked.user_id, intents.intent ORDER BY ranked.pos, ranked.item_id) AS seen
      FROM ranked
      INNER JOIN intents
        ON ranked.user_id = intents.user_id AND ranked.item_id = intents.item_id
      WHERE
        intents.relevant = 1 AND ranked.pos <= 10
    ) placed
    GROUP BY
      user_id,
      intent
  ) hits
    ON judged.user_id = hits.user_id AND judged.intent = hits.intent
  LEFT JOIN (
    SELECT
      user_id AS user_id,
      SUM(CAST(gain AS DOUBLE PRECISION) / NULLIF(LOG(2, pos + 1), 0)) AS discounted
    FROM intent_ideal
    WHERE
      pos <= 10
    GROUP BY
      user_id
  ) ideal
    ON judged.user_id = ideal.user_id
  GROUP BY
    judged.user_id
), m1_groups AS (
  SELECT
    AVG(CAST(m1_users.m1 AS DOUBLE PRECISION)) AS m1
  FROM m1_users
)
SELECT
  COUNT(*) AS users,
  (
    SELECT
      MAX(m1_groups.m1) AS m1
    FROM m1_groups
  ) AS "alpha_ndcg@10"
FROM per_user;
