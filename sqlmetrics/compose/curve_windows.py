"""The curve plan's per_user in portable SQL: windows over judged's rows instead of DuckDB's
lists (curve_steps.py), for every other dialect.

Each judged row that one of the Split's lists of positions takes (``<position> <= k [AND
<condition>]``) is an *event* at its step: the first requested cutoff at or above its
position. Per user and step, the events' counts and terms are added up (a GROUP BY); running
SUMs and MAXes over the user's steps (windows ordered by the cutoff) give its counts of
positions within the cutoff (``within{j}``) and the sums of their terms (``running{j}``),
which are what curves.Split's values read at ``running{j}[within{j}]``. The values there and,
by LAG, at the step before make curve_steps.py's per_user rows, which curve_cutoffs.py adds up
over the users.

judged is read once, as one chain of selects: Spark computes a CTE again for each of its
readers, and judged holds the ranking. Each judged row comes once per *kind*: kind 0 is the
row itself, at the user's first step, for per_user_lists' aggregates (the user's constants
and population, per_user.sql's, taken over the kind 0 rows only); kind j > 0 is the row as an
event of the j-th position column. The window plan instead computes 700 aggregates over every
judged row for 7 metrics at k = 1..100; here there are a few rows per user (its hits and ideal
positions: ~12 at bench/data/1e7) and a few columns per list.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlmetrics.compose.curve_cutoffs import BEFORE, first_step, next_step, split_values
from sqlmetrics.compose.curves import CUTOFF, Positions, Running, Split
from sqlmetrics.compose.stages import derived_table, numbers_table

ROWS = "judged_kinds"  # judged's rows, once per kind


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


def _events(parts: Split, cutoffs: Sequence[int]) -> exp.Select:
    """judged's rows, once per kind (0, and one per position column that takes the row): its
    columns, its step ``k``, a count of 1 for each list that takes it and its terms."""
    deepest = exp.Literal.number(cutoffs[-1])
    columns = sorted({positions.position for positions in parts.positions})

    def of_kind(column: str) -> exp.Expr:
        return exp.column("kind").eq(exp.Literal.number(columns.index(column) + 1))

    def taken(positions: Positions, value: exp.Expr, absent: exp.Expr) -> exp.Expr:
        condition = of_kind(positions.position)
        if positions.condition is not None:
            condition = exp.and_(condition, positions.condition.copy())
        return exp.Case().when(condition, value).else_(absent)

    step = exp.Case().when(
        exp.column("kind").eq(exp.Literal.number(0)), exp.Literal.number(cutoffs[0])
    )
    rows: list[exp.Expr] = [exp.column("kind").eq(exp.Literal.number(0))]
    for column in columns:
        position = exp.column(column)
        step = step.when(of_kind(column), _step_of(position, cutoffs))
        within: exp.Expr = position.copy() <= deepest
        on_column = [p for p in parts.positions if p.position == column]
        if all(p.condition is not None for p in on_column):
            listed = exp.or_(*(p.condition.copy() for p in on_column if p.condition is not None))
            within = exp.and_(within, exp.paren(listed))
        rows.append(exp.paren(exp.and_(of_kind(column), within)))

    kinds = numbers_table("kinds", "kind", range(len(columns) + 1))
    events = exp.select(exp.Star(), exp.alias_(step, CUTOFF))
    for positions in parts.positions:
        count = taken(positions, exp.Literal.number(1), exp.Literal.number(0))
        events.select(exp.alias_(count, _within(positions)), copy=False)
    for summed in parts.running:
        term = taken(summed.terms.positions, summed.terms.term.copy(), _absent(summed))
        events.select(exp.alias_(term, summed.name), copy=False)
    return events.from_("judged").join(kinds, join_type="cross").where(exp.or_(*rows))


def _of_kind_0(expression: exp.Expr) -> exp.Expr:
    """per_user_lists' expression (aggregates over judged) over the kind 0 rows only: each
    aggregate's argument NULL on the other rows, COUNT(*) a count of kind 0 rows."""
    expression = expression.copy()
    kind_0 = exp.column("kind", ROWS).eq(exp.Literal.number(0))
    for column in expression.find_all(exp.Column):
        if column.table == "judged":
            column.set("table", exp.to_identifier(ROWS))
    for aggregate in list(expression.find_all(exp.AggFunc)):
        argument = aggregate.this
        if isinstance(aggregate, exp.Count) and isinstance(argument, exp.Star):
            aggregate.set("this", exp.Case().when(kind_0.copy(), exp.Literal.number(1)))
        elif isinstance(argument, exp.Distinct):
            argument.set(
                "expressions",
                [exp.Case().when(kind_0.copy(), e.copy()) for e in argument.expressions],
            )
        elif argument is not None:
            aggregate.set("this", exp.Case().when(kind_0.copy(), argument.copy()))
    return expression


def _step_sums(parts: Split, per_user_lists: exp.Select, cutoffs: Sequence[int]) -> exp.Select:
    """Per user and step: the events' counts and terms added up, and at the first step (where
    the kind 0 rows are) per_user_lists' columns and whether the user is one of its population
    (``listed``: its HAVING)."""
    if per_user_lists.args.get("joins") or per_user_lists.args.get("where"):
        raise AssertionError("per_user.sql's select reads judged alone")  # curves.lists_stage
    sums = exp.select("user_id", CUTOFF)
    for positions in parts.positions:
        name = _within(positions)
        sums.select(exp.alias_(exp.func("SUM", exp.column(name)), name), copy=False)
    for summed in parts.running:
        total = exp.func(summed.function, exp.column(summed.name))
        sums.select(exp.alias_(total, summed.name), copy=False)
    # only on the first step (NULL elsewhere, which the running MAX passes over)
    first = first_step(cutoffs)
    for projection in per_user_lists.expressions:
        if projection.alias_or_name != "user_id":
            column = exp.Case().when(first.copy(), _of_kind_0(projection.unalias()))
            sums.select(exp.alias_(column, projection.alias_or_name), copy=False)
    having = per_user_lists.args.get("having")
    population = first.copy()
    if having is not None:
        population = exp.and_(population, exp.paren(_of_kind_0(having.this)))
    listed = exp.Case().when(population, exp.Literal.number(1)).else_(exp.Literal.number(0))
    sums.select(exp.alias_(listed, "listed"), copy=False)
    rows = derived_table(_events(parts, cutoffs), ROWS)
    return sums.from_(rows).group_by("user_id", CUTOFF, copy=False)


def _running(function: str, column: str) -> exp.Expr:
    """``function(column) OVER (PARTITION BY user_id ORDER BY k)``: up to the user's step (the
    first step's value, for a column only the first step has)."""
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


def per_user_stage(parts: Split, per_user_lists: exp.Select, cutoffs: Sequence[int]) -> exp.Select:
    """``per_user``: curve_steps.per_user_stage's rows (user_id, k, until, each value and state
    and its ``<name>_before``) for the users of per_user_lists' population, from judged in one
    chain (the module's docstring)."""
    constants = [p.alias_or_name for p in per_user_lists.expressions]
    constants = [name for name in constants if name != "user_id"]
    running = exp.select(
        "user_id",
        CUTOFF,
        exp.alias_(next_step([exp.column("user_id")], cutoffs, False), "until"),
        # the first step's (the others have none): every user has one, with the kind 0 rows
        *(exp.alias_(_running("MAX", name), name) for name in [*constants, "listed"]),
    )
    for positions in parts.positions:
        name = _within(positions)
        running.select(exp.alias_(_running("SUM", name), name), copy=False)
    for summed in parts.running:
        running.select(exp.alias_(_running(summed.function, summed.name), summed.name), copy=False)
    step_sums = _step_sums(parts, per_user_lists, cutoffs)
    running = running.from_(derived_table(step_sums, "per_user_step_sums"))

    values = split_values(parts)
    named = [*values.steady, *values.states]
    valued = exp.select("user_id", CUTOFF, "until").from_(
        derived_table(running, "per_user_running")
    )
    for name, value in named:
        valued.select(exp.alias_(_read_running(value), name), copy=False)
    valued = valued.where(exp.column("listed").eq(exp.Literal.number(1)), copy=False)

    per_user = exp.select("user_id", CUTOFF, "until")
    for name, _ in named:
        per_user.select(name, exp.alias_(_before(name, cutoffs), f"{name}{BEFORE}"), copy=False)
    return per_user.from_(derived_table(valued, "per_user_values"))
