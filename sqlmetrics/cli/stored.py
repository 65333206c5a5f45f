"""An evaluation stored as JSON (``evaluate --ci ... --output FILE.json``) and read back by
``compare --against FILE``: the writer and the reader of one format, side by side."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlmetrics.attrs import read
from sqlmetrics.cli.arguments import column_names
from sqlmetrics.cli.output import records
from sqlmetrics.errors import SqlmetricsError

if TYPE_CHECKING:
    import pandas as pd


def stored_json(result: pd.DataFrame, metrics: Sequence[str], args: argparse.Namespace) -> str:
    """evaluate --ci's JSON: the rows, and what compare --against reads (the means, variances
    and counts per group and metric, and the options that must match)."""
    moments = read(result, "moments")
    document = {
        "sqlmetrics": "evaluation",
        "version": 1,
        "options": {
            "metrics": list(metrics),
            **stored_options(args),
            "ci": result.attrs.get("ci"),
        },
        "rows": records(result),
        "moments": records(moments),
    }
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def stored_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options two results must share to be compared."""
    return {
        "group_by": list(args.group_by),
        "ties": args.ties,
        "threshold": args.threshold,
        "population": args.population,
        "duplicates": args.duplicates,
        "ranks": args.ranks,
        "profile": args.profile,
        "columns": column_names(args),
    }


def read_stored(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except OSError as error:
        raise SqlmetricsError(f"--against {path}: cannot read it ({error.strerror})") from None
    except ValueError as error:
        raise SqlmetricsError(f"--against {path}: not JSON ({error})") from None
    if not isinstance(document, dict) or document.get("sqlmetrics") != "evaluation":
        raise SqlmetricsError(
            f"--against {path}: not an evaluation with variances; write it with "
            "`sqlmetrics evaluate ... --ci 0.95 --output previous.json`"
        )
    return document
