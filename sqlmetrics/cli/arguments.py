"""What the parsed options mean to the API: the metrics asked for, the column names, and the
keyword arguments the commands share."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from sqlmetrics.errors import SqlmetricsError


def metric_list(values: Sequence[str] | None) -> list[str]:
    """``-m a -m b`` and ``-m a,b`` both work."""
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def requested_metrics(args: argparse.Namespace) -> list[str]:
    metrics = metric_list(args.metrics)
    if not metrics:
        raise SqlmetricsError("no metrics requested: pass -m METRIC, like -m ndcg@10")
    return metrics


def column_names(args: argparse.Namespace) -> dict[str, str | None]:
    columns: dict[str, str | None] = {
        role: getattr(args, f"{role}_column")
        for role in ("user", "item", "score", "rank", "relevance", "rating", "category")
        if getattr(args, f"{role}_column")
    }
    if args.no_relevance:
        columns["relevance"] = None
    return columns


def api_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments evaluate and to_sql share."""
    return {
        "group_by": args.group_by,
        "per_user": args.per_user,
        "columns": column_names(args),
        "ties": args.ties,
        "threshold": args.threshold,
        "population": args.population,
        "duplicates": args.duplicates,
        "ranks": args.ranks,
        "profile": args.profile,
    }


def interval_options(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "ci": args.ci,
        "ci_method": args.ci_method,
        "replicates": args.replicates,
        "seed": args.seed,
    }
