"""Sums over users whose bits do not depend on the order DuckDB adds them in.

DuckDB's threads add partial sums of DOUBLEs in whatever order they finish, so the last bits
of a mean could change from run to run and from plan to plan. Every value of magnitude below
2^32 is turned into an integer number of 2^-64ths (exact for |value| >= 2^-11, rounded to
5.4e-20 below) and these integers are added exactly in a HUGEINT: the sum is the same however
the rows are split and ordered; rounded to a DOUBLE once and divided by the users, it gives a
mean within an ulp of the exact mean of the per-user values (a value rounded to 2^-64 moves by
less than 2.7e-20; tests/test_sums.py checks the bits against Python's fractions). Summing
in user order (``SUM(x ORDER BY user_id)``), as before, gave the same bits on every run too,
but sorted every (user, cutoff) row: a third of the curve plan's time.

A value of 2^32 or more (exponential gains of large relevances; 1000 is refused), NaN or
infinity leaves its column to a plain SUM: 2^31 users of values near 2^32 in 2^-64ths are as
far as a HUGEINT's 127 bits go.
"""

from __future__ import annotations

from sqlglot import exp

from sqlmetrics.compose.stages import call, cast_to

SCALE_BITS = 64  # the fixed-point unit, 2^-64
BOUND_BITS = 32  # values of magnitude below 2^32 are summed exactly


def _power_of_two(bits: int) -> exp.Expr:
    # an anonymous call: sqlglot's exp.Pow is written in parentheses next to an operator
    return exp.Anonymous(
        this="POWER", expressions=[exp.Literal.number(2), exp.Literal.number(bits)]
    )


def small(value: exp.Expr) -> exp.Expr:
    """Whether a value is summed exactly: of magnitude below 2^BOUND_BITS."""
    return exp.LT(this=call("ABS", value.copy()), expression=_power_of_two(BOUND_BITS))


def fixed(value: exp.Expr) -> exp.Expr:
    """A value as a whole number of 2^-SCALE_BITS (a HUGEINT)."""
    return cast_to(exp.Mul(this=value.copy(), expression=_power_of_two(SCALE_BITS)), "HUGEINT")


def rounded(fixed_sum: exp.Expr) -> exp.Expr:
    """A sum of _fixed values as a DOUBLE, rounded once (``fixed_sum`` handed over)."""
    return exp.Div(this=cast_to(fixed_sum, "DOUBLE"), expression=_power_of_two(SCALE_BITS))


def _case(condition: exp.Expr, then: exp.Expr, default: exp.Expr | None = None) -> exp.Case:
    """CASE WHEN condition THEN then [ELSE default] END, its parts handed over."""
    case = exp.Case().when(condition, then, copy=False)
    return case if default is None else case.else_(default, copy=False)


def exact_sum(value: exp.Expr) -> exp.Expr:
    """SUM(value) as a DOUBLE on DuckDB, from exact integer sums (see the module); NULL for no
    value, as SUM."""
    fixed_value = _case(small(value), fixed(value))
    exact = rounded(call("SUM", fixed_value.copy()))
    every_value_fixed = exp.EQ(
        this=call("COUNT", fixed_value), expression=call("COUNT", value.copy())
    )
    return _case(every_value_fixed, exact, call("SUM", value.copy()))


# Functions whose values are fractions whatever their arguments (DuckDB's / divides as well).
_FRACTIONAL_FUNCTIONS = (exp.Div, exp.Log, exp.Ln, exp.Pow, exp.Exp, exp.Sqrt)


def is_fractional(term: exp.Expr) -> bool:
    """Whether a term is a fraction whatever its inputs' types (a division, a logarithm, a
    power, a decimal literal): its sum is a DOUBLE, and an exact sum keeps that type. A term of
    columns, whole literals and + - * only (cg's gain) is a whole number over whole-number
    inputs, whose sum keeps their integer type; it is summed in position order instead."""
    if any(True for _ in term.find_all(*_FRACTIONAL_FUNCTIONS)):
        return True
    if any(
        isinstance(node, exp.Anonymous) and node.name.upper() in ("LOG2", "LOG10", "POWER")
        for node in term.find_all(exp.Anonymous)
    ):
        return True
    return any(literal.is_number and not literal.is_int for literal in term.find_all(exp.Literal))


def exact_conditional_sum(condition: exp.Expr, term: exp.Expr) -> exp.Expr:
    """SUM(CASE WHEN condition THEN term ELSE 0 END) as exact_sum gives it, for a user's terms
    at several cutoffs: the test that every term is small enough reads the term alone, so the
    cutoffs of one term share it (DuckDB computes an aggregate written twice once). A term of
    2^32 or more anywhere in the user's rows leaves the sums of that term to a plain SUM."""
    term_small = small(term)
    every_term_small = exp.EQ(
        this=call("COUNT", _case(term_small, exp.Literal.number(1))),
        expression=call("COUNT", term.copy()),
    )
    fixed_term = _case(
        exp.and_(condition.copy(), term_small.copy(), copy=False),
        fixed(term),
        exp.Literal.number(0),
    )
    exact = rounded(call("SUM", fixed_term))
    plain = call("SUM", _case(condition.copy(), term.copy(), exp.Literal.number(0)))
    return _case(every_term_small, exact, plain)


def exact_mean(value: exp.Expr) -> exp.Expr:
    """AVG(value) on DuckDB from exact_sum: NULL for no value, as AVG."""
    return exp.Div(this=exact_sum(value), expression=call("COUNT", value.copy()))


def aggregate(function: str, value: exp.Expr, exact: bool, integers: bool = False) -> exp.Expr:
    """``function`` (AVG, SUM or COUNT) of ``value`` over users: AVG and SUM exact when
    ``exact`` (DuckDB), except over ``integers`` (``aggregate: sum`` counts), exact already.
    ``value`` is handed over (the exact sums read copies of it)."""
    if not exact or integers or function == "COUNT":
        return call(function, value)
    return exact_mean(value) if function == "AVG" else exact_sum(value)
