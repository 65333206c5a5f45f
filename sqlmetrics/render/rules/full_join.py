"""No FULL OUTER JOIN in MySQL (nor SQLite before 3.39): a LEFT JOIN, UNION ALL the rows of the
right side that match nothing."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.render.nodes import Nodes
from sqlmetrics.render.rules.common import is_dialect

NO_FULL_JOIN = ("mysql", "sqlite")  # and the dialects derived from MySQL


def full_outer_join(tree: exp.Expr, target: Dialect, nodes: Nodes | None = None) -> exp.Expr:
    """``a FULL JOIN b ON c`` as ``a LEFT JOIN b ON c UNION ALL b LEFT JOIN a ON c WHERE
    a.key IS NULL`` where the dialect has no FULL OUTER JOIN."""
    if not is_dialect(target, *NO_FULL_JOIN):
        return tree
    if nodes is not None and not any(_full(select) for select in nodes.of(exp.Select)):
        return tree

    def rewrite(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Select) and _full(node):
            return _full_join_as_union(node, target)
        return node

    tree = tree.transform(rewrite, copy=False)
    if nodes is not None:
        nodes.changed(tree)
    return tree


def _full(select: exp.Select) -> bool:
    return any(join.side.upper() == "FULL" for join in select.args.get("joins") or [])


def _full_join_as_union(select: exp.Select, target: Dialect) -> exp.Expr:
    def refuse(why: str) -> SqlmetricsError:
        name = type(target).__name__
        return SqlmetricsError(f"cannot write a FULL OUTER JOIN in {name}: {why}")

    joins = select.args["joins"]
    if len(joins) != 1:
        raise refuse("the select has other joins")
    for clause in ("group", "having", "qualify", "distinct", "order", "limit", "windows"):
        if select.args.get(clause):
            raise refuse(f"the select has {clause.upper()}")
    if any(isinstance(p, exp.Star) or p.find(exp.AggFunc, exp.Window) for p in select.expressions):
        raise refuse("a projection is *, an aggregate or a window")
    join = joins[0]
    left = select.args["from_"].this
    right = join.this
    condition = join.args.get("on")
    if not isinstance(left, exp.Table) or not isinstance(right, exp.Table) or condition is None:
        raise refuse("it joins other than two tables ON a condition")
    # A left row that matched has a non-NULL value in each column of an equality of the ON
    # condition, so the right rows without a match are those where that column is NULL.
    key = next(
        (
            column
            for equality in condition.find_all(exp.EQ)
            for column in (equality.this, equality.expression)
            if isinstance(column, exp.Column) and column.table == left.alias_or_name
        ),
        None,
    )
    if key is None:
        raise refuse("its ON condition has no equality on a column of the left table")

    matched = select.copy()
    matched.args["joins"][0].set("side", "LEFT")
    unmatched = select.copy()
    unmatched.set("from_", exp.From(this=right.copy()))
    unmatched.set(
        "joins", [exp.Join(this=left.copy(), side="LEFT", on=condition.copy(), kind=None)]
    )
    unmatched.where(exp.Is(this=key.copy(), expression=exp.Null()), copy=False)
    return exp.union(matched, unmatched, distinct=False)
