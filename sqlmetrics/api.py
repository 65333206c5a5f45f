"""SQL for your warehouse, and the metric catalogue."""

from __future__ import annotations

import collections
import functools
import threading
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlmetrics.catalog.metrics import MetricRequest, metrics
from sqlmetrics.catalog.profiles import resolve
from sqlmetrics.compose import plan
from sqlmetrics.compose.inputs import Group, Inputs, Options, column_names
from sqlmetrics.compose.lists import reads_baseline
from sqlmetrics.compose.query import compose, compose_checks
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.gc_paused import gc_paused
from sqlmetrics.options import QueryOptions, SqlOptions, filled, group_list, takes
from sqlmetrics.render.dialects import CANONICAL, get_dialect, render
from sqlmetrics.render.names import column_name, table_name
from sqlmetrics.stats.query import compose_ci, compose_compare
from sqlmetrics.stats.resampling import Resampling

if TYPE_CHECKING:
    from typing_extensions import Unpack


@takes(SqlOptions)
def to_sql(
    metrics: Sequence[str] | str,
    recommendations: str = "recommendations",
    interactions: str = "interactions",
    **options: Unpack[SqlOptions],
) -> str:
    """The SQL computing ``metrics`` over two tables, ready to paste into a console.

    Table and column names are written as in the target dialect. ``group_by`` columns are
    taken to be in both tables unless ``interactions_group_by`` names the ones that are (the
    others are then evaluated against the whole population, like a model column).
    ``columns={"relevance": None}`` gives every interaction relevance 1; ``columns["rating"]``
    (default ``rating``) is read only by the rating metrics (rmse, mae, mse, r2). ``items`` names
    an optional table with one row per item (the item column, and ``columns["category"]`` for
    ild): the catalogue of coverage and gini. ``history`` names an optional table of what each
    user consumed before (the user and item columns), for serendipity; the popularity metrics
    (novelty, surprisal, arp, the long tail's) count it instead of the interactions.
    ``profile`` computes each metric as one library defines it (see docs/profiles.md).

    ``checks=True`` gives instead the input checks and diagnostics that evaluate runs with
    these metrics: one row per group with every count and ``refused_rows``, the number of rows
    evaluate would refuse (a scheduled job can require it to be 0). It is the audit of
    ``evaluate(..., checks="full")``: repeated recommendations count anywhere in the lists;
    ``checks="read"`` gives the checks of evaluate's default instead (repeats counted within
    what the metrics read).

    ``ci`` (a level such as 0.95) or ``baseline`` (a model, the first ``group_by`` column) give
    instead the query of ``evaluate(..., ci=...)`` or ``compare(..., baseline=...)``: the
    sufficient statistics per group (count, sum and sum of squares of the per-user values or of
    the paired differences) and, for ``ci_method="bootstrap"`` and for ``baseline``, one row per
    replicate (``replicates``, ``seed``); the t quantiles, percentiles and p-values are then
    computed from these few rows (docs/METRICS.md, "Intervals and tests", says how). With an
    overlap metric among ``metrics`` (intersection, rbo, unexpectedness), ``baseline`` is the
    model they compare the others' lists with, as in ``evaluate``: the query is evaluate's.
    """
    arguments = {
        "metrics": metrics,
        "recommendations": recommendations,
        "interactions": interactions,
        **filled(SqlOptions, options, "to_sql"),
    }
    key = _request_key(arguments)
    if key is None:
        return _to_sql(arguments)
    return _cached_to_sql(key, plan.plan_switches())


@gc_paused  # the shared tree's copy too: with the collector on it costs five times as much
def _to_sql(arguments: Mapping[str, Any]) -> str:
    """to_sql's SQL from its arguments, every option given (``filled``)."""
    options = dict(arguments)
    pretty, dialect = options.pop("pretty"), options["dialect"]
    query_options = {
        name: value
        for name, value in options.items()
        if name not in ("metrics", "recommendations", "interactions")
    }
    inputs, build = _prepared(
        options["metrics"],
        options["recommendations"],
        options["interactions"],
        typing.cast("QueryOptions", query_options),
    )
    # The tree is this call's own (composed for it, or a copy of a shared one): render rewrites
    # it in place, without another copy.
    return render(_shared_composition(options, inputs, build), dialect, pretty=pretty, copy=False)


# Compose reads the dialect only to choose a plan: DuckDB's own plans (``dialect == "duckdb"``,
# compose.TOP_K_DIALECTS) or the portable one, which every other dialect gets and ``render``
# then writes in its own SQL (tests/test_api.py checks that they compose the same tree). So a
# request asked of several dialects (tests, dbt export, the CLI's --dialect) is composed once
# for all of them that take the portable plan, and each gets a copy (about a third of
# composing's cost). The key is the request without its dialect, the names as the dialect read
# them (``"User"`` and ``User`` differ, and so may one name in two dialects) and the plan
# switches. A request is kept from its second dialect on (the first renders its own tree, so a
# single call pays no copy); the trees last asked for are kept, up to _SHARED_NODES nodes in all
# (a query of every metric is some thousands of nodes, one metric some hundreds).
_SHARED_NODES = 50_000
_shared_trees: collections.OrderedDict[tuple[object, ...], tuple[exp.Query, int]] = (
    collections.OrderedDict()
)
_seen_once: collections.OrderedDict[tuple[object, ...], None] = collections.OrderedDict()
_SEEN_ONCE = 1024
_shared_lock = threading.Lock()


def _shared_composition(
    options: Mapping[str, Any], inputs: Inputs, build: Callable[[], exp.Query]
) -> exp.Query:
    """``build()``, or a copy of the tree another dialect's call composed for the same request."""
    dialect = options["dialect"]
    if dialect == CANONICAL or dialect in plan.TOP_K_DIALECTS:
        return build()  # a plan of DuckDB's own: not shared
    request = _request_key({name: value for name, value in options.items() if name != "dialect"})
    if request is None:
        return build()
    key = (request, repr(inputs), plan.plan_switches())
    with _shared_lock:
        kept = _shared_trees.get(key)
        if kept is not None:
            _shared_trees.move_to_end(key)
        first = kept is None and key not in _seen_once
        if first:
            _seen_once[key] = None
            if len(_seen_once) > _SEEN_ONCE:
                _seen_once.popitem(last=False)
    if kept is not None:
        return kept[0].copy()
    if first:
        return build()  # asked of one dialect so far: rendered without a copy, not kept
    tree = build()
    nodes = sum(1 for _ in tree.walk())
    with _shared_lock:
        _shared_trees[key] = (tree, nodes)
        total = sum(size for _, size in _shared_trees.values())
        while total > _SHARED_NODES and len(_shared_trees) > 1:
            total -= _shared_trees.popitem(last=False)[1][1]
    return tree.copy()


# Composing and rendering cost tens of ms a call (docs/benchmark.md, "Cost per call"); tests, the
# CLI and dbt export ask for the same SQL again and again. The cache holds finished strings
# (nothing a caller could mutate), keyed by every argument (with its type, so that a threshold
# of 1 and one of 1.0, which print differently, do not share an entry) and by the plan
# switches tests change (compose.plan_switches). Names and numbers are part of the key as given, so
# nothing bound in one call can reach another.
@functools.lru_cache(maxsize=512)
def _cached_to_sql(key: tuple[tuple[str, object], ...], plans: tuple[object, ...]) -> str:
    del plans  # read by compose itself; part of the key only
    return _to_sql({name: _unkeyed(value) for name, value in key})


def _request_key(arguments: Mapping[str, object]) -> tuple[tuple[str, object], ...] | None:
    """The arguments as a hashable key of typed values, or None when one cannot be keyed."""
    try:
        key = tuple((name, _keyed(value)) for name, value in arguments.items())
        hash(key)
    except TypeError:
        return None
    return key


def _keyed(value: object) -> object:
    if value is None or isinstance(value, (str, bool)):
        return (type(value).__name__, value)
    if isinstance(value, (int, float)):
        # 1, 1.0, True and -0.0 compare equal but are written differently (or refused)
        return (type(value).__name__, repr(value), value)
    if isinstance(value, Mapping):
        return ("mapping", tuple((name, _keyed(item)) for name, item in value.items()))
    if isinstance(value, (list, tuple)):
        return ("sequence", type(value).__name__, tuple(_keyed(item) for item in value))
    raise TypeError(f"not keyed: {type(value).__name__}")


def _unkeyed(value: Any) -> Any:
    """The argument a key was made from (a list where it was a tuple: to_sql only reads it)."""
    if value[0] == "mapping":
        return {name: _unkeyed(item) for name, item in value[1]}
    if value[0] == "sequence":
        return [_unkeyed(item) for item in value[2]]
    return value[-1]


@takes(QueryOptions)
def composed_query(
    metrics: Sequence[str] | str,
    recommendations: str = "recommendations",
    interactions: str = "interactions",
    **options: Unpack[QueryOptions],
) -> exp.Query:
    """``to_sql``'s query as a tree in DuckDB's semantics, before ``render`` writes it."""
    given = filled(QueryOptions, options, "composed_query")
    return _prepared(metrics, recommendations, interactions, given)[1]()


def _prepared(
    metrics: Sequence[str] | str,
    recommendations: str,
    interactions: str,
    given: QueryOptions,
) -> tuple[Inputs, Callable[[], exp.Query]]:
    """composed_query's arguments checked and every name read in ``dialect``: the inputs as
    read, and a function composing the query (a new tree on each call)."""
    dialect = given["dialect"]
    get_dialect(dialect)  # an unknown dialect is refused before any name is read in it
    resolved = resolve(
        given["profile"],
        metrics,
        ties=given["ties"],
        population=given["population"],
        columns=given["columns"],
        ranks=given["ranks"],
    )
    checks = given["checks"]
    options = Options(
        ties=resolved.ties,
        threshold=given["threshold"],
        population=resolved.population,
        duplicates=given["duplicates"],
        ranks=resolved.ranks,
        # checks=True is the audit: repeated recommendations anywhere in the lists
        checks=checks if isinstance(checks, str) else "full" if checks else resolved.checks,
    )
    inputs = _named_inputs(recommendations, interactions, column_names(resolved.columns), given)
    return inputs, _builder(resolved.requests, inputs, options, given)


def _named_inputs(
    recommendations: str,
    interactions: str,
    names: Mapping[str, str | None],
    given: QueryOptions,
) -> Inputs:
    """The tables, columns and groups of a query, each name read in the call's dialect."""
    dialect, items, history = given["dialect"], given["items"], given["history"]
    group_by = group_list(given["group_by"])
    also = given["interactions_group_by"]
    shared = set(group_by if also is None else also)
    if not shared <= set(group_by):
        raise SqlmetricsError("interactions_group_by must name columns of group_by")

    def named(role: str) -> exp.Identifier | None:
        value = names[role]
        return None if value is None else column_name(value, dialect, role)

    user, item = named("user"), named("item")
    if user is None or item is None:
        raise SqlmetricsError("the user and item columns cannot be None")
    rank = named("rank")
    return Inputs(
        recommendations=table_name(recommendations, dialect, "recommendations"),
        interactions=table_name(interactions, dialect, "interactions"),
        user=user,
        item=item,
        score=None if rank is not None else named("score"),
        rank=rank,
        relevance=named("relevance"),
        rating=named("rating"),
        intent=named("intent"),
        weight=named("weight"),
        items=None if items is None else table_name(items, dialect, "items"),
        category=None if items is None else named("category"),
        item_group=None if items is None else named("item_group"),
        history=None if history is None else table_name(history, dialect, "history"),
        baseline=given["baseline"],
        groups=tuple(
            # The output column is labelled with the name itself, not its quotes.
            Group(column.name, column, name in shared)
            for name, column in ((n, column_name(n, dialect, "group_by")) for n in group_by)
        ),
    )


def _builder(
    requests: Sequence[MetricRequest], inputs: Inputs, options: Options, given: QueryOptions
) -> Callable[[], exp.Query]:
    """What composes the query the options ask for: the checks, the statistics of ``ci`` or
    ``baseline``, or the metrics."""
    dialect, per_user, ci, baseline = (
        given["dialect"],
        given["per_user"],
        given["ci"],
        given["baseline"],
    )
    if given["checks"]:
        if per_user:
            raise SqlmetricsError("checks count rows per group; per_user does not apply to them")
        return functools.partial(compose_checks, requests, inputs, options, dialect=dialect)
    if any(reads_baseline(request.metric) for request in requests):
        # the overlap metrics read the baseline (in inputs): evaluate's query, not compare's
        baseline = None
    if ci is None and baseline is None:
        return functools.partial(
            compose, requests, inputs, options, per_user=per_user, dialect=dialect
        )
    if per_user:
        raise SqlmetricsError("ci and baseline summarise groups; per_user does not apply")
    resampling = Resampling(
        0.95 if ci is None else ci, given["ci_method"], given["replicates"], given["seed"]
    )
    if baseline is None:
        return functools.partial(compose_ci, requests, inputs, options, resampling, dialect=dialect)
    if not given["group_by"]:
        raise SqlmetricsError("baseline names a model: give its column as group_by")
    return functools.partial(
        compose_compare, requests, inputs, options, resampling, 0, baseline, dialect
    )


def describe_metrics() -> list[dict[str, str]]:
    """Every metric with its definition, cutoff, aggregation, aliases and references."""
    return [
        {
            "name": metric.name,
            "title": metric.title,
            "cutoff": "@k required"
            if metric.requires_cutoff
            else "@k optional"
            if metric.takes_cutoff
            else f"@x a level >= 0, default {metric.default_level:g}"
            if metric.takes_level
            else "@t score threshold, default 0.5"
            if metric.takes_score_threshold
            else "none",
            "aggregate": ("square root of " if metric.square_root else "")
            + ("exp of the " if metric.exponential else "")
            + (
                "micro (sum / sum)"
                if metric.micro
                else "one value per group"
                if metric.group_level
                else "sum"
                if metric.summed
                else "mean"
            ),
            "reads": metric.reads,
            "averaged": metric.averaged_over(),
            "ties_average": "yes" if metric.ties_average else "no",
            "aliases": ", ".join(metric.aliases),
            "definition": metric.definition,
            "references": metric.references,
        }
        for metric in metrics().values()
    ]
