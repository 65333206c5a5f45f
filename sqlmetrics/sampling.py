"""evaluate's ``sampled=``: the histogram of the positives' sampled ranks fetched beside the
metrics (compose/sampled.py), the lists checked against the form's promise, and the corrected
full-catalogue estimates (stats/sampled.py) in ``read_sampled(result)``."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlmetrics.attrs import Table
from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose.sampled import sampled_query
from sqlmetrics.engines.checks import duplicate_example
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.options import EvaluateOptions, Running
from sqlmetrics.stats.sampled import ESTIMATORS, Sampled, estimates, estimator_weights, family_of

if TYPE_CHECKING:
    import pandas as pd

    from sqlmetrics.run import Bound

Found = tuple["pd.DataFrame", "pd.DataFrame", int]


@dataclass(frozen=True)
class Fetched:
    """The sampled query's rows (compose/sampled.py), under the call's group names."""

    rows: pd.DataFrame
    groups: list[str]
    requests: Sequence[MetricRequest]
    repeats: str | None = None  # the refusal of repeated (user, item) pairs, with an example


def sampled_steps(
    run: Callable[[Bound], Found], given: EvaluateOptions
) -> tuple[Callable[[Bound], Found], Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame]]:
    """evaluate's ``run`` with the sampled query after it, and the step that finishes the
    estimates from its rows (returning the diagnostics); without ``sampled=``, ``run`` as it is
    and the diagnostics untouched."""
    sampled = given["sampled"]
    if sampled is None:
        return run, lambda result, diagnostics: diagnostics
    found: list[Fetched] = []
    steps = fetching(run, found, given["per_user"], given)
    resampling = (given["ci"], given["replicates"], given["seed"])
    return steps, lambda result, diagnostics: finish(
        result, diagnostics, found[0], sampled, resampling
    )


def fetching(
    run: Callable[[Bound], Found], found: list[Fetched], per_user: bool, options: Running
) -> Callable[[Bound], Found]:
    """``run``, then the sampled query in the same engine, its rows put in ``found`` (checked
    by ``finish`` once evaluate's own refusals have had their say)."""
    if per_user:
        raise SqlmetricsError(
            "sampled='s estimates correct each group's histogram of sampled ranks; per_user "
            "does not apply to them: drop one of the two"
        )
    if options["ties"] == "average":
        raise SqlmetricsError(
            "sampled= counts each positive at a whole sampled rank; ties='average' splits "
            "tied ranks: use ties='id' (the default), 'optimistic' or 'pessimistic'"
        )

    def with_histogram(bound: Bound) -> Found:
        import pandas as pd

        answer = run(bound)
        rows = bound.engine._frame(sampled_query(bound.inputs, bound.options))
        names = {f"group_{i + 1}": name for i, name in enumerate(bound.groups)}
        repeated = int(pd.to_numeric(rows.loc[rows["kind"] == "repeated", "rows"]).sum())
        found.append(
            Fetched(
                rows.rename(columns=names),
                bound.groups,
                bound.requests,
                _repeats(bound, repeated) if repeated else None,
            )
        )
        return answer

    return with_histogram


def _repeats(bound: Bound, pairs: int) -> str:
    """The refusal of ``pairs`` repeated (user, item) pairs (duplicates="first" keeps one of
    each before the histogram reads them, so none is counted then)."""
    inputs = bound.inputs
    example = duplicate_example(bound.engine, inputs)
    shown = f", e.g. {example[:2]} appears {example[2]} times" if example else ""
    return (
        f"recommendations repeat {pairs} ({inputs.user.name}, {inputs.item.name}) pair(s)"
        f"{shown}; sampled= reads each whole list (a repeated positive would be counted twice, "
        "a repeated negative as another sampled one): deduplicate them, or pass "
        "duplicates='first' (CLI: --duplicates first) to keep the best-placed row"
    )


def warning(sampled: Sampled) -> str:
    return (
        f"sampled metrics: each positive ranked among {sampled.negatives} sampled negatives "
        f"of {sampled.n_items - 1} other items (sampling rate {sampled.rate:.4g}); the metric "
        "columns are the sampled metrics, not the full-catalogue ones, and can order models "
        "differently (Krichene and Rendle, KDD 2020); read_sampled(result) gives the "
        "corrected estimates"
    )


def finish(
    result: pd.DataFrame,
    diagnostics: pd.DataFrame,
    fetched: Fetched,
    sampled: Sampled,
    resampling: tuple[float | None, int, int],
) -> pd.DataFrame:
    """Refuses lists the form does not fit; puts the estimates in ``result.attrs["sampled"]``
    and the warning in its notes; returns the diagnostics with the sampling rate and counts.
    ``resampling``: the level (None: no interval), replicates and seed of the bootstrap."""
    import numpy as np
    import pandas as pd

    rows, groups = fetched.rows, fetched.groups
    kinds = rows["kind"].astype(str)
    counts = pd.to_numeric(rows["rows"]).astype("int64")
    values = pd.to_numeric(rows["value"]).astype("int64")
    if fetched.repeats is not None:
        raise SqlmetricsError(fetched.repeats)
    _refuse(sampled, rows, kinds, values, counts, groups)
    keyed = {key: i for i, key in enumerate(_keys(diagnostics, groups))}
    m = sampled.negatives
    histograms = np.zeros((len(keyed), m + 1))
    without_positive = np.zeros(len(keyed), dtype="int64")
    lists = np.zeros(len(keyed), dtype="int64")
    for key, kind, value, count in zip(_keys(rows, groups), kinds, values, counts, strict=True):
        if key not in keyed:
            continue  # a group the diagnostics do not count (not in the population)
        if kind == "histogram":
            histograms[keyed[key], value - 1] += count
        elif kind == "without_positive":
            without_positive[keyed[key]] += count
        elif kind == "negatives":
            lists[keyed[key]] += count
    diagnostics = diagnostics.copy()
    diagnostics["sampling_rate"] = sampled.rate
    diagnostics["sampled_positives"] = histograms.sum(axis=1).astype("int64")
    diagnostics["sampled_lists_without_positive"] = without_positive
    table, skipped = _estimates(
        diagnostics[groups], histograms, fetched.requests, sampled, resampling
    )
    result.attrs["sampled"] = Table.of(table)
    notes = [warning(sampled)]
    if (histograms.sum(axis=1) > lists - without_positive).any():
        notes.append(
            "some lists hold more than one positive: each is ranked among the negatives alone, "
            "a case of its own, so read_sampled's estimates average over the positives, not "
            "over the users as the metric columns do"
        )
    if skipped:
        notes.append(
            f"no corrected estimate for {', '.join(skipped)}: only hit_rate, recall, ndcg, "
            "precision@k, mrr and map are functions of one positive's rank"
        )
    result.attrs["notes"] = [*result.attrs.get("notes", []), *notes]
    result.attrs["sampled_form"] = {
        "n_items": sampled.n_items,
        "negatives": sampled.negatives,
        "gamma": sampled.gamma,
    }
    return diagnostics


def _keys(frame: pd.DataFrame, groups: Sequence[str]) -> list[tuple[Hashable, ...]]:
    """Each row's group values as a key: a missing value (NULL group) as None."""
    columns = [frame[group].tolist() for group in groups]
    return [
        tuple(None if _missing(value) else value for value in values)
        for values in zip(*columns, strict=True)
    ] or [() for _ in range(len(frame))]


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _refuse(
    sampled: Sampled,
    rows: pd.DataFrame,
    kinds: pd.Series,
    values: pd.Series,
    counts: pd.Series,
    groups: Sequence[str],
) -> None:
    """Lists whose sampled negatives are not ``negatives``, and positives absent from their
    list (no sampled rank), refused with an example."""
    m = sampled.negatives
    other = (kinds == "negatives") & (values != m)
    if other.any():
        first = rows.loc[other].index[0]
        where = ", ".join(f"{g}={rows.at[first, g]!r}" for g in groups)
        raise SqlmetricsError(
            f"sampled= promises each list holds its held-out positive(s) and {m} sampled "
            f"negatives; {int(counts[other].sum())} list(s) hold another number, e.g. "
            f"{int(values[first])}{' in ' + where if where else ''}: give each user's "
            f"positive(s) and exactly {m} negatives, or Sampled(negatives=) as sampled"
        )
    missing = kinds == "missing"
    if counts[missing].sum() > 0:
        raise SqlmetricsError(
            f"sampled=: {int(counts[missing].sum())} held-out positive(s) are not in their "
            "user's list; a positive's sampled rank is its place among the negatives, so each "
            "relevant interaction must be among its user's candidates"
        )


def _estimates(
    keys: pd.DataFrame,
    histograms: Any,
    requests: Sequence[MetricRequest],
    sampled: Sampled,
    resampling: tuple[float | None, int, int],
) -> tuple[pd.DataFrame, list[str]]:
    """The estimates table: per group, metric and estimator, the value (and its interval)."""
    import pandas as pd

    targets: dict[str, tuple[str, int | None]] = {}
    skipped = []
    for request in requests:
        family = family_of(request.metric.name, request.k)
        if family is None:
            skipped.append(request.label)
        else:
            targets[request.label] = (family, request.k)
    level, replicates, seed = resampling
    records: list[Mapping[str, object]] = []
    if targets:
        weights = estimator_weights(sampled, list(targets.values()))
        for g, group_values in enumerate(keys.itertuples(index=False, name=None)):
            found, intervals = estimates(histograms[g], weights, level, replicates, seed)
            for t, label in enumerate(targets):
                for e, estimator in enumerate(ESTIMATORS):
                    record: dict[str, object] = dict(zip(keys.columns, group_values, strict=True))
                    record.update(
                        metric=label,
                        estimator=estimator,
                        value=float(found[t, e]),
                        positives=int(histograms[g].sum()),
                    )
                    if intervals is not None:
                        record.update(lo=float(intervals[t, e, 0]), hi=float(intervals[t, e, 1]))
                    records.append(record)
    columns = [*keys.columns, "metric", "estimator", "value"]
    columns += ["lo", "hi"] if level is not None else []
    table = pd.DataFrame.from_records(records, columns=[*columns, "positives"])
    for column in keys.columns:
        table[column] = table[column].astype(keys[column].dtype)
    table["positives"] = table["positives"].astype("int64")
    return table, skipped
