"""Spark as the user holds it: a timeout that passes while Spark plans still stops the query, and
Spark DataFrames given without ``connection=`` are evaluated in their own session (their rows
stay there), a mix of a Spark DataFrame and local data refused.

Every test here runs on the one SparkSession of the engine pool (tests/engines/engines.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

import sqlmetrics
from tests.engines.conftest import EnginePool
from tests.engines.engines import spark_defaults, view_names

# Two users, hand-made. User 1's top 2 are items 10 and 11 (scores 0.9, 0.8), 11 relevant: a hit,
# precision 1/2. User 2's top 2 are 20 and 21, its relevant item 22 is not recommended: no hit,
# precision 0. Means: hit_rate@2 (1 + 0) / 2 = 0.5, precision@2 (1/2 + 0) / 2 = 0.25.
RECOMMENDATIONS = pd.DataFrame(
    {
        "user_id": [1, 1, 1, 2, 2],
        "item_id": [10, 11, 12, 20, 21],
        "score": [0.9, 0.8, 0.7, 0.9, 0.5],
    }
)
INTERACTIONS = pd.DataFrame({"user_id": [1, 2], "item_id": [11, 22]})
METRICS = ["hit_rate@2", "precision@2"]
EXPECTED = {"hit_rate@2": 0.5, "precision@2": 0.25}

# Millions of rows: Spark's jobs over them run for seconds, long after the deadline.
SLOW = sqlmetrics.Query(
    "SELECT id % 100000 AS user_id, id AS item_id, rand(7) AS score FROM range(3000000)"
)
TRUTH = sqlmetrics.Query("SELECT id AS user_id, id AS item_id FROM range(100000)")
PLANNING_SECONDS = 2.0  # longer than timeout=1: the deadline passes before any job exists


@pytest.fixture
def spark(engine_pool: EnginePool) -> Any:
    return engine_pool.get("spark").spark  # type: ignore[attr-defined]


@pytest.fixture
def slow_planning(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Spark's planning of the metrics query (spark.sql parses and analyses it) made to last
    past the deadline, as a large query's does; the probes of the inputs are not slowed."""
    from sqlmetrics.engines import spark as spark_engine

    fetch = spark_engine.SparkEngine.fetch

    def fetch_planned_slowly(self: Any, sql: str) -> Any:
        session = self.spark
        plan = session.sql

        def slow_sql(text: str) -> Any:
            time.sleep(PLANNING_SECONDS)
            return plan(text)

        session.sql = slow_sql
        try:
            return fetch(self, sql)
        finally:
            del session.sql

    monkeypatch.setattr(spark_engine.SparkEngine, "fetch", fetch_planned_slowly)
    yield


def _no_active_jobs(spark: Any) -> bool:
    tracker = spark.sparkContext.statusTracker()
    deadline = time.monotonic() + 20  # a cancelled task ends at its next check of the flag
    while tracker.getActiveJobsIds():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


@pytest.mark.spark
@pytest.mark.parametrize("later_jobs", ["cancelled with the group", "cancelled again"])
def test_a_timeout_that_passes_while_spark_plans_cancels_the_jobs_after_it(
    spark: Any, slow_planning: None, later_jobs: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, the deadline cancelled the group's jobs while none existed, and the query then
    ran to its end (the probe: 47-66 s) and returned as if no timeout had been given. Spark 4
    cancels a group with its later jobs; older Sparks (and Spark Connect) cancel again until
    the call ends, which the second case checks here by taking that call away."""
    from sqlmetrics.engines import spark as spark_engine

    if later_jobs == "cancelled again":
        never = lambda *_: False  # noqa: E731
        monkeypatch.setattr(spark_engine, "_cancel_with_later_jobs", never, raising=False)
    started = time.monotonic()
    with spark_defaults(spark):  # adaptive execution's stages start on their own, as for users
        with pytest.raises(sqlmetrics.SqlmetricsError, match=r"timeout=1 s on Spark .* cancelled"):
            sqlmetrics.evaluate(SLOW, TRUTH, ["ndcg@10"], connection=spark, timeout=1)
        # back at the deadline, not after the planning (2 s and more) and the jobs (a minute)
        assert time.monotonic() - started < 20  # the probes of the inputs, then 1 s
        # the statement Spark was planning ends on its thread, its jobs cancelled as they start
        for thread in threading.enumerate():
            if thread.name == "sqlmetrics-spark":
                thread.join(timeout=300)
                assert not thread.is_alive()
        assert _no_active_jobs(spark)


@pytest.mark.spark
def test_spark_dataframes_without_a_connection_are_evaluated_in_their_session(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, they were read into DuckDB: every row through Spark's driver (past
    spark.driver.maxResultSize, a Java stack trace). Now the session evaluates them, as if
    connection= named it, and DuckDB reads nothing."""
    from sqlmetrics.engines.duckdb import DuckDBEngine

    def no_duckdb(self: Any, value: object, role: str) -> Any:
        raise AssertionError(f"DuckDB read the {role}")

    recommendations = spark.createDataFrame(RECOMMENDATIONS)
    interactions = spark.createDataFrame(INTERACTIONS)
    views = view_names(spark)
    monkeypatch.setattr(DuckDBEngine, "bind", no_duckdb)
    got = sqlmetrics.evaluate(recommendations, interactions, METRICS)
    assert {metric: got[metric].iloc[0] for metric in METRICS} == pytest.approx(EXPECTED)
    assert got["users"].iloc[0] == 2
    assert view_names(spark) == views  # views dropped


@pytest.mark.spark
@pytest.mark.parametrize(
    ("interactions", "said"),
    [
        ("pandas", r"interactions is DataFrame: one query reads every input"),
        ("path", r"interactions is the path or table name 'clicks.parquet'"),
        ("another session", r"are Spark DataFrames of different SparkSessions"),
    ],
)
def test_a_spark_dataframe_beside_other_data_is_refused(
    spark: Any, interactions: str, said: str
) -> None:
    """Before, the Spark DataFrame was pulled into DuckDB beside the other input (and a
    DataFrame of another session with it)."""
    recommendations = spark.createDataFrame(RECOMMENDATIONS)
    other: object = {
        "pandas": INTERACTIONS,
        "path": "clicks.parquet",
        "another session": spark.newSession().createDataFrame(INTERACTIONS),
    }[interactions]
    with pytest.raises(sqlmetrics.SqlmetricsError, match=said):
        sqlmetrics.evaluate(recommendations, other, METRICS)


@pytest.mark.spark
def test_a_report_of_spark_dataframes_reads_them_in_spark(spark: Any) -> None:
    """The report's first look at the inputs (their columns, models and rows) goes through the
    same rule: it said "DuckDB, in process" and read every row into DuckDB."""
    from sqlmetrics.reporting.data import checked_inputs

    recommendations = spark.createDataFrame(RECOMMENDATIONS.assign(model="a"))
    interactions = spark.createDataFrame(INTERACTIONS)
    _, engine = checked_inputs(recommendations, interactions, ["model"], None, {})
    assert engine.startswith("Spark (SQL dialect spark), through your pyspark SparkSession")
