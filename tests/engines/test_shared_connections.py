"""The user's connection is theirs: evaluate runs their SQL as written, checks the dialect it
is told, leaves their transaction and the other calls on the connection as they were, and never
shows their secrets. Real engines throughout: a PostgreSQL server this session started, sqlite3
and DuckDB (with threads).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import sqlmetrics
from tests.engines.conftest import EnginePool
from tests.engines.engines import Engine

# User 1 has items 4 and 5, item 4 relevant.
RECS = "sqlmetrics_conn_recs"
TRUTH = "sqlmetrics_conn_truth"


@pytest.fixture
def postgres(engine_pool: EnginePool) -> Iterator[Engine]:
    engine = engine_pool.get("postgres")
    engine.execute(f"DROP TABLE IF EXISTS {RECS}, {TRUTH}")
    engine.execute(
        f"CREATE TABLE {RECS} AS SELECT 1 AS user_id, i AS item_id FROM (VALUES (4), (5)) AS t(i)"
    )
    engine.execute(f"CREATE TABLE {TRUTH} AS SELECT 1 AS user_id, 4 AS item_id")
    try:
        yield engine
    finally:
        engine.execute(f"DROP TABLE IF EXISTS {RECS}, {TRUTH}")


def _connect(engine: Engine, **options: object) -> object:
    import psycopg

    return psycopg.connect(engine.dsn, **options)  # type: ignore[attr-defined]


@pytest.mark.postgres
def test_postgres_runs_the_users_query_as_written(postgres: Engine) -> None:
    """``10 / item_id`` is integer division in PostgreSQL: 10 / 4 = 2 = 10 / 5, a tie that
    ties="id" breaks by item id descending (METRICS.md), so item 5 comes first and the relevant
    item 4 second: mrr = 1/2. Float division (2.5 against 2.0) would give mrr = 1."""
    with _connect(postgres, autocommit=True) as connection:
        query = sqlmetrics.Query(f"SELECT user_id, item_id, 10 / item_id AS score FROM {RECS}")
        result = sqlmetrics.evaluate(
            query, TRUTH, ["mrr"], connection=connection, dialect="postgres"
        )
        assert result["mrr"].tolist() == [0.5]
        # PostgreSQL's own answer to a division by zero, not NULL scores
        failing = sqlmetrics.Query(f"SELECT user_id, item_id, 1 / 0 AS score FROM {RECS}")
        with pytest.raises(sqlmetrics.SqlmetricsError, match="division by zero"):
            sqlmetrics.evaluate(failing, TRUTH, ["mrr"], connection=connection, dialect="postgres")
