-- duplicates="first": each (user, item) once, at its best-placed row. With this option the raw
-- input is bound as all_recommendations and this stage becomes input_recommendations.
SELECT *
FROM all_recommendations
QUALIFY ROW_NUMBER() OVER (PARTITION BY user_id, item_id ORDER BY score DESC NULLS LAST) = 1
