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


def _taken(positions: Positions, value: exp.Expr, absent: exp.Expr) -> exp.Expr:
    if positions.condition is None:
        return value
    return exp.Case().when(positions.condition.copy(), value).else_(absent)


def events_stage(parts: Split, cutoffs: Sequence[int]) -> exp.Query:
    """``per_user_events``: per judged row in one of the lists, its step ``k``, a count of 1 for
    each list that takes it and its terms; and a row per user (per_user_lists') at the first
    cutoff, with nothing to add."""
    deepest = exp.Literal.number(cutoffs[-1])
    columns = sorted({positions.position for positions in parts.positions})
    selects: list[exp.Select] = []
    for column in columns:
        position = exp.column(column)
        on_column = [p for p in parts.positions if p.position == column]
        select = exp.select("user_id", exp.alias_(_step_of(position, cutoffs), CUTOFF))
        for positions in parts.positions:
            count: exp.Expr = exp.Literal.number(0)
            if positions.position == column:
                count = _taken(positions, exp.Literal.number(1), exp.Literal.number(0))
            select.select(exp.alias_(count, _within(positions)), copy=False)
        for summed in parts.running:
            listed = summed.terms.positions
            term = summed.terms.term.copy() if listed.position == column else _absent(summed)
            if listed.position == column:
                term = _taken(listed, term, _absent(summed))
            select.select(exp.alias_(term, summed.name), copy=False)
        where: exp.Expr = position.copy() <= deepest
        if all(p.condition is not None for p in on_column):
            taken = exp.or_(*(p.condition.copy() for p in on_column if p.condition is not None))
            where = exp.and_(where, exp.paren(taken))
        selects.append(select.from_("judged").where(where))
    start = exp.select("user_id", exp.alias_(exp.Literal.number(cutoffs[0]), CUTOFF))
    for positions in parts.positions:
        start.select(exp.alias_(exp.Literal.number(0), _within(positions)), copy=False)
    for summed in parts.running:
        start.select(exp.alias_(_absent(summed), summed.name), copy=False)
    query: exp.Query = start.from_("per_user_lists")
    for select in selects:
        query = exp.union(query, select, distinct=False)
    return query


def _running(function: str, column: str, table: str | None = None) -> exp.Expr:
    """``function(column) OVER (PARTITION BY user_id ORDER BY k)``: up to the user's step."""
    return exp.Window(
        this=exp.func(function, exp.column(column, table)),
        partition_by=[exp.column("user_id", table)],
        order=exp.Order(expressions=[exp.Ordered(this=exp.column(CUTOFF, table))]),
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


def per_user_stage(parts: Split, constants: Sequence[str], cutoffs: Sequence[int]) -> exp.Select:
    """``per_user``: curve_steps.per_user_stage's rows (user_id, k, until, each value and state
    and its ``<name>_before``) from per_user_events' running sums and per_user_lists'
    ``constants`` (n_relevant, list_length, judged_rows, the cutoff-free aggregates)."""
    step_sums = exp.select("user_id", CUTOFF)
    for positions in parts.positions:
        name = _within(positions)
        step_sums.select(exp.alias_(exp.func("SUM", exp.column(name)), name), copy=False)
    for summed in parts.running:
        step_sums.select(
            exp.alias_(exp.func(summed.function, exp.column(summed.name)), summed.name),
            copy=False,
        )
    step_sums = step_sums.from_(EVENTS).group_by("user_id", CUTOFF)

    steps = "per_user_step_sums"
    running = exp.select(
        exp.column("user_id", steps),
        exp.column(CUTOFF, steps),
        exp.alias_(next_step([exp.column("user_id", steps)], cutoffs, False, steps), "until"),
        *(exp.column(name, "per_user_lists") for name in constants),
    )
    for positions in parts.positions:
        name = _within(positions)
        running.select(exp.alias_(_running("SUM", name, steps), name), copy=False)
    for summed in parts.running:
        running.select(
            exp.alias_(_running(summed.function, summed.name, steps), summed.name), copy=False
        )
    running = running.from_(exp.alias_(exp.paren(step_sums), steps)).join(
        "per_user_lists",
        on=exp.column("user_id", steps).eq(exp.column("user_id", "per_user_lists")),
        join_type="inner",
    )

    values = split_values(parts)
    named = [*values.steady, *values.states]
    valued = exp.select("user_id", CUTOFF, "until").from_(
        exp.alias_(exp.paren(running), "per_user_running")
    )
    for name, value in named:
        valued.select(exp.alias_(_read_running(value), name), copy=False)

    per_user = exp.select("user_id", CUTOFF, "until")
    for name, _ in named:
        per_user.select(name, exp.alias_(_before(name, cutoffs), f"{name}{BEFORE}"), copy=False)
    return per_user.from_(exp.alias_(exp.paren(valued), "per_user_values"))
