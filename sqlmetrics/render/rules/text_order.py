"""A text sort key compares bytes in DuckDB, by the default collation elsewhere: made to compare
bytes (or code points) in every dialect."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.render.nodes import Nodes
from sqlmetrics.render.rules.common import is_dialect

# The dialects whose default collation is not byte order (Redshift reads as PostgreSQL but
# compares bytes).
_COLLATED = ("postgres", "mysql", "tsql", "oracle")


def byte_order_text(tree: exp.Expr, target: Dialect, nodes: Nodes | None = None) -> exp.Expr:
    """Text sort keys in byte order (trec_eval's strcmp), where the default collation is not."""
    if is_dialect(target, "redshift") or not is_dialect(target, *_COLLATED):
        return tree  # bytes or code points already: no need to look for the keys
    nodes = nodes or Nodes(tree)
    for ordered in nodes.of(exp.Ordered):
        key = ordered.this
        if not (isinstance(key, exp.Cast) and key.to.is_type("varchar", "text")):
            continue
        if is_dialect(target, "redshift"):
            continue  # case-sensitive (byte) comparison by default; it has no COLLATE "C"
        nodes.changed()
        if is_dialect(target, "postgres"):
            key.replace(exp.Collate(this=key.copy(), expression=exp.to_identifier("C", True)))
        elif is_dialect(target, "mysql"):
            key.set("to", exp.DataType.build("binary", dialect="mysql"))
        elif is_dialect(target, "tsql"):
            key.set("to", exp.DataType.build("nvarchar(4000)", dialect="tsql"))
            key.replace(exp.Collate(this=key.copy(), expression=exp.var("Latin1_General_BIN2")))
        elif is_dialect(target, "oracle"):
            key.set("to", exp.DataType.build("varchar2(4000)", dialect="oracle"))
    return tree
