"""The curve plan's sums over the users at every requested cutoff: from per_user's rows (a row
per user and *step*, a requested cutoff from which a user's values may differ from those at the
cutoff before; written by curve_steps.py from DuckDB's lists, or by curve_windows.py with
windows in portable SQL) to per_cutoff's row per group and cutoff, which curve_sums.py turns
into the summary row, the t-interval's moments and the curves' rows.

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

from sqlmetrics.compose.curves import CUTOFF, Split
from sqlmetrics.compose.stages import derived_table, group_key, numbers_table
from sqlmetrics.compose.sums import fixed, small

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


def with_cutoff(value: exp.Expr, cutoff: exp.Expr) -> exp.Expr:
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
        .from_(derived_table(running, "running"))
        .join(unnested, on=within, join_type="inner", copy=False)
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
    names = [name for name, _ in [*values.steady, *values.stated]]
    moment_columns = [f"{name}_{moment}" for name in names for moment in moments]
    running = _running(_moved(keys, values, cutoffs, exact), keys, values, cutoffs, exact)
    columns = _cutoff_columns(keys, values, moment_columns, exact)
    rows = _at_cutoffs(running, cutoffs, columns, exact)
    if values.stated:  # a state no user is in at the cutoff adds nothing
        stated_row = exp.column("stated", "running").eq(exp.Literal.number(1))
        in_state = exp.column("moved", "running").neq(exp.Literal.number(0))
        rows = rows.where(exp.or_(exp.Not(this=stated_row), in_state), copy=False)
    return (
        exp.select(
            *(key.copy() for key in keys),
            CUTOFF,
            exp.alias_(exp.func("SUM", exp.column("users")), "users"),
            *(exp.alias_(exp.func("SUM", exp.column(c)), c) for c in moment_columns),
        )
        .from_(derived_table(rows, "at_cutoffs"))
        .group_by(*(key.copy() for key in keys), CUTOFF, copy=False)
    )


def _moved(
    keys: Sequence[exp.Column], values: Values, cutoffs: Sequence[int], exact: bool
) -> exp.Select:
    """per_cutoff's rows per user, step and move: the steady values' changes (move 0,
    ``stated`` 0), or the state entered (1) or left (-1) there; ``users`` 1 at a user's
    first step, ``moved`` the move."""
    zero, one = exp.Literal.number(0), exp.Literal.number(1)
    # without values reading k, every row is a steady one (move 0)
    move: exp.Expr = exp.column("move") if values.stated else zero.copy()
    is_steady = move.copy().eq(zero)
    moved = exp.select(
        *(key.copy() for key in keys),
        CUTOFF,
        exp.alias_(exp.Case().when(is_steady.copy(), zero.copy()).else_(one.copy()), "stated"),
    )
    for name, _ in values.states:
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
        for moment in _moments(exact):
            change = exp.Sub(this=now[moment], expression=before[moment])
            steady_change = exp.Case().when(is_steady.copy(), change).else_(zero.copy())
            moved.select(exp.alias_(steady_change, f"{name}_{moment}"), copy=False)
    moved = moved.from_("per_user")
    if values.stated:
        moves, taken = _moves(cutoffs, values)
        moved = moved.join(moves, join_type="cross").where(taken)
    return moved


def _running(
    moved: exp.Select,
    keys: Sequence[exp.Column],
    values: Values,
    cutoffs: Sequence[int],
    exact: bool,
) -> exp.Select:
    """The ``moved`` rows summed per group, state and step, then accumulated in cutoff order
    (a step's running sums hold ``until`` the next step's cutoff)."""
    states = [name for name, _ in values.states]
    steady = [f"{name}_{moment}" for name, _ in values.steady for moment in _moments(exact)]
    partition = [*keys, exp.column("stated"), *map(exp.column, states)]
    summed = ["users", "moved", *steady]
    steps = (
        exp.select(
            *(column.copy() for column in partition),
            CUTOFF,
            *(exp.alias_(exp.func("SUM", exp.column(name)), name) for name in summed),
        )
        .from_(derived_table(moved, "moved"))
        .group_by(*(column.copy() for column in partition), CUTOFF, copy=False)
    )
    return exp.select(
        *(column.copy() for column in partition),
        CUTOFF,
        exp.alias_(next_step(partition, cutoffs, exact), "until"),
        *(exp.alias_(_cumulative("SUM", name, partition), name) for name in summed),
    ).from_(derived_table(steps, "steps"))


def _cutoff_columns(
    keys: Sequence[exp.Column], values: Values, moment_columns: Sequence[str], exact: bool
) -> list[exp.Expr]:
    """The running rows' columns at each requested cutoff: a steady row's running sums; a
    state's users times its value at the cutoff (on the state rows only)."""
    in_state = exp.column("moved", "running")
    stated_row = exp.column("stated", "running").eq(exp.Literal.number(1))
    contributions: dict[str, exp.Expr] = {}
    for name, value in values.stated:
        at_cutoff = with_cutoff(value, exp.column("cutoff"))
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
    return columns
