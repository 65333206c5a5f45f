-- The catalogue for coverage and Gini: every item of the interactions (of the items table when
-- one is given: the composer reads input_items instead) and every recommended item, once. It is
-- the same for every group: the items that exist do not depend on a model or a day.
SELECT DISTINCT item_id
FROM (
  SELECT item_id FROM input_interactions
  UNION ALL
  SELECT item_id FROM input_recommendations
) AS items
WHERE item_id IS NOT NULL
