"""The ``sqlmetrics`` command: one subcommand per public function, errors as one line."""

from sqlmetrics.cli.parser import EXAMPLE_REPORT, EXAMPLE_REPORT_METRICS, main, metrics_markdown

__all__ = ["EXAMPLE_REPORT", "EXAMPLE_REPORT_METRICS", "main", "metrics_markdown"]
