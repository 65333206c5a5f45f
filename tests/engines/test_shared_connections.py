"""The user's connection is theirs: evaluate runs their SQL as written, checks the dialect it
is told, leaves their transaction and the other calls on the connection as they were, and never
shows their secrets. Real engines throughout: a PostgreSQL server this session started, sqlite3
and DuckDB (with threads).
"""

from __future__ import annotations

import sqlite3
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


def _sqlite_tables() -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:")
    connection.execute(f"CREATE TABLE {RECS} (user_id INTEGER, item_id INTEGER, score REAL)")
    connection.executemany(f"INSERT INTO {RECS} VALUES (1, ?, ?)", [(4, 0.5), (5, 0.9)])
    connection.execute(f"CREATE TABLE {TRUTH} (user_id INTEGER, item_id INTEGER)")
    connection.execute(f"INSERT INTO {TRUTH} VALUES (1, 4)")
    return connection


class _Logging:
    """A user's own wrapper around a driver's connection (logging its queries, say): no
    driver sqlmetrics knows, so nothing says which database it reaches."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def cursor(self) -> sqlite3.Cursor:
        return self.connection.cursor()


@pytest.mark.sqlite
def test_a_dialect_that_does_not_fit_the_driver_is_refused_on_sqlite() -> None:
    """sqlite3 reaches SQLite alone: its dialect is the default, another is refused (PostgreSQL's
    SQL ran there and gave other numbers), and the result says which dialect it used.
    Golden: item 5 scores 0.9 over item 4's 0.5, so the relevant item 4 is second: mrr 1/2."""
    with _sqlite_tables() as connection:
        result = sqlmetrics.evaluate(RECS, TRUTH, ["mrr"], connection=connection)
        assert result["mrr"].tolist() == [0.5]
        assert (result.attrs["engine"], result.attrs["dialect"]) == ("sqlite3 (sqlite)", "sqlite")
        for wrong in ("postgres", "duckdb", "mysql"):
            refused = rf"dialect={wrong!r} does not fit a sqlite3 connection, .* pass 'sqlite'"
            with pytest.raises(sqlmetrics.SqlmetricsError, match=refused):
                sqlmetrics.evaluate(RECS, TRUTH, ["mrr"], connection=connection, dialect=wrong)
        unknown = "cannot tell which database a tests.engines.test_shared_connections._Logging"
        with pytest.raises(sqlmetrics.SqlmetricsError, match=unknown):
            sqlmetrics.evaluate(
                RECS, TRUTH, ["mrr"], connection=_Logging(connection), dialect="sqlite"
            )


@pytest.mark.postgres
def test_a_dialect_that_does_not_fit_the_driver_is_refused_on_postgres(postgres: Engine) -> None:
    """psycopg reaches PostgreSQL or a database of its protocol (Redshift, Materialize):
    dialect= is needed, and must be one of theirs; so must a SQLAlchemy engine's."""
    import sqlalchemy

    from sqlmetrics.engines import open_engine

    with _connect(postgres, autocommit=True) as connection:
        for wrong in ("sqlite", "mysql", "duckdb", "spark"):
            with pytest.raises(sqlmetrics.SqlmetricsError, match="does not fit a psycopg"):
                sqlmetrics.evaluate(RECS, TRUTH, ["mrr"], connection=connection, dialect=wrong)
        with pytest.raises(sqlmetrics.SqlmetricsError, match="pass the dialect its SQL follows"):
            sqlmetrics.evaluate(RECS, TRUTH, ["mrr"], connection=connection)
        with open_engine(connection, dialect="redshift") as engine:
            assert engine.dialect == "redshift"
    url = sqlalchemy.URL.create(
        "postgresql+psycopg", username="postgres", host="127.0.0.1", port=_port(postgres)
    )
    with pytest.raises(sqlmetrics.SqlmetricsError, match="does not fit a SQLAlchemy postgresql"):
        sqlmetrics.evaluate(
            RECS, TRUTH, ["mrr"], connection=sqlalchemy.create_engine(url), dialect="sqlite"
        )


def _port(engine: Engine) -> int:
    import psycopg

    parts = psycopg.conninfo.conninfo_to_dict(engine.dsn)  # type: ignore[attr-defined]
    return int(str(parts["port"]))
