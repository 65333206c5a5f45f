"""An evaluation stored as JSON (``evaluate --ci ... --output FILE.json``) and read back by
``compare --against FILE``: the writer and the reader of one format, side by side."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlmetrics.attrs import read
from sqlmetrics.cli.arguments import call_options
from sqlmetrics.cli.output import records
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.options import Definitions

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
    """The options two results must share to be compared: the groups, and how the metrics
    read the inputs (every option of ``Definitions``)."""
    return {"group_by": list(args.group_by), **call_options(args, Definitions)}


VERSION = 1
# An evaluation's JSON is far smaller; past this, a stream (like /dev/zero) is not one.
MAX_CHARACTERS = 1 << 30
_FIRST = 1 << 16
MOMENT_FIELDS = ("metric", "mean", "variance", "n")
MAX_USERS = 2**53  # a count a double holds exactly


def read_stored(path: str) -> dict[str, Any]:
    """The evaluation stored at ``path``, its structure checked: every problem is a
    SqlmetricsError naming the file and what is wrong, never a traceback later."""
    document = _parsed(path, _text(path))
    if not isinstance(document, dict) or document.get("sqlmetrics") != "evaluation":
        raise SqlmetricsError(
            f"--against {path}: not an evaluation with variances; write it with "
            "`sqlmetrics evaluate ... --ci 0.95 --output previous.json`"
        )
    version = document.get("version")
    if type(version) is not int or version != VERSION:
        newer = type(version) is int and version > VERSION
        raise SqlmetricsError(
            f"--against {path}: format version {version!r}"
            + (" was written by a newer sqlmetrics" if newer else " is not one sqlmetrics wrote")
            + f"; this one reads version {VERSION}: write it again with this version"
        )
    options = document.get("options")
    if not isinstance(options, dict):
        raise SqlmetricsError(f"--against {path}: its options are missing or not an object")
    for name in ("metrics", "group_by"):
        value = options.get(name)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SqlmetricsError(
                f"--against {path}: options.{name} must be a list of names, not {value!r}"
            )
    if not options["metrics"]:
        raise SqlmetricsError(f"--against {path}: options.metrics is empty")
    _check_moments(path, document.get("moments"), options["group_by"])
    return document


def _text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            first = handle.read(_FIRST)
            start = first.lstrip()[:1]
            if start not in ("{", ""):
                raise SqlmetricsError(
                    f"--against {path}: not JSON (it begins with {start!r}, not an object)"
                )
            text = first + handle.read(MAX_CHARACTERS + 1 - len(first))
    except OSError as error:
        raise SqlmetricsError(f"--against {path}: cannot read it ({error.strerror})") from None
    except UnicodeDecodeError as error:
        raise SqlmetricsError(f"--against {path}: not UTF-8 text ({error.reason})") from None
    if len(text) > MAX_CHARACTERS:
        raise SqlmetricsError(
            f"--against {path}: longer than {MAX_CHARACTERS:,} characters, not an evaluation"
        )
    return text


def _parsed(path: str, text: str) -> Any:
    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not a JSON number")

    try:
        return json.loads(text, parse_constant=refuse)
    except RecursionError:
        raise SqlmetricsError(f"--against {path}: nested too deeply to be an evaluation") from None
    except ValueError as error:
        raise SqlmetricsError(f"--against {path}: not JSON ({error})") from None


def _check_moments(path: str, moments: Any, groups: Sequence[str]) -> None:
    """Each row: the group columns (plain values), metric, mean, variance and n of the right
    types and ranges, and no (group, metric) twice."""
    if not isinstance(moments, list):
        raise SqlmetricsError(f"--against {path}: its moments are missing or not a list")
    seen: set[tuple[Any, ...]] = set()
    for index, row in enumerate(moments):
        where = f"--against {path}: moments[{index}]"
        if not isinstance(row, dict):
            raise SqlmetricsError(f"{where} is not an object")
        absent = [name for name in (*groups, *MOMENT_FIELDS) if name not in row]
        if absent:
            raise SqlmetricsError(f"{where} has no {', '.join(absent)}")
        problem = _moment_problem(row, groups)
        if problem:
            raise SqlmetricsError(f"{where}: {problem}")
        key = (*(row[name] for name in groups), row["metric"])
        if key in seen:
            named = ", ".join([*(f"{name}={row[name]}" for name in groups), row["metric"]])
            raise SqlmetricsError(
                f"{where} repeats {named}: each group and metric must appear once"
            )
        seen.add(key)


def _number(value: Any) -> bool:
    """A finite JSON number (not a bool, not past a double)."""
    if type(value) not in (int, float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _moment_problem(row: dict[str, Any], groups: Sequence[str]) -> str | None:
    for name in groups:
        if isinstance(row[name], (list, dict)):
            return f"its {name} must be a plain value, not {row[name]!r}"
    if not isinstance(row["metric"], str):
        return f"its metric must be a name, not {row['metric']!r}"
    if not (row["mean"] is None or _number(row["mean"])):
        return f"its mean must be a number, not {row['mean']!r}"
    variance = row["variance"]
    if not (variance is None or (_number(variance) and variance >= 0)):
        return f"its variance must be a number at least 0, not {variance!r}"
    n = row["n"]
    if not (_number(n) and 0 <= n <= MAX_USERS and float(n).is_integer()):
        return f"its n must be a count of users, not {n!r}"
    return None
