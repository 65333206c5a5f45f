"""``sqlmetrics example``: the bundled example data evaluated, and its report."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from sqlmetrics.cli.output import render, show_diagnostics, write
from sqlmetrics.cli.report import check_report_output

EXAMPLE_METRICS = [
    "ndcg@10",
    "map@10",
    "mrr@10",
    "precision@5",
    "recall@20",
    "hit_rate@10",
    "f1@10",
]
# The example's report (Makefile's `make example` writes the same page from the CLI).
EXAMPLE_REPORT_METRICS = ["ndcg@10", "map@10", "recall@20", "hit_rate@10", "gini@10", "novelty@10"]
EXAMPLE_REPORT: dict[str, Any] = {
    "group_by": ["model"],
    "segment": "country",
    "baseline": "popularity",
    "k_max": 30,
}


def example_command(args: argparse.Namespace) -> None:
    from sqlmetrics.catalog.metrics import sql_folder
    from sqlmetrics.run import evaluate

    folder = sql_folder().parent / "examples"
    recommendations = str(folder / "recommendations.parquet")
    interactions = str(folder / "interactions.parquet")
    if args.report is not None:  # refused before the work, not after
        check_report_output(args.report, [recommendations, interactions], force=False)
    result = evaluate(recommendations, interactions, EXAMPLE_METRICS, group_by=["model"])
    write(render(result, args.format), None)
    if not args.quiet:
        show_diagnostics(result)
    if args.report is not None:
        from sqlmetrics.reporting import report

        page = report(recommendations, interactions, EXAMPLE_REPORT_METRICS, **EXAMPLE_REPORT)
        page.save(args.report)
        sys.stderr.write(f"wrote the example's report to {args.report}\n")
