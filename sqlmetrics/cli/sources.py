"""Where the inputs are read and the work runs: local files on DuckDB, or tables through
--connection or --spark."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator

from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.io.files import check_output


def local_inputs(args: argparse.Namespace) -> list[str | None]:
    """The inputs that are local files (checked not to be the output), and the output checked
    before the work rather than after."""
    remote = args.connection is not None or args.spark is not None
    # Table names in a database are not files: only local inputs can clash with --output.
    inputs = [] if remote else [args.recommendations, args.interactions, args.items, args.history]
    if args.output is not None:
        check_output(args.output, inputs)
    if args.dialect is not None and args.connection is None:
        raise SqlmetricsError("--dialect applies to --connection only")
    return inputs


def progress(args: argparse.Namespace) -> bool:
    """Whether to show the engine's progress bar: on a terminal, unless --quiet."""
    return not args.quiet and sys.stderr.isatty()


def clear_progress(args: argparse.Namespace) -> None:
    remote = args.connection is not None or args.spark is not None
    if not args.quiet and sys.stderr.isatty() and not remote:
        sys.stdout.write("\r\x1b[K")  # clear what is left of DuckDB's progress bar


@contextlib.contextmanager
def engine_connection(args: argparse.Namespace) -> Iterator[object]:
    """The connection of --connection or --spark (None: DuckDB), closed afterwards."""
    if args.connection is not None:
        from sqlmetrics.engines.sqlalchemy import engine_from_url

        engine = engine_from_url(args.connection)
        try:
            yield engine
        finally:
            engine.dispose()
    elif args.spark is not None:
        from sqlmetrics.engines.spark import spark_session

        spark = spark_session(args.spark)
        try:
            yield spark
        finally:
            spark.stop()
    else:
        yield None
