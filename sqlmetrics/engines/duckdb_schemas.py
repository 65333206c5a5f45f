"""The DuckDB column types of pandas DataFrames whose dtypes alone decide them, remembered per
process: a DataFrame with the same columns and dtypes as one bound before is bound without a
query of its own to read them (a small evaluate then makes two round trips fewer)."""

from __future__ import annotations

import threading

Key = tuple[tuple[str, str], ...]

MAX_SCHEMAS = 256  # bounded: a process evaluating frames of ever new columns keeps the latest

_known: dict[Key, tuple[tuple[str, str], ...]] = {}
_lock = threading.Lock()


def schema_key(value: object) -> Key | None:
    """A pandas DataFrame's (column, dtype) pairs when each dtype maps to one DuckDB type,
    whatever the values: NumPy's booleans, integers, floats and datetimes, and pandas' Arrow
    strings.
    None for anything else: object columns (DuckDB infers their type from the values),
    categoricals (their type lists the categories), nullable and other Arrow types, names
    that are not unique strings, and objects that are not pandas DataFrames."""
    if type(value).__module__.split(".")[0] != "pandas":
        return None
    import numpy as np
    import pandas as pd

    if not isinstance(value, pd.DataFrame):
        return None
    pairs: list[tuple[str, str]] = []
    for name, dtype in value.dtypes.items():
        if not isinstance(name, str):
            return None
        if isinstance(dtype, np.dtype) and dtype.kind in "biufM":
            pairs.append((name, dtype.str))  # '<i8', '<M8[ns]': kind, size, unit
        elif isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
            pairs.append((name, "string[pyarrow]"))
        else:
            return None
    if len({name for name, _ in pairs}) != len(pairs):
        return None
    return tuple(pairs)


def known(key: Key) -> dict[str, str] | None:
    """The column types remembered for ``key``, as a dict of the caller's own."""
    with _lock:
        found = _known.get(key)
    return None if found is None else dict(found)


def remember(key: Key, columns: dict[str, str]) -> None:
    with _lock:
        if key not in _known and len(_known) >= MAX_SCHEMAS:
            _known.pop(next(iter(_known)))  # the oldest
        _known[key] = tuple(columns.items())
