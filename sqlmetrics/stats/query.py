"""Confidence intervals and paired comparisons, in SQL, as a layer over the per-user values
(docs/METRICS.md, "Intervals and tests").

``compose(..., per_user=True)`` gives one row per (group, user) with one column per metric. This
module takes that query as CTEs and adds the statistics on top, so that they run on every engine
and dialect the per-user query runs on:

- ``moments``: per group and metric, the count, sum and sum of squares of the per-user values
  (one pass): Student's t-interval; for a comparison the same over the paired differences,
  with the sums of each side over the paired users.
- ``replicates`` (ci_method="bootstrap", and always for a comparison): a Poisson bootstrap and
  a sign-flip randomization test over hash buckets. The users of a group are dealt into
  ``buckets`` buckets (the n-th user in the byte order of the user id's text into bucket
  n mod buckets) and summed per
  bucket; each replicate then weighs each bucket by a Poisson(1) draw (and flips its sign by a
  fair coin) from draws.uniform_draw(bucket, replicate, seed). The cost past the per-user
  values is groups x buckets x replicates small rows, whatever the number of users.

The t quantiles, p-values, percentiles and Holm's correction of these few numbers are computed
in Python from the query's rows: sqlmetrics/stats/inference.py (``finish_*``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose.diagnostics import CHECKS, DIAGNOSTICS, KIND
from sqlmetrics.compose.distributions import QUANTILE_LEVELS, spread_aggregates
from sqlmetrics.compose.inputs import Inputs, Options
from sqlmetrics.compose.query import compose
from sqlmetrics.compose.sums import aggregate
from sqlmetrics.gc_paused import gc_paused
from sqlmetrics.stats import nodes, replicates
from sqlmetrics.stats.resampling import Resampling


@dataclass(frozen=True)
class Layout:
    """The columns of the statistics query's result: the kind of row, the group columns (by
    their labels), ``replicate``, ``users``, ``m{i}_{slot}`` per metric, and the counts of the
    diagnostics rows. See ``compose_ci`` and ``compose_compare`` for what each slot holds."""

    groups: tuple[str, ...]
    metrics: int
    slots: tuple[str, ...]
    diagnostics: bool

    def metric_column(self, index: int, slot: str) -> str:
        return f"m{index}_{slot}"


def _hoisted(query: exp.Query) -> tuple[list[exp.CTE], exp.Query]:
    """A composed query's CTEs and its body, unordered (a CTE's order is wasted work)."""
    with_ = query.args.get("with_")
    query.set("with_", None)
    query.set("order", None)
    return (list(with_.expressions) if with_ else []), query


def _per_user_values(
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    dialect: str,
    diagnostics: bool,
    score_floor: float | None = None,
) -> tuple[list[exp.CTE], list[str], list[str]]:
    """CTEs ending in ``stats_rows`` (compose's per-user query, with its diagnostics rows when
    asked) and ``stats_values``: g0.. (group values), u (user), v0.. (metric values as DOUBLE).
    Returns the CTEs, the group labels and the metric labels."""
    query = compose(
        requests,
        inputs,
        options,
        per_user=True,
        dialect=dialect,
        diagnostics=diagnostics,
        score_floor=score_floor,
    )
    ctes, body = _hoisted(query)
    groups = [group.name for group in inputs.groups]
    labels = [request.label for request in requests]
    values = exp.select(
        *(exp.alias_(nodes.column(name), f"g{i}") for i, name in enumerate(groups)),
        exp.alias_(nodes.column(inputs.user.name), "u"),
        *(exp.alias_(nodes.double(nodes.column(label)), f"v{i}") for i, label in enumerate(labels)),
    ).from_("stats_rows")
    if diagnostics:
        values = values.where(exp.column(KIND).eq(exp.Literal.string("metrics")))
    ctes += [nodes.cte("stats_rows", body), nodes.cte("stats_values", values)]
    return ctes, groups, labels


def _curve_moments(
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    dialect: str,
    diagnostics: bool,
    score_floor: float | None,
    distributions: Sequence[int] = (),
) -> tuple[list[exp.CTE], list[str]] | None:
    """The t-interval of many cutoffs (the report's curves) from the curve plan's sums per
    (group, cutoff) (sqlmetrics/compose/curve_sums.py), when compose takes it for these requests:
    CTEs ending in ``stats_rows`` (evaluate's query, for its diagnostics rows) and
    ``stats_moments`` (with the spread_aggregates of ``distributions``), and the group labels.
    None: the per-user query (_per_user_values)."""
    from sqlmetrics.compose import curve_sums
    from sqlmetrics.compose.plan import choose_plan

    chosen = choose_plan(requests, inputs, options, dialect)
    if chosen.per_user != "curves" or chosen.curve is None:
        return None
    query = compose(
        requests, inputs, options, dialect=dialect, diagnostics=diagnostics, score_floor=score_floor
    )
    ctes, body = _hoisted(query)
    moments = curve_sums.moments(
        chosen.curve, requests, len(inputs.groups), distributions, exact=chosen.same_bits
    )
    ctes += [nodes.cte("stats_rows", body), nodes.cte("stats_moments", moments)]
    return ctes, [group.name for group in inputs.groups]


def _result(
    layout: Layout,
    moments: exp.Select,
    replicates: exp.Select | None,
    counts: exp.Select | None,
    ctes: list[exp.CTE],
    quantiles: exp.Select | None = None,
) -> exp.Query:
    """The union of the rows of each kind, in the layout's columns."""
    parts: list[exp.Select] = [moments]
    for rows in (replicates, counts, quantiles):
        if rows is not None:
            parts.append(rows)
    if layout.diagnostics:
        parts.append(
            exp.select(
                exp.alias_(exp.Literal.string("diagnostics"), KIND),
                *(exp.alias_(nodes.column(name), nodes.quoted(name)) for name in layout.groups),
                exp.alias_(nodes.null("BIGINT"), "replicate"),
                exp.alias_(nodes.null("BIGINT"), "users"),
                *(
                    exp.alias_(nodes.null(), layout.metric_column(i, slot))
                    for i in range(layout.metrics)
                    for slot in layout.slots
                ),
                *(exp.column(name) for name in (*DIAGNOSTICS, *CHECKS)),
            )
            .from_("stats_rows")
            .where(exp.column(KIND).eq(exp.Literal.string("diagnostics")))
        )
    query = parts[0]
    if len(parts) > 1:
        # A SELECT over the union rather than the union itself: dialects.py gives ClickHouse's
        # settings (join_use_nulls, which the per-user query needs) to a SELECT only.
        union = exp.union(*parts, distinct=False)
        query = exp.select(
            *(exp.column(nodes.quoted(name), "stats_result") for name in parts[0].named_selects)
        ).from_(union.subquery("stats_result"))
    query.set("with_", exp.With(expressions=ctes))
    return query


def _row(
    layout: Layout,
    kind: str,
    source: str,
    replicate: exp.Expr | None,
    users: exp.Expr | None,
    slots: dict[tuple[int, str], exp.Expr],
) -> exp.Select:
    """One kind of result row from ``source`` (which has g0..): slots not given are NULL."""
    counts = [exp.alias_(nodes.null("BIGINT"), name) for name in (*DIAGNOSTICS, *CHECKS)]
    # built without copies: every node here is new (a query of 400 metrics has 1,200 slots)
    return (
        exp.Select()
        .select(
            exp.alias_(exp.Literal.string(kind), KIND),
            *(
                exp.alias_(exp.column(f"g{i}"), nodes.quoted(name))
                for i, name in enumerate(layout.groups)
            ),
            exp.alias_(
                nodes.cast(replicate, "BIGINT") if replicate else nodes.null("BIGINT"), "replicate"
            ),
            exp.alias_(nodes.cast(users, "BIGINT") if users else nodes.null("BIGINT"), "users"),
            *(
                exp.alias_(
                    nodes.double(slots[(i, slot)]) if (i, slot) in slots else nodes.null(),
                    layout.metric_column(i, slot),
                    copy=False,
                )
                for i in range(layout.metrics)
                for slot in layout.slots
            ),
            *(counts if layout.diagnostics else []),
            copy=False,
        )
        .from_(source, copy=False)
    )


def _distribution_rows(
    layout: Layout, summary: str, wanted: Sequence[int]
) -> tuple[exp.CTE, exp.Select]:
    """Rows ``quantiles`` from ``summary`` (per group g0.., spread_aggregates' columns of the
    wanted requests): per group and level (``replicate``: 0 .. QUANTILE_LEVELS - 1), n = the
    value at that level, s = the users at 0, q = the users with a value."""
    level = exp.column("level")
    unnested = exp.Unnest(
        expressions=[exp.func("RANGE", exp.Literal.number(QUANTILE_LEVELS))],
        alias=exp.TableAlias(
            this=exp.to_identifier("levels"), columns=[exp.to_identifier("level")]
        ),
    )
    at_level = exp.select("*").from_(summary).join(unnested, join_type="cross")
    slots: dict[tuple[int, str], exp.Expr] = {}
    for index in wanted:
        position = exp.Add(this=level.copy(), expression=exp.Literal.number(1))
        element = exp.Bracket(this=exp.column(f"d{index}"), expressions=[position], offset=1)
        slots[(index, "n")] = element
        slots[(index, "s")] = exp.column(f"z{index}")
        slots[(index, "q")] = exp.column(f"c{index}")
    rows = _row(layout, "quantiles", "stats_quantile_rows", level, None, slots)
    return nodes.cte("stats_quantile_rows", at_level), rows


def _curve_ci(
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    dialect: str,
    diagnostics: bool,
    score_floor: float | None,
    distributions: Sequence[int],
) -> exp.Query | None:
    """compose_ci's t-interval query over the curve plan's moments, or None without one."""
    curve = _curve_moments(
        requests, inputs, options, dialect, diagnostics, score_floor, distributions
    )
    if curve is None:
        return None
    ctes, groups = curve
    layout = Layout(tuple(groups), len(requests), ("n", "s", "q"), diagnostics)
    slots: dict[tuple[int, str], exp.Expr] = {
        (i, slot): exp.column(f"{slot}{i}")
        for i in range(len(requests))
        for slot in ("n", "s", "q")
    }
    moment_rows = _row(layout, "moments", "stats_moments", None, exp.column("users"), slots)
    quantile_rows = None
    if distributions:  # curve_sums.moments' stats_moments has their columns too
        at_level, quantile_rows = _distribution_rows(layout, "stats_moments", distributions)
        ctes.append(at_level)
    return _result(layout, moment_rows, None, None, ctes, quantile_rows)


def _value_moments(keys: list[exp.Expr], metrics: range, dialect: str) -> exp.Select:
    """Per group: users, and per metric n{i}, s{i}, q{i}: the count, sum and sum of squares of
    the per-user values."""
    return nodes.grouped(
        exp.select(
            *(key.copy() for key in keys),
            exp.alias_(exp.func("COUNT", exp.Star()), "users"),
            *(exp.alias_(exp.func("COUNT", exp.column(f"v{i}")), f"n{i}") for i in metrics),
            *(
                # exact on DuckDB (sums.py), as evaluate's means: the same bits without ci=
                exp.alias_(aggregate("SUM", exp.column(f"v{i}"), dialect == "duckdb"), f"s{i}")
                for i in metrics
            ),
            *(
                exp.alias_(
                    exp.func(
                        "SUM", exp.Mul(this=exp.column(f"v{i}"), expression=exp.column(f"v{i}"))
                    ),
                    f"q{i}",
                )
                for i in metrics
            ),
        ).from_("stats_values"),
        keys,
    )


def _bootstrap(
    layout: Layout, keys: list[exp.Expr], metrics: range, resampling: Resampling
) -> tuple[list[exp.CTE], exp.Select]:
    """The bootstrap's CTEs over the per-user values and its rows ``replicates``."""
    values = nodes.cte(
        "stats_resampled_values",
        exp.select(
            *(key.copy() for key in keys),
            exp.column("u"),
            *(exp.alias_(exp.column(f"v{i}"), f"d{i}") for i in metrics),
        ).from_("stats_values"),
    )
    ctes = [values]
    ctes += replicates.resampled(
        "stats_resampled_values", len(keys), len(metrics), resampling, False
    )
    replicate_rows = _row(
        layout,
        "replicates",
        "stats_replicates",
        exp.column("replicate"),
        None,
        {(i, "n"): exp.column(f"b{i}") for i in metrics},
    )
    return ctes, replicate_rows


def _value_quantiles(
    layout: Layout, keys: list[exp.Expr], distributions: Sequence[int]
) -> tuple[list[exp.CTE], exp.Select]:
    """The quantiles of the per-user values of ``distributions``' metrics: CTEs and rows."""
    spread = exp.select(*(key.copy() for key in keys)).from_("stats_values")
    for i in distributions:
        spread.select(*spread_aggregates(i, exp.column(f"v{i}")), copy=False)
    at_level, quantile_rows = _distribution_rows(layout, "stats_quantiles", distributions)
    return [nodes.cte("stats_quantiles", nodes.grouped(spread, keys)), at_level], quantile_rows


@gc_paused
def compose_ci(
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    resampling: Resampling,
    dialect: str = "duckdb",
    diagnostics: bool = False,
    score_floor: float | None = None,
    distributions: Sequence[int] = (),
) -> exp.Query:
    """The query of ``evaluate(..., ci=...)``: rows ``moments`` (per group: users, and per
    metric n (users with a value), s (their sum), q (their sum of squares)), with the
    bootstrap rows ``replicates`` (per group and replicate: n = the replicate's mean), with
    ``diagnostics`` evaluate's diagnostics rows, and with ``distributions`` (indexes of
    requests, DuckDB) their rows ``quantiles`` (_distribution_rows)."""
    if resampling.method == "t":
        curve = _curve_ci(
            requests, inputs, options, dialect, diagnostics, score_floor, distributions
        )
        if curve is not None:
            return curve
    ctes, groups, labels = _per_user_values(
        requests, inputs, options, dialect, diagnostics, score_floor
    )
    layout = Layout(tuple(groups), len(labels), ("n", "s", "q"), diagnostics)
    keys = nodes.keys(len(groups))
    metrics = range(len(labels))
    ctes.append(nodes.cte("stats_moments", _value_moments(keys, metrics, dialect)))
    moment_rows = _row(
        layout,
        "moments",
        "stats_moments",
        None,
        exp.column("users"),
        {(i, slot): exp.column(f"{slot}{i}") for i in metrics for slot in ("n", "s", "q")},
    )
    replicate_rows = None
    if resampling.method == "bootstrap":
        bootstrap_ctes, replicate_rows = _bootstrap(layout, keys, metrics, resampling)
        ctes += bootstrap_ctes
    quantile_rows = None
    if distributions:
        quantile_ctes, quantile_rows = _value_quantiles(layout, keys, distributions)
        ctes += quantile_ctes
    return _result(layout, moment_rows, replicate_rows, None, ctes, quantile_rows)


def _as_text(node: exp.Expr) -> exp.Expr:
    return exp.cast(node, "VARCHAR")


def _present_where(value: str, other: str, i: int) -> exp.Expr:
    """Side ``value``'s value of metric i where side ``other`` has one too, else NULL."""
    return exp.alias_(
        exp.Case(
            ifs=[
                exp.If(
                    this=exp.not_(exp.column(f"v{i}", other).is_(exp.Null())),
                    true=exp.column(f"v{i}", value),
                )
            ]
        ),
        f"{'x' if value == 'm' else 'y'}{i}",
    )


def _pairs(groups: int, metrics: range, model: int, baseline: str) -> exp.Select:
    """Each model's users (m) joined with the baseline's (b) on the user and the other groups:
    d{i} the difference, x{i} and y{i} the model's and baseline's values where both have one."""
    model_key = f"g{model}"
    named = exp.Literal.string(baseline)
    on: list[exp.Expr] = [exp.column("u", "m").eq(exp.column("u", "b"))]
    on += [
        nodes.same(exp.column(f"g{i}", "m"), exp.column(f"g{i}", "b"))
        for i in range(groups)
        if i != model
    ]
    on.append(exp.EQ(this=_as_text(exp.column(model_key, "b")), expression=named.copy()))
    return (
        exp.select(
            *(exp.alias_(exp.column(f"g{i}", "m"), f"g{i}") for i in range(groups)),
            exp.alias_(exp.column("u", "m"), "u"),
            *(
                exp.alias_(
                    exp.Sub(this=exp.column(f"v{i}", "m"), expression=exp.column(f"v{i}", "b")),
                    f"d{i}",
                )
                for i in metrics
            ),
            *(_present_where("m", "b", i) for i in metrics),
            *(_present_where("b", "m", i) for i in metrics),
        )
        .from_(exp.alias_(exp.to_table("stats_values"), "m"))
        .join(exp.alias_(exp.to_table("stats_values"), "b"), on=exp.and_(*on))
        .where(exp.not_(exp.EQ(this=_as_text(exp.column(model_key, "m")), expression=named)))
    )


def _summed(name: str) -> exp.Expr:
    return exp.func("SUM", exp.column(name))


def _pair_moments(keys: list[exp.Expr], metrics: range) -> exp.Select:
    """Per group: paired users, and per metric n, s, q of the differences and x, y sums."""
    return nodes.grouped(
        exp.select(
            *(key.copy() for key in keys),
            exp.alias_(exp.func("COUNT", exp.Star()), "users"),
            *(exp.alias_(exp.func("COUNT", exp.column(f"d{i}")), f"n{i}") for i in metrics),
            *(exp.alias_(_summed(f"d{i}"), f"s{i}") for i in metrics),
            *(
                exp.alias_(
                    exp.func(
                        "SUM", exp.Mul(this=exp.column(f"d{i}"), expression=exp.column(f"d{i}"))
                    ),
                    f"q{i}",
                )
                for i in metrics
            ),
            *(exp.alias_(_summed(f"x{i}"), f"x{i}") for i in metrics),
            *(exp.alias_(_summed(f"y{i}"), f"y{i}") for i in metrics),
        ).from_("stats_pairs"),
        keys,
    )


@gc_paused
def compose_compare(
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    resampling: Resampling,
    model: int,
    baseline: str,
    dialect: str = "duckdb",
    diagnostics: bool = False,
    score_floor: float | None = None,
) -> exp.Query:
    """The query of ``compare``: every model (group column ``model``) paired with ``baseline``
    on (user, the other group columns), users where both have a value.

    Rows ``moments`` per (model, other groups): users (paired users), and per metric n (pairs
    with both values), s and q (sum and sum of squares of model - baseline), x and y (the sums
    of the model's and the baseline's values over those pairs); rows ``users``: per group
    (baseline included), its number of users before pairing; rows ``replicates``: per
    replicate, n = the bootstrap mean difference, s = the sign-flipped sum of differences."""
    ctes, groups, labels = _per_user_values(
        requests, inputs, options, dialect, diagnostics, score_floor
    )
    layout = Layout(tuple(groups), len(labels), ("n", "s", "q", "x", "y"), diagnostics)
    keys = nodes.keys(len(groups))
    metrics = range(len(labels))
    ctes.append(nodes.cte("stats_pairs", _pairs(len(groups), metrics, model, baseline)))
    counted = nodes.grouped(
        exp.select(
            *(key.copy() for key in keys), exp.alias_(exp.func("COUNT", exp.Star()), "users")
        ).from_("stats_values"),
        keys,
    )
    ctes += [
        nodes.cte("stats_moments", _pair_moments(keys, metrics)),
        nodes.cte("stats_counts", counted),
    ]
    ctes += replicates.resampled("stats_pairs", len(groups), len(labels), resampling, True)
    moment_rows = _row(
        layout,
        "moments",
        "stats_moments",
        None,
        exp.column("users"),
        {(i, slot): exp.column(f"{slot}{i}") for i in metrics for slot in layout.slots},
    )
    count_rows = _row(layout, "users", "stats_counts", None, exp.column("users"), {})
    replicate_rows = _row(
        layout,
        "replicates",
        "stats_replicates",
        exp.column("replicate"),
        None,
        {
            **{(i, "n"): exp.column(f"b{i}") for i in metrics},
            **{(i, "s"): exp.column(f"f{i}") for i in metrics},
        },
    )
    return _result(layout, moment_rows, replicate_rows, count_rows, ctes)
