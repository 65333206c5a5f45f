"""Intervals and paired comparisons: what a call asks (resampling.py), the statistics query over
the per-user values (query.py, with its replicates in replicates.py, its bootstrap draws in
draws.py and its sqlglot helpers in nodes.py), finished in Python (inference.py) with Student's
t (tdist.py); the t-statistics' edge cases (no, zero or overflowing variance) decided once, for
every test and gate (moments.py)."""
