"""Functions and operators whose meaning differs: float division with NULLIF denominators, LOG
with a base, POWER and AVG of integers, LEAST/GREATEST with NULLs, ISNAN."""

from __future__ import annotations

import math
from collections.abc import Callable

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.render.nodes import Nodes
from sqlmetrics.render.rules.common import DOUBLE, is_dialect, never_null, to_double


def functions(tree: exp.Expr, target: Dialect, nodes: Nodes | None = None) -> exp.Expr:
    """The rewrites of single functions and operators (LOG, ISNAN, ``/``, POWER, AVG, LEAST and
    GREATEST), in one walk of the tree: each reads and rewrites only its node and the node's
    arguments, and every node comes after its descendants (the walk's order reversed), so each
    sees its arguments as rewritten, as it would if each rewrite walked the tree in turn."""
    is_nan = _is_nan_rewrite(target)
    two_argument_case = is_dialect(target, "tsql")
    natural_ratio = is_dialect(target, "postgres")  # Redshift reads as PostgreSQL
    found = (nodes or Nodes(tree)).of(*_REWRITTEN)
    for node in reversed(found):
        if isinstance(node, exp.Log):
            _log_base(node)
            if natural_ratio:
                _natural_ratio(node)
        elif isinstance(node, exp.IsNan):
            is_nan(node)
        elif isinstance(node, exp.Div):
            _division(node)
        elif isinstance(node, exp.Pow):
            _float_power(node)
        elif isinstance(node, exp.Avg):
            _float_average(node)
        elif isinstance(node, (exp.Least, exp.Greatest)):
            _least_greatest(node, two_argument_case)
    if found and nodes is not None:
        nodes.changed()
    return tree


# The nodes ``functions`` rewrites, found in the walk's order.
_REWRITTEN = (exp.Log, exp.IsNan, exp.Div, exp.Pow, exp.Avg, exp.Least, exp.Greatest)


def _log_base(log: exp.Log) -> None:
    """One-argument LOG (base 10 in DuckDB, natural elsewhere) gets its base written out."""
    if log.args.get("expression") is None:
        log.set("expression", log.this)
        log.set("this", exp.Literal.number(10))


def _natural_ratio(log: exp.Log) -> None:
    """LOG(b, x) as LN(x) / ln(b): PostgreSQL's two-argument LOG takes NUMERIC only, and a
    DOUBLE PRECISION argument (a fractional relevance summed) does not cast to it by itself.
    A literal base's ln is a literal (the nearest double), else LN(b) guarded."""
    base = log.this
    if isinstance(base, exp.Literal) and base.is_number and float(base.name) > 0:
        denominator: exp.Expr = exp.Literal.number(repr(math.log(float(base.name))))
    else:
        denominator = exp.Nullif(this=exp.Ln(this=base), expression=exp.Literal.number(0))
    ratio = exp.Div(this=to_double(exp.Ln(this=log.expression)), expression=denominator)
    log.replace(exp.paren(ratio, copy=False))


# Engines whose doubles cannot hold NaN (it arrives as NULL or is refused on insert).
_NO_NAN = ("mysql", "sqlite", "tsql")


# Engines with NaN but no ISNAN function; NaN equals itself there, so it is compared to.
_NAN_EQUALS_ITSELF = ("postgres", "snowflake", "oracle")  # Redshift reads as PostgreSQL


def _is_nan_rewrite(target: Dialect) -> Callable[[exp.IsNan], None]:
    """ISNAN(x) (the input checks) where the engine has no such function."""
    no_nan = is_dialect(target, *_NO_NAN)
    equals_itself = is_dialect(target, *_NAN_EQUALS_ITSELF)
    oracle = is_dialect(target, "oracle")

    def rewrite(node: exp.IsNan) -> None:
        if no_nan:
            node.replace(exp.EQ(this=exp.Literal.number(1), expression=exp.Literal.number(0)))
        elif equals_itself:
            nan: exp.Expr = exp.Cast(this=exp.Literal.string("NaN"), to=DOUBLE.copy())
            if oracle:  # its DOUBLE PRECISION is a NUMBER, without NaN
                nan = exp.func("TO_BINARY_DOUBLE", exp.Literal.string("NaN"))
            node.replace(exp.EQ(this=node.this, expression=nan))

    return rewrite


def _division(div: exp.Div) -> None:
    """Float division with a NULL (never an error, inf or a truncation) for a zero divisor."""
    numerator, denominator = div.this, div.expression
    inner = denominator.unnest() if isinstance(denominator, exp.Paren) else denominator
    guarded = isinstance(inner, exp.Nullif) or (
        isinstance(inner, exp.Literal) and inner.is_number and float(inner.name) != 0
    )
    if not guarded:
        div.set("expression", exp.Nullif(this=inner, expression=exp.Literal.number(0)))
    div.set("this", to_double(numerator))


def _float_power(power: exp.Pow) -> None:
    """POWER of a DOUBLE base: SQL Server gives POWER the type of its first argument."""
    power.set("this", to_double(power.this))


def _float_average(average: exp.Avg) -> None:
    """AVG of DOUBLE values: SQL Server averages integers into an integer."""
    if not isinstance(average.this, exp.Order):
        average.set("this", to_double(average.this))


def _least_greatest(node: exp.Least | exp.Greatest, two_argument_case: bool) -> None:
    """LEAST/GREATEST skipping NULLs as DuckDB does, with no engine's NULL rule involved.

    Each argument that may be NULL is coalesced with the others, so the result is NULL only
    when every argument is. SQL Server before 2022 has neither function: there
    (``two_argument_case``) two arguments become a CASE.
    """
    arguments = [node.this, *node.expressions]
    guarded = [
        argument.copy()
        if never_null(argument)
        else exp.Coalesce(
            this=argument.copy(),
            expressions=[other.copy() for other in arguments if other is not argument],
        )
        for argument in arguments
    ]
    if two_argument_case and len(guarded) == 2:
        first, second = guarded
        keep_first: exp.Expr = (
            exp.LTE(this=first.copy(), expression=second.copy())
            if isinstance(node, exp.Least)
            else exp.GTE(this=first.copy(), expression=second.copy())
        )
        node.replace(exp.case().when(keep_first, first.copy()).else_(second.copy()))
        return
    node.set("this", guarded[0])
    node.set("expressions", guarded[1:])
    node.set("ignore_nulls", None)
