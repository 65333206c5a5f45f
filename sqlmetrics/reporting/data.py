"""The report's numbers: which labels it asks for, and the few evaluate calls that get them.

Every number on the page is a cell of one of these frames, so the page says what evaluate says:
- ``curves``: metric@k for k = 1..k_max, a row per (model, metric, k), from the curve plan's
  rows per cutoff (reporting/curves.py), or from the main call's curve labels where that plan
  does not apply;
- ``main``: one evaluate call with the summary labels (and the curve labels, see above),
  grouped by the model columns; its diagnostics are the page's diagnostics;
- ``segments``: one call with the summary labels, grouped by the model columns and the segment;
- ``distributions``: the spread of the per-user values of the summary labels that have one,
  from the main call's query (evaluate's ``distributions``);
- ``exposure``: the exposure between item groups of the main call (evaluate's ``exposure_k``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from sqlmetrics.catalog.metrics import Metric, parse_requests
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.stats.resampling import has_interval

if TYPE_CHECKING:
    import pandas as pd

    from sqlmetrics.engines.base import Engine, Source

DEFAULT_K_MAX = 100
# The largest curve: k_max labels per metric go into one query (issue 21 makes them cheap).
LARGEST_K_MAX = 1000


def curve_labels(name: str, k_max: int) -> list[str]:
    """The labels of one metric's curve, k = 1 .. k_max. The one place they are spelled: when
    evaluate reads a range of cutoffs (``ndcg@1:100``), this is what changes."""
    return [f"{name}@{k}" for k in range(1, k_max + 1)]


@dataclass(frozen=True)
class Plan:
    """What the report asks evaluate for, from the metrics as requested."""

    k_max: int
    curves: dict[str, list[str]]  # metric name -> its curve labels
    summary: list[str]  # the summary table's labels: accuracy metrics, as evaluate names them
    beyond: list[str]  # beyond-accuracy labels (metrics over the top-k lists)
    distributions: list[str]  # the summary labels that are means over users: their spread
    metrics: dict[str, Metric]  # every metric on the page, by label, for its definition

    def main_labels(self, with_curves: bool = True) -> list[str]:
        """The main call's labels: the summary's, and every curve label ``with_curves``."""
        labels = [label for curve in self.curves.values() for label in curve] if with_curves else []
        return list(dict.fromkeys([*labels, *self.summary, *self.beyond]))


def plan(metrics: Sequence[str] | str, k_max: int = DEFAULT_K_MAX) -> Plan:
    """The labels for ``metrics``: ``ndcg`` is summarised at ``ndcg@k_max``, ``ndcg@10`` at 10;
    both get the curve ndcg@1 .. ndcg@k_max."""
    if isinstance(k_max, bool) or not isinstance(k_max, int) or not 1 <= k_max <= LARGEST_K_MAX:
        raise SqlmetricsError(
            f"k_max must be a whole number from 1 to {LARGEST_K_MAX} (the curves' deepest "
            f"cutoff), not {k_max!r}; e.g. k_max=20 for lists of 20"
        )
    curves: dict[str, list[str]] = {}
    summary: list[str] = []
    beyond: list[str] = []
    distributions: list[str] = []
    described: dict[str, Metric] = {}
    for request in parse_requests(metrics):
        metric = request.metric
        if metric.reads == "lists":  # coverage, gini, novelty...: a value per model, no curve
            beyond.append(request.label)
            described[request.label] = metric
            continue
        label = request.label
        if metric.takes_cutoff and not metric.takes_score_threshold:
            k = k_max if request.k is None else request.k
            if k > k_max:
                raise SqlmetricsError(
                    f"{request.label} is deeper than k_max={k_max}, where the curves stop; "
                    f"raise k_max (CLI: --k-max {k}) or ask for a smaller cutoff"
                )
            curves.setdefault(metric.name, curve_labels(metric.name, k_max))
            label = f"{metric.name}@{k}"  # a label of the curve: the same cell, one query
        summary.append(label)
        described[label] = metric
        if has_interval(request):  # a mean over users: per-user values to spread
            distributions.append(label)
    return Plan(
        k_max=k_max,
        curves=curves,
        summary=list(dict.fromkeys(summary)),
        beyond=list(dict.fromkeys(beyond)),
        distributions=list(dict.fromkeys(distributions)),
        metrics=described,
    )


@dataclass
class Results:
    """The frames the page is drawn from (see the module's docstring)."""

    main: pd.DataFrame
    curves: pd.DataFrame  # the group columns, metric, k, value, lo, hi (reporting/curves.py)
    diagnostics: pd.DataFrame
    distributions: pd.DataFrame | None  # read_distributions of evaluate's result
    segments: pd.DataFrame | None
    rows: dict[str, int | None] = field(default_factory=dict)
    gaps: pd.DataFrame | None = None  # read_gaps of the segments' evaluate
    engine: str = "DuckDB, in process"  # where the queries ran, for the provenance
    exposure: pd.DataFrame | None = None  # read_exposure of the main evaluate (exposure_k)

    def without_attrs(self) -> Results:
        """These results with the frames' values only, for the page: pandas deep-copies a
        frame's attrs (the diagnostics and distributions, held here apart) at every column
        read, and the page reads 1,200 columns at 400 labels (0.25 s of its 1.1 s)."""

        def values(frame: pd.DataFrame) -> pd.DataFrame:
            copy = frame.copy(deep=False)
            copy.attrs = {}
            return copy

        segments = None if self.segments is None else values(self.segments)
        return replace(self, main=values(self.main), segments=segments)


# The level of the page's intervals: Student's t over the users (docs/METRICS.md, "Intervals
# and tests"), one pass of sums in the same query as the numbers.
PAGE_CI = 0.95


def interval_options() -> dict[str, Any]:
    """evaluate's options for confidence intervals: the page draws ``<label>_lo`` and
    ``<label>_hi`` wherever the frames have them (table cells, curve bands, error bars)."""
    return {"ci": PAGE_CI}


def baseline_comparison(
    evaluate_arguments: Mapping[str, Any], labels: Sequence[str], baseline: str
) -> pd.DataFrame | None:
    """The paired comparison (sqlmetrics.compare: paired t-test, Holm-adjusted over the page's
    metrics) of every model with ``baseline`` over ``labels``: one row per (model, label) with
    ``model``, ``metric``, ``difference``, ``p_value`` (Holm's) and ``significant``. None when
    no label is a mean over users (compare leaves the others out)."""
    from sqlmetrics.run import compare

    arguments = dict(evaluate_arguments)
    arguments.pop("per_user", None)
    if not labels:
        return None
    compared = compare(
        arguments.pop("recommendations"),
        arguments.pop("interactions"),
        list(labels),
        baseline=baseline,
        ci=PAGE_CI,
        **arguments,
    )
    if compared.empty:
        return None
    model = compared.columns[0]  # the first group_by column names the model
    return compared.rename(columns={model: "model", "p_holm": "p_value"})


def gather(
    recommendations: object,
    interactions: object,
    the_plan: Plan,
    *,
    group_by: list[str],
    segment: str | None,
    options: Mapping[str, Any],
    baseline: str | None = None,
    exposure: Mapping[str, Any] | None = None,
) -> Results:
    """The curves' query, the evaluate calls of the page (two at most) and the inputs' row
    counts. The curves come first: where they cannot be computed in reasonable time they are
    refused before any other query."""
    from sqlmetrics.attrs import read_diagnostics, read_distributions, read_exposure, read_gaps
    from sqlmetrics.reporting import curves
    from sqlmetrics.run import evaluate

    counted, engine = checked_inputs(recommendations, interactions, group_by, segment, options)
    rows = curves.gathered(
        recommendations,
        interactions,
        the_plan.curves,
        the_plan.k_max,
        group_by=group_by,
        options=options,
        level=interval_options().get("ci"),
    )
    main = evaluate(
        recommendations,
        interactions,
        the_plan.main_labels(with_curves=rows is None),
        group_by=group_by,
        distributions=the_plan.distributions,
        baseline=baseline,  # the overlap metrics' (intersection, rbo, unexpectedness)
        **(exposure or {}),  # the exposure between item groups, with exposure_k
        **options,
        **interval_options(),
    )
    segments = None
    if segment is not None and the_plan.summary:
        segments = evaluate(
            recommendations,
            interactions,
            the_plan.summary,
            group_by=group_by,
            segment=segment,
            baseline=baseline,
            **options,
            **interval_options(),
        )
    if rows is None:
        rows = curves.from_labels(main, group_by, the_plan.curves)
    return Results(
        main=main,
        curves=rows,
        diagnostics=read_diagnostics(main),
        distributions=read_distributions(main) if "distributions" in main.attrs else None,
        segments=segments,
        gaps=None if segments is None else read_gaps(segments),
        rows=counted,
        engine=engine,
        exposure=read_exposure(main) if "exposure" in main.attrs else None,
    )


# The most models a page compares: each is a line of every curve, a bar of every chart and a
# column of every table (2,000 models took minutes and gigabytes, for an unreadable page).
MOST_MODELS = 50


def checked_inputs(
    recommendations: object,
    interactions: object,
    group_by: Sequence[str],
    segment: str | None,
    options: Mapping[str, Any],
) -> tuple[dict[str, int | None], str]:
    """Before the queries of the metrics: the segment is a column of both inputs, the models
    are few enough to draw. Returns each input's rows (Parquet answers them from its footer;
    None where they cannot be counted) and the engine in words, for the provenance."""
    from sqlmetrics.engines import connection_of, open_engine

    inputs = {"recommendations": recommendations, "interactions": interactions}
    dialect = options.get("dialect")
    given = {**inputs, "items": options.get("items"), "history": options.get("history")}
    connection = connection_of(options.get("connection"), given)
    with open_engine(connection, dialect=dialect, timeout=options.get("timeout")) as engine:
        sources = {role: engine.bind(value, role) for role, value in inputs.items()}
        if segment is not None:
            check_segment(segment, sources["recommendations"], sources["interactions"])
        if group_by and all(name in sources["recommendations"].columns for name in group_by):
            _check_models(engine, sources["recommendations"], group_by)
        counts = {role: _rows(engine, inputs[role], source) for role, source in sources.items()}
        return counts, engine_said(connection, engine)


def engine_said(connection: object, engine: Engine) -> str:
    """Where the queries ran, in words: DuckDB in process, or the engine behind the caller's
    connection and the kind of connection (its module and class)."""
    if connection is None:
        return "DuckDB, in process"
    kind = f"{type(connection).__module__.split('.')[0]} {type(connection).__name__}"
    return f"{engine.name} (SQL dialect {engine.dialect}), through your {kind}"


def check_segment(segment: str, recommendations: Source, interactions: Source) -> None:
    """A segment is a value of each user, in both inputs: a segment's metrics are over its own
    users, as the interactions place them. A column of the recommendations alone would judge
    every segment against every user of the interactions (each segment's values a fraction
    of its own), so it is refused."""
    from sqlmetrics.engines.checks import _cast_hint, _same_family, _suggest

    for source in (recommendations, interactions):
        if segment not in source.columns:
            where = (
                "; each user's segment must be in both inputs, so that a segment is evaluated "
                "against its own users: add it to the interactions too"
                if source is interactions
                else ""
            )
            raise SqlmetricsError(
                f"segment {segment!r} is not a column of the {source.role}{where}."
                f"{_suggest(segment, list(source.columns))} Its columns: "
                f"{', '.join(source.columns)}"
            )
    one, other = recommendations.columns[segment], interactions.columns[segment]
    if not _same_family(one, other):
        raise SqlmetricsError(
            f"segment {segment!r} is {one} in recommendations but {other} in interactions; "
            f"{_cast_hint(one, other)}"
        )


def _check_models(engine: Engine, recommendations: Source, group_by: Sequence[str]) -> None:
    from sqlglot import exp

    keys = [exp.column(exp.to_identifier(name, quoted=True)) for name in group_by]
    distinct = exp.select(*keys).distinct().from_(recommendations.relation.copy())
    distinct = distinct.limit(MOST_MODELS + 1)
    row = engine.first_row(exp.select(exp.func("COUNT", exp.Star())).from_(distinct.subquery("m")))
    if row is not None and int(row[0]) > MOST_MODELS:
        raise SqlmetricsError(
            f"the recommendations hold more than {MOST_MODELS} models (values of "
            f"{', '.join(group_by)}); a report draws each as a line, a bar and a column, and "
            f"compares at most {MOST_MODELS}: keep the models to compare (a filter or a Query), "
            "or evaluate them all with sqlmetrics.evaluate"
        )


def _rows(engine: Engine, value: object, source: Source) -> int | None:
    from sqlglot import exp

    if hasattr(value, "__len__") and not isinstance(value, str):
        return len(value)  # a DataFrame or an Arrow table: no query
    row = engine.first_row(exp.select(exp.func("COUNT", exp.Star())).from_(source.relation.copy()))
    return None if row is None else int(row[0])
