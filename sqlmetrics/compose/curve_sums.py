"""The curve plan's sums over the users: from per_user's rows (a row per user and *step*, a
requested cutoff from which a user's values may differ from those at the cutoff before; written
by curve_steps.py from DuckDB's lists, or by curve_windows.py with windows in portable SQL) to
the sums at every requested cutoff, the summary row and the t-interval's moments.

per_cutoff adds up, per group, each step's change of the users' sums and accumulates the
changes over the cutoffs. On DuckDB (``exact``) the sums are integers (whole 2^-64ths, sums.py,
and counts), so adding changes in any order gives the sums of the values at each cutoff to the
bit; elsewhere they are the engine's plain sums. A value that reads the cutoff itself
(precision's hits / k) is counted per *state* instead (its parts that do not read k: the
hits): the users in each state at each cutoff, times that state's value there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from sqlmetrics.catalog.metrics import MetricRequest, parsed
from sqlmetrics.compose.curves import CUTOFF, Split, requests_at_cutoffs
from sqlmetrics.compose.inputs import Inputs
from sqlmetrics.compose.stages import group_key, nulls_last, numbers_table
from sqlmetrics.compose.summary import partial_columns, ratio, summary
from sqlmetrics.compose.sums import fixed, rounded, small


def _picked(condition: exp.Expr, value: exp.Expr) -> exp.Expr:
    """``MAX(CASE WHEN condition THEN value END)``: a cutoff's value from its row."""
    return exp.func("MAX", exp.Case().when(condition.copy(), value.copy()))


BEFORE = "_before"  # per_user's columns at a user's step before (NULL on its first step)
# per_cutoff's columns per value (_contributions): exact on DuckDB, plain elsewhere
MOMENTS = ("n", "s", "b", "p", "q")
PLAIN_MOMENTS = ("n", "p", "q")


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


def split_values(parts: Split) -> Values:
    """The Split's values as per_user writes them (both curve_steps.py and curve_windows.py):
    steady, or over states."""
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


def _contributions(
    value: exp.Expr, weight: exp.Expr | None = None, exact: bool = True
) -> dict[str, exp.Expr]:
    """What a value adds to per_cutoff's columns (times ``weight`` users): ``n`` the users with
    a value, ``s`` their values of magnitude below 2^32 in 2^-64ths (sums.py), ``b`` the users
    with another value, ``p`` the values' plain sum, ``q`` their squares'; not ``exact``:
    n, p and q only."""

    def times(expression: exp.Expr) -> exp.Expr:
        return expression if weight is None else exp.Mul(this=weight.copy(), expression=expression)

    one = exp.Literal.number(1) if weight is None else weight.copy()
    zero = exp.Literal.number(0)
    present = exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null()))
    plain: dict[str, exp.Expr] = {
        "n": exp.Case().when(present, one.copy()).else_(zero.copy()),
        "p": exp.func("COALESCE", times(value.copy()), zero.copy()),
        "q": exp.func(
            "COALESCE", times(exp.Mul(this=value.copy(), expression=value.copy())), zero.copy()
        ),
    }
    if not exact:
        return plain
    return {
        "n": plain["n"],
        "s": exp.Case().when(small(value), times(fixed(value))).else_(zero.copy()),
        "b": exp.Case()
        .when(exp.and_(present.copy(), exp.Not(this=small(value))), one.copy())
        .else_(zero.copy()),
        "p": plain["p"],
        "q": plain["q"],
    }


def _nothing(exact: bool) -> exp.Expr:
    """What a row of the UNION of per_cutoff's rows adds to a column it does not carry: NULL
    on DuckDB (whose 2^-64ths are HUGEINTs), else 0 (DataFusion will not SUM a NULL column,
    and ClickHouse finds no common type for its UInt64 counts and a typed NULL)."""
    return exp.Null() if exact else exp.Literal.number(0)


def _moments(exact: bool) -> tuple[str, ...]:
    return MOMENTS if exact else PLAIN_MOMENTS


def first_step(cutoffs: Sequence[int]) -> exp.Expr:
    """Whether a per_user row is its user's first step: every user has one at the first
    requested cutoff, and no other step there."""
    return exp.column(CUTOFF).eq(exp.Literal.number(cutoffs[0]))


def _cumulative(
    function: str,
    column: str,
    partition: Sequence[exp.Expr],
    *arguments: exp.Expr,
    table: str | None = None,
) -> exp.Expr:
    """``function(column) OVER (PARTITION BY partition ORDER BY k)``: up to each step."""
    return exp.Window(
        this=exp.func(function, exp.column(column, table), *arguments),
        partition_by=[key.copy() for key in partition],
        order=exp.Order(expressions=[exp.Ordered(this=exp.column(CUTOFF, table))]),
    )


def next_step(
    partition: Sequence[exp.Expr], cutoffs: Sequence[int], exact: bool, table: str | None = None
) -> exp.Expr:
    """``until``: the next step's cutoff; after the last, NULL on DuckDB, elsewhere one past
    the deepest cutoff. ClickHouse's LEAD gives 0, not NULL, past a column without NULLs (a
    cutoff is never 0), and MariaDB's LEAD takes no default."""
    following = _cumulative("LEAD", CUTOFF, partition, table=table)
    if exact:
        return following
    past = exp.Literal.number(cutoffs[-1] + 1)
    return exp.func("COALESCE", exp.func("NULLIF", following, exp.Literal.number(0)), past)


def _cutoffs_table(cutoffs: Sequence[int], exact: bool) -> exp.Expr:
    """The requested cutoffs as a table ``cutoffs(cutoff)``: DuckDB's UNNEST of a list, else
    VALUES (stages.numbers_table)."""
    if not exact:
        return numbers_table("cutoffs", "cutoff", cutoffs)
    alias = exp.TableAlias(this=exp.to_identifier("cutoffs"), columns=[exp.to_identifier("cutoff")])
    listed = exp.Array(expressions=[exp.Literal.number(k) for k in cutoffs])
    return exp.Unnest(expressions=[listed], alias=alias)


def _at_cutoffs(
    running: exp.Select, cutoffs: Sequence[int], columns: Sequence[exp.Expr], exact: bool
) -> exp.Select:
    """``columns`` of the running rows (one per step of a group, or of a group and state) at
    each requested cutoff from its step ``k`` to the next (``until``)."""
    unnested = _cutoffs_table(cutoffs, exact)
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


def _moves(cutoffs: Sequence[int], values: Values) -> tuple[exp.Expr, exp.Expr]:
    """For the values reading k: the table of per_cutoff's moves (0: a step's steady changes;
    1: the user enters its state at the step, at its first step or where a state changed; -1:
    it leaves its state before), and which (row, move) pairs are taken."""
    first = first_step(cutoffs)
    move = exp.column("move")
    # in parentheses: DataFusion binds IS DISTINCT FROM more loosely than OR and AND
    changed = exp.or_(
        *(
            exp.paren(exp.NullSafeNEQ(this=exp.column(name), expression=exp.column(name + BEFORE)))
            for name, _ in values.states
        )
    )
    entering = exp.and_(move.copy().eq(exp.Literal.number(1)), exp.paren(exp.or_(first, changed)))
    leaving = exp.and_(
        move.copy().eq(exp.Literal.number(-1)), exp.Not(this=first.copy()), changed.copy()
    )
    taken = exp.or_(move.copy().eq(exp.Literal.number(0)), exp.paren(entering), exp.paren(leaving))
    return numbers_table("moves", "move", (0, 1, -1)), taken


def per_cutoff(parts: Split, cutoffs: Sequence[int], groups: int, exact: bool = True) -> exp.Select:
    """Per group and requested cutoff: ``users`` and per value of per_user its sums
    (_contributions' n, s, b, p, q; not ``exact``: n, p, q) over the users, from per_user's
    steps. A steady value's sums grow at each step by its change there (value minus value
    before), accumulated over the steps in cutoff order; integers (2^-64ths, counts) add
    exactly, so the sums are those of the values at each cutoff, to the bit (plain sums of
    changes are within rounding of them). A value reading k is counted per state: the users in
    each state (entering at a step, leaving at the next) at each cutoff, times the value of
    that state at that cutoff. One chain of selects that reads per_user once (Spark computes
    a CTE again for each of its readers): the rows of the states are told apart by
    ``stated``."""
    keys = [exp.column(group_key(i)) for i in range(groups)]
    values = split_values(parts)
    moments = _moments(exact)
    states = [name for name, _ in values.states]
    names = [name for name, _ in [*values.steady, *values.stated]]
    moment_columns = [f"{name}_{moment}" for name in names for moment in moments]
    steady = [f"{name}_{moment}" for name, _ in values.steady for moment in moments]
    zero, one = exp.Literal.number(0), exp.Literal.number(1)
    # without values reading k, every row is a steady one (move 0)
    move: exp.Expr = exp.column("move") if values.stated else zero.copy()
    is_steady = move.copy().eq(zero)

    # per user, step and move: the steady changes (move 0), or the state entered or left
    moved = exp.select(
        *(key.copy() for key in keys),
        CUTOFF,
        exp.alias_(exp.Case().when(is_steady.copy(), zero.copy()).else_(one.copy()), "stated"),
    )
    for name in states:
        state = (
            exp.Case()
            .when(move.copy().eq(one), exp.column(name))
            .when(move.copy().eq(exp.Literal.number(-1)), exp.column(name + BEFORE))
        )
        moved.select(exp.alias_(state, name), copy=False)
    first = exp.and_(is_steady.copy(), first_step(cutoffs))
    moved.select(
        exp.alias_(exp.Case().when(first, one.copy()).else_(zero.copy()), "users"),
        exp.alias_(move.copy(), "moved"),
        copy=False,
    )
    for name, _ in values.steady:
        now = _contributions(exp.column(name), exact=exact)
        before = _contributions(exp.column(name + BEFORE), exact=exact)
        for moment in moments:
            change = exp.Sub(this=now[moment], expression=before[moment])
            steady_change = exp.Case().when(is_steady.copy(), change).else_(zero.copy())
            moved.select(exp.alias_(steady_change, f"{name}_{moment}"), copy=False)
    moved = moved.from_("per_user")
    if values.stated:
        moves, taken = _moves(cutoffs, values)
        moved = moved.join(moves, join_type="cross").where(taken)

    partition = [*keys, exp.column("stated"), *map(exp.column, states)]
    summed = ["users", "moved", *steady]
    steps = (
        exp.select(
            *(column.copy() for column in partition),
            CUTOFF,
            *(exp.alias_(exp.func("SUM", exp.column(name)), name) for name in summed),
        )
        .from_(exp.alias_(exp.paren(moved), "moved"))
        .group_by(*(column.copy() for column in partition), CUTOFF)
    )
    running = exp.select(
        *(column.copy() for column in partition),
        CUTOFF,
        exp.alias_(next_step(partition, cutoffs, exact), "until"),
        *(exp.alias_(_cumulative("SUM", name, partition), name) for name in summed),
    ).from_(exp.alias_(exp.paren(steps), "steps"))

    # at each requested cutoff: a steady row's running sums; a state's users times its value
    in_state = exp.column("moved", "running")
    stated_row = exp.column("stated", "running").eq(one.copy())
    contributions: dict[str, exp.Expr] = {}
    for name, value in values.stated:
        at_cutoff = _with_cutoff(value, exp.column("cutoff"))
        for column in at_cutoff.find_all(exp.Column):
            if column.name.startswith("state"):
                column.set("table", exp.to_identifier("running"))
        for moment, contribution in _contributions(at_cutoff, in_state, exact).items():
            guarded = exp.Case().when(stated_row.copy(), contribution).else_(_nothing(exact))
            contributions[f"{name}_{moment}"] = guarded
    columns: list[exp.Expr] = [
        *(exp.column(key.name, "running") for key in keys),
        exp.alias_(exp.column("cutoff"), CUTOFF),
        exp.column("users", "running"),
    ]
    for moment_column in moment_columns:
        if moment_column in contributions:
            columns.append(exp.alias_(contributions[moment_column], moment_column))
        else:
            columns.append(exp.column(moment_column, "running"))
    rows = _at_cutoffs(running, cutoffs, columns, exact)
    if values.stated:  # a state no user is in at the cutoff adds nothing
        rows = rows.where(exp.or_(exp.Not(this=stated_row.copy()), in_state.copy().neq(zero)))
    return (
        exp.select(
            *(key.copy() for key in keys),
            CUTOFF,
            exp.alias_(exp.func("SUM", exp.column("users")), "users"),
            *(exp.alias_(exp.func("SUM", exp.column(c)), c) for c in moment_columns),
        )
        .from_(exp.alias_(exp.paren(rows), "at_cutoffs"))
        .group_by(*(key.copy() for key in keys), CUTOFF)
    )


def _count(name: str) -> exp.Expr:
    return exp.cast(exp.func("COALESCE", exp.column(f"{name}_n"), exp.Literal.number(0)), "BIGINT")


def _sum(name: str, integers: bool = False, exact: bool = True) -> exp.Expr:
    """SUM of a value over the users at a cutoff from per_cutoff's columns: exact_sum's (sums.py)
    number, NULL without a value; ``integers`` (exact already) or not ``exact``: the plain
    sum."""
    present = _count(name).neq(exp.Literal.number(0))
    plain = exp.column(f"{name}_p")
    if integers or not exact:
        return exp.Case().when(present, plain)
    return exp.Case().when(
        present,
        exp.Case()
        .when(exp.column(f"{name}_b").eq(exp.Literal.number(0)), rounded(exp.column(f"{name}_s")))
        .else_(plain),
    )


def _summary_value(request: MetricRequest, name: str, exact: bool) -> exp.Expr:
    """The request's summary at a cutoff from per_cutoff's columns (summary.final's)."""
    integers = request.metric.summed
    if request.metric.micro:
        numerator = _sum(f"{name}_numerator", exact=exact)
        return ratio(numerator, _sum(f"{name}_denominator", exact=exact))
    if summary(request) == "SUM":
        return _sum(name, integers, exact)
    return exp.Div(this=_sum(name, integers, exact), expression=_count(name))


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
    parts: Split,
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    sums: bool = False,
    exact: bool = True,
) -> exp.Select:
    """The summary row per group, as summary.final writes it: each family's mean (or sum, or
    micro ratio) per cutoff from per_cutoff (``exact``, DuckDB: sums exact as sums.py's, the
    window plan's bits), then one column per request's label. ``sums``: a pass's partial sums
    instead, in summary.partial_columns' columns (duckdb_passes adds them up)."""
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
        columns.setdefault(name, _summary_value(request, name, exact))
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
    cutoffs = _cutoffs(requests)
    table = _summaries(per_cutoff(parts, cutoffs, len(keys), exact), len(keys), columns)
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
    parts: Split,
    requests: Sequence[MetricRequest],
    groups: int,
    distributions: Sequence[int] = (),
    exact: bool = True,
) -> exp.Select:
    """The t-interval's moments (sqlmetrics/stats/query.py's ``stats_moments``) from per_cutoff: per
    group (``g0``..), ``users`` and per request ``n{i}`` (users with a value), ``s{i}`` (their
    sum, exact as the summary's) and ``q{i}`` (their sum of squares); per request of
    ``distributions``, distributions.spread_aggregates' columns over per_user's step holding
    the request's cutoff (DuckDB only). Every request is a mean (stats.has_interval), never a
    micro ratio."""
    from sqlmetrics.compose.distributions import spread_aggregates

    keys = [group_key(i) for i in range(groups)]
    pivots = requests_at_cutoffs(requests, parts.families)
    columns: dict[str, exp.Expr] = {}
    for family in parts.families:
        name = family.name
        squares = exp.Case().when(_count(name).neq(exp.Literal.number(0)), exp.column(f"{name}_q"))
        columns |= {
            f"{name}_count": _count(name),
            f"{name}_sum": _sum(name, exact=exact),
            f"{name}_squares": squares,
        }
    table = _summaries(per_cutoff(parts, _cutoffs(requests), groups, exact), groups, columns)
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
    values = split_values(parts)
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


def has_moments(request: MetricRequest) -> bool:
    """Whether a curve's value is a plain mean over the users, whose t-interval reads the
    moments: not a micro ratio, a sum, a square root or a geometric mean."""
    metric = request.metric
    return not (metric.micro or metric.summed or metric.square_root or metric.exponential)


def per_cutoff_rows(
    parts: Split,
    requests: Sequence[MetricRequest],
    cutoffs: Sequence[int],
    inputs: Inputs,
    exact: bool = True,
) -> exp.Select:
    """The curves themselves, a row per group and cutoff rather than a column per label (the
    report's k = 1..1000 would be thousands of columns): the group columns, ``k``, ``users``,
    and per family of ``parts`` (``curve1``..: its requests' metric and options) its value at
    that cutoff as ``final`` gives it, and for a plain mean (has_moments) ``<family>_n``,
    ``<family>_s`` and ``<family>_q``: the users with a value, their sum and their sum of
    squares, as ``moments`` gives them for the t-interval."""
    keys = [group_key(i) for i in range(len(inputs.groups))]
    columns: dict[str, exp.Expr] = {}
    for family in parts.families:
        request, name = requests[family.indexes[0]], family.name
        value = _summary_value(request, name, exact)
        if request.metric.square_root:
            value = exp.func("SQRT", value)
        if request.metric.exponential:
            value = exp.func("EXP", value)
        columns[name] = value
        if has_moments(request):
            squares = exp.Case().when(
                _count(name).neq(exp.Literal.number(0)), exp.column(f"{name}_q")
            )
            columns |= {
                f"{name}_n": _count(name),
                f"{name}_s": _sum(name, exact=exact),
                f"{name}_q": squares,
            }
    table = _summaries(per_cutoff(parts, cutoffs, len(keys), exact), len(keys), columns)
    order = [exp.column(key) for key in keys]
    return (
        exp.select(
            *(
                exp.alias_(exp.column(key), exp.to_identifier(group.name, quoted=True))
                for key, group in zip(keys, inputs.groups, strict=True)
            ),
            exp.alias_(exp.column(CUTOFF), CUTOFF),
            exp.alias_(exp.cast(exp.column("users"), "BIGINT"), "users"),
            *(exp.alias_(exp.column(name), name) for name in columns),
        )
        .from_(exp.alias_(exp.paren(table), "per_cutoff"))
        .order_by(*nulls_last(order), exp.column(CUTOFF))
    )
