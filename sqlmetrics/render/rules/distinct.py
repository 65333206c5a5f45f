"""COUNT(DISTINCT ...) per user where a dialect cannot take it in a window."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.render.nodes import Nodes
from sqlmetrics.render.rules.common import is_dialect


def distinct_per_user(tree: exp.Expr, target: Dialect, nodes: Nodes | None = None) -> exp.Expr:
    """On Spark, COUNT(DISTINCT x) per user (the repeats of list_counts.sql and of the
    interactions) as SIZE(COLLECT_SET(x)): Spark plans a distinct count as an Expand and a
    second aggregation keyed on (user, x), which shuffles every row; a set per user is built
    before the shuffle by user, the one the other counts of the same GROUP BY take anyway. Only
    where the select groups by user_id, so a set never spans a whole table."""
    if not is_dialect(target, "spark", "databricks"):
        return tree
    nodes = nodes or Nodes(tree)
    for select in nodes.of(exp.Select):
        group = select.args.get("group")
        if group is None or not any(
            isinstance(key, exp.Column) and key.name == "user_id" for key in group.expressions
        ):
            continue
        for count in list(select.find_all(exp.Count)):
            if count.find_ancestor(exp.Select) is not select or not isinstance(
                count.this, exp.Distinct
            ):
                continue
            (value,) = count.this.expressions
            count.replace(exp.ArraySize(this=exp.ArrayUniqueAgg(this=value.copy())))
            nodes.changed()
    return tree
