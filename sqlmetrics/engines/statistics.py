"""A statistics query (sqlmetrics/stats/query.py) run in a call's engine, with evaluate's
diagnostics from the same query where the engine takes them together."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from sqlglot import exp

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose.diagnostics import KIND
from sqlmetrics.compose.inputs import Inputs, Options
from sqlmetrics.compose.query import compose_checks
from sqlmetrics.engines.base import SEPARATE_DIAGNOSTICS, Engine, diagnostics_frame

if TYPE_CHECKING:
    import pandas as pd


def statistics_rows(
    engine: Engine,
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    query: Callable[[bool], exp.Query],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A statistics query's rows and evaluate's diagnostics (``query(True)`` carries them as
    rows of their own; ``query(False)`` does not, and the checks' query counts them)."""
    separate = engine.dialect in SEPARATE_DIAGNOSTICS
    frame = engine._frame(query(not separate))
    if separate:
        counted = engine._frame(compose_checks(requests, inputs, options, engine.dialect))
    else:
        counted = frame.loc[frame[KIND].astype(str) == "diagnostics"].reset_index(drop=True)
    diagnostics = diagnostics_frame(counted, inputs)
    groups = [group.name for group in inputs.groups]
    if groups:  # the statistics query's union has no order: evaluate's, by group, NULL last
        diagnostics = diagnostics.sort_values(groups, na_position="last", kind="stable")
    return frame, diagnostics.reset_index(drop=True)
