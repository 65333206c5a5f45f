"""The result rows read from ``per_user``, and evaluating in passes over the users.

``final`` writes a summary row per group (each request's mean, sum or micro ratio over the
users of its population, exact on DuckDB: sums.aggregate), or a row per user, joined to the
metrics over the lists; with ``sums``, a pass's partial sums instead. The passes
(engines/duckdb_passes.py) are described here too: ``UserPass`` (the users of one pass), whether
the requests can be split into passes (``splits_into_passes``), and the columns of a pass's
partial sums (``partial_columns``). curve_steps.py and arms.py write their summaries with the
same helpers (``ratio``, ``summary``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose.inputs import Inputs
from sqlmetrics.compose.per_user import MetricColumn
from sqlmetrics.compose.stages import derived_table, group_key, nulls_last, same_group
from sqlmetrics.compose.sums import aggregate


def final(
    columns: list[MetricColumn],
    inputs: Inputs,
    per_user: bool,
    exact_sums: bool,
    sums: bool = False,
    population: bool = False,
) -> exp.Select:
    """The result rows from per_user. ``population``: per_user also holds users outside the
    ranking population (for the other metrics), so ``users`` counts ``in_population``."""
    over_lists = [column for column in columns if column.over_lists]
    # Joined to the CTEs of the metrics over the lists, per_user's columns need their table.
    table = "per_user" if over_lists else None
    keys = [group_key(i) for i in range(len(inputs.groups))]
    if per_user:
        return _user_rows(columns, inputs, keys, table)
    if sums:  # a pass's partial sums, combined by the caller (partial_columns names them)
        aggregates = _pass_sums(columns, table, exact_sums)
    else:
        aggregates = _summaries(columns, table, keys, exact_sums)
    return _group_rows(aggregates, inputs, keys, over_lists, population)


def _named_groups(keys: Sequence[str], inputs: Inputs, table: str | None) -> list[exp.Expr]:
    """The group columns of ``table``, named as the user's."""
    return [
        exp.alias_(exp.column(key, table), exp.to_identifier(g.name, quoted=True))
        for key, g in zip(keys, inputs.groups, strict=True)
    ]


def _label(column: MetricColumn, value: exp.Expr) -> exp.Expr:
    """A request's value, named by its label (its square root or exp where its metric asks)."""
    if column.request.metric.square_root:
        value = exp.func("SQRT", value)
    if column.request.metric.exponential:
        value = exp.func("EXP", value)
    # exp.Alias rather than alias_, which would name a scalar subquery like a table
    # (Oracle then drops the AS, and the text no longer reads back the same).
    return exp.Alias(this=value, alias=exp.to_identifier(column.request.label, quoted=True))


def _joined(
    query: exp.Select,
    over_lists: Sequence[MetricColumn],
    suffix: str,
    on: Sequence[str],
    left: str | None,
) -> exp.Select:
    """``left`` (per_user) left joined to each ``m{i}{suffix}`` CTE on the ``on`` columns."""
    for column in over_lists:
        if suffix == "_users" and column.request.metric.group_level:
            continue
        other = f"{column.names[0]}{suffix}"
        if not on:  # without groups the values are scalar subqueries (see _summaries)
            continue
        condition = exp.and_(
            *(
                exp.column(name, left).eq(exp.column(name, other))
                if name == "user_id"
                else same_group(exp.column(name, left), exp.column(name, other))
                for name in on
            )
        )
        query = query.join(other, on=condition, join_type="left", copy=False)
    return query


def _user_rows(
    columns: list[MetricColumn], inputs: Inputs, keys: Sequence[str], table: str | None
) -> exp.Select:
    """A row per user: the groups, the user, each request's value."""
    # A metric over the lists shows the user's own value (NULL without a list); a
    # group-level one has no per-user value: NULL.
    values = [
        (
            exp.cast(exp.Null(), "DOUBLE")
            if column.request.metric.group_level
            else exp.column(column.names[0], f"{column.names[0]}_users")
        )
        if column.over_lists
        else ratio(*(exp.column(name, table) for name in column.names))
        if column.request.metric.micro
        else exp.column(column.names[0], table)
        for column in columns
    ]
    user = exp.alias_(
        exp.column("user_id", table), exp.to_identifier(inputs.user.name, quoted=True)
    )
    # Every part of the query is made here: the builders need not copy it at each step.
    query = exp.select(
        *_named_groups(keys, inputs, table),
        user,
        *(_label(c, v) for c, v in zip(columns, values, strict=True)),
        copy=False,
    ).from_("per_user", copy=False)
    over_lists = [column for column in columns if column.over_lists]
    query = _joined(query, over_lists, "_users", [*keys, "user_id"], left=table)
    order = [exp.column(key, table) for key in keys]
    return query.order_by(*nulls_last([*order, exp.column("user_id", table)]), copy=False)


def _summed(
    function: str, name: str, table: str | None, exact_sums: bool, integers: bool = False
) -> exp.Expr:
    """``function`` of per_user's column (sums.aggregate: exact on DuckDB, the same bits on
    every run and plan)."""
    return aggregate(function, exp.column(name, table), exact_sums, integers)


def _pass_sums(columns: list[MetricColumn], table: str | None, exact_sums: bool) -> list[exp.Expr]:
    """A pass's partial sums and counts (partial_columns names them)."""
    return [
        exp.alias_(
            _summed("COUNT", source, table, exact_sums)
            if name != source
            else _summed("SUM", source, table, exact_sums, integers=column.request.metric.summed),
            name,
        )
        for source, name, column in summed_names(columns)
    ]


def _summaries(
    columns: list[MetricColumn], table: str | None, keys: Sequence[str], exact_sums: bool
) -> list[exp.Expr]:
    """Each request's summary over the users: its mean or sum, its micro ratio, or the value
    of a metric over the lists."""

    def list_value(name: str) -> exp.Expr:
        """One row per group in m{i}_groups: MAX reads it. Without groups it is a scalar
        subquery rather than a cross join, so a population of no user (no relevant
        interaction) still gives the value, which reads only the lists."""
        value = exp.func("MAX", exp.column(name, f"{name}_groups"))
        if keys:
            return value
        return exp.select(exp.alias_(value, name)).from_(f"{name}_groups").subquery()

    return [
        _label(column, list_value(column.names[0]))
        if column.over_lists
        else _label(
            column, ratio(*(_summed("SUM", name, table, exact_sums) for name in column.names))
        )
        if column.request.metric.micro
        else _label(
            column,
            _summed(
                summary(column.request),
                column.names[0],
                table,
                exact_sums,
                integers=column.request.metric.summed,
            ),
        )
        for column in columns
    ]


def _group_rows(
    aggregates: list[exp.Expr],
    inputs: Inputs,
    keys: Sequence[str],
    over_lists: Sequence[MetricColumn],
    population: bool,
) -> exp.Select:
    """A row per group: its columns, ``users`` and the ``aggregates``."""
    table = "per_user" if over_lists else None
    left = table
    counted: exp.Expr = exp.column("in_population", table) if population else exp.Star()
    if over_lists and keys:
        # A group of lists without a population user still has its metrics over the lists:
        # the rows are the groups of per_user and of every m{i}_groups (_list_groups).
        counted = exp.column("in_population" if population else "user_id", table)
        left = LIST_GROUPS
    order = [exp.column(key, left) for key in keys]
    users = exp.alias_(exp.func("COUNT", counted), "users")
    # The aggregates and every other part are made for this query: handed over, not copied.
    query = exp.select(*_named_groups(keys, inputs, left), users, *aggregates, copy=False)
    query = (
        _list_groups(query, keys, over_lists)
        if left == LIST_GROUPS
        else query.from_("per_user", copy=False)
    )
    query = _joined(query, over_lists, "_groups", keys, left=left)
    if order:
        ordered = nulls_last([column.copy() for column in order])  # a node has one parent
        query = query.group_by(*order, copy=False).order_by(*ordered, copy=False)
    return query


LIST_GROUPS = "list_groups"


def _list_groups(
    query: exp.Select, keys: Sequence[str], over_lists: Sequence[MetricColumn]
) -> exp.Select:
    """``query`` from every group of per_user or of a metric over the lists (DISTINCT over a
    UNION ALL), per_user left joined to it on the group columns."""
    parts = [exp.select(*keys).from_("per_user")]
    parts += [exp.select(*keys).from_(f"{column.names[0]}_groups") for column in over_lists]
    union: exp.Query = parts[0]
    for part in parts[1:]:
        union = exp.union(union, part, distinct=False)
    frame = exp.select(*keys).distinct().from_(derived_table(union, "listed_groups"))
    on = exp.and_(
        *(same_group(exp.column(key, LIST_GROUPS), exp.column(key, "per_user")) for key in keys)
    )
    return query.from_(derived_table(frame, LIST_GROUPS), copy=False).join(
        "per_user", on=on, join_type="left", copy=False
    )


def summary(request: MetricRequest) -> str:
    """The aggregate of a per-user metric over the users: AVG, or SUM for aggregate: sum."""
    return "SUM" if request.metric.summed else "AVG"


def ratio(numerator: exp.Expr, denominator: exp.Expr) -> exp.Expr:
    return exp.Div(this=numerator, expression=exp.func("NULLIF", denominator, 0))


@dataclass(frozen=True)
class UserPass:
    """The users of one of ``passes`` passes: ``hash(user) % passes = index``, or with
    ``bounds`` (numeric user ids) ``lower <= user < upper`` (None: no bound), which a file
    clustered by user answers by reading only its part; NULL users go to the first pass."""

    index: int
    passes: int
    bounds: tuple[float | None, float | None] | None = None

    def condition(self, user: exp.Expr) -> exp.Expr:
        if self.bounds is None:
            return exp.EQ(
                this=exp.Mod(
                    this=exp.func("HASH", user), expression=exp.Literal.number(self.passes)
                ),
                expression=exp.Literal.number(self.index),
            )
        lower, upper = self.bounds
        limits: list[exp.Expr] = []
        if lower is not None:
            limits.append(exp.GTE(this=user.copy(), expression=exp.convert(lower)))
        if upper is not None:
            limits.append(exp.LT(this=user.copy(), expression=exp.convert(upper)))
        inside = exp.and_(*limits) if limits else exp.true()
        if self.index == 0:
            return exp.or_(inside, exp.Is(this=user.copy(), expression=exp.Null()))
        return inside


# Columns of scored.sql and rated.sql computed over every list of a group (windows without
# user_id): a metric reading them cannot be evaluated in passes over the users.
GROUP_WIDE_COLUMNS = frozenset(
    {
        "negatives_below_in_group",
        "negatives_in_group",
        "positives_in_group",
        "positives_at_or_above_in_group",
        "negatives_at_or_above_in_group",
        "positives_at_score_in_group",
        "negatives_at_score_in_group",
        "mean_rating",
    }
)


def reads_whole_group(request: MetricRequest) -> bool:
    """Whether the request compares rows across users (auc, r2), so passes cannot split it."""
    return any(
        column.name in GROUP_WIDE_COLUMNS for column in request.metric.query.find_all(exp.Column)
    )


def splits_into_passes(requests: Sequence[MetricRequest]) -> bool:
    """Whether passes over the users give every request: none compares rows across users
    (reads_whole_group) or reads the lists of a whole group (the list metrics, refused in
    compose's passes)."""
    return not any(reads_whole_group(r) or r.metric.reads == "lists" for r in requests)


def partial_columns(requests: Sequence[MetricRequest]) -> list[tuple[str, str, str | None]]:
    """Per request of a pass's summary: (label, numerator column, denominator column or None
    for a mean over ``users``). When a request has a population of its own, the means count
    their users (``m{i}_users``): they may differ from request to request."""
    counted = any(r.population is not None for r in requests)
    return [
        (r.label, f"m{i + 1}_numerator", f"m{i + 1}_denominator")
        if r.metric.micro
        else (r.label, f"m{i + 1}", f"m{i + 1}_users" if counted else None)
        for i, r in enumerate(requests)
    ]


def summed_names(columns: Sequence[MetricColumn]) -> list[tuple[str, str, MetricColumn]]:
    """(column of per_user, its name in a pass's summary, its MetricColumn), see
    partial_columns."""
    named = partial_columns([column.request for column in columns])
    return [
        (column.names[0] if name.endswith("_users") else name, name, column)
        for column, (_, *parts) in zip(columns, named, strict=True)
        for name in parts
        if name is not None
    ]
