"""On Spark, the interactions shuffled once, by user: truth's GROUP BY (user, item) and its
windows by user, and the diagnostics' GROUP BY user, then all read that one partitioning."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.render.nodes import Nodes
from sqlmetrics.render.rules.common import is_dialect

# The composer's CTE binding the interactions (compose/inputs.py), which its readers group and
# partition by user_id.
INTERACTIONS = "input_interactions"


def distribute_interactions(
    tree: exp.Expr, target: Dialect, nodes: Nodes | None = None
) -> exp.Expr:
    """``input_interactions`` ends in ``DISTRIBUTE BY`` its user column. Spark otherwise hashes
    the rows by (user, item) for truth's GROUP BY, again by user for its windows, and once more
    by user for the diagnostics' counts; partitioned by user first, each of these finds the rows
    already where it needs them (a partitioning by user satisfies a grouping by (user, item)),
    and Spark reuses the one shuffle for every reader of the CTE. Only a plain projection of
    the input is distributed: it changes where rows go, never which rows or values."""
    if not is_dialect(target, "spark", "databricks"):
        return tree
    with_ = tree.args.get("with_")
    if not isinstance(with_, exp.With):
        return tree
    for cte in with_.expressions:
        select = cte.this
        if cte.alias_or_name != INTERACTIONS or not isinstance(select, exp.Select):
            continue
        plain = not any(select.args.get(clause) for clause in ("group", "distribute", "joins"))
        if not plain or select.find(exp.AggFunc, exp.Window):
            continue
        user = next((p for p in select.expressions if p.alias_or_name == "user_id"), None)
        if user is not None:
            key = user.this if isinstance(user, exp.Alias) else user
            distribute = exp.Distribute(expressions=[key.copy()])
            select.set("distribute", distribute)
            if nodes is not None:
                nodes.added(distribute)
    return tree
