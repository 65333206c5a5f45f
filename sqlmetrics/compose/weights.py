"""The recommendations' optional weight column (``columns={"weight": ...}``), as scored.sql
reads it: each scored row counts its weight in ``positives`` and ``negatives`` (and so in every
metric over them, as scikit-learn's ``sample_weight`` and TorchRec's weights do). Without a
weight column each row counts 1, the SQL as it was before weights. With one, the scored rows'
bad weights (NULL, negative, NaN, infinite) are counted in the same scan for the checks
(``bad_weights``, diagnostics.sql's single_class)."""

from __future__ import annotations

from typing import cast

from sqlglot import exp


def weigh_scored(scored: exp.Expr, weighted: bool, count_bad: bool) -> exp.Expr:
    """scored.sql (bound) with its ``input_recommendations.weight`` read, or 1 without a
    weight column; with ``count_bad`` (and a weight) a ``bad_weights`` column per (user,
    score): the rows whose weight the checks refuse."""
    if not weighted:
        for column in list(scored.find_all(exp.Column)):
            if column.name == "weight" and column.table == "input_recommendations":
                column.replace(exp.Literal.number(1))
        return scored
    if count_bad:
        select = cast(exp.Select, scored)
        tie_groups = select.args["from_"].this.this
        weight = exp.column("weight", "input_recommendations")
        tie_groups.select(
            exp.alias_(exp.func("SUM", bad_weight(weight)), "bad_weights"), copy=False
        )
        select.select(exp.column("bad_weights"), copy=False)
    return scored


def bad_weight(weight: exp.Expr) -> exp.Expr:
    """1 for a weight the checks refuse (NULL, negative, NaN or infinite), else 0: x * 0 = 0
    holds for every finite number, not for NaN or infinity (NULL in SQLite's)."""
    product = exp.Mul(this=weight.copy(), expression=exp.Literal.number(0))
    return (
        exp.case()
        .when(
            exp.or_(
                weight.copy().is_(exp.Null()),
                exp.LT(this=weight.copy(), expression=exp.Literal.number(0)),
                exp.func("ISNAN", weight.copy()),
            ),
            exp.Literal.number(1),
        )
        .when(product.eq(0), exp.Literal.number(0))
        .else_(exp.Literal.number(1))
    )
