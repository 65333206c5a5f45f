"""The ``sqlmetrics`` command: one subcommand per public function, errors as one line.

One module per command (evaluate, compare, report, example; sql for the commands that only
write SQL), the parser in ``parser``, and what they share in ``arguments``, ``sources``,
``output`` and ``stored``.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence

from sqlmetrics.cli.compare import compare_command
from sqlmetrics.cli.evaluate import evaluate_command
from sqlmetrics.cli.example import EXAMPLE_REPORT, EXAMPLE_REPORT_METRICS, example_command
from sqlmetrics.cli.metric_pages import metrics_markdown
from sqlmetrics.cli.off_policy import off_policy_command
from sqlmetrics.cli.parser import build_parser
from sqlmetrics.cli.report import report_command
from sqlmetrics.cli.sql import (
    dbt_command,
    metrics_command,
    profiles_command,
    sql_command,
)
from sqlmetrics.errors import SqlmetricsError

__all__ = ["EXAMPLE_REPORT", "EXAMPLE_REPORT_METRICS", "build_parser", "main", "metrics_markdown"]


def _interrupted() -> int:
    sys.stderr.write("sqlmetrics: interrupted; nothing was written\n")
    return 130


def _is_interrupt(error: BaseException | None) -> bool:
    """DuckDB's answer to Ctrl-C: an InterruptException, or a RuntimeError "Query interrupted"
    (possibly wrapped, as a cause, in one of ours)."""
    while error is not None:
        if type(error).__name__ == "InterruptException" or (
            isinstance(error, RuntimeError) and "interrupted" in str(error).lower()
        ):
            return True
        error = error.__cause__
    return False


class _Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is: the engine cancels its statement on the server (a query
    left running there would outlive the process) and the connections are closed."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread receives signals
        return
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    with _sigterm_as_interrupt():
        try:
            return _run(args)
        except _Terminated:
            sys.stderr.write("sqlmetrics: terminated; nothing was written\n")
            return 143


def _run(args: argparse.Namespace) -> int:
    handlers: dict[str, Callable[[argparse.Namespace], int | None]] = {
        "evaluate": evaluate_command,
        "compare": compare_command,
        "sql": sql_command,
        "metrics": metrics_command,
        "profiles": profiles_command,
        "example": example_command,
        "report": report_command,
        "dbt": dbt_command,
        "off-policy": off_policy_command,
    }
    try:
        code = handlers[args.command](args)
    except SqlmetricsError as error:
        if _is_interrupt(error.__cause__):
            return _interrupted()
        sys.stderr.write(f"sqlmetrics: error: {error}\n")
        return 2
    except _Terminated:
        raise
    except KeyboardInterrupt:
        return _interrupted()
    except Exception as error:  # an engine error: one line, not a traceback
        if _is_interrupt(error):  # Ctrl-C while DuckDB runs comes back as its own error
            return _interrupted()
        if type(error).__module__.split(".")[0] not in ("duckdb", "_duckdb"):
            raise
        first = str(error).strip().splitlines()[0]
        sys.stderr.write(f"sqlmetrics: error: DuckDB: {first}\n")
        return 1
    return code or 0
