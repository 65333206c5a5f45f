"""The curve plan's steps: from a user's lists (curves.py's per_user_lists) to the sums over
the users at every requested cutoff, and from those to the summary row and the t-interval's
moments.

A user's values change only at the cutoffs where one of its lists of positions gains a
position: its *steps* (~12 a user for k = 1..100 at bench/data/1e7, against 100 cutoffs).
per_user has a row per user and step with its values there and at the step before; per_cutoff
adds up, per group, each step's change of the users' sums and accumulates the changes over the
cutoffs. The sums are integers (whole 2^-64ths, sums.py, and counts), so adding changes in
any order gives the sums of the values at each cutoff to the bit. A value that reads the cutoff
itself (precision's hits / k) is counted per *state* instead (its parts that do not read k: the
hits): the users in each state at each cutoff, times that state's value there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from sqlmetrics.catalog import MetricRequest, parsed
from sqlmetrics.curves import CUTOFF, Split, renamed, requests_at_cutoffs
from sqlmetrics.inputs import Inputs
from sqlmetrics.stages import group_key, nulls_last
from sqlmetrics.summary import partial_columns, ratio, summary
from sqlmetrics.sums import BOUND_BITS, SCALE_BITS, fixed, rounded, small


def _picked(condition: exp.Expr, value: exp.Expr) -> exp.Expr:
    """``MAX(CASE WHEN condition THEN value END)``: a cutoff's value from its row."""
    return exp.func("MAX", exp.Case().when(condition.copy(), value.copy()))


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
BEFORE = "_before"  # per_user's columns at a user's step before (NULL on its first step)
MOMENTS = ("n", "s", "b", "p", "q")  # per_cutoff's columns per value (_contributions)


@dataclass(frozen=True)
class Values:
    """per_user's values split by whether they read the cutoff itself. ``steady``: those
    that change only where a user's counts of positions do (ndcg, map, recall); ``stated``:
    those that read ``k`` too (precision's hits / k), each written over ``states``, its parts
    that do not read k (precision's hits, f1's n_relevant), which change only there."""

    steady: list[tuple[str, exp.Expr]]
    stated: list[tuple[str, exp.Expr]]
    states: list[tuple[str, exp.Expr]]


def _reads_cutoff(expression: exp.Expr) -> bool:
    return any(column.name == CUTOFF for column in expression.find_all(exp.Column))


def _values(parts: Split) -> Values:
    steady: list[tuple[str, exp.Expr]] = []
    stated: list[tuple[str, exp.Expr]] = []
    states: dict[str, tuple[str, exp.Expr]] = {}

    def state(node: exp.Expr) -> exp.Expr:
        # the largest parts without k become columns (not a CASE's WHEN, a literal or a type)
        if isinstance(node, exp.Literal) or _reads_cutoff(node):
            return node
        if not isinstance(
            node, (exp.Column, exp.Binary, exp.Func, exp.Case, exp.Paren, exp.Bracket, exp.Unary)
        ):
            return node
        key = node.sql("duckdb")
        name, _ = states.setdefault(key, (f"state{len(states) + 1}", node.copy()))
        return exp.column(name)

    for name, value in parts.values:
        if _reads_cutoff(value):
            stated.append((name, value.copy().transform(state)))
        else:
            steady.append((name, value))
    return Values(steady, stated, list(states.values()))


def _with_cutoff(value: exp.Expr, cutoff: exp.Expr) -> exp.Expr:
    """A copy of a value reading k with k read from ``cutoff`` (a column or a literal)."""
    return value.transform(
        lambda node: cutoff.copy() if isinstance(node, exp.Column) and node.name == CUTOFF else node
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
    before (``<name>_before``; NULL on the ``first`` step); per state of the others, the same.
    ~12 rows per user instead of 100 for k = 1..100 (bench/data/1e7)."""
    with_fixed = exp.select("*").from_("per_user_lists")
    for summed in parts.running:
        if summed.exact:
            value = renamed(_FIXED, {"terms": summed.terms.name})
            with_fixed.select(exp.alias_(value, f"fixed{summed.name[7:]}"), copy=False)
    sums = exp.select("*").from_(exp.alias_(exp.paren(with_fixed), "per_user_fixed"))
    for summed in parts.running:
        names = {"terms": summed.terms.name, "fixed": f"fixed{summed.name[7:]}"}
        template = _EXACT_RUNNING if summed.exact else _RUNNING[summed.function]
        sums.select(exp.alias_(renamed(template, names), summed.name), copy=False)
    for positions in parts.positions:
        dense = renamed(_DENSE, {"at": positions.name})
        sums.select(exp.alias_(dense, f"dense{positions.name[2:]}"), copy=False)
    sums.select(exp.alias_(_starts(parts, cutoffs), "starts"), copy=False)

    # a row per step: UNNEST in the select list streams (in FROM, DuckDB joins it back to its
    # row: 1e7, k = 1..100, 8 % more wall time)
    step = exp.column("step")
    unnested = exp.select("*", exp.alias_(parsed("UNNEST(RANGE(1, LEN(starts) + 1))"), step.name))
    unnested = unnested.from_(exp.alias_(exp.paren(sums), "per_user_sums"))

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
    ).from_(exp.alias_(exp.paren(unnested), "per_user_unnested"))
    counted = exp.select("*").from_(exp.alias_(exp.paren(stepped), "per_user_steps"))
    for positions in parts.positions:
        number = positions.name[2:]
        names = {"at": positions.name, "dense": f"dense{number}"}
        counted.select(exp.alias_(renamed(_WITHIN, names), f"within{number}"), copy=False)
        before = renamed(_WITHIN, {**names, CUTOFF: f"{CUTOFF}{BEFORE}"})
        counted.select(exp.alias_(before, f"within{number}{BEFORE}"), copy=False)

    first = exp.column(step.name).eq(exp.Literal.number(1))
    values = _values(parts)
    columns = [*map(exp.column, ("user_id", CUTOFF, "until")), exp.alias_(first, "first")]
    for name, value in [*values.steady, *values.states]:
        columns.append(exp.alias_(value.copy(), name))
        before = exp.Case().when(exp.Not(this=first.copy()), _at_step_before(value))
        columns.append(exp.alias_(before, f"{name}{BEFORE}"))
    return exp.select(*columns).from_(exp.alias_(exp.paren(counted), "per_user_counts"))


def _contributions(value: exp.Expr, weight: exp.Expr | None = None) -> dict[str, exp.Expr]:
    """What a value adds to per_cutoff's columns (times ``weight`` users): ``n`` the users with
    a value, ``s`` their values of magnitude below 2^32 in 2^-64ths (sums.py), ``b`` the users
    with another value, ``p`` the values' plain sum, ``q`` their squares'."""

    def times(expression: exp.Expr) -> exp.Expr:
        return expression if weight is None else exp.Mul(this=weight.copy(), expression=expression)

    one = exp.Literal.number(1) if weight is None else weight.copy()
    zero = exp.Literal.number(0)
    present = exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null()))
    return {
        "n": exp.Case().when(present, one.copy()).else_(zero.copy()),
        "s": exp.Case().when(small(value), times(fixed(value))).else_(zero.copy()),
        "b": exp.Case()
        .when(exp.and_(present.copy(), exp.Not(this=small(value))), one.copy())
        .else_(zero.copy()),
        "p": exp.func("COALESCE", times(value.copy()), zero.copy()),
        "q": exp.func(
            "COALESCE", times(exp.Mul(this=value.copy(), expression=value.copy())), zero.copy()
        ),
    }


def _cumulative(function: str, column: str, partition: Sequence[exp.Expr]) -> exp.Expr:
    """``function(column) OVER (PARTITION BY partition ORDER BY k)``: up to each step."""
    return exp.Window(
        this=exp.func(function, exp.column(column)),
        partition_by=[key.copy() for key in partition],
        order=exp.Order(expressions=[exp.Ordered(this=exp.column(CUTOFF))]),
    )


def _at_cutoffs(
    running: exp.Select, cutoffs: Sequence[int], columns: Sequence[exp.Expr]
) -> exp.Select:
    """``columns`` of the running rows (one per step of a group, or of a group and state) at
    each requested cutoff from its step ``k`` to the next (``until``)."""
    listed = exp.Array(expressions=[exp.Literal.number(k) for k in cutoffs])
    unnested = exp.Unnest(
        expressions=[listed],
        alias=exp.TableAlias(
            this=exp.to_identifier("cutoffs"), columns=[exp.to_identifier("cutoff")]
        ),
    )
    cutoff = exp.column("cutoff")
    within = exp.and_(
        cutoff >= exp.column(CUTOFF, "running"),
        exp.or_(
            exp.Is(this=exp.column("until", "running"), expression=exp.Null()),
            cutoff < exp.column("until", "running"),
        ),
    )
    return (
        exp.select(*columns)
        .from_(exp.alias_(exp.paren(running), "running"))
        .join(unnested, on=within, join_type="inner")
    )


def per_cutoff(parts: Split, cutoffs: Sequence[int], groups: int) -> exp.Select:
    """Per group and requested cutoff: ``users`` and per value of per_user its sums
    (_contributions' n, s, b, p, q) over the users, from per_user's steps. A steady value's
    sums grow at each step by its change there (value minus value before), accumulated over
    the steps in cutoff order; integers (2^-64ths, counts) add exactly, so the sums are those
    of the values at each cutoff, to the bit. A value reading k is counted per state: the users
    in each state (entering at a step, leaving at the next) at each cutoff, times the value of
    that state at that cutoff."""
    keys = [exp.column(group_key(i)) for i in range(groups)]
    values = _values(parts)
    names = [name for name, _ in [*values.steady, *values.stated]]
    moment_columns = [f"{name}_{moment}" for name in names for moment in MOMENTS]
    first = exp.column("first")

    steps = exp.select(
        *(key.copy() for key in keys),
        CUTOFF,
        exp.alias_(
            exp.func(
                "SUM",
                exp.Case().when(first.copy(), exp.Literal.number(1)).else_(exp.Literal.number(0)),
            ),
            "users",
        ),
    ).from_("per_user")
    for name, _ in values.steady:
        now = _contributions(exp.column(name))
        before = _contributions(exp.column(f"{name}{BEFORE}"))
        for moment in MOMENTS:
            change = exp.Sub(this=now[moment], expression=before[moment])
            steps.select(exp.alias_(exp.func("SUM", change), f"{name}_{moment}"), copy=False)
    steps = steps.group_by(*(key.copy() for key in keys), CUTOFF)
    running = exp.select(
        *(key.copy() for key in keys),
        CUTOFF,
        exp.alias_(_cumulative("LEAD", CUTOFF, keys), "until"),
        exp.alias_(_cumulative("SUM", "users", keys), "users"),
        *(
            exp.alias_(_cumulative("SUM", f"{name}_{moment}", keys), f"{name}_{moment}")
            for name, _ in values.steady
            for moment in MOMENTS
        ),
    ).from_(exp.alias_(exp.paren(steps), "steps"))
    steady = {f"{name}_{moment}" for name, _ in values.steady for moment in MOMENTS}
    rows: exp.Query = _at_cutoffs(
        running,
        cutoffs,
        [
            *(exp.column(key.name, "running") for key in keys),
            exp.alias_(exp.column("cutoff"), CUTOFF),
            exp.column("users", "running"),
            *(
                exp.column(column, "running")
                if column in steady
                else exp.alias_(exp.Null(), column)
                for column in moment_columns
            ),
        ],
    )
    if values.stated:
        rows = exp.union(
            rows, _stated_at_cutoffs(values, keys, cutoffs, moment_columns), distinct=False
        )
    return (
        exp.select(
            *(key.copy() for key in keys),
            CUTOFF,
            exp.alias_(exp.func("SUM", exp.column("users")), "users"),
            *(exp.alias_(exp.func("SUM", exp.column(column)), column) for column in moment_columns),
        )
        .from_(exp.alias_(exp.paren(rows), "at_cutoffs"))
        .group_by(*(key.copy() for key in keys), CUTOFF)
    )


def _stated_at_cutoffs(
    values: Values, keys: Sequence[exp.Expr], cutoffs: Sequence[int], moment_columns: Sequence[str]
) -> exp.Select:
    """per_cutoff's rows of the values reading k: per group, state and cutoff, the users in the
    state times each value's contributions there."""
    states = [exp.column(name) for name, _ in values.states]
    changed = exp.or_(
        *(
            exp.NullSafeNEQ(this=state.copy(), expression=exp.column(f"{state.name}{BEFORE}"))
            for state in states
        )
    )
    first = exp.column("first")
    entering = (
        exp.select(
            *(k.copy() for k in keys),
            CUTOFF,
            *(s.copy() for s in states),
            exp.alias_(exp.Literal.number(1), "moved"),
        )
        .from_("per_user")
        .where(exp.or_(first.copy(), changed.copy()))
    )
    leaving = (
        exp.select(
            *(k.copy() for k in keys),
            CUTOFF,
            *(exp.alias_(exp.column(f"{s.name}{BEFORE}"), s.name) for s in states),
            exp.alias_(exp.Literal.number(-1), "moved"),
        )
        .from_("per_user")
        .where(exp.and_(exp.Not(this=first.copy()), changed.copy()))
    )
    partition = [*keys, *states]
    moved = (
        exp.select(
            *(c.copy() for c in partition),
            CUTOFF,
            exp.alias_(exp.func("SUM", exp.column("moved")), "moved"),
        )
        .from_(exp.alias_(exp.paren(exp.union(entering, leaving, distinct=False)), "moves"))
        .group_by(*(c.copy() for c in partition), CUTOFF)
    )
    running = exp.select(
        *(c.copy() for c in partition),
        CUTOFF,
        exp.alias_(_cumulative("LEAD", CUTOFF, partition), "until"),
        exp.alias_(_cumulative("SUM", "moved", partition), "users"),
    ).from_(exp.alias_(exp.paren(moved), "moved"))
    stated = {name: value for name, value in values.stated}
    contributions: dict[str, exp.Expr] = {}
    for name, value in stated.items():
        at_cutoff = _with_cutoff(value, exp.column("cutoff"))
        for column in at_cutoff.find_all(exp.Column):
            if column.name.startswith("state"):
                column.set("table", exp.to_identifier("running"))
        for moment, contribution in _contributions(
            at_cutoff, exp.column("users", "running")
        ).items():
            contributions[f"{name}_{moment}"] = contribution
    query = _at_cutoffs(
        running,
        cutoffs,
        [
            *(exp.column(key.name, "running") for key in keys),
            exp.alias_(exp.column("cutoff"), CUTOFF),
            exp.alias_(exp.Null(), "users"),
            *(
                exp.alias_(contributions[column], column)
                if column in contributions
                else exp.alias_(exp.Null(), column)
                for column in moment_columns
            ),
        ],
    )
    return query.where(exp.column("users", "running").neq(exp.Literal.number(0)))


def _count(name: str) -> exp.Expr:
    return exp.cast(exp.func("COALESCE", exp.column(f"{name}_n"), exp.Literal.number(0)), "BIGINT")


def _sum(name: str, integers: bool = False) -> exp.Expr:
    """SUM of a value over the users at a cutoff from per_cutoff's columns: exact_sum's (sums.py)
    number, NULL without a value; ``integers``: the plain sum, exact already."""
    present = _count(name).neq(exp.Literal.number(0))
    plain = exp.column(f"{name}_p")
    if integers:
        return exp.Case().when(present, plain)
    return exp.Case().when(
        present,
        exp.Case()
        .when(exp.column(f"{name}_b").eq(exp.Literal.number(0)), rounded(exp.column(f"{name}_s")))
        .else_(plain),
    )


def _summary_value(request: MetricRequest, name: str) -> exp.Expr:
    """The request's summary at a cutoff from per_cutoff's columns (summary.final's)."""
    integers = request.metric.summed
    if request.metric.micro:
        return ratio(_sum(f"{name}_numerator"), _sum(f"{name}_denominator"))
    if summary(request) == "SUM":
        return _sum(name, integers)
    return exp.Div(this=_sum(name, integers), expression=_count(name))


def _cutoffs(requests: Sequence[MetricRequest]) -> list[int]:
    return sorted({request.k for request in requests if request.k is not None})


def _summaries(table: exp.Select, groups: int, columns: dict[str, exp.Expr]) -> exp.Select:
    """per_cutoff's rows with ``columns`` (name -> expression over its sums) computed once per
    group and cutoff, for the pivot to pick by name."""
    keys = [exp.column(group_key(i)) for i in range(groups)]
    return exp.select(
        *keys,
        CUTOFF,
        "users",
        *(exp.alias_(expression, name) for name, expression in columns.items()),
    ).from_(exp.alias_(exp.paren(table), "sums"))


def final(
    parts: Split, requests: Sequence[MetricRequest], inputs: Inputs, sums: bool = False
) -> exp.Select:
    """The summary row per group, as summary.final writes it: each family's mean (or sum, or
    micro ratio) per cutoff from per_cutoff (sums exact as sums.py's: the window plan's
    bits), then one column per request's label. ``sums``: a pass's partial sums instead, in
    summary.partial_columns' columns (duckdb_passes adds them up)."""
    keys = [group_key(i) for i in range(len(inputs.groups))]
    columns: dict[str, exp.Expr] = {}
    labels: list[exp.Expr] = []
    picked = zip(
        requests_at_cutoffs(requests, parts.families), partial_columns(requests), strict=True
    )
    for (request, family, at_cutoff), (_, numerator, denominator) in picked:
        name = family.name
        if sums:  # m{i} (with m{i}_users) or m{i}_numerator and m{i}_denominator
            if request.metric.micro:
                parts_of = [
                    (f"{name}_numerator", _sum(f"{name}_numerator")),
                    (f"{name}_denominator", _sum(f"{name}_denominator")),
                ]
            else:
                parts_of = [
                    (f"{name}_sum", _sum(name, request.metric.summed)),
                    (f"{name}_users", _count(name)),
                ]
            for (column, expression), partial in zip(
                parts_of, (numerator, denominator), strict=True
            ):
                if partial is not None:
                    columns.setdefault(column, expression)
                    labels.append(exp.alias_(_picked(at_cutoff, exp.column(column)), partial))
            continue
        columns.setdefault(name, _summary_value(request, name))
        label = _picked(at_cutoff, exp.column(name))
        if request.metric.square_root:
            label = exp.func("SQRT", label)
        if request.metric.exponential:
            label = exp.func("EXP", label)
        labels.append(exp.Alias(this=label, alias=exp.to_identifier(request.label, quoted=True)))
    groups = [
        exp.alias_(exp.column(key), exp.to_identifier(group.name, quoted=True))
        for key, group in zip(keys, inputs.groups, strict=True)
    ]
    table = _summaries(per_cutoff(parts, _cutoffs(requests), len(keys)), len(keys), columns)
    query = exp.select(*groups, exp.alias_(_USERS.copy(), "users"), *labels).from_(
        exp.alias_(exp.paren(table), "per_cutoff")
    )
    if keys:
        order = [exp.column(key) for key in keys]
        query = query.group_by(*order).order_by(*nulls_last(order))
    return query


# A group's users (the same at every cutoff), 0 for a group without rows.
_USERS = parsed("COALESCE(CAST(MAX(users) AS BIGINT), 0)")


def moments(
    parts: Split, requests: Sequence[MetricRequest], groups: int, distributions: Sequence[int] = ()
) -> exp.Select:
    """The t-interval's moments (sqlmetrics/stats.py's ``stats_moments``) from per_cutoff: per
    group (``g0``..), ``users`` and per request ``n{i}`` (users with a value), ``s{i}`` (their
    sum, exact as the summary's) and ``q{i}`` (their sum of squares); per request of
    ``distributions``, distributions.spread_aggregates' columns over per_user's step holding
    the request's cutoff. Every request is a mean (stats.has_interval), never a micro
    ratio."""
    from sqlmetrics.distributions import spread_aggregates

    keys = [group_key(i) for i in range(groups)]
    pivots = requests_at_cutoffs(requests, parts.families)
    columns: dict[str, exp.Expr] = {}
    for family in parts.families:
        name = family.name
        squares = exp.Case().when(_count(name).neq(exp.Literal.number(0)), exp.column(f"{name}_q"))
        columns |= {
            f"{name}_count": _count(name),
            f"{name}_sum": _sum(name),
            f"{name}_squares": squares,
        }
    table = _summaries(per_cutoff(parts, _cutoffs(requests), groups), groups, columns)
    query = exp.select(
        *(exp.alias_(exp.column(key), f"g{i}") for i, key in enumerate(keys)),
        exp.alias_(_USERS.copy(), "users"),
    ).from_(exp.alias_(exp.paren(table), "per_cutoff"))
    for index, (_, family, at_cutoff) in enumerate(pivots):
        for slot, column in (("n", "count"), ("s", "sum"), ("q", "squares")):
            picked = _picked(at_cutoff, exp.column(f"{family.name}_{column}"))
            query.select(exp.alias_(picked, f"{slot}{index}"), copy=False)
    if keys:
        query = query.group_by(*(exp.column(key) for key in keys))
    if not distributions:
        return query
    # per user, the value of its step holding the cutoff: k <= cutoff < until
    values = _values(parts)
    stated = dict(values.stated)
    spread = exp.select(*(exp.alias_(exp.column(key), f"g{i}") for i, key in enumerate(keys)))
    for index in distributions:
        request, family, _ = pivots[index]
        cutoff = exp.Literal.number(request.k)
        holding = exp.and_(
            exp.column(CUTOFF) <= cutoff,
            exp.or_(
                exp.Is(this=exp.column("until"), expression=exp.Null()),
                exp.column("until") > cutoff,
            ),
        )
        value: exp.Expr = exp.column(family.name)
        if family.name in stated:
            value = _with_cutoff(stated[family.name], cutoff)
        spread.select(*spread_aggregates(index, value, holding), copy=False)
    spread = spread.from_("per_user")
    if keys:
        spread = spread.group_by(*(exp.column(key) for key in keys))
    joined = exp.select(
        "moments.*",
        *(
            exp.column(f"{slot}{index}", "spread")
            for index in distributions
            for slot in ("d", "z", "c")
        ),
    ).from_(exp.alias_(exp.paren(query), "moments"))
    condition = (
        exp.and_(
            *(
                exp.NullSafeEQ(
                    this=exp.column(f"g{i}", "moments"), expression=exp.column(f"g{i}", "spread")
                )
                for i in range(groups)
            )
        )
        if groups
        else None
    )
    spread_table = exp.alias_(exp.paren(spread), "spread")
    if condition is None:
        return joined.join(spread_table, join_type="cross")
    return joined.join(spread_table, on=condition, join_type="left")
