"""The report's curves, metric@k for k = 1..k_max, as rows rather than labels.

A label per (metric, k) is a column of evaluate's query: six metrics at k_max = 1000 were 6,000
labels, and DuckDB took minutes and gigabytes planning and computing them. Here the curve plan's
sums per group and cutoff are read as they are, a row per (group, k) and a column per metric
(compose's ``curve_cutoffs``, curve_sums.per_cutoff_rows): the query's size no longer grows
with k_max. Where the curve plan does not take the metrics (fewer than MIN_CUTOFFS cutoffs,
trec_eval's judged populations, a metric file it cannot split), the curves stay labels of the
main evaluate call, up to ``LARGEST_LABELS`` of them.

The long frame both give: the group columns, ``metric``, ``k``, ``value``, ``lo`` and ``hi``
(the t-interval at data.PAGE_CI; NaN where the value is not a mean over users).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlmetrics.errors import SqlmetricsError

if TYPE_CHECKING:
    import pandas as pd

    from sqlmetrics.catalog.metrics import MetricRequest
    from sqlmetrics.compose.inputs import Inputs, Options
    from sqlmetrics.engines.base import Engine
    from sqlmetrics.run import Bound

# The most curve labels the main evaluate call takes when the curve plan does not apply: the
# window plan's query grows with them (the bundled example: 400 labels ~10 s, 4,000 minutes).
LARGEST_LABELS = 1000
COLUMNS = ("metric", "k", "value", "lo", "hi")


def gathered(
    recommendations: object,
    interactions: object,
    curves: Mapping[str, Sequence[str]],
    k_max: int,
    *,
    group_by: Sequence[str],
    options: Mapping[str, Any],
    level: float | None,
) -> pd.DataFrame | None:
    """The curves as rows (see the module's docstring), or None: the curve plan does not take
    these metrics, and the main call computes their labels. Refuses, before any query of the
    data, curves the main call could not compute in reasonable time."""
    from sqlmetrics.options import EvaluateOptions, filled
    from sqlmetrics.run import _evaluated

    names = list(curves)
    labels = [f"{name}@{k_max}" for name in names]
    found: list[pd.DataFrame | None] = [None]

    def run(bound: Bound) -> tuple[pd.DataFrame, pd.DataFrame, int]:
        engine, requests, inputs, options = (
            bound.engine,
            bound.requests,
            bound.inputs,
            bound.options,
        )
        found[0] = _rows(engine, requests, inputs, options, k_max, names, level)
        if found[0] is None:
            _refuse_many_labels(names, k_max)
        return (
            found[0] if found[0] is not None else _nothing(),
            _checked(engine, requests, inputs, options),
            1,
        )

    if not names:
        return None
    given = filled(EvaluateOptions, {**options, "group_by": group_by}, "report")
    _evaluated(recommendations, interactions, labels, run, given)
    return found[0]


def _nothing() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame()


def _refuse_many_labels(names: Sequence[str], k_max: int) -> None:
    labels = len(names) * k_max
    if labels <= LARGEST_LABELS:
        return
    largest = max(1, LARGEST_LABELS // len(names))
    raise SqlmetricsError(
        f"the curves of {', '.join(names)} at k = 1..{k_max} would be {labels:,} metric columns "
        "in one query, because the curve plan does not apply to these metrics and options "
        f"(it needs DuckDB's or the portable lists, population 'all' or 'common', and metric "
        f"files it can split); at most {LARGEST_LABELS:,} are computed: lower k_max to "
        f"{largest} (CLI: --k-max {largest}) or ask for fewer metrics"
    )


def _checked(
    engine: Engine, requests: Sequence[MetricRequest], inputs: Inputs, options: Options
) -> pd.DataFrame:
    """The inputs' checks and diagnostics (evaluate refuses what they count)."""
    from sqlmetrics.compose.query import compose_checks
    from sqlmetrics.engines.base import diagnostics_frame

    counted = engine._frame(compose_checks(requests, inputs, options, engine.dialect))
    return diagnostics_frame(counted, inputs)


def _rows(
    engine: Engine,
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    k_max: int,
    names: Sequence[str],
    level: float | None,
) -> pd.DataFrame | None:
    """The curve plan's rows per group and k, in the long frame; None where it does not apply."""
    from sqlmetrics.compose.curve_sums import has_moments
    from sqlmetrics.compose.curves import families
    from sqlmetrics.compose.plan import choose_plan
    from sqlmetrics.compose.query import compose

    cutoffs = range(1, k_max + 1)
    chosen = choose_plan(requests, inputs, options, engine.dialect, curve_cutoffs=cutoffs)
    if chosen.curve is None:
        return None
    query = compose(requests, inputs, options, dialect=engine.dialect, curve_cutoffs=cutoffs)
    frame = engine._frame(query)
    groups = [group.name for group in inputs.groups]
    # one request per metric, in the order of names: family i is names[i]'s
    columns = {
        family.name: (names[family.indexes[0]], has_moments(requests[family.indexes[0]]))
        for family in families(requests)
    }
    return long_frame(frame, groups, columns, level)


def long_frame(
    frame: pd.DataFrame,
    groups: Sequence[str],
    columns: Mapping[str, tuple[str, bool]],
    level: float | None,
) -> pd.DataFrame:
    """per_cutoff_rows' rows as the long frame: ``columns`` maps each value column to its
    metric's name and whether it has moments (``<column>_n``, ``_s``, ``_q``); the t-interval
    at ``level`` (None: no interval)."""
    import pandas as pd

    from sqlmetrics.stats.moments import Moments, t_interval

    rows: list[tuple[Any, ...]] = []
    for record in frame.to_dict("records"):
        keys = tuple(record[group] for group in groups)
        for column, (name, moments) in columns.items():
            low = high = math.nan
            if moments and level is not None:
                low, high = t_interval(
                    Moments(
                        _number(record[f"{column}_n"]),
                        _number(record[f"{column}_s"]),
                        _number(record[f"{column}_q"]),
                    ),
                    level,
                )
            rows.append((*keys, name, int(record["k"]), _number(record[column]), low, high))
    return pd.DataFrame(rows, columns=[*groups, *COLUMNS])


def _number(value: object) -> float:
    return math.nan if value is None else float(value)  # type: ignore[arg-type]


def from_labels(
    frame: pd.DataFrame, groups: Sequence[str], curves: Mapping[str, Sequence[str]]
) -> pd.DataFrame:
    """The long frame from the main call's curve labels (``<label>_lo``, ``_hi`` where it has
    intervals)."""
    import pandas as pd

    rows: list[tuple[Any, ...]] = []
    for record in frame.to_dict("records"):
        keys = tuple(record[group] for group in groups)
        for name, labels in curves.items():
            for k, label in enumerate(labels, start=1):
                low, high = (_number(record.get(f"{label}_{end}")) for end in ("lo", "hi"))
                rows.append((*keys, name, k, _number(record[label]), low, high))
    return pd.DataFrame(rows, columns=[*groups, *COLUMNS])
