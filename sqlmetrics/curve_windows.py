"""The curve plan's per_user in portable SQL: windows over judged's rows instead of DuckDB's
lists (curve_steps.py), for every other dialect.

Each judged row that one of the Split's lists of positions takes (``<position> <= k [AND
<condition>]``) is an *event* at its step: the first requested cutoff at or above its
position. Per user and step, the events' counts and terms are added up (``per_user_events``,
then a GROUP BY); running SUMs and MAXes over the user's steps (windows ordered by the cutoff)
give its counts of positions within the cutoff (``within{j}``) and the sums of their terms
(``running{j}``), which are what curves.Split's values read at ``running{j}[within{j}]``. Every
user also has a step at the first requested cutoff. The values there and, by LAG, at the step
before make curve_steps.py's per_user rows, which curve_sums.py adds up over the users.

The window plan computes 700 aggregates over every judged row for 7 metrics at k = 1..100;
here there are a few rows per user (its hits and ideal positions: ~12 at bench/data/1e7) and
a few columns per list.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlmetrics.curve_sums import BEFORE, first_step, next_step, split_values
from sqlmetrics.curves import CUTOFF, Positions, Running, Split

EVENTS = "per_user_events"


def _step_of(position: exp.Expr, cutoffs: Sequence[int]) -> exp.Expr:
    """The first requested cutoff at or above a position: per run of consecutive cutoffs a..b,
    ``WHEN p <= a THEN a`` and, for a longer run, ``WHEN p <= b THEN CEIL(p)`` (k = 1..100 is
    two branches, not a hundred)."""
    runs: list[list[int]] = []
    for k in cutoffs:
        if runs and k == runs[-1][-1] + 1:
            runs[-1].append(k)
        else:
            runs.append([k])
    step = exp.Case()
    for run in runs:
        first, last = run[0], run[-1]
        step = step.when(position.copy() <= exp.Literal.number(first), exp.Literal.number(first))
        if last > first:
            ceiling = exp.cast(exp.func("CEIL", position.copy()), "BIGINT")
            step = step.when(position.copy() <= exp.Literal.number(last), ceiling)
    return step


def _within(positions: Positions) -> str:
    return f"within{positions.name[2:]}"


def _absent(summed: Running) -> exp.Expr:
    """A running column's value on a row that is not its event: nothing to add, or to max."""
    if summed.function == "MAX":
        return exp.cast(exp.Null(), "DOUBLE")
    return exp.Literal.number(0)


def _kinds(count: int) -> exp.Expr:
    """A table ``kinds(kind)`` of 1..count: judged read once for every position column."""
    rows: exp.Query = exp.select(exp.alias_(exp.Literal.number(1), "kind"))
    for kind in range(2, count + 1):
        rows = exp.union(rows, exp.select(exp.Literal.number(kind)), distinct=False)
    return exp.alias_(exp.paren(rows), "kinds")


def events_stage(parts: Split, constants: Sequence[str], cutoffs: Sequence[int]) -> exp.Query:
    """``per_user_events``: per judged row and list of positions that takes it (a *kind* per
    position column, judged read once), its step ``k``, a count of 1 for each list that takes
    it and its terms; and a row per user of per_user_lists (``listed`` 1) at the first cutoff,
    with nothing to add and its ``constants``, which every step reads (so that per_user_lists
    is read once: Spark computes a CTE again for each of its readers)."""
    deepest = exp.Literal.number(cutoffs[-1])
    columns = sorted({positions.position for positions in parts.positions})
    kind = exp.column("kind")

    def of_kind(column: str) -> list[exp.Expr]:
        """The condition on ``kind`` for a position column's rows (none with one column)."""
        if len(columns) == 1:
            return []
        return [kind.copy().eq(exp.Literal.number(columns.index(column) + 1))]

    def taken(positions: Positions, value: exp.Expr, absent: exp.Expr) -> exp.Expr:
        conditions = of_kind(positions.position)
        if positions.condition is not None:
            conditions.append(positions.condition.copy())
        if not conditions:
            return value
        return exp.Case().when(exp.and_(*conditions), value).else_(absent)

    steps: list[tuple[list[exp.Expr], exp.Expr]] = []
    taken_rows: list[exp.Expr] = []
    for column in columns:
        position = exp.column(column)
        steps.append((of_kind(column), _step_of(position, cutoffs)))
        within: exp.Expr = position.copy() <= deepest
        on_column = [p for p in parts.positions if p.position == column]
        if all(p.condition is not None for p in on_column):
            listed = exp.or_(*(p.condition.copy() for p in on_column if p.condition is not None))
            within = exp.and_(within, exp.paren(listed))
        taken_rows.append(exp.paren(exp.and_(*of_kind(column), within)))
    step_of_row: exp.Expr = steps[0][1]
    if len(columns) > 1:
        step_of_row = exp.Case()
        for conditions, step in steps:
            step_of_row = step_of_row.when(exp.and_(*conditions), step)

    events = exp.select("user_id", exp.alias_(step_of_row, CUTOFF))
    for positions in parts.positions:
        count = taken(positions, exp.Literal.number(1), exp.Literal.number(0))
        events.select(exp.alias_(count, _within(positions)), copy=False)
    for summed in parts.running:
        term = taken(summed.terms.positions, summed.terms.term.copy(), _absent(summed))
        events.select(exp.alias_(term, summed.name), copy=False)
    for name in constants:
        events.select(exp.alias_(exp.Null(), name), copy=False)
    events.select(exp.alias_(exp.Literal.number(0), "listed"), copy=False)
    events = events.from_("judged")
    if len(columns) > 1:
        events = events.join(_kinds(len(columns)), join_type="cross")
    events = events.where(exp.or_(*taken_rows))

    start = exp.select("user_id", exp.alias_(exp.Literal.number(cutoffs[0]), CUTOFF))
    for positions in parts.positions:
        start.select(exp.alias_(exp.Literal.number(0), _within(positions)), copy=False)
    for summed in parts.running:
        start.select(exp.alias_(_absent(summed), summed.name), copy=False)
    start.select(*constants, exp.alias_(exp.Literal.number(1), "listed"), copy=False)
    return exp.union(start.from_("per_user_lists"), events, distinct=False)


def _running(function: str, column: str) -> exp.Expr:
    """``function(column) OVER (PARTITION BY user_id ORDER BY k)``: up to the user's step."""
    return exp.Window(
        this=exp.func(function, exp.column(column)),
        partition_by=[exp.column("user_id")],
        order=exp.Order(expressions=[exp.Ordered(this=exp.column(CUTOFF))]),
    )


def _before(name: str, cutoffs: Sequence[int]) -> exp.Expr:
    """A value at the user's step before: NULL on its first step, written out (ClickHouse's
    LAG gives 0 there for a column without NULLs)."""
    return exp.Case().when(exp.Not(this=first_step(cutoffs)), _running("LAG", name))


def _read_running(value: exp.Expr) -> exp.Expr:
    """A Split value with ``running{j}[within{j}]`` (a list read at a count) read as the
    running column, which is already the sum up to the step."""

    def plain(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Bracket) and isinstance(node.this, exp.Column):
            return exp.column(node.this.name)
        return node

    return value.copy().transform(plain)


def _per_user(column: str) -> exp.Expr:
    """``MAX(column) OVER (PARTITION BY user_id)``: the value of the user's start row."""
    return exp.Window(
        this=exp.func("MAX", exp.column(column)), partition_by=[exp.column("user_id")]
    )


def per_user_stage(parts: Split, constants: Sequence[str], cutoffs: Sequence[int]) -> exp.Select:
    """``per_user``: curve_steps.per_user_stage's rows (user_id, k, until, each value and state
    and its ``<name>_before``) from per_user_events' running sums and the ``constants`` of the
    user's start row (n_relevant, list_length, judged_rows, the cutoff-free aggregates), for
    the users of per_user_lists (judged has others: per_user.sql's population leaves them
    out)."""
    step_sums = exp.select("user_id", CUTOFF)
    for positions in parts.positions:
        name = _within(positions)
        step_sums.select(exp.alias_(exp.func("SUM", exp.column(name)), name), copy=False)
    for summed in parts.running:
        step_sums.select(
            exp.alias_(exp.func(summed.function, exp.column(summed.name)), summed.name),
            copy=False,
        )
    for name in [*constants, "listed"]:
        step_sums.select(exp.alias_(exp.func("MAX", exp.column(name)), name), copy=False)
    step_sums = step_sums.from_(EVENTS).group_by("user_id", CUTOFF)

    running = exp.select(
        "user_id",
        CUTOFF,
        exp.alias_(next_step([exp.column("user_id")], cutoffs, False), "until"),
        *(exp.alias_(_per_user(name), name) for name in [*constants, "listed"]),
    )
    for positions in parts.positions:
        name = _within(positions)
        running.select(exp.alias_(_running("SUM", name), name), copy=False)
    for summed in parts.running:
        running.select(exp.alias_(_running(summed.function, summed.name), summed.name), copy=False)
    running = running.from_(exp.alias_(exp.paren(step_sums), "per_user_step_sums"))

    values = split_values(parts)
    named = [*values.steady, *values.states]
    valued = exp.select("user_id", CUTOFF, "until").from_(
        exp.alias_(exp.paren(running), "per_user_running")
    )
    for name, value in named:
        valued.select(exp.alias_(_read_running(value), name), copy=False)
    valued = valued.where(exp.column("listed").eq(exp.Literal.number(1)))

    per_user = exp.select("user_id", CUTOFF, "until")
    for name, _ in named:
        per_user.select(name, exp.alias_(_before(name, cutoffs), f"{name}{BEFORE}"), copy=False)
    return per_user.from_(exp.alias_(exp.paren(valued), "per_user_values"))


def stages(
    parts: Split, per_user_lists: exp.Select, cutoffs: Sequence[int]
) -> list[tuple[str, exp.Expr]]:
    """The CTEs after ``per_user_lists`` (curves.lists_stage without lists): per_user_events
    and per_user."""
    constants = [p.alias_or_name for p in per_user_lists.expressions]
    constants = [name for name in constants if name != "user_id"]
    return [
        (EVENTS, events_stage(parts, constants, cutoffs)),
        ("per_user", per_user_stage(parts, constants, cutoffs)),
    ]
