"""``sqlmetrics report``: one self-contained HTML page, and the rules for its file.

``sqlmetrics.reporting`` is imported when a page is made, not before: it brings matplotlib."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from sqlmetrics.cli.arguments import call_options, requested_metrics
from sqlmetrics.cli.sources import engine_connection
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.io.files import check_output


def check_report_output(output: str | None, inputs: Sequence[str | None], force: bool) -> None:
    """The page's file: named, not an input, and not a file of someone else's (unless force)."""
    from sqlmetrics.io.files import refuse_foreign_file
    from sqlmetrics.reporting.page import GENERATOR

    if output is None:
        raise SqlmetricsError("report writes an HTML page: give its file, like -o report.html")
    check_output(output, inputs)
    refuse_foreign_file(output, GENERATOR, force)


def report_command(args: argparse.Namespace) -> None:
    from sqlmetrics.reporting import ReportOptions, report

    metrics = requested_metrics(args)
    remote = args.connection is not None or args.spark is not None
    inputs = [] if remote else [args.recommendations, args.interactions, args.items, args.history]
    check_report_output(args.output, inputs, args.force)
    if args.per_user:
        raise SqlmetricsError("--per-user does not apply to report: its page shows them already")
    if args.dialect is not None and args.connection is None:
        raise SqlmetricsError("--dialect applies to --connection only")
    with engine_connection(args) as connection:
        page = report(
            args.recommendations,
            args.interactions,
            metrics,
            **call_options(args, ReportOptions),
            connection=connection,
        )
    page.save(args.output, force=args.force)
    if not args.quiet:
        sys.stderr.write(f"wrote {args.output} ({len(page.html.encode()):,} bytes)\n")
