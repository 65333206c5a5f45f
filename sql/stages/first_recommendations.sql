-- duplicates="first": each (user, item) once, at its best-placed row.
SELECT *
FROM input_recommendations
QUALIFY ROW_NUMBER() OVER (PARTITION BY user_id, item_id ORDER BY score DESC NULLS LAST) = 1
