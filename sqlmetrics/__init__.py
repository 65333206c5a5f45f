"""sqlmetrics: recommender and ranking metrics as SQL, run on DuckDB or in your warehouse."""

from __future__ import annotations

from sqlmetrics._version import __version__
from sqlmetrics.api import describe_metrics, to_sql
from sqlmetrics.attrs import (
    read_diagnostics,
    read_distributions,
    read_exposure,
    read_gaps,
    read_sampled,
)
from sqlmetrics.catalog.profiles import describe_profiles
from sqlmetrics.engines.base import Query
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.off_policy import off_policy
from sqlmetrics.reporting import Report, report
from sqlmetrics.run import compare, evaluate
from sqlmetrics.stats.sampled import Sampled
from sqlmetrics.trec import read_qrels, read_run, trec_eval

__all__ = [
    "Query",
    "Report",
    "Sampled",
    "SqlmetricsError",
    "__version__",
    "compare",
    "describe_metrics",
    "describe_profiles",
    "evaluate",
    "off_policy",
    "read_diagnostics",
    "read_distributions",
    "read_exposure",
    "read_gaps",
    "read_qrels",
    "read_run",
    "read_sampled",
    "report",
    "to_sql",
    "trec_eval",
]
