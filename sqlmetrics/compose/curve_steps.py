"""The curve plan's per_user on DuckDB: from a user's lists (curves.py's per_user_lists) to a
row per user and *step*, which curve_cutoffs.py adds up over the users.

A user's values change only at the cutoffs where one of its lists of positions gains a
position: its *steps* (~12 a user for k = 1..100 at bench/data/1e7, against 100 cutoffs).
per_user has a row per user and step with its values there and at the step before, read from
the running sums of its lists at the counts of positions within each. (curve_windows.py
writes the same rows in portable SQL, with windows instead of lists.)
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlmetrics.catalog.metrics import parsed
from sqlmetrics.compose.curve_cutoffs import BEFORE, split_values
from sqlmetrics.compose.curves import CUTOFF, Split, renamed
from sqlmetrics.compose.stages import derived_table
from sqlmetrics.compose.sums import BOUND_BITS, SCALE_BITS

# Per user, the running SUM or MAX of a list of terms: element i adds (or maxes) the first i.
# Lists are a user's hits or ideal positions: short. A fractional sum is the window plan's exact
# sum (per_user.stable_user_sums, sums.py) of the same terms: whole numbers of 2^-64ths
# (``fixed``, NULL for a term too large) added in a HUGEINT, rounded once; the same bits. A list
# with a term of 2^32 or more is added as doubles in position order, as the window plan's plain
# SUM (whose order is DuckDB's: such sums are not the same bits from run to run). Another sum
# (cg's gains) adds in position order, as the window plan's.
_RUNNING = {
    function: parsed(
        f"LIST_TRANSFORM(RANGE(1, LEN(terms) + 1), lambda i: LIST_{function}(terms[1:i]))"
    )
    for function in ("SUM", "MAX")
}
_FIXED = parsed(
    f"LIST_TRANSFORM(terms, lambda t: CASE WHEN ABS(t) < POWER(2, {BOUND_BITS})"
    f" THEN CAST(t * POWER(2, {SCALE_BITS}) AS HUGEINT) END)"
)
_EXACT_RUNNING = parsed(
    "CASE WHEN LIST_AGGREGATE(fixed, 'count') = LEN(fixed) THEN LIST_TRANSFORM("
    "RANGE(1, LEN(fixed) + 1),"
    f" lambda i: CAST(LIST_SUM(fixed[1:i]) AS DOUBLE) / POWER(2, {SCALE_BITS}))"
    " ELSE LIST_TRANSFORM(RANGE(1, LEN(terms) + 1), lambda i: LIST_SUM(terms[1:i])) END"
)
# How many of a user's positions (ascending) are at or below a cutoff ``k``: a walk of the list;
# a list that is exactly 1, 2, .., n (every listed position, ties "id") has min(k, n) of them.
_DENSE = parsed("COALESCE(at = RANGE(1, LEN(at) + 1), FALSE)")
_WITHIN = parsed(
    "CASE WHEN dense THEN LEAST(k, LEN(at)) ELSE COALESCE(LEN(LIST_FILTER(at, x -> x <= k)), 0) END"
)


def _at_step_before(expression: exp.Expr) -> exp.Expr:
    """An expression over a step's counts of positions read at the step before."""
    expression = expression.copy()
    for column in expression.find_all(exp.Column):
        if column.name.startswith("within") or column.name == CUTOFF:
            column.set("this", exp.to_identifier(f"{column.name}{BEFORE}"))
    return expression


def _starts(parts: Split, cutoffs: Sequence[int]) -> exp.Expr:
    """A user's steps: its first cutoff, and each cutoff that is the first at or above one of
    its positions (the cutoffs where a count of positions within them grows), ascending."""
    deepest = cutoffs[-1]
    first_at_or_above = [next(k for k in cutoffs if k >= p) for p in range(1, deepest + 1)]
    # a position (a rank column's may be fractional, or below 1) as a whole one from 1 up
    whole = exp.func(
        "GREATEST", exp.cast(exp.func("CEIL", exp.column("p")), "BIGINT"), exp.Literal.number(1)
    )
    ceiling: exp.Expr = whole
    if first_at_or_above != list(range(1, deepest + 1)):  # else a position is its cutoff
        ceilings = exp.Array(expressions=[exp.Literal.number(k) for k in first_at_or_above])
        ceiling = exp.Bracket(this=ceilings, expressions=[whole], offset=1)
    steps: exp.Expr = exp.Array(expressions=[exp.Literal.number(cutoffs[0])])
    for positions in parts.positions:
        at = exp.func("COALESCE", exp.column(positions.name), exp.Array(expressions=[]))
        mapped = exp.Lambda(this=ceiling.copy(), expressions=[exp.to_identifier("p")])
        steps = exp.func("LIST_CONCAT", steps, exp.func("LIST_TRANSFORM", at, mapped))
    return exp.func("LIST_SORT", exp.func("LIST_DISTINCT", steps))


def per_user_stage(parts: Split, cutoffs: Sequence[int]) -> exp.Select:
    """``per_user``: one row per user and *step*, a requested cutoff ``k`` from which the user's
    values may differ from those at the cutoff before: its first cutoff, then each where one of
    its lists of positions gains one. A step holds up to ``until`` (the next step; NULL: the
    deepest cutoff). Per value that does not read k, its value at the step and at the step
    before (``<name>_before``; NULL on the first step); per state of the others, the same.
    ~12 rows per user instead of 100 for k = 1..100 (bench/data/1e7)."""
    with_fixed = exp.select("*").from_("per_user_lists")
    for summed in parts.running:
        if summed.exact:
            value = renamed(_FIXED, {"terms": summed.terms.name})
            with_fixed.select(exp.alias_(value, f"fixed{summed.name[7:]}"), copy=False)
    sums = exp.select("*").from_(derived_table(with_fixed, "per_user_fixed"))
    for summed in parts.running:
        names = {"terms": summed.terms.name, "fixed": f"fixed{summed.name[7:]}"}
        template = _EXACT_RUNNING if summed.exact else _RUNNING[summed.function]
        sums.select(exp.alias_(renamed(template, names), summed.name), copy=False)
    for positions in parts.positions:
        dense = renamed(_DENSE, {"at": positions.name})
        sums.select(exp.alias_(dense, f"dense{positions.name[2:]}"), copy=False)
    sums.select(exp.alias_(_starts(parts, cutoffs), "starts"), copy=False)

    # a row per step: UNNEST in the select list streams (in FROM, DuckDB joins it back to its
    # row, which costs more: docs/benchmark.md)
    step = exp.column("step")
    unnested = exp.select("*", exp.alias_(parsed("UNNEST(RANGE(1, LEN(starts) + 1))"), step.name))
    unnested = unnested.from_(derived_table(sums, "per_user_sums"))

    def starts_at(offset: int) -> exp.Expr:
        index: exp.Expr = step.copy()
        if offset > 0:
            index = exp.Add(this=index, expression=exp.Literal.number(offset))
        elif offset < 0:
            index = exp.Sub(this=index, expression=exp.Literal.number(-offset))
        return exp.Bracket(this=exp.column("starts"), expressions=[index], offset=1)

    stepped = exp.select(
        "*",
        exp.alias_(starts_at(0), CUTOFF),
        exp.alias_(starts_at(-1), f"{CUTOFF}{BEFORE}"),
        exp.alias_(starts_at(1), "until"),
    ).from_(derived_table(unnested, "per_user_unnested"))
    counted = exp.select("*").from_(derived_table(stepped, "per_user_steps"))
    for positions in parts.positions:
        number = positions.name[2:]
        names = {"at": positions.name, "dense": f"dense{number}"}
        counted.select(exp.alias_(renamed(_WITHIN, names), f"within{number}"), copy=False)
        before = renamed(_WITHIN, {**names, CUTOFF: f"{CUTOFF}{BEFORE}"})
        counted.select(exp.alias_(before, f"within{number}{BEFORE}"), copy=False)

    first = exp.column(step.name).eq(exp.Literal.number(1))
    values = split_values(parts)
    columns: list[exp.Expr] = [*map(exp.column, ("user_id", CUTOFF, "until"))]
    for name, value in [*values.steady, *values.states]:
        columns.append(exp.alias_(value.copy(), name))
        before = exp.Case().when(exp.Not(this=first.copy()), _at_step_before(value))
        columns.append(exp.alias_(before, f"{name}{BEFORE}"))
    return exp.select(*columns).from_(derived_table(counted, "per_user_counts"))
