"""Confidence intervals and paired comparisons, in SQL, as a layer over the per-user values
(issue 19; docs/METRICS.md, "Intervals and tests").

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

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose.diagnostics import CHECKS, DIAGNOSTICS, KIND
from sqlmetrics.compose.distributions import QUANTILE_LEVELS, spread_aggregates
from sqlmetrics.compose.inputs import Inputs, Options
from sqlmetrics.compose.query import compose
from sqlmetrics.compose.sums import aggregate
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.gc_paused import gc_paused
from sqlmetrics.stats.draws import uniform_draw

CI_METHODS = ("t", "bootstrap")
TESTS = ("t", "randomization")
BUCKETS = 1000
MAX_REPLICATES = 100_000
MAX_SEED = 2**31 - 1
# Poisson(1) CDF at 0..POISSON_MAX - 1; a draw above the last is weight POISSON_MAX
# (probability 1e-10 for 13).
POISSON_MAX = 13
POISSON_CDF = tuple(
    sum(math.exp(-1.0) / math.factorial(j) for j in range(k + 1)) for k in range(POISSON_MAX)
)


@dataclass(frozen=True)
class Resampling:
    """How intervals and tests are computed: the level, the interval method, and the replicates,
    seed and buckets of the bootstrap and the randomization test."""

    level: float = 0.95
    method: str = "t"
    replicates: int = 1000
    seed: int = 0
    buckets: int = BUCKETS

    def __post_init__(self) -> None:
        if isinstance(self.level, bool) or not isinstance(self.level, numbers.Real):
            raise SqlmetricsError(
                f"ci must be a number between 0 and 1, like 0.95, not {self.level!r}"
            )
        if not 0 < self.level < 1:
            raise SqlmetricsError(
                f"ci must be between 0 and 1 (a confidence level like 0.95), not {self.level!r}"
            )
        object.__setattr__(self, "level", float(self.level))
        if self.method not in CI_METHODS:
            raise SqlmetricsError(
                f"ci_method must be one of {', '.join(CI_METHODS)}, not {self.method!r}"
            )
        for name, value, low, high in (
            ("replicates", self.replicates, 1, MAX_REPLICATES),
            ("seed", self.seed, 0, MAX_SEED),
            ("buckets", self.buckets, 1, MAX_SEED // MAX_REPLICATES),
        ):
            # numpy's integers too (numbers.Integral), as Python ints from here on
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                value = None
            if value is None or not low <= value <= high:
                raise SqlmetricsError(
                    f"{name} must be a whole number from {low} to {high:,}, "
                    f"not {getattr(self, name)!r}"
                )
            object.__setattr__(self, name, int(value))
        fewest = bootstrap_replicates(self.level)
        if self.method == "bootstrap" and self.replicates < fewest:
            raise SqlmetricsError(
                f"replicates={self.replicates} is too few for a {self.level:g} bootstrap "
                f"interval: each end needs a replicate beyond it, so at least {fewest} "
                "(1000 is the default)"
            )


def bootstrap_replicates(level: float) -> int:
    """The fewest replicates whose percentile interval at ``level`` has a replicate beyond
    each end: (1 - level) / 2 of them at least 1. With fewer, the ends are the extreme
    replicates, and with one the interval is that replicate alone, which need not hold the
    estimate."""
    return math.ceil(2 / (1 - level) - 1e-9)


def has_interval(request: MetricRequest) -> bool:
    """Whether a metric is a mean of per-user values, which the t-interval, the bootstrap and
    the paired tests are about. Micro metrics (a ratio of sums, rmse's square root of one) and
    group-level ones (coverage, gini, entropy, personalization) have no per-user value to
    resample: they get no interval. Nor, yet, do the means over the top-k lists (novelty, arp,
    ild, serendipity): they average over every user with a list, and the per-user rows hold the
    population's users only, so their mean would be another one."""
    metric = request.metric
    return not (metric.micro or metric.group_level or metric.square_root or metric.reads == "lists")


def without_interval(requests: Sequence[MetricRequest]) -> list[str]:
    return [request.label for request in requests if not has_interval(request)]


# ---------------------------------------------------------------------------------------------
# SQL


def _name(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


def _column(name: str, table: str | None = None) -> exp.Column:
    return exp.column(_name(name), table)


# Built once: exp.cast parses a type given as text on every call (thousands in a query of
# hundreds of metrics).
_TYPES = {kind: exp.DataType.build(kind) for kind in ("DOUBLE", "BIGINT")}


def _cast(node: exp.Expr, kind: str) -> exp.Expr:
    return exp.Cast(this=node, to=_TYPES[kind].copy())


def _double(node: exp.Expr) -> exp.Expr:
    return _cast(node, "DOUBLE")


def _null(kind: str = "DOUBLE") -> exp.Expr:
    return _cast(exp.Null(), kind)


def _same(left: exp.Expr, right: exp.Expr) -> exp.Expr:
    """Null-safe, as GROUP BY treats a NULL group value (parenthesized: stages.same_group)."""
    return exp.paren(exp.NullSafeEQ(this=left, expression=right))


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
        *(exp.alias_(_column(name), f"g{i}") for i, name in enumerate(groups)),
        exp.alias_(_column(inputs.user.name), "u"),
        *(exp.alias_(_double(_column(label)), f"v{i}") for i, label in enumerate(labels)),
    ).from_("stats_rows")
    if diagnostics:
        values = values.where(exp.column(KIND).eq(exp.Literal.string("metrics")))
    ctes += [_cte("stats_rows", body), _cte("stats_values", values)]
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
    ctes += [_cte("stats_rows", body), _cte("stats_moments", moments)]
    return ctes, [group.name for group in inputs.groups]


def _cte(name: str, body: exp.Expr) -> exp.CTE:
    return exp.CTE(this=body, alias=exp.TableAlias(this=exp.to_identifier(name)))


def _keys(count: int, table: str | None = None) -> list[exp.Expr]:
    return [exp.column(f"g{i}", table) for i in range(count)]


def _grouped(select: exp.Select, keys: Sequence[exp.Expr]) -> exp.Select:
    return select.group_by(*(key.copy() for key in keys)) if keys else select


def _resampled(
    source: str, groups: int, metrics: int, resampling: Resampling, flips: bool
) -> list[exp.CTE]:
    """CTEs ending in ``stats_replicates``: per group and replicate, b{i} the bootstrap mean of
    metric i (sum of weight x bucket sum / sum of weight x bucket count) and, with ``flips``,
    f{i} the sign-flipped sum of the buckets' sums. ``source`` has g0.., u and d0.. values."""
    keys = _keys(groups)
    in_order = exp.Window(
        this=exp.RowNumber(),
        partition_by=[key.copy() for key in keys] or None,
        # The user's text, which dialects.py sorts by bytes everywhere: the same buckets (and
        # so the same draws) on every engine, whatever the user column's type or collation.
        order=exp.Order(
            expressions=[exp.Ordered(this=exp.cast(exp.column("u"), exp.DataType.build("varchar")))]
        ),
    )
    units = exp.select(
        *(key.copy() for key in keys),
        exp.alias_(
            exp.Mod(
                this=exp.paren(exp.Sub(this=in_order, expression=exp.Literal.number(1))),
                expression=exp.Literal.number(resampling.buckets),
            ),
            "bucket",
        ),
        *(exp.column(f"d{i}") for i in range(metrics)),
    ).from_(source)
    buckets = _grouped(
        exp.select(
            *(key.copy() for key in keys),
            exp.column("bucket"),
            *(exp.alias_(exp.func("COUNT", exp.column(f"d{i}")), f"bn{i}") for i in range(metrics)),
            *(exp.alias_(exp.func("SUM", exp.column(f"d{i}")), f"bs{i}") for i in range(metrics)),
        ).from_("stats_units"),
        [*keys, exp.column("bucket")],
    )
    # 0..n-1 from a cross join of digits: no generate_series (MySQL, SQLite and
    # ClickHouse spell it differently or not at all), no recursive CTE (Spark before 4).
    digits = exp.union(
        *(exp.select(exp.alias_(exp.Literal.number(d), "digit")) for d in range(10)),
        distinct=False,
    )

    def numbers(name: str, below: int, limit: exp.Expr | None = None) -> exp.Select:
        """0..below-1 (and below ``limit``) as column ``name``."""
        places = len(str(below - 1))
        number: exp.Expr = exp.Literal.number(0)
        for place in range(places):
            term = exp.Mul(
                this=exp.column("digit", f"p{place}"), expression=exp.Literal.number(10**place)
            )
            number = term if place == 0 else exp.Add(this=number, expression=term)
        listed = exp.select(exp.alias_(number, name)).from_(
            exp.alias_(exp.to_table("stats_digits"), "p0")
        )
        for place in range(1, places):
            listed = listed.join(
                exp.alias_(exp.to_table("stats_digits"), f"p{place}"), join_type="cross"
            )
        condition: exp.Expr = exp.LT(this=exp.column(name), expression=exp.Literal.number(below))
        if limit is not None:
            condition = exp.and_(condition, exp.LT(this=exp.column(name), expression=limit))
        return exp.select(name).from_(listed.subquery("numbers")).where(condition)

    replicates = numbers("replicate", resampling.replicates)
    # The buckets in use: fewer than `buckets` when no group has that many users.
    used = exp.select(
        exp.Add(this=exp.func("MAX", exp.column("bucket")), expression=exp.Literal.number(1))
    ).from_("stats_buckets")
    bucket_numbers = numbers("bucket", resampling.buckets, used.subquery())
    # The draws depend on (bucket, replicate) alone, so they are computed once, not per group.
    draws = exp.select(
        exp.column("bucket", "stats_bucket_numbers"),
        exp.column("replicate", "stats_replicate_numbers"),
        exp.alias_(
            uniform_draw(
                exp.column("bucket", "stats_bucket_numbers"),
                exp.column("replicate", "stats_replicate_numbers"),
                resampling.seed,
            ),
            "draw",
        ),
    ).from_("stats_bucket_numbers")
    draws = draws.join("stats_replicate_numbers", join_type="cross")
    # Poisson(1) by inversion: the weight is the number of CDF values at or below the draw.
    weight = exp.Case(
        ifs=[
            exp.If(
                this=exp.LT(this=exp.column("draw"), expression=exp.Literal.number(repr(bound))),
                true=exp.Literal.number(k),
            )
            for k, bound in enumerate(POISSON_CDF)
        ],
        default=exp.Literal.number(POISSON_MAX),
    )
    sign = exp.Case(
        ifs=[
            exp.If(
                this=exp.LT(this=exp.column("draw"), expression=exp.Literal.number("0.5")),
                true=exp.Literal.number(-1),
            )
        ],
        default=exp.Literal.number(1),
    )
    weights = exp.select(
        exp.column("bucket"),
        exp.column("replicate"),
        exp.alias_(weight, "w"),
        exp.alias_(sign, "sign"),
    ).from_("stats_draws")
    weighed = exp.select(
        *(exp.column(f"g{i}", "stats_buckets") for i in range(groups)),
        exp.column("replicate", "stats_weights"),
        exp.column("w", "stats_weights"),
        exp.column("sign", "stats_weights"),
        *(exp.column(f"bn{i}", "stats_buckets") for i in range(metrics)),
        *(exp.column(f"bs{i}", "stats_buckets") for i in range(metrics)),
    ).from_("stats_buckets")
    weighed = weighed.join(
        "stats_weights",
        on=exp.EQ(
            this=exp.column("bucket", "stats_buckets"),
            expression=exp.column("bucket", "stats_weights"),
        ),
    )

    def weighted(value: str) -> exp.Expr:
        return exp.func("SUM", exp.Mul(this=exp.column("w"), expression=exp.column(value)))

    statistics = [
        exp.alias_(exp.Div(this=weighted(f"bs{i}"), expression=weighted(f"bn{i}")), f"b{i}")
        for i in range(metrics)
    ]
    if flips:
        statistics += [
            exp.alias_(
                exp.func("SUM", exp.Mul(this=exp.column("sign"), expression=exp.column(f"bs{i}"))),
                f"f{i}",
            )
            for i in range(metrics)
        ]
    replicated = _grouped(
        exp.select(*(key.copy() for key in keys), exp.column("replicate"), *statistics).from_(
            "stats_weighed"
        ),
        [*keys, exp.column("replicate")],
    )
    return [
        _cte("stats_units", units),
        _cte("stats_buckets", buckets),
        _cte("stats_digits", digits),
        _cte("stats_replicate_numbers", replicates),
        _cte("stats_bucket_numbers", bucket_numbers),
        _cte("stats_draws", draws),
        _cte("stats_weights", weights),
        _cte("stats_weighed", weighed),
        _cte("stats_replicates", replicated),
    ]


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
                *(exp.alias_(_column(name), _name(name)) for name in layout.groups),
                exp.alias_(_null("BIGINT"), "replicate"),
                exp.alias_(_null("BIGINT"), "users"),
                *(
                    exp.alias_(_null(), layout.metric_column(i, slot))
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
            *(exp.column(_name(name), "stats_result") for name in parts[0].named_selects)
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
    counts = [exp.alias_(_null("BIGINT"), name) for name in (*DIAGNOSTICS, *CHECKS)]
    # built without copies: every node here is new (a query of 400 metrics has 1,200 slots)
    return (
        exp.Select()
        .select(
            exp.alias_(exp.Literal.string(kind), KIND),
            *(exp.alias_(exp.column(f"g{i}"), _name(name)) for i, name in enumerate(layout.groups)),
            exp.alias_(_cast(replicate, "BIGINT") if replicate else _null("BIGINT"), "replicate"),
            exp.alias_(_cast(users, "BIGINT") if users else _null("BIGINT"), "users"),
            *(
                exp.alias_(
                    _double(slots[(i, slot)]) if (i, slot) in slots else _null(),
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
    return _cte("stats_quantile_rows", at_level), rows


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
        curve = _curve_moments(
            requests, inputs, options, dialect, diagnostics, score_floor, distributions
        )
        if curve is not None:
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
    ctes, groups, labels = _per_user_values(
        requests, inputs, options, dialect, diagnostics, score_floor
    )
    layout = Layout(tuple(groups), len(labels), ("n", "s", "q"), diagnostics)
    keys = _keys(len(groups))
    metrics = range(len(labels))
    moments = _grouped(
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
    ctes.append(_cte("stats_moments", moments))
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
        ctes.append(
            _cte(
                "stats_resampled_values",
                exp.select(
                    *(key.copy() for key in keys),
                    exp.column("u"),
                    *(exp.alias_(exp.column(f"v{i}"), f"d{i}") for i in metrics),
                ).from_("stats_values"),
            )
        )
        ctes += _resampled("stats_resampled_values", len(groups), len(labels), resampling, False)
        replicate_rows = _row(
            layout,
            "replicates",
            "stats_replicates",
            exp.column("replicate"),
            None,
            {(i, "n"): exp.column(f"b{i}") for i in metrics},
        )
    quantile_rows = None
    if distributions:
        spread = exp.select(*(key.copy() for key in keys)).from_("stats_values")
        for i in distributions:
            spread.select(*spread_aggregates(i, exp.column(f"v{i}")), copy=False)
        ctes.append(_cte("stats_quantiles", _grouped(spread, keys)))
        at_level, quantile_rows = _distribution_rows(layout, "stats_quantiles", distributions)
        ctes.append(at_level)
    return _result(layout, moment_rows, replicate_rows, None, ctes, quantile_rows)


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
    keys = _keys(len(groups))
    metrics = range(len(labels))
    model_key = f"g{model}"

    def as_text(node: exp.Expr) -> exp.Expr:
        return exp.cast(node, "VARCHAR")

    named = exp.Literal.string(baseline)
    on: list[exp.Expr] = [exp.column("u", "m").eq(exp.column("u", "b"))]
    on += [
        _same(exp.column(f"g{i}", "m"), exp.column(f"g{i}", "b"))
        for i in range(len(groups))
        if i != model
    ]
    on.append(exp.EQ(this=as_text(exp.column(model_key, "b")), expression=named.copy()))
    pairs = (
        exp.select(
            *(exp.alias_(exp.column(f"g{i}", "m"), f"g{i}") for i in range(len(groups))),
            exp.alias_(exp.column("u", "m"), "u"),
            *(
                exp.alias_(
                    exp.Sub(this=exp.column(f"v{i}", "m"), expression=exp.column(f"v{i}", "b")),
                    f"d{i}",
                )
                for i in metrics
            ),
            *(
                exp.alias_(
                    exp.Case(
                        ifs=[
                            exp.If(
                                this=exp.not_(exp.column(f"v{i}", "b").is_(exp.Null())),
                                true=exp.column(f"v{i}", "m"),
                            )
                        ]
                    ),
                    f"x{i}",
                )
                for i in metrics
            ),
            *(
                exp.alias_(
                    exp.Case(
                        ifs=[
                            exp.If(
                                this=exp.not_(exp.column(f"v{i}", "m").is_(exp.Null())),
                                true=exp.column(f"v{i}", "b"),
                            )
                        ]
                    ),
                    f"y{i}",
                )
                for i in metrics
            ),
        )
        .from_(exp.alias_(exp.to_table("stats_values"), "m"))
        .join(exp.alias_(exp.to_table("stats_values"), "b"), on=exp.and_(*on))
        .where(exp.not_(exp.EQ(this=as_text(exp.column(model_key, "m")), expression=named)))
    )
    ctes.append(_cte("stats_pairs", pairs))

    def summed(name: str) -> exp.Expr:
        return exp.func("SUM", exp.column(name))

    moments = _grouped(
        exp.select(
            *(key.copy() for key in keys),
            exp.alias_(exp.func("COUNT", exp.Star()), "users"),
            *(exp.alias_(exp.func("COUNT", exp.column(f"d{i}")), f"n{i}") for i in metrics),
            *(exp.alias_(summed(f"d{i}"), f"s{i}") for i in metrics),
            *(
                exp.alias_(
                    exp.func(
                        "SUM", exp.Mul(this=exp.column(f"d{i}"), expression=exp.column(f"d{i}"))
                    ),
                    f"q{i}",
                )
                for i in metrics
            ),
            *(exp.alias_(summed(f"x{i}"), f"x{i}") for i in metrics),
            *(exp.alias_(summed(f"y{i}"), f"y{i}") for i in metrics),
        ).from_("stats_pairs"),
        keys,
    )
    counted = _grouped(
        exp.select(
            *(key.copy() for key in keys), exp.alias_(exp.func("COUNT", exp.Star()), "users")
        ).from_("stats_values"),
        keys,
    )
    ctes += [_cte("stats_moments", moments), _cte("stats_counts", counted)]
    ctes += _resampled("stats_pairs", len(groups), len(labels), resampling, True)
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
