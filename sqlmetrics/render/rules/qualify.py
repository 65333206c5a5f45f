"""QUALIFY becomes a filtered subquery except in the dialects sure to have it, with ``SELECT *``
qualified by its table (Oracle refuses ``*, expr``)."""

from __future__ import annotations

from sqlglot import exp, transforms
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.render.nodes import Nodes
from sqlmetrics.render.rules.common import is_dialect

KEEPS_QUALIFY = ("duckdb", "snowflake")


def qualify_clause(tree: exp.Expr, target: Dialect, nodes: Nodes | None = None) -> exp.Expr:
    """QUALIFY as a filtered subquery (sqlglot's rewrite) except where it is surely native."""
    if is_dialect(target, *KEEPS_QUALIFY):
        return tree

    # As a transform of the whole tree would, outer selects first, and not the selects inside
    # one rewritten (its walk does not enter a node it replaced); only selects are looked at.
    rewritten: list[exp.Select] = []
    for select in (nodes or Nodes(tree)).of(exp.Select):
        if not select.args.get("qualify") or any(_inside(select, outer) for outer in rewritten):
            continue
        rewritten.append(select)
        parent, key, index = select.parent, select.arg_key, select.index
        _qualified_star(select)
        replacement = transforms.eliminate_qualify(select)
        if select is tree:
            tree = replacement
        elif parent is not None and key and replacement is not select:
            parent.set(key, replacement, index)
    if rewritten and nodes is not None:
        nodes.changed(tree)
    return tree


def _inside(node: exp.Expr, ancestor: exp.Expr) -> bool:
    parent = node.parent
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.parent
    return False


def _qualified_star(select: exp.Select) -> None:
    """``SELECT *`` over one table becomes ``SELECT table.*``: other projections may join it."""
    source = select.args.get("from_")
    if select.args.get("joins") or source is None or not isinstance(source.this, exp.Table):
        return
    name = source.this.alias_or_name
    for projection in select.expressions:
        if isinstance(projection, exp.Star):
            projection.replace(exp.Column(this=exp.Star(), table=exp.to_identifier(name)))
