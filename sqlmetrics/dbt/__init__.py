"""The dbt package and dbt models generated from ``sql/``, so scheduled tables get the same
numbers: templates.py renders the macros, package.py writes the package (``sqlmetrics dbt
export``), models.py the models (``sqlmetrics dbt models``); macros.sql is the hand-written
template of the adapter-independent macros."""
