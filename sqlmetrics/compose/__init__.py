"""From requests and inputs to one query: the inputs and options, the stages of ``sql/stages/``,
the per-user selects, the diagnostics, the plan (plan.py decides which SQL runs) and the
assembler (assemble.py), with the plans of their own: arms, DuckDB's own and the curves."""
