"""What the commands print and write: tables, CSV and strict JSON, files written safely, and
the diagnostics and notes on stderr."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sqlmetrics.attrs import Table
from sqlmetrics.io.files import write_output, write_stdout

if TYPE_CHECKING:
    import pandas as pd


def render(frame: pd.DataFrame, fmt: str) -> str:
    if fmt == "csv":
        return str(frame.to_csv(index=False, float_format="%.17g"))
    if fmt == "json":
        rows = [
            {str(key): json_value(value) for key, value in row.items()}
            for row in frame.to_dict(orient="records")
        ]
        return json.dumps(rows, indent=2, allow_nan=False) + "\n"
    return str(frame.to_string(index=False, float_format=lambda value: f"{value:.6f}")) + "\n"


def json_value(value: Any) -> Any:
    """Strict JSON: NaN and ±infinity (not JSON numbers) as null, numpy scalars as Python
    values, a Decimal key as its exact text."""
    if isinstance(value, Decimal):
        return str(value)
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if type(value).__name__ == "NAType":  # pandas.NA, a missing key of a nullable column
        return None
    return value


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [
        {str(key): json_value(value) for key, value in row.items()}
        for row in frame.to_dict(orient="records")
    ]


def number_text(value: Any) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return "" if math.isnan(number) else f"{number:.4f}"


def write(text: str, output: str | None, inputs: Sequence[str | None] = ()) -> None:
    """Writes stdout, or the file by the rules of ``sqlmetrics.io.files`` (atomic, never an
    input, through links and into devices)."""
    if output is None:
        write_stdout(text)
        return
    write_output(text, output, inputs)


def show_diagnostics(frame: pd.DataFrame) -> None:
    table = frame.attrs.get("diagnostics")
    if isinstance(table, Table) and table.rows:
        where = frame.attrs.get("dialect")
        heading = f"diagnostics ({where} SQL):" if where else "diagnostics:"
        sys.stderr.write(heading + "\n" + table.frame().to_string(index=False) + "\n")


def gaps_text(frame: pd.DataFrame) -> str:
    """The gaps between segments (``--segment``) as a table headed ``gaps between segments:``,
    or nothing."""
    table = frame.attrs.get("gaps")
    if not isinstance(table, Table) or not table.rows:
        return ""
    frame = table.frame()
    valued = frame["segments"] > 0  # a missing name there is a NULL segment, not no value
    for column in ("lowest", "highest"):
        frame[column] = frame[column].astype(object).where(~(valued & frame[column].isna()), "NULL")
    return "gaps between segments:\n" + frame.to_string(index=False) + "\n"


def sampled_text(frame: pd.DataFrame) -> str:
    """The corrected full-catalogue estimates (``--sampled-items``) as a table headed
    ``sampled metrics, full-catalogue estimates:``, or nothing."""
    table = frame.attrs.get("sampled")
    if not isinstance(table, Table) or not table.rows:
        return ""
    text = table.frame().to_string(index=False)
    return "sampled metrics, full-catalogue estimates:\n" + text + "\n"


def exposure_text(frame: pd.DataFrame) -> str:
    """The exposure between item groups (``--exposure-k``) as a table headed ``exposure
    between item groups:`` (a NULL item group named NULL), or nothing."""
    table = frame.attrs.get("exposure")
    if not isinstance(table, Table) or not table.rows:
        return ""
    frame = table.frame()
    frame["item_group"] = (
        frame["item_group"].astype(object).where(frame["item_group"].notna(), "NULL")
    )
    return "exposure between item groups:\n" + frame.to_string(index=False) + "\n"


def show_notes(frame: pd.DataFrame) -> None:
    write_notes(frame.attrs.get("notes") or ())


def write_notes(notes: Sequence[str]) -> None:
    for note in notes:
        sys.stderr.write(f"note: {note}\n")
