"""The user's connection is theirs: evaluate runs their SQL as written, checks the dialect it
is told, leaves their transaction and the other calls on the connection as they were, and never
shows their secrets. Real engines throughout: a PostgreSQL server this session started, sqlite3
and DuckDB (with threads).
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pandas as pd
import pytest

import sqlmetrics
from tests.engines.cases import REPO
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


def _dataset(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """300 users with 20 scored items each, a tenth of the pairs relevant (a seed a dataset)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    users, items = 300, 20
    recs = pd.DataFrame(
        {
            "user_id": np.repeat(np.arange(users), items),
            "item_id": np.tile(np.arange(items), users),
            "score": rng.random(users * items),
        }
    )
    return recs, recs.sample(frac=0.1, random_state=seed)[["user_id", "item_id"]]


@pytest.mark.duckdb
def test_threads_sharing_a_duckdb_connection_each_get_their_own_numbers() -> None:
    """Six threads evaluate six datasets on one DuckDB connection, five times each: every call
    gives its dataset's numbers, as evaluated alone (they were another thread's, or an error:
    DuckDB refuses a connection busy with another thread's statement)."""
    import duckdb

    datasets = [_dataset(seed) for seed in range(6)]
    metrics = ["ndcg@10", "recall@5"]
    alone = [sqlmetrics.evaluate(r, t, metrics) for r, t in datasets]
    connection = duckdb.connect()
    got: dict[int, list[pd.DataFrame]] = {i: [] for i in range(6)}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        recs, truth = datasets[i]
        for _ in range(5):
            try:
                got[i].append(sqlmetrics.evaluate(recs, truth, metrics, connection=connection))
            except BaseException as error:  # counted, then asserted
                errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for i in range(6):
        for result in got[i]:
            pd.testing.assert_frame_equal(result, alone[i], check_exact=True)
    assert connection.execute(
        "SELECT count(*) FROM duckdb_views() WHERE NOT internal"
    ).fetchone() == (0,)


WORK = "sqlmetrics_conn_work"
RECS_SCORED = sqlmetrics.Query(f"SELECT user_id, item_id, 10 / item_id AS score FROM {RECS}")
SLOW = sqlmetrics.Query(
    "SELECT g % 100000 AS user_id, g AS item_id, random() AS score "
    "FROM generate_series(1, 50000000) AS g"
)


@pytest.mark.postgres
def test_the_callers_transaction_stays_as_it_was(postgres: Engine) -> None:
    """Inside the caller's open transaction with uncommitted work: a mistyped table, a
    cancelled query and a good call each leave the transaction open and the work there (a
    failed statement aborted it: InFailedSqlTransaction, the work lost). A transaction that
    failed before the call is refused, saying to roll it back."""
    import psycopg

    intrans = psycopg.pq.TransactionStatus.INTRANS
    with _connect(postgres) as connection:
        connection.execute(f"CREATE TEMPORARY TABLE {WORK} (x integer)")
        connection.execute(f"INSERT INTO {WORK} VALUES (1), (2)")
        with pytest.raises(sqlmetrics.SqlmetricsError, match="no_such_table"):
            sqlmetrics.evaluate(
                "no_such_table", TRUTH, ["mrr"], connection=connection, dialect="postgres"
            )
        assert connection.info.transaction_status == intrans
        with pytest.raises(sqlmetrics.SqlmetricsError, match=r"timeout=1 s .* cancelled"):
            sqlmetrics.evaluate(
                SLOW, TRUTH, ["mrr"], connection=connection, dialect="postgres", timeout=1
            )
        assert connection.info.transaction_status == intrans
        result = sqlmetrics.evaluate(
            RECS_SCORED, TRUTH, ["mrr"], connection=connection, dialect="postgres"
        )
        assert result["mrr"].tolist() == [0.5]  # 10 / 4 = 10 / 5 = 2: item 5 first (ties)
        assert connection.info.transaction_status == intrans
        assert connection.execute(f"SELECT sum(x) FROM {WORK}").fetchone() == (3,)
        with pytest.raises(psycopg.errors.DivisionByZero):
            connection.execute("SELECT 1 / 0")
        with pytest.raises(sqlmetrics.SqlmetricsError, match=r"transaction has failed .* roll"):
            sqlmetrics.evaluate(
                RECS_SCORED, TRUTH, ["mrr"], connection=connection, dialect="postgres"
            )
        connection.rollback()


@pytest.mark.postgres
def test_one_calls_timeout_cancels_its_own_query_only(postgres: Engine) -> None:
    """Two threads on one psycopg connection: B's query sleeps a second per row; A starts
    meanwhile with timeout=1 on a query of 50 million rows. A times out, B gets its numbers
    (A's timer cancelled whatever the connection ran, B's query: B failed)."""
    sleepy = sqlmetrics.Query(
        f"SELECT user_id, item_id, 10 / item_id AS score FROM {RECS} WHERE pg_sleep(1) IS NOT NULL"
    )
    outcome: dict[str, object] = {}
    with _connect(postgres, autocommit=True) as connection:

        def run(name: str, recs: object, timeout: float | None) -> None:
            try:
                outcome[name] = sqlmetrics.evaluate(
                    recs,
                    TRUTH,
                    ["mrr"],
                    connection=connection,
                    dialect="postgres",
                    timeout=timeout,
                )
            except sqlmetrics.SqlmetricsError as error:
                outcome[name] = error

        b = threading.Thread(target=run, args=("b", sleepy, None))
        a = threading.Thread(target=run, args=("a", SLOW, 1))
        b.start()
        time.sleep(0.5)
        a.start()
        a.join()
        b.join()
    assert isinstance(outcome["b"], pd.DataFrame), outcome["b"]
    assert outcome["b"]["mrr"].tolist() == [0.5]
    assert isinstance(outcome["a"], sqlmetrics.SqlmetricsError)
    assert "timeout=1 s" in str(outcome["a"])


@pytest.mark.postgres
def test_sigterm_to_a_cli_run_cancels_its_query_on_the_server(postgres: Engine) -> None:
    """SIGTERM to ``sqlmetrics evaluate --connection``: the server's query is cancelled and
    the connections closed (the query ran on, on 3 backends, after the process died)."""
    view = "sqlmetrics_conn_slow"
    postgres.execute(f"CREATE OR REPLACE VIEW {view} AS {SLOW.sql}")
    url = f"postgresql+psycopg://postgres@127.0.0.1:{_port(postgres)}/postgres"
    argv = [sys.executable, "-m", "sqlmetrics.cli", "evaluate", view, TRUTH, "-m", "ndcg@10"]
    mine = (
        "SELECT state FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
        f"AND query LIKE '%{view}%' AND query NOT LIKE '%pg_stat_activity%'"
    )
    try:
        process = subprocess.Popen(
            [*argv, "--connection", url, "-q"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        deadline = time.monotonic() + 60
        while ("active",) not in postgres.query(mine)[1] and time.monotonic() < deadline:
            assert process.poll() is None, process.communicate()
            time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
        assert process.returncode == 143, err
        assert err == "sqlmetrics: terminated; nothing was written\n"
        deadline = time.monotonic() + 10
        while postgres.query(mine)[1] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert postgres.query(mine)[1] == []
    finally:
        postgres.execute(f"DROP VIEW IF EXISTS {view}")


def _cli(argv: list[str]) -> tuple[int, str]:
    """The CLI in this process: its exit code and stderr."""
    import contextlib
    import io

    from sqlmetrics.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


@pytest.mark.postgres
def test_a_urls_secrets_are_hidden_where_they_stand_and_nowhere_else(postgres: Engine) -> None:
    """A password in the URL's query string showed in "cannot connect to ..." (API and CLI);
    a password that is a common word (user reco, password reco) turned every "reco" of a
    message into ***, "recommendations" and the table's name included."""
    import sqlalchemy

    secret = "s3cr3t-in-query"  # noqa: S105 (the trust server takes any password)
    in_query = f"postgresql+psycopg://postgres@127.0.0.1:1/postgres?password={secret}"
    with pytest.raises(sqlmetrics.SqlmetricsError) as refused:
        sqlmetrics.evaluate(RECS, TRUTH, ["mrr"], connection=sqlalchemy.create_engine(in_query))
    assert secret not in str(refused.value)
    assert (
        "cannot connect to postgresql+psycopg://postgres@127.0.0.1:1/postgres?password=***: "
        in str(refused.value)
    )
    code, err = _cli(["evaluate", RECS, TRUTH, "-m", "mrr", "--connection", in_query])
    assert code == 2 and secret not in err and "?password=***" in err, err
    postgres.execute("DROP ROLE IF EXISTS reco")
    postgres.execute("CREATE ROLE reco LOGIN")
    try:
        word = f"postgresql+psycopg://reco:reco@127.0.0.1:{_port(postgres)}/postgres"
        with pytest.raises(sqlmetrics.SqlmetricsError) as refused:
            sqlmetrics.evaluate(
                "reco_missing", TRUTH, ["mrr"], connection=sqlalchemy.create_engine(word)
            )
        message = str(refused.value)
        assert message.startswith("recommendations: cannot read 'reco_missing': "), message
        assert message.endswith('relation "reco_missing" does not exist'), message
        code, err = _cli(["evaluate", "reco_missing", TRUTH, "-m", "mrr", "--connection", word])
        assert code == 2 and 'relation "reco_missing" does not exist' in err, err
    finally:
        postgres.execute("DROP ROLE reco")
