"""Gaps between segments of users: how far apart a metric's per-segment values are
(``evaluate(..., segment=...)``; docs/reference/results.md).

Per group (the group columns but the segment) and metric, over the segments that have a value:
``range``, the highest segment's value minus the lowest's, and ``mad``, the mean absolute
difference over every pair of segments (Elliot's UserMADranking and UserMADrating, Deldjoo et
al. 2020). With a bootstrap interval (``ci`` and ``ci_method="bootstrap"``), each gap gets the
percentile interval of the gaps of the bootstrap's replicates: a group's users are dealt into
the buckets across its segments (stats/replicates.py, ``Resampling.segmented``), so the
segments of a replicate draw apart and its gap is one draw of the gap. With a baseline model,
each model's gaps minus the baseline's, replicate by replicate: the same user weighs alike in
both models' replicates (paired) where both list the user in the segment.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlmetrics.compose.inputs import Group
from sqlmetrics.compose.rows import float_or_nan, split
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.stats.inference import percentile_interval
from sqlmetrics.stats.resampling import Resampling

if TYPE_CHECKING:
    import pandas as pd

GAP_COLUMNS = ("segments", "lowest", "highest", "range", "mad")
GAP_STATISTICS = ("range", "mad")
# read_gaps' own columns, beside the group columns in each row
GAP_OWN_COLUMNS = frozenset(
    (
        "metric",
        *GAP_COLUMNS,
        *(f"{s}{part}" for s in GAP_STATISTICS for part in ("_lo", "_hi", "_p")),
        *(f"{s}_difference{end}" for s in GAP_STATISTICS for end in ("", "_lo", "_hi")),
    )
)


def range_and_mad(values: Sequence[float]) -> tuple[float, float]:
    """The range and the mean absolute pairwise difference of the values that are numbers
    (NaN for both with fewer than two)."""
    ordered = sorted(v for v in values if not math.isnan(v))
    count = len(ordered)
    if count < 2:
        return math.nan, math.nan
    # sum over pairs i < j of x_j - x_i, the values sorted: x_k counts +k times and -(n-1-k)
    total = sum(value * (2 * k - count + 1) for k, value in enumerate(ordered))
    return ordered[-1] - ordered[0], total / (count * (count - 1) / 2)


def with_segment(
    group_by: list[str], segment: str, per_user: bool, baseline: str | None = None
) -> list[str]:
    """evaluate's group columns with the segment last: its values are groups of their own."""
    if baseline is not None and not group_by:
        raise SqlmetricsError(
            f"baseline={baseline!r} names a model, a value of the first group_by column: pass "
            "group_by (the segment column is not the models')"
        )
    if per_user:
        raise SqlmetricsError(
            "segment summarises each metric per segment and the gaps between them; with "
            "per_user the rows are the users' values: pass the column in group_by instead"
        )
    if segment in group_by:
        raise SqlmetricsError(
            f"segment={segment!r} is also in group_by: the segments are compared within each "
            "group, so name the column once, as segment"
        )
    for name in group_by:
        if name in GAP_OWN_COLUMNS:
            raise SqlmetricsError(
                f"group_by column {name!r} is also a column of read_gaps' rows, which hold the "
                "group columns beside their own: rename it in the inputs (like 'model_name')"
            )
    return [*group_by, segment]


def check_segment(groups: Sequence[Group], segment: str) -> None:
    """A segment is a value of each user, in both inputs: each segment's metrics are over its
    own users, as the interactions place them (a column of the recommendations alone would
    judge every segment against every user of the interactions)."""
    if not any(group.name == segment and group.in_interactions for group in groups):
        raise SqlmetricsError(
            f"segment {segment!r} is not a column of the interactions; each user's segment "
            "must be in both inputs, so that a segment is evaluated against its own users: "
            "add it to the interactions too"
        )


def segment_gaps(
    result: pd.DataFrame,
    labels: Sequence[str],
    groups: Sequence[str],
    segment: str,
    resampling: Resampling | None = None,
    replicated: tuple[pd.DataFrame, list[str]] | None = None,
    baseline: str | None = None,
) -> pd.DataFrame:
    """The gaps of each metric in ``labels`` between the segments of ``result`` (one row per
    group and segment; ``groups`` ends with ``segment``), per the other groups. With the
    bootstrap's rows (``replicated``: the statistics query's rows and the labels of its
    ``m{i}_n``, each replicate's mean) at ``resampling``'s level: ``range_lo``/``_hi`` and
    ``mad_lo``/``_hi`` (NaN for a metric without replicates). With ``baseline`` (a model, a
    value of the first group column): each gap's difference with the baseline's
    (``baseline_gaps``)."""
    import pandas as pd

    outer = [name for name in groups if name != segment]
    rows = [
        {**dict(zip(outer, key, strict=True)), "metric": label, **_gaps_of(part, segment, label)}
        for key, part in _parts(result, outer)
        for label in labels
    ]
    gaps = pd.DataFrame(rows, columns=[*outer, "metric", *GAP_COLUMNS])
    draws: dict[tuple[tuple[Any, ...], str], dict[Any, tuple[float, float]]] = {}
    if replicated is not None and resampling is not None:
        frame, with_interval = replicated
        present = {(_key(row, outer), row["metric"]): row["segments"] for _, row in gaps.iterrows()}
        draws = _replicate_gaps(frame, outer, with_interval, present)
        for j, statistic in enumerate(GAP_STATISTICS):
            ends = [
                percentile_interval(
                    [draw[j] for draw in draws.get((_key(row, outer), row["metric"]), {}).values()],
                    resampling.level,
                )
                for _, row in gaps.iterrows()
            ]
            gaps[f"{statistic}_lo"] = [low for low, _ in ends]
            gaps[f"{statistic}_hi"] = [high for _, high in ends]
    if baseline is not None and outer:
        gaps = baseline_gaps(gaps, outer, baseline, draws, resampling)
    return gaps


def _gaps_of(part: pd.DataFrame, segment: str, label: str) -> dict[str, Any]:
    """The gap columns of one group's segments for one metric."""
    pairs = zip(part[segment], part[label], strict=True)
    values = {_segment_name(name): float_or_nan(value) for name, value in pairs}
    present = {name: value for name, value in values.items() if not math.isnan(value)}
    spread, mad = range_and_mad(list(present.values()))
    return {
        "segments": len(present),
        "lowest": min(present, key=present.__getitem__) if present else None,
        "highest": max(present, key=present.__getitem__) if present else None,
        "range": spread,
        "mad": mad,
    }


def baseline_gaps(
    gaps: pd.DataFrame,
    outer: Sequence[str],
    baseline: str,
    draws: dict[tuple[tuple[Any, ...], str], dict[Any, tuple[float, float]]],
    resampling: Resampling | None,
) -> pd.DataFrame:
    """``gaps`` with, per gap, ``<gap>_difference`` (the model's gap minus the baseline's, in
    the same other groups) and, with the bootstrap's ``draws``, its interval and ``<gap>_p``:
    two-sided, twice the smaller share of replicates whose difference is at or below zero, or at
    or above (the replicates of both models share their draws user by user: paired)."""
    point = {(_key(row, outer), row["metric"]): row for _, row in gaps.iterrows()}
    # the baseline's own value of the model column (given as text; the column may hold numbers)
    named = {str(key[0]): key[0] for key, _ in point}
    columns: dict[str, list[float]] = {}
    for _, row in gaps.iterrows():
        key = _key(row, outer)
        other = ((named.get(baseline, baseline), *key[1:]), row["metric"])
        theirs = point.get(other) if str(key[0]) != baseline else None
        mine, paired_with = draws.get((key, row["metric"]), {}), draws.get(other, {})
        paired = [(mine[r], paired_with[r]) for r in mine if r in paired_with]
        for j, statistic in enumerate(GAP_STATISTICS):
            difference = math.nan if theirs is None else row[statistic] - theirs[statistic]
            columns.setdefault(f"{statistic}_difference", []).append(difference)
            if resampling is None or not draws:
                continue
            shifts = [a[j] - b[j] for a, b in paired if not (math.isnan(a[j]) or math.isnan(b[j]))]
            shifts = shifts if theirs is not None else []
            low, high = percentile_interval(shifts, resampling.level)
            columns.setdefault(f"{statistic}_difference_lo", []).append(low)
            columns.setdefault(f"{statistic}_difference_hi", []).append(high)
            columns.setdefault(f"{statistic}_p", []).append(_bootstrap_p(shifts))
    for name, values in columns.items():
        gaps[name] = values
    return gaps


def _bootstrap_p(shifts: Sequence[float]) -> float:
    """Two-sided: twice the smaller count of replicates on either side of zero, plus one, over
    the replicates plus one (never 0, as the randomization test's; NaN without replicates)."""
    if not shifts:
        return math.nan
    below = sum(1 for shift in shifts if shift <= 0)
    above = sum(1 for shift in shifts if shift >= 0)
    return min(1.0, 2 * (1 + min(below, above)) / (1 + len(shifts)))


def _replicate_gaps(
    frame: pd.DataFrame,
    outer: Sequence[str],
    labels: Sequence[str],
    present: dict[tuple[tuple[Any, ...], str], int],
) -> dict[tuple[tuple[Any, ...], str], dict[Any, tuple[float, float]]]:
    """Per (other groups, label), each bootstrap replicate's range and mean absolute
    difference between the segments: only the replicates in which every segment with a value
    (``present``) has one (a segment of a few users draws no user in some replicates: its gap
    over the others would be smaller)."""
    rows = split(frame, "replicates")
    found: dict[tuple[tuple[Any, ...], str], dict[Any, tuple[float, float]]] = {}
    for key, part in _parts(rows, outer):
        for i, label in enumerate(labels):
            by_replicate: dict[Any, list[float]] = {}
            for replicate, value in zip(part["replicate"], part[f"m{i}_n"], strict=True):
                by_replicate.setdefault(replicate, []).append(float_or_nan(value))
            found[key, label] = {
                replicate: range_and_mad(values)
                for replicate, values in by_replicate.items()
                if sum(1 for value in values if not math.isnan(value)) == present.get((key, label))
            }
    return found


def _parts(frame: pd.DataFrame, outer: Sequence[str]) -> list[tuple[tuple[Any, ...], pd.DataFrame]]:
    """The rows of ``frame`` per value of the ``outer`` columns (NULL a value of its own)."""
    if not outer:
        return [((), frame)]
    grouped = frame.groupby(list(outer), dropna=False, sort=False)
    return [(_key_of(key), part) for key, part in grouped]


def _key_of(key: object) -> tuple[Any, ...]:
    values = key if isinstance(key, tuple) else (key,)
    return tuple(None if _missing(value) else value for value in values)


def _key(row: pd.Series, outer: Sequence[str]) -> tuple[Any, ...]:
    return tuple(None if _missing(row[name]) else row[name] for name in outer)


def _missing(value: object) -> bool:
    import pandas as pd

    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def _segment_name(value: object) -> object:
    return None if _missing(value) else value
