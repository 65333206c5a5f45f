"""The statistics finished in Python from the statistics query's rows (sqlmetrics/stats/query.py
builds the query; docs/METRICS.md, "Intervals and tests"): Student's t-interval and paired t-test,
the bootstrap percentile interval, the randomization test's p-value, Holm's correction, Welch's
test against a stored run, and the frames evaluate and compare return (``finish_ci``,
``finish_compare``, ``against_stored``, ``with_intervals``). sqlmetrics.stats.tdist has the t
distribution.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose.rows import float_or_nan, group_key, split
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.stats.moments import (
    Moments,
    in_worse_direction,
    t_interval,
    t_test,
    welch_problem,
    welch_test,
)
from sqlmetrics.stats.resampling import Resampling, has_interval

if TYPE_CHECKING:
    import pandas as pd

# per group, per metric, the replicates' values of one slot
Replicates = dict[tuple[Any, ...], list[list[float]]]

# against_stored's notes for a (group, metric) on one side only
ONLY_TODAY = "not in the earlier run"
ONLY_BEFORE = "not in this evaluation"


def percentile_interval(values: Sequence[float], level: float) -> tuple[float, float]:
    """The bootstrap percentile interval, linearly interpolated (numpy.quantile's default)."""
    ordered = sorted(v for v in values if v is not None and not math.isnan(v))
    if not ordered:
        return math.nan, math.nan

    def quantile(p: float) -> float:
        position = p * (len(ordered) - 1)
        low = math.floor(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

    return quantile((1 - level) / 2), quantile((1 + level) / 2)


def randomization_p(observed: float, flipped: Sequence[float]) -> float:
    """The two-sided p-value of the sign-flip test: (1 + replicates at least as extreme as the
    observed sum) / (1 + replicates), so that it is never 0 (the observed signs are one of the
    equally likely flips under the null)."""
    values = [v for v in flipped if v is not None and not math.isnan(v)]
    if math.isnan(observed) or not values:
        return math.nan
    # The observed sum and a replicate with every sign +1 add the same numbers in another order.
    bar = abs(observed) * (1 - 1e-12) - 1e-300
    extreme = sum(1 for v in values if abs(v) >= bar)
    return (1 + extreme) / (1 + len(values))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (step-down, monotone, at most 1); NaN stays NaN and is
    not counted among the hypotheses."""
    present = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    adjusted = [math.nan] * len(p_values)
    running = 0.0
    count = len(present)
    for rank, (p, index) in enumerate(present):
        running = max(running, min(1.0, (count - rank) * p))
        adjusted[index] = running
    return adjusted


def replicate_values(
    frame: pd.DataFrame, groups: Sequence[str], metrics: int, slot: str
) -> dict[tuple[Any, ...], list[list[float]]]:
    """Per group, per metric, the replicates' values of one slot."""
    values: dict[tuple[Any, ...], list[list[float]]] = {}
    for _, row in split(frame, "replicates").iterrows():
        per_metric = values.setdefault(group_key(row, groups), [[] for _ in range(metrics)])
        for i in range(metrics):
            per_metric[i].append(float_or_nan(row[f"m{i}_{slot}"]))
    return values


def finish_ci(
    frame: pd.DataFrame,
    requests: Sequence[MetricRequest],
    groups: Sequence[str],
    resampling: Resampling,
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """compose_ci's rows as evaluate's result with ``<metric>_lo`` and ``<metric>_hi`` after
    each metric, the moments per group and metric (for --output and --against), and the notes
    to tell the user (the variances that are not finite)."""
    import pandas as pd

    moments_rows = split(frame, "moments")
    boot = (
        replicate_values(frame, groups, len(requests), "n")
        if resampling.method == "bootstrap"
        else {}
    )
    rows, stored = [], []
    unknown: dict[str, list[str]] = {}
    for _, row in moments_rows.iterrows():
        key = group_key(row, groups)
        out: dict[str, Any] = {name: row[name] for name in groups}
        out["users"] = int(float_or_nan(row["users"]))
        for i, request in enumerate(requests):
            moments = Moments(
                float_or_nan(row[f"m{i}_n"]),
                float_or_nan(row[f"m{i}_s"]),
                float_or_nan(row[f"m{i}_q"]),
            )
            label = request.label
            out[label] = moments.mean
            if not has_interval(request):
                low = high = math.nan
            elif resampling.method == "t":
                low, high = t_interval(moments, resampling.level)
            else:
                low, high = percentile_interval(
                    boot.get(key, [[]] * len(requests))[i], resampling.level
                )
            out[f"{label}_lo"], out[f"{label}_hi"] = low, high
            if has_interval(request):
                _note_problem(unknown, moments, label, groups, key)
                stored.append(
                    {
                        **{name: row[name] for name in groups},
                        "metric": label,
                        "mean": moments.mean,
                        "variance": moments.variance,
                        "n": int(moments.n),
                    }
                )
        rows.append(out)
    columns = [*groups, "users"]
    for request in requests:
        columns += [request.label, f"{request.label}_lo", f"{request.label}_hi"]
    result = pd.DataFrame(rows, columns=columns)
    if groups:
        result = result.sort_values(list(groups), na_position="last", kind="stable")
    moments_frame = pd.DataFrame(stored, columns=[*groups, "metric", "mean", "variance", "n"])
    return result.reset_index(drop=True), moments_frame, _problem_notes(unknown, "no interval")


def _note_problem(
    unknown: dict[str, list[str]],
    moments: Moments,
    label: str,
    groups: Sequence[str],
    key: tuple[Any, ...],
) -> None:
    """Records where a metric's variance is not finite (a group of one user is no news: its
    NaN interval is the documented rule)."""
    problem = moments.problem
    if problem is None or moments.n < 2:
        return
    where = ", ".join(f"{name}={value}" for name, value in zip(groups, key, strict=True))
    unknown.setdefault(f"{label}: {problem}", []).append(where)


def _problem_notes(unknown: dict[str, list[str]], what: str) -> list[str]:
    notes = []
    for problem, places in unknown.items():
        named = [place for place in places if place]
        shown = ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
        notes.append(f"{what} for {problem}" + (f" ({shown})" if shown else ""))
    return notes


# compare's columns before p_holm and significant
COMPARE_COLUMNS = (
    "metric",
    "baseline",
    "value",
    "difference",
    "relative_difference",
    "difference_lo",
    "difference_hi",
    "p_t",
    "p_randomization",
    "users",
)


def finish_compare(
    frame: pd.DataFrame,
    requests: Sequence[MetricRequest],
    groups: Sequence[str],
    model: str,
    baseline: str,
    resampling: Resampling,
    test: str,
    alpha: float,
) -> tuple[pd.DataFrame, list[str]]:
    """compose_compare's rows as compare's result (one row per model, other groups and metric)
    and the notes to tell the user (users left out by the pairing)."""
    import pandas as pd

    replicates = (
        replicate_values(frame, groups, len(requests), "n"),
        replicate_values(frame, groups, len(requests), "s"),
    )
    counts = {
        group_key(row, groups): int(float_or_nan(row["users"]))
        for _, row in split(frame, "users").iterrows()
    }
    others = [name for name in groups if name != model]
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    unknown: dict[str, list[str]] = {}
    for _, row in split(frame, "moments").iterrows():
        key = group_key(row, groups)
        note = _pairing_note(key, int(float_or_nan(row["users"])), counts, groups, model, baseline)
        if note is not None:
            notes.append(note)
        rows += _metric_rows(row, key, requests, groups, replicates, resampling, unknown)
    compared_keys = {group_key(row, groups) for row in rows}
    unpaired = _unpaired(counts, compared_keys, requests, groups, (model, baseline))
    rows += unpaired
    notes += _unpaired_notes(unpaired, groups, baseline)
    result = _with_decisions(
        pd.DataFrame(rows, columns=[*groups, *COMPARE_COLUMNS]), resampling, test, alpha
    )
    order = [model, *others, "metric"]
    metric_order = {request.label: i for i, request in enumerate(requests)}
    result = result.sort_values(
        order,
        key=lambda column: column.map(metric_order) if column.name == "metric" else column,
        na_position="last",
        kind="stable",
    )
    return result.reset_index(drop=True), notes + _problem_notes(unknown, "no t-test")


def _pairing_note(
    key: tuple[Any, ...],
    paired: int,
    counts: dict[tuple[Any, ...], int],
    groups: Sequence[str],
    model: str,
    baseline: str,
) -> str | None:
    """The note telling that a model was compared on fewer users than it or the baseline has,
    or None when none was left out."""
    own = counts.get(key, 0)
    base = next(
        (n for k, n in counts.items() if _is_baseline(k, key, groups, model, baseline)),
        None,
    )
    if base is None or (paired >= own and paired >= base):
        return None
    where = ", ".join(f"{name}={value}" for name, value in zip(groups, key, strict=True))
    return (
        f"{where}: compared on the {paired} users both it and {baseline} were evaluated "
        f"on ({own} and {base} users)"
    )


def _metric_rows(
    row: Any,
    key: tuple[Any, ...],
    requests: Sequence[MetricRequest],
    groups: Sequence[str],
    replicates: tuple[Replicates, Replicates],
    resampling: Resampling,
    unknown: dict[str, list[str]],
) -> list[dict[str, Any]]:
    """compare's rows of one moments row: one per metric with an interval (``unknown``
    collects where a variance is not finite)."""
    boot, flips = replicates
    rows: list[dict[str, Any]] = []
    for i, request in enumerate(requests):
        if not has_interval(request):
            continue
        differences = Moments(
            float_or_nan(row[f"m{i}_n"]),
            float_or_nan(row[f"m{i}_s"]),
            float_or_nan(row[f"m{i}_q"]),
        )
        _note_problem(unknown, differences, request.label, groups, key)
        compared = _compared(
            row, i, differences, (boot.get(key, []), flips.get(key, [])), resampling
        )
        rows.append({**{name: row[name] for name in groups}, "metric": request.label})
        rows[-1].update(compared)
    return rows


def _with_decisions(
    result: pd.DataFrame, resampling: Resampling, test: str, alpha: float
) -> pd.DataFrame:
    """``result`` with p_holm (Holm's correction of the chosen test's p-values) and
    significant."""
    chosen = "p_t" if test == "t" else "p_randomization"
    if test == "randomization":
        _check_reachable(result[chosen], resampling.replicates, alpha)
    result["p_holm"] = holm([float(p) for p in result[chosen]])
    result["significant"] = [bool(p < alpha) for p in result["p_holm"]]
    return result


def _compared(
    row: Any,
    index: int,
    differences: Moments,
    replicates: tuple[list[list[float]], list[list[float]]],
    resampling: Resampling,
) -> dict[str, Any]:
    """One metric's comparison from its moments row: the means, the interval and the tests."""
    n = differences.n
    value = float_or_nan(row[f"m{index}_x"]) / n if n else math.nan
    reference = float_or_nan(row[f"m{index}_y"]) / n if n else math.nan
    difference = differences.mean
    boot, flips = (values[index] if values else [] for values in replicates)
    if resampling.method == "t":
        low, high = t_interval(differences, resampling.level)
    else:
        low, high = percentile_interval(boot, resampling.level)
    return {
        "baseline": reference,
        "value": value,
        "difference": difference,
        "relative_difference": difference / reference if reference else math.nan,
        "difference_lo": low,
        "difference_hi": high,
        "p_t": t_test(differences),
        "p_randomization": randomization_p(differences.total, flips),
        "users": int(n),
    }


def _unpaired(
    counts: dict[tuple[Any, ...], int],
    compared: set[tuple[Any, ...]],
    requests: Sequence[MetricRequest],
    groups: Sequence[str],
    names: tuple[str, str],
) -> list[dict[str, Any]]:
    """A row of NaN (0 users) per metric for each model of ``counts`` (``names``: the model
    column and the baseline) with no user paired with the baseline, which the query has no
    moments for: a gate must see it, not pass it by."""
    position = list(groups).index(names[0])

    def unpaired(key: tuple[Any, ...]) -> bool:
        model = key[position]
        return key not in compared and model is not None and str(model) != names[1]

    return [
        {**dict(zip(groups, key, strict=True)), "metric": request.label, "users": 0}
        for key, own in counts.items()
        if own and unpaired(key)
        for request in requests
        if has_interval(request)
    ]


def _unpaired_notes(
    rows: Sequence[dict[str, Any]], groups: Sequence[str], baseline: str
) -> list[str]:
    unpaired = dict.fromkeys(tuple(row[name] for name in groups) for row in rows)
    return [
        ", ".join(f"{name}={value}" for name, value in zip(groups, key, strict=True))
        + f": no user both it and {baseline} were evaluated on; not compared"
        for key in unpaired
    ]


def _check_reachable(p_values: Any, replicates: int, alpha: float) -> None:
    """Refuses a randomization test that cannot find any difference significant: its p-values
    are at least 1 / (1 + replicates), and Holm multiplies the smallest by the number of
    comparisons; a gate on it could never fail."""
    count = sum(1 for p in p_values if not math.isnan(p))
    if count and count / (1 + replicates) >= alpha:
        needed = math.floor(count / alpha)
        raise SqlmetricsError(
            f"with replicates={replicates} the randomization test's p-values are at least "
            f"1/{replicates + 1}, so after Holm-Bonferroni over {count} comparisons none can "
            f"be below alpha = {alpha:g}: use replicates={needed} or more"
        )


def _is_baseline(
    key: tuple[Any, ...], of: tuple[Any, ...], groups: Sequence[str], model: str, baseline: str
) -> bool:
    """Whether ``key`` is the baseline's group paired with ``of`` (the model value matched as
    text, as the query matches it)."""
    return all(
        (value is not None and str(value) == baseline) if name == model else value == other
        for name, value, other in zip(groups, key, of, strict=True)
    )


def against_stored(
    previous: pd.DataFrame,
    current: pd.DataFrame,
    groups: Sequence[str],
    alpha: float,
) -> pd.DataFrame:
    """Each (group, metric) of ``current`` against the same in ``previous`` (both: group
    columns, metric, mean, variance, n; the moments of evaluate(ci=...)): Welch's test, since
    the users of two runs are not paired; Holm-Bonferroni over every row; ``worse`` when the
    change is significant and in the metric's bad direction. A (group, metric) on one side
    only is a row too, NaN on the other side and its ``note`` saying so (``note`` also says
    why a test could not be made); keys must be unique on each side."""
    import pandas as pd

    def key(row: Any) -> tuple[Any, ...]:
        return (*group_key(row, groups), row["metric"])

    stored = {key(row): row for _, row in previous.iterrows()}
    today = {key(row): row for _, row in current.iterrows()}
    rows = [
        _against_row(stored.get(at), today.get(at), at, groups)
        for at in [*today, *(at for at in stored if at not in today)]
    ]
    columns = [*groups, "metric", "previous", "current", "difference", "p_welch"]
    result = pd.DataFrame(rows, columns=[*columns, "users_previous", "users_current", "note"])
    result["p_holm"] = holm([float(p) for p in result["p_welch"]])
    result["worse"] = [
        bool(p < alpha) and in_worse_direction(metric, d)
        for p, d, metric in zip(
            result["p_holm"], result["difference"], result["metric"], strict=True
        )
    ]
    return result[[*columns, "users_previous", "users_current", "p_holm", "worse", "note"]]


def _against_row(
    before: Any, after: Any, at: tuple[Any, ...], groups: Sequence[str]
) -> dict[str, Any]:
    """One (group, metric) of against_stored; ``before`` or ``after`` may be missing."""
    sides = [
        (math.nan, math.nan, 0)
        if side is None
        else (float_or_nan(side["mean"]), float_or_nan(side["variance"]), int(side["n"]))
        for side in (before, after)
    ]
    (mean1, var1, n1), (mean2, var2, n2) = sides
    if before is None:
        note = ONLY_TODAY
    elif after is None:
        note = ONLY_BEFORE
    else:
        note = welch_problem(var1, n1, var2, n2) or ""
    return {
        **dict(zip(groups, at[:-1], strict=True)),
        "metric": at[-1],
        "previous": mean1,
        "current": mean2,
        "difference": mean2 - mean1,
        "p_welch": welch_test(mean1, var1, n1, mean2, var2, n2),
        "users_previous": n1,
        "users_current": n2,
        "note": note,
    }


def with_intervals(
    result: pd.DataFrame,
    intervals: pd.DataFrame | None,
    requests: Sequence[MetricRequest],
    groups: Sequence[str],
) -> pd.DataFrame:
    """evaluate's ``result`` with ``<metric>_lo`` and ``<metric>_hi`` after each metric: from
    ``intervals`` (finish_ci's, matched on the group columns) where it has them, else NaN."""
    import pandas as pd

    shown = result.copy()
    if intervals is not None and groups:
        bounds = [c for c in intervals.columns if c.endswith(("_lo", "_hi"))]
        keyed = intervals[[*groups, *bounds]].copy()
        for name in groups:
            # evaluate's rows may type a key otherwise (a DATE as datetime64, the statistics
            # query's as datetime.date objects): the keys as the result has them
            # (one that does not convert is left as it is: merge compares the values)
            if keyed[name].dtype != shown[name].dtype:
                with contextlib.suppress(TypeError, ValueError):
                    keyed[name] = keyed[name].astype(shown[name].dtype)
        # merge matches a missing group value with a missing one, as GROUP BY does
        joined = shown[list(groups)].merge(keyed, on=list(groups), how="left", sort=False)
        found = {column: joined[column].to_numpy() for column in bounds}
    elif intervals is not None:
        found = {
            c: intervals[c].to_numpy() for c in intervals.columns if c.endswith(("_lo", "_hi"))
        }
    else:
        found = {}
    columns: dict[str, object] = {name: shown[name] for name in shown.columns}
    ordered: list[str] = [name for name in shown.columns if name not in _labels(requests)]
    for request in requests:
        ordered.append(request.label)
        for side in ("_lo", "_hi"):
            name = request.label + side
            columns[name] = found.get(name, [math.nan] * len(shown))
            ordered.append(name)
    combined = pd.DataFrame({name: columns[name] for name in ordered}, index=shown.index)
    combined.attrs.update(result.attrs)
    return combined


def _labels(requests: Sequence[MetricRequest]) -> set[str]:
    return {request.label for request in requests}
