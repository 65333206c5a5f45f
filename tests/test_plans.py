"""The DuckDB top-k plan and the portable window plan give the same numbers, ties included."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import sqlmetrics

METRICS = [
    f"{name}@{k}"
    for name in (
        "hits",
        "hit_rate",
        "precision",
        "recall",
        "f1",
        "mrr",
        "map",
        "map_min",
        "map_hits",
        "cg",
        "dcg",
        "ndcg",
        "dcg_exp",
        "ndcg_exp",
        "micro_hit_ratio",
        "micro_mrr",
    )
    for k in (1, 2, 5, 20)
]


def tied_data(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Scores on a coarse grid (many ties, some across every cutoff), NULL scores, graded truth."""
    rng = np.random.default_rng(seed)
    recs, truth = [], []
    for user in range(300):
        length = int(rng.integers(0, 25))
        items = rng.choice(60, size=length, replace=False)
        for item in items:
            score = None if rng.random() < 0.03 else float(rng.integers(0, 6)) / 5
            recs.append((user, int(item), score, "a" if user % 2 else "b"))
        for item in rng.choice(60, size=int(rng.integers(0, 8)), replace=False):
            truth.append((user, int(item), int(rng.integers(0, 4))))
    return (
        pd.DataFrame(recs, columns=["user_id", "item_id", "score", "segment"]),
        pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"]),
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_top_k_plan_equals_window_plan(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    recs, truth = tied_data(seed)
    kwargs = {"per_user": True, "group_by": ["segment"]}
    fast = sqlmetrics.evaluate(recs, truth, METRICS, **kwargs)
    monkeypatch.setattr("sqlmetrics.compose.TOP_K_DIALECTS", frozenset())
    portable = sqlmetrics.evaluate(recs, truth, METRICS, **kwargs)
    pd.testing.assert_frame_equal(fast, portable, check_exact=False, rtol=0, atol=1e-12)
    fast_diagnostics = sqlmetrics.read_diagnostics(fast)
    pd.testing.assert_frame_equal(fast_diagnostics, sqlmetrics.read_diagnostics(portable))
    assert fast_diagnostics["tied_score_groups"].sum() > 0
    assert fast_diagnostics["null_scores"].sum() > 0


def test_duckdb_sql_uses_the_top_k_plan_and_others_do_not() -> None:
    assert "ARG_MIN" in sqlmetrics.to_sql("ndcg@10")
    assert "ARG_MIN" not in sqlmetrics.to_sql("ndcg")  # no cutoff: the whole list is read
    assert "ARG_MIN" not in sqlmetrics.to_sql("ndcg@10", dialect="postgres")
    assert "ARG_MIN" not in sqlmetrics.to_sql(["ndcg@10", "ndcg@100"])  # deep: the window plan
