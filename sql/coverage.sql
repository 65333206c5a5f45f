-- name: coverage
-- title: Catalogue coverage
-- definition: distinct items among the first k positions of all lists / items in the catalogue. The catalogue is the items table when given, else every item of the interactions; recommended items always belong to it. One value per group.
-- formula: \mathrm{coverage@}k = \frac{\left|\bigcup_u L_u\right|}{|\mathrm{catalogue}|}, \qquad L_u \text{ the first } k \text{ items of } u\text{'s list}
-- cutoff: required
-- aggregate: group
-- better: higher
-- reads: lists
-- ties_average: no
-- aliases: catalog_coverage, catalogue_coverage, item_coverage
-- references: RecTools `CatalogCoverage(k, normalize=True)`; MS Recommenders `catalog_coverage` (catalogue = its train items); Ge, Delgado-Battenfeld & Jannach, RecSys 2010
SELECT
  COUNT(DISTINCT ranked.item_id) / MAX(catalogue.items) AS coverage
FROM ranked
CROSS JOIN (SELECT COUNT(*) AS items FROM catalogue) AS catalogue
WHERE ranked.pos <= $k
