"""The cases and calls of tests/engines/test_stats_engines.py, without pytest: fakesnow's own
virtual environment (tests/engines/fakesnow_stats.py) imports them too, and has no pytest."""

from __future__ import annotations

from typing import Any

import pandas as pd

import sqlmetrics
from tests.engines.cases import Case, load_cases


def evaluate_kwargs(case: Case) -> dict[str, Any]:
    """The fixture's evaluate options (to_sql's interactions_group_by is evaluate's own
    reading of the interactions' columns)."""
    kwargs = case.kwargs()
    kwargs.pop("interactions_group_by", None)
    return kwargs


# A model column (compare), strings as users (the buckets' text order), a NULL group value.
CASE_NAMES = ("group_by_model", "string_ids", "group_by_null_segment", "beyond_lists_by_model")
CASES = [case for case in load_cases() if case.name in CASE_NAMES]
METRICS = ["ndcg@2", "precision@2", "mrr", "hit_rate@3"]
# the t-interval of many cutoffs: the curve plan's moments (curve_sums.moments)
CURVE_METRICS = ["ndcg@1:8", "precision@1:8", "recall@1:8"]
# the options of each call: a t-interval (of a few cutoffs, of a curve), a bootstrap, and
# (with a model column) a comparison
CALLS: dict[str, dict[str, Any]] = {
    "t": {"ci": 0.9},
    "curves": {"ci": 0.9},
    "bootstrap": {"ci": 0.95, "ci_method": "bootstrap", "replicates": 300, "seed": 7},
    "compare": {"replicates": 300, "seed": 11, "ci_method": "bootstrap"},
}


def model_values(case: Case) -> list[Any]:
    column = case.kwargs()["group_by"][0]
    index = case.recommendations.names.index(column)
    return sorted({row[index] for row in case.recommendations.rows if row[index] is not None})


def metrics_of(call: str) -> list[str]:
    return CURVE_METRICS if call == "curves" else METRICS


def run(case: Case, call: str, given: dict[str, Any], options: dict[str, Any]) -> pd.DataFrame:
    kwargs = {**evaluate_kwargs(case), **options, **CALLS[call]}
    kwargs.pop("per_user", None)
    if call != "compare":
        return sqlmetrics.evaluate(metrics=metrics_of(call), **given, **kwargs)
    return sqlmetrics.compare(
        metrics=METRICS, baseline=str(model_values(case)[0]), **given, **kwargs
    )


def calls(case: Case) -> list[str]:
    by_model = case.kwargs().get("group_by", [None])[0] == "model"
    return [call for call in CALLS if call != "compare" or by_model]
