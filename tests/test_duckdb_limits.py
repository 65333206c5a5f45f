"""A query whose GROUP BY holds more aggregates than DuckDB can take without crashing the process
(a division by zero in its hash aggregate past ~10,900 exact sums) is refused before it runs."""

from __future__ import annotations

import pandas as pd
import pytest
from sqlglot import exp

import sqlmetrics
from sqlmetrics.engines.duckdb import DuckDBEngine
from sqlmetrics.engines.duckdb_limits import MAX_AGGREGATES, widest_group_by
from sqlmetrics.errors import SqlmetricsError


def _sums(count: int) -> exp.Select:
    """SELECT g, SUM(x + 0), ..., SUM(x + count - 1) over ten rows in two groups."""
    rows = exp.select(
        exp.alias_(exp.cast(exp.column("i") % 2, "VARCHAR"), "g"), exp.alias_("i", "x")
    ).from_("range(10) AS r(i)")
    sums = [exp.alias_(exp.func("SUM", exp.column("x") + j), f"s{j}") for j in range(count)]
    return exp.select("g", *sums).from_(rows.subquery("t")).group_by("g")


def test_the_width_counts_the_aggregates_of_one_group_by() -> None:
    assert widest_group_by(_sums(7)) == 7
    # an ungrouped aggregate is another operator, without the fault
    assert widest_group_by(exp.select(exp.func("SUM", exp.column("x"))).from_("t")) == 0


def test_a_query_past_the_limit_is_refused_before_it_runs() -> None:
    engine = DuckDBEngine()
    try:
        assert len(engine._frame(_sums(50))) == 2  # within the limit: it runs
        with pytest.raises(SqlmetricsError, match=f"{MAX_AGGREGATES + 1:,} aggregates in one"):
            engine._frame(_sums(MAX_AGGREGATES + 1))
    finally:
        engine.close()


def test_evaluate_refuses_a_request_too_wide_for_duckdb(monkeypatch: pytest.MonkeyPatch) -> None:
    """evaluate's own query goes through the check: metrics at 100 cutoffs each by a model
    column only the recommendations have take the window plan, about five aggregates a label
    (2,002 here), refused under a limit lowered to 1,000 so that the test composes quickly."""
    from sqlmetrics.engines import duckdb_limits

    monkeypatch.setattr(duckdb_limits, "MAX_AGGREGATES", 1_000)
    recs = pd.DataFrame({"model": "a", "user_id": [1, 1], "item_id": [1, 2], "score": [0.9, 0.1]})
    truth = pd.DataFrame({"user_id": [1], "item_id": [1]})
    labels = [f"{name}@{k}" for name in ("mrr", "map", "ndcg", "recall") for k in range(1, 101)]
    with pytest.raises(SqlmetricsError, match="2,002 aggregates in one GROUP BY"):
        sqlmetrics.evaluate(recs, truth, labels, group_by="model")
