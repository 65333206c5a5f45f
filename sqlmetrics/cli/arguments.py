"""What the parsed options mean to the API: the metrics asked for, the column names, and the
keyword arguments the commands share."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Any

from sqlmetrics.compose.inputs import COLUMN_ROLES
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.options import declared


def metric_list(values: Sequence[str] | None) -> list[str]:
    """``-m a -m b`` and ``-m a,b`` both work. A comma inside parentheses (``err(gmax=3,
    ...)``) or before a number (trec_eval's ``P.5,7,3``, ``utility.2,-1,0,0``) continues the
    metric before it; a name starts with a letter (or is 11pt_avg)."""
    metrics: list[str] = []
    for value in values or []:
        for part in value.split(","):
            continues = bool(metrics) and (
                metrics[-1].count("(") > metrics[-1].count(")")
                or _PARAMETER_CONTINUES.match(part.strip()) is not None
            )
            if continues and part.strip():
                metrics[-1] += "," + part.strip()
            elif part.strip():
                metrics.append(part.strip())
    return metrics


# What follows a comma inside one metric: a number or trec_eval's level (.25, -1, 2=9).
_PARAMETER_CONTINUES = re.compile(r"(?!\d+pt_avg)[-+.0-9]")


def requested_metrics(args: argparse.Namespace) -> list[str]:
    metrics = metric_list(args.metrics)
    if not metrics:
        raise SqlmetricsError("no metrics requested: pass -m METRIC, like -m ndcg@10")
    return metrics


def column_names(args: argparse.Namespace) -> dict[str, str | None]:
    columns: dict[str, str | None] = {
        role: getattr(args, f"{role}_column")
        for role in COLUMN_ROLES
        if getattr(args, f"{role}_column")
    }
    if args.no_relevance:
        columns["relevance"] = None
    return columns


# The options the commands spell themselves, each a flag of the same name and meaning as the
# keyword (each command's own help: a file for evaluate, a table name for sql): read with those
# that have a flag of the declaration (sqlmetrics/options.py).
SAME_NAME = (
    "group_by",
    "per_user",
    "dialect",
    "items",
    "history",
    "interactions_group_by",
    "checks",
    "ci",
    "segment",
    "baseline",
)


def call_options(args: argparse.Namespace, declaration: type) -> dict[str, Any]:
    """The keyword options of ``declaration`` the command line gives: each one with a flag, of
    the parser or of the declaration, and the column names; an empty ``--group-by`` leaves the
    function's default (compare's "model")."""
    found: dict[str, Any] = {}
    for item in declared(declaration):
        if item.name == "columns":
            found["columns"] = column_names(args)
        elif (item.option.flag is not None or item.name in SAME_NAME) and hasattr(args, item.name):
            found[item.name] = getattr(args, item.name)
    if not found.get("group_by", True):
        del found["group_by"]
    return found


def add_flags(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    declaration: type,
    *,
    leave: Sequence[type] = (),
) -> None:
    """A flag for each option of ``declaration`` that declares one (not those of ``leave``'s
    declarations), with its default, choices and help."""
    left = {item.name for other in leave for item in declared(other)}
    for item in declared(declaration):
        flag = item.option.flag
        if flag is None or item.name in left:
            continue
        extra: dict[str, Any] = {}
        if flag.choices is not None:
            extra["choices"] = flag.choices
        if flag.type is not None:
            extra["type"] = flag.type
        if flag.metavar is not None:
            extra["metavar"] = flag.metavar
        name = f"--{item.name.replace('_', '-')}"
        parser.add_argument(name, default=item.option.default, help=flag.help, **extra)
