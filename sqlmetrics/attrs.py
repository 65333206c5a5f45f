"""The small tables evaluate keeps in its result's ``attrs`` (diagnostics, distributions,
moments), held as immutable values rather than DataFrames.

pandas compares the parts' attrs with ``==`` when it concatenates or merges frames (it keeps
them only when every part has the same) and deep-copies them at each operation. A DataFrame
there makes that comparison raise ("the truth value of a DataFrame is ambiguous"); a ``Table``
compares as a value, and an immutable value needs no copy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlmetrics.errors import SqlmetricsError

if TYPE_CHECKING:
    import pandas as pd

Cell = object  # a plain value: None, a number, a string, a timestamp, a tuple of them


def _frozen(value: object, missing: bool = False) -> Cell:
    """A cell as a plain, comparable value: NumPy's values as Python's, sequences as tuples,
    missing values as None (NaN never equals itself: two tables with one would differ)."""
    if missing:
        return None
    if hasattr(value, "tolist") and not isinstance(value, str):  # NumPy scalars and arrays
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(part, isinstance(part, float) and math.isnan(part)) for part in value)
    return value


def _thawed(value: Cell) -> object:
    """The cell as the frame held it: the sequences as lists, a missing value as NaN (which
    each column's dtype turns into its own missing value: NaT, NA)."""
    if isinstance(value, tuple):
        return [_thawed(part) for part in value]
    return math.nan if value is None else value


@dataclass(frozen=True)
class Table:
    """A small DataFrame as a value: its column names, dtypes and rows (the index is not
    kept, missing values come back as NaN). Equal tables compare equal; ``frame()`` gives the
    DataFrame back."""

    columns: tuple[str, ...]
    dtypes: tuple[Any, ...]
    rows: tuple[tuple[Cell, ...], ...]

    @classmethod
    def of(cls, frame: pd.DataFrame) -> Table:
        columns = tuple(str(name) for name in frame.columns)
        values = []
        for i in range(len(columns)):
            column = frame.iloc[:, i]
            cells = zip(column.tolist(), column.isna().tolist(), strict=True)
            values.append([_frozen(cell, missing) for cell, missing in cells])
        return cls(columns, tuple(frame.dtypes), tuple(zip(*values, strict=True)))

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        data = {
            name: pd.Series([_thawed(row[i]) for row in self.rows], dtype=object)
            for i, name in enumerate(self.columns)
        }
        return pd.DataFrame(data, columns=list(self.columns)).astype(
            dict(zip(self.columns, self.dtypes, strict=True))
        )

    def __deepcopy__(self, memo: Mapping[int, object]) -> Table:
        return self  # immutable: pandas deep-copies attrs at every operation


def read(result: pd.DataFrame, name: str) -> pd.DataFrame:
    """The table ``evaluate`` kept in ``result.attrs[name]``, as a DataFrame."""
    value = result.attrs.get(name)
    if isinstance(value, Table):
        return value.frame()
    raise SqlmetricsError(
        f"this DataFrame carries no {name}: it did not come from evaluate, or it joins the "
        "results of different calls (pandas keeps a frame's attrs through pd.concat and "
        f"merge only when every part has the same): read each result's {name} before "
        "joining them, and join those"
    )


def read_diagnostics(frame: pd.DataFrame) -> pd.DataFrame:
    """The diagnostics that ``evaluate`` (or ``compare``) attached to its result, as a DataFrame."""
    return read(frame, "diagnostics")


def read_gaps(frame: pd.DataFrame) -> pd.DataFrame:
    """The gaps between segments that ``evaluate(..., segment=...)`` attached to its result."""
    return read(frame, "gaps")


def read_exposure(frame: pd.DataFrame) -> pd.DataFrame:
    """The exposure between item groups that ``evaluate(..., exposure_k=...)`` attached to its
    result: per group and item group, its items, exposure and relevant items, each beside its
    share within the group (``catalogue_share``, ``exposure_share``, ``relevant_share``)."""
    return read(frame, "exposure")


def read_distributions(frame: pd.DataFrame) -> pd.DataFrame:
    """The spread of the per-user values that ``evaluate(..., distributions=...)`` attached to
    its result, as a DataFrame."""
    return read(frame, "distributions")


def read_sampled(frame: pd.DataFrame) -> pd.DataFrame:
    """The corrected full-catalogue estimates that ``evaluate(..., sampled=...)`` attached to
    its result: per group, metric and estimator (``naive_sampled``, ``rescaled_rank``,
    ``corrected_least_squares``, ``corrected_bias_variance``) the ``value`` (``lo`` and ``hi``
    under ``ci``) and the ``positives`` it reads."""
    return read(frame, "sampled")
