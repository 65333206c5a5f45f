"""ClickHouse's settings that make it compute DuckDB's numbers (join_use_nulls,
prefer_column_name_to_alias)."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.render.nodes import Nodes
from sqlmetrics.render.rules.common import is_dialect


def clickhouse_settings(tree: exp.Expr, target: Dialect, nodes: Nodes | None = None) -> exp.Expr:
    """ClickHouse with standard SQL's meaning: an outer join's unmatched columns are NULL (not
    0) and a column name inside an expression means the column, not a projection's alias."""
    if not is_dialect(target, "clickhouse") or not isinstance(tree, exp.Select):
        return tree
    settings = [
        exp.EQ(this=exp.column(name), expression=exp.Literal.number(1))
        for name in ("join_use_nulls", "prefer_column_name_to_alias")
    ]
    tree.set("settings", [*(tree.args.get("settings") or []), *settings])
    if nodes is not None:
        for setting in settings:
            nodes.added(setting)
    return tree
