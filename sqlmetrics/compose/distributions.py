"""The spread of per-user values without fetching them (evaluate's ``distributions``).

Per group and metric: the users with a value, the users at 0, and the values at QUANTILE_LEVELS
evenly spaced levels (0 %, 1 %, .., 100 %). On DuckDB the statistics query computes them
(stats.compose_ci: the aggregates below, over the per-user values or, in the curve plan, over
each user's step holding the cutoff, curve_steps.py); elsewhere evaluate takes them from its
per-user rows (distributions_of), by the same definition: the smallest value with at least the
level's share of the users at or below it (DuckDB's QUANTILE_DISC, numpy's inverted CDF).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose.rows import float_or_nan, group_key, split

if TYPE_CHECKING:
    import pandas as pd

QUANTILE_LEVELS = 101


def quantile_levels() -> list[float]:
    return [i / (QUANTILE_LEVELS - 1) for i in range(QUANTILE_LEVELS)]


def spread_aggregates(index: int, value: exp.Expr, where: exp.Expr | None = None) -> list[exp.Expr]:
    """The aggregates of a request's distribution (number ``index``) over its per-user
    ``value``, counted where ``where`` holds if given: ``d{index}``, its quantiles at
    quantile_levels() (DuckDB's QUANTILE_DISC over a list of levels), ``z{index}``, the users
    at 0, and ``c{index}``, the users with a value."""
    levels = exp.Array(expressions=[exp.Literal.number(level) for level in quantile_levels()])

    def counted(aggregate: exp.Expr, condition: exp.Expr | None = None) -> exp.Expr:
        conditions = [c.copy() for c in (where, condition) if c is not None]
        if not conditions:
            return aggregate
        return exp.Filter(this=aggregate, expression=exp.Where(this=exp.and_(*conditions)))

    at_zero = exp.EQ(this=value.copy(), expression=exp.Literal.number(0))
    return [
        exp.alias_(counted(exp.func("QUANTILE_DISC", value.copy(), levels)), f"d{index}"),
        exp.alias_(counted(exp.func("COUNT", exp.Star()), at_zero), f"z{index}"),
        exp.alias_(counted(exp.func("COUNT", value.copy())), f"c{index}"),
    ]


DISTRIBUTION_COLUMNS = ("metric", "users", "users_at_0", "quantiles")


def finish_distributions(
    frame: pd.DataFrame,
    requests: Sequence[MetricRequest],
    groups: Sequence[str],
    wanted: Sequence[int],
) -> pd.DataFrame:
    """compose_ci's rows ``quantiles`` as ``read_distributions`` gives them: per group and
    wanted request, ``users`` (with a value), ``users_at_0`` and ``quantiles`` (the values at
    quantile_levels(), NaN for a group without a value)."""
    by_group: dict[tuple[Any, ...], list[Any]] = {}
    for _, row in split(frame, "quantiles").iterrows():
        by_group.setdefault(group_key(row, groups), []).append(row)
    rows = []
    for level_rows in by_group.values():
        level_rows.sort(key=lambda row: int(row["replicate"]))  # level 0 first
        first = level_rows[0]
        for index in wanted:
            rows.append(
                [
                    *(first[name] for name in groups),
                    requests[index].label,
                    int(float_or_nan(first[f"m{index}_q"])),
                    int(float_or_nan(first[f"m{index}_s"])),
                    [float_or_nan(row[f"m{index}_n"]) for row in level_rows],
                ]
            )
    return _frame(rows, groups)


def _frame(rows: list[list[Any]], groups: Sequence[str]) -> pd.DataFrame:
    """The distributions' rows as a frame in group order, NULL groups last (as evaluate's)."""
    import pandas as pd

    result = pd.DataFrame(rows, columns=[*groups, *DISTRIBUTION_COLUMNS])
    if groups:
        result = result.sort_values(list(groups), na_position="last", kind="stable")
    return result.reset_index(drop=True)


def distributions_of(
    per_user: pd.DataFrame, labels: Sequence[str], groups: Sequence[str]
) -> pd.DataFrame:
    """The same frame as finish_distributions from evaluate's per-user rows, for the engines
    whose SQL has no list of quantile levels: QUANTILE_DISC's definition, the smallest value
    with at least the level's share of the users at or below it."""
    import numpy as np

    rows = []
    grouped = (
        per_user.groupby(list(groups), dropna=False, sort=False) if groups else [((), per_user)]
    )
    for key, part in grouped:
        key = key if isinstance(key, tuple) else (key,)
        for label in labels:
            values = part[label].dropna().to_numpy(dtype=float)
            quantiles = (
                np.quantile(values, quantile_levels(), method="inverted_cdf").tolist()
                if len(values)
                else [math.nan] * QUANTILE_LEVELS
            )
            rows.append([*key, label, len(values), int((values == 0).sum()), quantiles])
    return _frame(rows, groups)
