"""QUALIFY becomes a filtered subquery except in the dialects sure to have it, with ``SELECT *``
qualified by its table (Oracle refuses ``*, expr``)."""

from __future__ import annotations

from sqlglot import exp, transforms
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.render.rules.common import is_dialect

KEEPS_QUALIFY = ("duckdb", "snowflake")


def qualify_clause(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """QUALIFY as a filtered subquery (sqlglot's rewrite) except where it is surely native."""
    if is_dialect(target, *KEEPS_QUALIFY):
        return tree

    def rewrite(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.Select) or not node.args.get("qualify"):
            return node
        _qualified_star(node)
        return transforms.eliminate_qualify(node)

    return tree.transform(rewrite, copy=False)


def _qualified_star(select: exp.Select) -> None:
    """``SELECT *`` over one table becomes ``SELECT table.*``: other projections may join it."""
    source = select.args.get("from_")
    if select.args.get("joins") or source is None or not isinstance(source.this, exp.Table):
        return
    name = source.this.alias_or_name
    for projection in select.expressions:
        if isinstance(projection, exp.Star):
            projection.replace(exp.Column(this=exp.Star(), table=exp.to_identifier(name)))
