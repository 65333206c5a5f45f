"""Tables of literal rows (VALUES) where a dialect cannot read them in FROM."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.render.nodes import Nodes
from sqlmetrics.render.rules.common import is_dialect


def values_tables(tree: exp.Expr, target: Dialect, nodes: Nodes | None = None) -> exp.Expr:
    """A VALUES table naming its columns (curve_cutoffs' cutoffs) as a UNION ALL of one-row
    selects where VALUES cannot name them: SQLite drops the names, Oracle has no VALUES, and
    sqlglot writes MySQL's, Redshift's and ClickHouse's as such a union naming the first row's
    columns only (the others' meaning then rests on the union's naming rule)."""
    if not is_dialect(target, "sqlite", "oracle", "mysql", "redshift", "clickhouse"):
        return tree
    nodes = nodes or Nodes(tree)
    for values in nodes.of(exp.Values):
        alias = values.args.get("alias")
        if alias is None or not alias.columns:
            continue
        names = [column.name for column in alias.columns]
        rows: list[exp.Select] = []
        for row in values.expressions:
            cells = row.expressions if isinstance(row, exp.Tuple) else [row]
            rows.append(
                exp.select(
                    *(
                        exp.alias_(cell.copy(), name)
                        for cell, name in zip(cells, names, strict=True)
                    )
                )
            )
        union: exp.Query = rows[0]
        for row in rows[1:]:
            union = exp.union(union, row, distinct=False)
        values.replace(exp.alias_(exp.paren(union), alias.name))
        nodes.changed()
    return tree
