"""The report's numbers: which labels it asks for, and the few evaluate calls that get them.

Every number on the page is a cell of one of these frames, so the page says what evaluate says:
- ``main``: one evaluate call, every curve label (metric@1 .. metric@k_max) and the summary
  labels, grouped by the model columns; its diagnostics are the page's diagnostics;
- ``segments``: one call with the summary labels, grouped by the model columns and the segment;
- ``distributions``: the spread of the per-user values of the summary labels that have one,
  from the main call's query (evaluate's ``distributions``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from sqlmetrics.catalog.metrics import Metric, parse_requests
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.stats.query import has_interval

if TYPE_CHECKING:
    import pandas as pd

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

    def main_labels(self) -> list[str]:
        labels = [label for curve in self.curves.values() for label in curve]
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
    diagnostics: pd.DataFrame
    distributions: pd.DataFrame | None  # read_distributions of evaluate's result
    segments: pd.DataFrame | None
    rows: dict[str, int | None] = field(default_factory=dict)

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
) -> Results:
    """The evaluate calls of the page (two at most) and the inputs' row counts."""
    from sqlmetrics.run import evaluate, read_diagnostics, read_distributions

    main = evaluate(
        recommendations,
        interactions,
        the_plan.main_labels(),
        group_by=group_by,
        distributions=the_plan.distributions,
        **options,
        **interval_options(),
    )
    segments = None
    if segment is not None and the_plan.summary:
        segments = evaluate(
            recommendations,
            interactions,
            the_plan.summary,
            group_by=[*group_by, segment],
            **options,
            **interval_options(),
        )
    return Results(
        main=main,
        diagnostics=read_diagnostics(main),
        distributions=read_distributions(main) if "distributions" in main.attrs else None,
        segments=segments,
        rows=row_counts(recommendations, interactions, options.get("connection")),
    )


def row_counts(
    recommendations: object, interactions: object, connection: object
) -> dict[str, int | None]:
    """Rows of each input, for the provenance: one small query (Parquet answers it from its
    footer). None where it cannot be counted."""
    from sqlglot import exp

    from sqlmetrics.engines import open_engine

    counts: dict[str, int | None] = {}
    with open_engine(connection) as engine:
        for role, value in (("recommendations", recommendations), ("interactions", interactions)):
            if hasattr(value, "__len__") and not isinstance(value, str):
                counts[role] = len(value)  # a DataFrame or an Arrow table: no query
                continue
            source = engine.bind(value, role)
            query = exp.select(exp.func("COUNT", exp.Star())).from_(source.relation)
            row = engine.first_row(query)
            counts[role] = None if row is None else int(row[0])
    return counts
