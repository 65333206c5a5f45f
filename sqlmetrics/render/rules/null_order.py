"""NULLs sort last in DuckDB: where an ORDER BY cannot say NULLS LAST, an explicit key first."""

from __future__ import annotations

import functools

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.render.nodes import Nodes
from sqlmetrics.render.rules.common import never_null


def null_order(tree: exp.Expr, target: Dialect, nodes: Nodes | None = None) -> exp.Expr:
    """NULLs placed as in DuckDB in windows and results, where some dialects cannot say NULLS LAST.

    sqlglot drops ``NULLS LAST`` from a framed window in MySQL, SQL Server and BigQuery (with a
    warning); the running hit count would then start with the unranked relevant items. An
    explicit ``CASE WHEN x IS NULL THEN 1 ELSE 0 END`` key says it in any dialect. In a result's
    ORDER BY (a NULL group last) sqlglot writes that key itself, but as one term that reads
    back as two: written here, the SQL reads back to itself.
    """
    if _orders_nulls(type(target)):
        return tree
    added = False
    for order in (nodes or Nodes(tree)).of(exp.Order):
        keys: list[exp.Expr] = []
        for ordered in order.expressions:
            if not isinstance(ordered, exp.Ordered):
                keys.append(ordered)
                continue
            descending = bool(ordered.args.get("desc"))
            wanted = bool(ordered.args.get("nulls_first"))
            native = _nulls_first_by_default(target, descending)
            if wanted != native and not never_null(ordered.this):
                missing = exp.Is(this=ordered.this.copy(), expression=exp.Null())
                key = exp.case().when(missing, exp.Literal.number(1)).else_(exp.Literal.number(0))
                first = _nulls_first_by_default(target, wanted)
                keys.append(exp.Ordered(this=key, desc=wanted or None, nulls_first=first))
                added = True
            ordered.set("nulls_first", native)
            keys.append(ordered)
        order.set("expressions", keys)
    if added and nodes is not None:
        nodes.changed()
    return tree


@functools.cache
def _orders_nulls(dialect: type[Dialect]) -> bool:
    """Whether the dialect's generator writes NULLS FIRST/LAST, read from an instance: in
    sqlglot's compiled build (sqlglot[c]) a generator's setting is not a class attribute."""
    return dialect().generator().NULL_ORDERING_SUPPORTED is True


def _nulls_first_by_default(target: Dialect, descending: bool) -> bool:
    ordering = target.NULL_ORDERING
    if ordering == "nulls_are_small":
        return not descending
    if ordering == "nulls_are_large":
        return descending
    return False
