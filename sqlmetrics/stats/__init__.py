"""Intervals and paired comparisons: the statistics query over the per-user values
(query.py), finished in Python (inference.py) with Student's t (tdist.py); the t-statistics'
edge cases (no, zero or overflowing variance) decided once, for every test and gate
(moments.py)."""
