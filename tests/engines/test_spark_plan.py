"""The shape of the query ``evaluate`` runs on Spark, read from Spark's own physical plan.

Spark inlines a CTE at each of its readers, so a stage read twice is computed twice, and it
hashes rows again wherever an operator needs another partitioning than the one it gets. On
Parquet files (each input a ``Scan parquet`` node), with the settings the Spark engine runs its
query with and broadcast joins off (the plan of inputs too large to broadcast), the query of the
seven metrics with their checks and diagnostics must:

- rank the lists once (one WindowGroupLimit, partial and final): the diagnostics ride the
  metrics' chain (compose/chain.py), the ranked rows carrying the ties and the repeats;
- hash rows by user_id alone, never by (user_id, item_id): every grouping, window and join
  between the first shuffle and the last keeps the partitioning by user;
- shuffle the interactions once: each of their scans feeds the same exchange by user, which
  the executed plan reuses;
- count the recommendations' bad rows in one aggregate over every row (no per-list counts
  joined by user): at most 7 exchanges in all.

``to_sql``'s query, which a user runs without the engine's settings, keeps the partitioning by
user too: 4 exchanges (the recommendations' ranking, the interactions, the rows joined for the
per-user windows, the means), each by user_id alone but the last.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import sqlmetrics
from tests.engines.conftest import EnginePool
from tests.engines.engines import spark_defaults

pytestmark = pytest.mark.spark

SEVEN = [f"{m}@3" for m in ("ndcg", "map_min", "mrr", "precision", "recall", "hit_rate", "f1")]


@pytest.fixture(scope="module")
def parquet_inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """40 users with 8 recommendations each (scores with ties) and 0-3 relevant items, some of
    them recommended: as Parquet files, which Spark scans as nodes of their own."""
    import pandas as pd

    folder: Path = tmp_path_factory.mktemp("spark_plan")
    users = range(1, 41)
    recommendations = pd.DataFrame(
        [(u, 100 * u + i, round(((u * 7 + i * 3) % 10) / 10, 1)) for u in users for i in range(8)],
        columns=["user_id", "item_id", "score"],
    )
    interactions = pd.DataFrame(
        [(u, 100 * u + 2 * j, 1) for u in users for j in range(u % 4)],
        columns=["user_id", "item_id", "relevance"],
    )
    paths = (str(folder / "recommendations.parquet"), str(folder / "interactions.parquet"))
    recommendations.to_parquet(paths[0])
    interactions.to_parquet(paths[1])
    return paths


def _evaluate_sql(spark: Any, recommendations: str, interactions: str) -> str:
    """The query ``evaluate`` hands Spark for the seven metrics (run as usual, caught)."""
    from sqlmetrics.engines import spark as spark_engine

    caught: list[str] = []
    fetch = spark_engine.SparkEngine.fetch

    def catching(self: Any, sql: str) -> Any:
        caught.append(sql)
        return fetch(self, sql)

    spark_engine.SparkEngine.fetch = catching  # type: ignore[method-assign]
    try:
        sqlmetrics.evaluate(
            spark.read.parquet(recommendations),
            spark.read.parquet(interactions),
            SEVEN,
            connection=spark,
            columns={"relevance": None},
        )
    finally:
        spark_engine.SparkEngine.fetch = fetch  # type: ignore[method-assign]
    (sql,) = caught
    return sql


@contextlib.contextmanager
def _planning(spark: Any, views: dict[str, str], engine: bool = True) -> Iterator[None]:
    """The inputs as the query's views, no broadcast joins, and the engine's settings (else
    Spark's defaults for them); the session as it was afterwards."""
    from sqlmetrics.engines.spark import _QUERY_SETTINGS

    settings: dict[str, str | None] = {
        **{key: value if engine else None for key, value in _QUERY_SETTINGS.items()},
        "spark.sql.autoBroadcastJoinThreshold": "-1",
    }
    before = {key: spark.conf.get(key, None) for key in settings}
    for name, path in views.items():
        spark.read.parquet(path).createOrReplaceTempView(name)
    try:
        for key, value in settings.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
        for name in views:
            spark.catalog.dropTempView(name)


def _formatted(frame: Any) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        frame.explain("formatted")
    return buffer.getvalue()


def _tree(formatted: str) -> str:
    """The tree part of a formatted plan (the nodes' details follow it); after a run, AQE's
    final plan."""
    return formatted.split("\n\n(")[0].split("== Initial Plan ==")[0]


def test_evaluate_keeps_the_partitioning_by_user_and_ranks_once(
    engine_pool: EnginePool, parquet_inputs: tuple[str, str]
) -> None:
    spark = engine_pool.get("spark").spark  # type: ignore[attr-defined]
    recommendations, interactions = parquet_inputs
    sql = _evaluate_sql(spark, recommendations, interactions)
    names = dict.fromkeys(re.findall(r"\bsqlmetrics_(?:recommendations|interactions)_\w+", sql))
    views = {
        name: recommendations if "_recommendations_" in name else interactions for name in names
    }
    with spark_defaults(spark), _planning(spark, views):  # a user's session's plan
        frame = spark.sql(sql)
        planned = _formatted(frame)
        frame.collect()
        executed = _tree(_formatted(frame))
    tree = _tree(planned)
    assert len(re.findall(r"WindowGroupLimit \(", tree)) == 2, tree  # a partial and a final
    # the recommendations' checks one aggregate over every row, no list's counts joined
    assert len(re.findall(r"(?<![\w])Exchange \(", tree)) <= 7, tree
    arguments = _by_user_alone(planned)
    # the interactions: distributed by user for truth and for the diagnostics, shuffled once
    assert sum("REPARTITION_BY_COL" in a for a in arguments) == 2, arguments
    assert "ReusedExchange" in executed, executed


def test_to_sql_keeps_the_partitioning_by_user_without_the_engine_settings(
    engine_pool: EnginePool, parquet_inputs: tuple[str, str]
) -> None:
    spark = engine_pool.get("spark").spark  # type: ignore[attr-defined]
    recommendations, interactions = parquet_inputs
    sql = sqlmetrics.to_sql(
        SEVEN, "recs", "interactions", dialect="spark", columns={"relevance": None}
    )
    views = {"recs": recommendations, "interactions": interactions}
    with spark_defaults(spark), _planning(spark, views, engine=False):
        planned = _formatted(spark.sql(sql))
    tree = _tree(planned)
    assert len(re.findall(r"(?<![\w])Exchange \(", tree)) <= 4, tree
    _by_user_alone(planned)


def _by_user_alone(planned: str) -> list[str]:
    """The arguments of each Exchange of a formatted plan, asserted to hash by user_id alone
    (or to gather one partition, for the means)."""
    arguments = re.findall(r"\(\d+\) Exchange\nInput [^\n]*\nArguments: ([^\n]*)", planned)
    hashed = [a for a in arguments if a.startswith("hashpartitioning")]
    assert hashed, planned
    assert all(re.match(r"hashpartitioning\(user_id#\d+L?, \d+\)", a) for a in hashed), hashed
    return arguments
