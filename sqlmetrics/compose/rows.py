"""Reading the statistics query's rows in Python (its result, sqlmetrics/stats/query.py,
fetched as a frame): the rows of one kind, a row's group key, a value as a float. inference.py and
distributions.py finish their numbers from these."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlmetrics.compose.diagnostics import KIND

if TYPE_CHECKING:
    import pandas as pd


def float_or_nan(value: Any) -> float:
    return math.nan if value is None else float(value)


def split(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    return frame.loc[frame[KIND].astype(str) == kind].reset_index(drop=True)


def group_key(row: Any, groups: Sequence[str]) -> tuple[Any, ...]:
    return tuple(None if _missing(row[name]) else row[name] for name in groups)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
