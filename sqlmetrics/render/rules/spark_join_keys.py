"""On Spark, a full outer join of two relations partitioned by user joins on user_id alone, so
that it takes them as they are instead of hashing both sides again by every key."""

from __future__ import annotations

from collections.abc import Iterator

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.render.nodes import Nodes
from sqlmetrics.render.rules.common import is_dialect


def user_join_keys(tree: exp.Expr, target: Dialect, nodes: Nodes | None = None) -> exp.Expr:
    """In a FULL OUTER JOIN whose ON condition holds ``a.user_id = b.user_id``, each other
    equality of a column of one side with one of the other (``a.item_id = b.item_id``) becomes
    ``(a.item_id = b.item_id) IS TRUE``: the same rows match (an ON condition keeps only TRUE),
    but Spark, which takes only plain equalities as join keys, joins on user_id alone. Both
    sides come partitioned by user_id (ranked's window, truth's windows over the distributed
    interactions), and Spark requires a join's sides hashed by all its keys
    (``spark.sql.requireAllClusterKeysForCoPartition``, which only evaluate sets): without
    this, each side is hashed again by (user_id, item_id) and the join's output by user_id
    once more for the windows after it. The item comparison is made per user instead."""
    if not is_dialect(target, "spark", "databricks"):
        return tree
    nodes = nodes or Nodes(tree)
    for join in nodes.of(exp.Join):
        on = join.args.get("on")
        if (join.side or "").upper() != "FULL" or on is None:
            continue
        equalities = [c for c in _conjuncts(on) if isinstance(c, exp.EQ) and _across(c)]
        if not any(_both(equality, "user_id") for equality in equalities):
            continue
        for equality in equalities:
            if not _both(equality, "user_id"):
                residual = exp.Is(this=exp.paren(equality.copy()), expression=exp.true())
                equality.replace(residual)
                nodes.changed()
    return tree


def _conjuncts(condition: exp.Expr) -> Iterator[exp.Expr]:
    inner = condition.unnest() if isinstance(condition, exp.Paren) else condition
    if isinstance(inner, exp.And):
        yield from _conjuncts(inner.this)
        yield from _conjuncts(inner.expression)
    else:
        yield inner


def _across(equality: exp.EQ) -> bool:
    """A column of one table compared with a column of another."""
    left, right = equality.this, equality.expression
    return (
        isinstance(left, exp.Column)
        and isinstance(right, exp.Column)
        and bool(left.table)
        and bool(right.table)
        and left.table != right.table
    )


def _both(equality: exp.EQ, name: str) -> bool:
    return bool(equality.this.name == name and equality.expression.name == name)
