"""DuckDB's limits that sqlmetrics keeps clear of: a query past them is refused before it runs.

DuckDB (2.0, and its main branch today) divides by zero, killing the whole process, when the
aggregate states of one GROUP BY are wider than its 256 KiB block: an exact sum's state takes
24 bytes, so about 10,900 sums in one GROUP BY (docs/benchmark.md, the report's k-max). A
notebook's kernel dies without a word, so such a query is refused with the reason instead.
"""

from __future__ import annotations

from sqlglot import exp

from sqlmetrics.errors import SqlmetricsError

# Aggregates in one GROUP BY: below the crash while states average up to ~40 bytes.
MAX_AGGREGATES = 6_000


def widest_group_by(query: exp.Expr) -> int:
    """The most aggregate calls in the projections of one grouped SELECT of ``query`` (an
    upper bound on DuckDB's aggregate states, which merges repeated calls)."""
    widest = 0
    for select in query.find_all(exp.Select):
        if select.args.get("group") is None:
            continue
        calls = sum(
            1 for projection in select.expressions for _ in projection.find_all(exp.AggFunc)
        )
        widest = max(widest, calls)
    return widest


def refuse_too_wide(query: exp.Expr) -> None:
    """Refuses a query whose widest GROUP BY would crash DuckDB, with what to do."""
    # No GROUP BY holds more aggregate calls than the whole query: one walk counts those, and
    # each grouped select is looked through only when that count is past the limit.
    if sum(1 for _ in query.find_all(exp.AggFunc)) <= MAX_AGGREGATES:
        return
    width = widest_group_by(query)
    if width > MAX_AGGREGATES:
        raise SqlmetricsError(
            f"this call needs {width:,} aggregates in one GROUP BY of DuckDB's query, and "
            f"DuckDB crashes the process past about 10,000 (a fault in its hash aggregate), so "
            f"sqlmetrics runs at most {MAX_AGGREGATES:,}: ask fewer metrics or cutoffs per call "
            "(8 or more cutoffs of one metric take the curve plan, whose width does not grow "
            "with them)"
        )
