"""The curve plan's summaries: from per_cutoff's sums per group and requested cutoff
(curve_cutoffs.py) to the summary row (``final``), the t-interval's moments (``moments``) and
the curves' rows (``per_cutoff_rows``).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlmetrics.catalog.metrics import MetricRequest, parsed
from sqlmetrics.compose.curve_cutoffs import per_cutoff, split_values, with_cutoff
from sqlmetrics.compose.curves import CUTOFF, Split, requests_at_cutoffs
from sqlmetrics.compose.inputs import Inputs
from sqlmetrics.compose.stages import derived_table, group_key, nulls_last
from sqlmetrics.compose.summary import partial_columns, ratio, summary
from sqlmetrics.compose.sums import rounded


def _picked(condition: exp.Expr, value: exp.Expr) -> exp.Expr:
    """``MAX(CASE WHEN condition THEN value END)``: a cutoff's value from its row."""
    return exp.func("MAX", exp.Case().when(condition.copy(), value.copy()))


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


def _partial_names(request: MetricRequest, name: str) -> tuple[str, str]:
    """A pass's partial sums of a family: m{i}_numerator and m{i}_denominator (micro), else
    m{i}_sum and m{i}_users."""
    if request.metric.micro:
        return f"{name}_numerator", f"{name}_denominator"
    return f"{name}_sum", f"{name}_users"


def _partial(request: MetricRequest, name: str, index: int) -> exp.Expr:
    """A family's first or second partial sum (_partial_names)."""
    if request.metric.micro:
        return _sum(_partial_names(request, name)[index])
    return _sum(name, request.metric.summed) if index == 0 else _count(name)


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
    ).from_(derived_table(table, "sums"))


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
            names = _partial_names(request, name)
            for index, partial in enumerate((numerator, denominator)):
                if partial is not None:
                    if names[index] not in columns:  # composed once, for the first cutoff
                        columns[names[index]] = _partial(request, name, index)
                    labels.append(exp.alias_(_picked(at_cutoff, exp.column(names[index])), partial))
            continue
        # a family's value is composed once, for the first of its cutoffs
        if name not in columns:
            columns[name] = _summary_value(request, name, exact)
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
        derived_table(table, "per_cutoff")
    )
    if keys:
        # fresh nodes for each clause: a node shared by two parents is rewritten in one only
        # (BigQuery's writer replaces a grouped column by its alias)
        query = query.group_by(*[exp.column(key) for key in keys], copy=False).order_by(
            *nulls_last([exp.column(key) for key in keys]), copy=False
        )
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
    ).from_(derived_table(table, "per_cutoff"))
    for index, (_, family, at_cutoff) in enumerate(pivots):
        for slot, column in (("n", "count"), ("s", "sum"), ("q", "squares")):
            picked = _picked(at_cutoff, exp.column(f"{family.name}_{column}"))
            query.select(exp.alias_(picked, f"{slot}{index}"), copy=False)
    if keys:
        query = query.group_by(*(exp.column(key) for key in keys), copy=False)
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
            value = with_cutoff(stated[family.name], cutoff)
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
    ).from_(derived_table(query, "moments"))
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
    spread_table = derived_table(spread, "spread")
    if condition is None:
        return joined.join(spread_table, join_type="cross", copy=False)
    return joined.join(spread_table, on=condition, join_type="left", copy=False)


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
        .from_(derived_table(table, "per_cutoff"))
        .order_by(*nulls_last(order), exp.column(CUTOFF), copy=False)
    )
