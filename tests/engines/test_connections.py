"""evaluate(connection=...) on real engines: the same numbers, checks and diagnostics as DuckDB.

Each golden fixture and extra case of the engine matrix is loaded into the engine (tests/engines
/engines.py), then evaluated there through a user's own connection: a SQLAlchemy engine and a
raw psycopg connection on PostgreSQL, pymysql on MariaDB, sqlite3, and a SparkSession with
table names and with Spark DataFrames as the inputs. The summary, the per-user rows and the
diagnostics must equal DuckDB's evaluate on the same tables to 1e-9, with the same columns and
dtypes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pytest

import sqlmetrics
from tests.engines.cases import BAD_ROWS, TOLERANCE, Case, extra_cases, load_cases
from tests.engines.conftest import SHARED_ENGINES, EnginePool
from tests.engines.engines import DuckDBEngine, Engine, view_names
from tests.engines.test_engines import loaded


@dataclass(frozen=True)
class Way:
    """One way a user connects: the engine that holds the tables and how evaluate is called."""

    id: str
    engine: str
    connect: Callable[[Engine], dict[str, Any]]  # evaluate's connection= and dialect=
    dataframes: bool = False  # the inputs as Spark DataFrames instead of table names
    cases: frozenset[str] | None = None  # None: every case
    # The developer's sample of its cases; CI runs every one (full_matrix, tests/conftest.py).
    sampled: frozenset[str] | None = None  # None: every case in every run

    def takes(self, case: Case) -> bool:
        return self.cases is None or case.name in self.cases

    def full_matrix_only(self, case: Case) -> bool:
        return self.sampled is not None and case.name not in self.sampled


# What binding, fetching and shaping through a connection meet, one case each: group columns
# (NULL ones, arms), items and history, string ids, a rank column, NULL scores, no relevance
# column, the scored, rated and judgements stages, a profile. SQLite's DB-API takes them in a
# developer's run and every case in CI (full_matrix); every case's SQL runs on SQLite in every
# run anyway (tests/engines/test_engines.py: golden values, per-user rows, checks), and the
# connection path is the same code for each. PostgreSQL through SQLAlchemy takes them in every
# run: its SQL is postgres-dbapi's, which runs every case.
CONNECTION_SAMPLE = frozenset(
    {
        "beyond_lists_by_model",
        "group_by_null_segment",
        "extra_string_arms",
        "string_ids",
        "ties_id_text_strings",
        "extra_rank_column",
        "extra_null_scores_first",
        "no_relevance_column",
        "auc_group_by_model",
        "rating_metrics",
        "trec_bpref",
        "extra_profile_recommenders",
    }
)


def _sqlalchemy_postgres(engine: Engine) -> dict[str, Any]:
    import psycopg
    import sqlalchemy

    cache: dict[str, Any] = engine.__dict__.setdefault("sqlalchemy", {})
    if "engine" not in cache:
        parts = psycopg.conninfo.conninfo_to_dict(engine.dsn)  # type: ignore[attr-defined]
        url = sqlalchemy.URL.create(
            "postgresql+psycopg",
            username=str(parts.get("user", "postgres")),
            password=str(parts["password"]) if parts.get("password") else None,
            host=str(parts.get("host", "127.0.0.1")),
            port=int(str(parts.get("port", 5432))),
            database=str(parts.get("dbname", "postgres")),
        )
        cache["engine"] = sqlalchemy.create_engine(url)
    return {"connection": cache["engine"]}


def _chdb(engine: Engine) -> dict[str, Any]:
    """chdb's DB-API connection on the test engine's database folder."""
    import chdb.dbapi

    cache: dict[str, Any] = engine.__dict__.setdefault("dbapi", {})
    if "connection" not in cache:
        cache["connection"] = chdb.dbapi.connect(engine.path)  # type: ignore[attr-defined]
    return {"connection": cache["connection"], "dialect": "clickhouse"}


WAYS = [
    # The same SQL as postgres-dbapi, which runs every case: the binding is what differs.
    Way("postgres-sqlalchemy", "postgres", _sqlalchemy_postgres, cases=CONNECTION_SAMPLE),
    Way(
        "postgres-dbapi",
        "postgres",
        lambda engine: {"connection": engine.connection, "dialect": "postgres"},  # type: ignore[attr-defined]
    ),
    Way(
        "mariadb-pymysql",
        "mariadb",
        lambda engine: {"connection": engine.connection, "dialect": "mysql"},  # type: ignore[attr-defined]
    ),
    Way(
        "sqlite-dbapi",
        "sqlite",
        lambda engine: {"connection": engine.connection, "dialect": "sqlite"},  # type: ignore[attr-defined]
        sampled=CONNECTION_SAMPLE,
    ),
    Way("chdb-dbapi", "chdb", lambda engine: _chdb(engine)),
    Way("spark-tables", "spark", lambda engine: {"connection": engine.spark}),  # type: ignore[attr-defined]
    Way(
        "spark-dataframes",
        "spark",
        lambda engine: {"connection": engine.spark},  # type: ignore[attr-defined]
        dataframes=True,
        # The same SQL as spark-tables over views of DataFrames: the binding is what differs,
        # so the cases with group columns, items, history and strings suffice (Spark's time).
        cases=frozenset(
            {
                "beyond_lists_by_model",
                "group_by_null_segment",
                "rating_metrics",
                "string_ids",
                "ties_id_text_strings",
                "extra_string_arms",
                "extra_rank_column",
                "extra_null_scores_first",
            }
        ),
    ),
]

CASES = [case for case in load_cases() + extra_cases() if case.name != BAD_ROWS]
assert {case.name for case in CASES} >= CONNECTION_SAMPLE

# (way id, case name) -> why the engine cannot give DuckDB's numbers there (strict xfails).
KNOWN_GAPS: dict[tuple[str, str], str] = {}


def parameters() -> list[Any]:
    found = []
    for way in WAYS:
        for case in filter(way.takes, CASES):
            marks: list[Any] = [getattr(pytest.mark, way.engine)]
            if way.full_matrix_only(case):
                marks.append(pytest.mark.full_matrix)
            if way.engine not in SHARED_ENGINES:
                # with test_engines' tests of the case (its tables loaded once per engine)
                marks.append(pytest.mark.xdist_group(f"engines-{case.name}"))
            if (way.id, case.name) in KNOWN_GAPS:
                reason = KNOWN_GAPS[way.id, case.name]
                marks.append(pytest.mark.xfail(reason=reason, strict=True))
            found.append(pytest.param(way, case, marks=marks, id=f"{way.id}-{case.name}"))
    return found


def evaluate_kwargs(case: Case) -> dict[str, Any]:
    """The fixture's evaluate options (to_sql's interactions_group_by is evaluate's own
    reading of the interactions' columns)."""
    kwargs = case.kwargs()
    kwargs.pop("interactions_group_by", None)
    return kwargs


def inputs(engine: Engine, case: Case, way: Way) -> dict[str, Any]:
    names = loaded(engine, case, engine.dialect)
    given: dict[str, Any] = {"recommendations": names[0], "interactions": names[1]}
    if case.items is not None:
        given["items"] = f"i_{case.name}"
    if case.history is not None:
        given["history"] = f"h_{case.name}"
    if way.dataframes:
        spark = engine.spark  # type: ignore[attr-defined]
        given = {role: spark.table(name) for role, name in given.items()}
    return given


_duckdb: list[DuckDBEngine] = []
_references: dict[tuple[str, bool], pd.DataFrame | str] = {}


def on_duckdb(case: Case, per_user: bool) -> pd.DataFrame | str:
    """DuckDB's result for the case, or the message of its refusal (every metric at once may
    include one the inputs cannot feed, such as logloss on scores outside [0, 1])."""
    key = (case.name, per_user)
    if key not in _references:
        if not _duckdb:
            _duckdb.append(DuckDBEngine())
        engine = _duckdb[0]
        given = inputs(engine, case, Way("duckdb", "duckdb", lambda _: {}))
        try:
            _references[key] = sqlmetrics.evaluate(
                metrics=case.all_metrics,
                connection=engine.connection,
                per_user=per_user,
                **given,
                **evaluate_kwargs(case),
            )
        except sqlmetrics.SqlmetricsError as error:
            _references[key] = str(error)
    return _references[key]


def assert_same(got: pd.DataFrame, want: pd.DataFrame, where: str) -> None:
    assert list(got.columns) == list(want.columns), where
    assert [str(t) for t in got.dtypes] == [str(t) for t in want.dtypes], (where, got.dtypes)
    pd.testing.assert_frame_equal(
        got.reset_index(drop=True),
        want.reset_index(drop=True),
        check_exact=False,
        rtol=0,
        atol=TOLERANCE,
        obj=where,
    )


@pytest.mark.parametrize(("way", "case"), parameters())
def test_evaluate_through_a_connection_equals_duckdb(
    engine_pool: EnginePool, way: Way, case: Case
) -> None:
    engine = engine_pool.get(way.engine)
    given = inputs(engine, case, way)
    options = {**way.connect(engine), **evaluate_kwargs(case)}
    for per_user in (False, True):
        want = on_duckdb(case, per_user)
        where = f"{way.id} {case.name} per_user={per_user}"
        if isinstance(want, str):  # refused on DuckDB: refused with the same message
            with pytest.raises(sqlmetrics.SqlmetricsError) as refused:
                sqlmetrics.evaluate(metrics=case.all_metrics, per_user=per_user, **given, **options)
            assert str(refused.value) == want, where
            continue
        got = sqlmetrics.evaluate(metrics=case.all_metrics, per_user=per_user, **given, **options)
        assert_same(got, want, where)
        assert_same(
            sqlmetrics.read_diagnostics(got), sqlmetrics.read_diagnostics(want), where + " diag"
        )


def _postgres_state(engine: Engine) -> tuple[Any, ...]:
    """What evaluate must leave as it was: the relations and schemas, and whether the engine's
    session has a temporary schema (it gets one with its first temporary table). Another
    pytest-xdist worker runs the dbt tests on this server meanwhile: their schemas
    (sqlmetrics_dbt_*), parity tables (dbt_*) and sessions' temporary schemas are not counted."""
    relations = engine.query(
        "SELECT count(*) FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace "
        "WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname NOT LIKE 'sqlmetrics\\_dbt\\_%' "
        "AND c.relname NOT LIKE 'dbt\\_%'"
    )[1]
    schemas = engine.query(
        "SELECT count(*) FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%temp\\_%' "
        "AND nspname NOT LIKE 'sqlmetrics\\_dbt\\_%'"
    )[1]
    temporary = engine.query("SELECT pg_my_temp_schema() <> 0")[1]
    return relations[0][0], schemas[0][0], temporary[0][0]


@pytest.mark.postgres
def test_a_select_only_role_evaluates_and_nothing_is_written(engine_pool: EnginePool) -> None:
    import psycopg

    engine = engine_pool.get("postgres")
    case = next(c for c in CASES if c.name == "extra_string_arms")
    recommendations, interactions = loaded(engine, case, "postgres")
    engine.execute("DROP ROLE IF EXISTS sqlmetrics_reader")
    engine.execute("CREATE ROLE sqlmetrics_reader LOGIN")
    try:
        for table in (recommendations, interactions):
            engine.execute(f"GRANT SELECT ON {table} TO sqlmetrics_reader")
        before = _postgres_state(engine)
        dsn = engine.dsn + " user=sqlmetrics_reader"  # type: ignore[attr-defined]
        with psycopg.connect(dsn) as reader:
            got = sqlmetrics.evaluate(
                recommendations,
                interactions,
                case.all_metrics,
                connection=reader,
                dialect="postgres",
                **evaluate_kwargs(case),
            )
            assert reader.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            assert reader.execute("SELECT pg_my_temp_schema() = 0").fetchone() == (True,)
            changed = reader.execute(
                "SELECT name FROM pg_settings WHERE source = 'session'"
            ).fetchall()
            assert changed == []
        assert_same(got, on_duckdb(case, False), "read-only role")  # type: ignore[arg-type]
        assert _postgres_state(engine) == before
        refused = pytest.raises(sqlmetrics.SqlmetricsError, match="permission denied")
        with refused, psycopg.connect(dsn) as reader:
            sqlmetrics.evaluate(
                "pg_catalog.pg_authid",
                interactions,
                ["ndcg@2"],
                connection=reader,
                dialect="postgres",
            )
    finally:
        engine.execute("DROP OWNED BY sqlmetrics_reader")
        engine.execute("DROP ROLE sqlmetrics_reader")


@pytest.mark.spark
def test_spark_settings_hold_during_the_query_and_are_restored(engine_pool: EnginePool) -> None:
    from sqlmetrics.engines import spark as spark_engine

    engine = engine_pool.get("spark")
    spark = engine.spark  # type: ignore[attr-defined]
    case = next(c for c in CASES if c.name == "extra_string_arms")
    recommendations, interactions = loaded(engine, case, "spark")
    key = "spark.sql.requireAllClusterKeysForCoPartition"
    seen: list[str | None] = []
    fetch = spark_engine.SparkEngine.fetch

    def spying(self: Any, sql: str) -> Any:
        original = self.spark.sql

        def sql_seeing_settings(text: str) -> Any:
            seen.append(self.spark.conf.get(key, None))
            return original(text)

        self.spark.sql = sql_seeing_settings
        try:
            return fetch(self, sql)
        finally:
            del self.spark.sql

    views = view_names(spark)
    for users_value in (None, "true"):
        if users_value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, users_value)
        seen.clear()
        spark_engine.SparkEngine.fetch = spying  # type: ignore[method-assign]
        try:
            got = sqlmetrics.evaluate(
                recommendations,
                interactions,
                case.all_metrics,
                connection=spark,
                **evaluate_kwargs(case),
            )
        finally:
            spark_engine.SparkEngine.fetch = fetch  # type: ignore[method-assign]
            after = spark.conf.get(key, None)
            spark.conf.unset(key)
        assert seen and set(seen) == {"false"}
        assert after == users_value
        assert_same(got, on_duckdb(case, False), f"{key}={users_value}")  # type: ignore[arg-type]
    assert view_names(spark) == views


SLOW = sqlmetrics.Query(
    "SELECT g % 100000 AS user_id, g AS item_id, random() AS score "
    "FROM generate_series(1, 50000000) AS g"
)


def _running(engine: Engine) -> list[Any]:
    return engine.query(
        "SELECT query FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() "
        "AND query LIKE '%generate_series%'"
    )[1]


@pytest.mark.postgres
def test_a_timeout_or_ctrl_c_cancels_the_query_on_the_server(engine_pool: EnginePool) -> None:
    import signal
    import threading
    import time

    import psycopg

    engine = engine_pool.get("postgres")
    case = next(c for c in CASES if c.name == "extra_null_scores")
    _, interactions = loaded(engine, case, "postgres")
    dsn = engine.dsn  # type: ignore[attr-defined]
    with psycopg.connect(dsn) as connection:
        started = time.monotonic()
        with pytest.raises(sqlmetrics.SqlmetricsError, match=r"timeout=1 s .* cancelled"):
            sqlmetrics.evaluate(
                SLOW,
                interactions,
                ["ndcg@10"],
                connection=connection,
                dialect="postgres",
                timeout=1,
            )
        assert time.monotonic() - started < 30
        assert _running(engine) == []
        connection.rollback()
        timer = threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT))
        # Python's own Ctrl-C, as a user's process has it: a SparkContext this worker opened
        # for an earlier test installs a handler of its own (it cancels Spark's jobs).
        handler = signal.signal(signal.SIGINT, signal.default_int_handler)
        timer.start()
        started = time.monotonic()
        try:
            with pytest.raises(KeyboardInterrupt):
                sqlmetrics.evaluate(
                    SLOW, interactions, ["ndcg@10"], connection=connection, dialect="postgres"
                )
        finally:
            timer.join()
            signal.signal(signal.SIGINT, handler)
        assert time.monotonic() - started < 30
        time.sleep(0.2)
        assert _running(engine) == []


@pytest.mark.postgres
def test_a_password_in_the_url_never_shows(engine_pool: EnginePool) -> None:
    import psycopg
    import sqlalchemy

    engine = engine_pool.get("postgres")
    parts = psycopg.conninfo.conninfo_to_dict(engine.dsn)  # type: ignore[attr-defined]
    secret = "s3cr3t-Pa55word"  # noqa: S105 (the trust server takes any password)
    url = sqlalchemy.URL.create(
        "postgresql+psycopg",
        username=str(parts.get("user", "postgres")),
        password=secret,
        host=str(parts.get("host")),
        port=int(str(parts.get("port"))),
        database=str(parts.get("dbname", "postgres")),
    ).render_as_string(hide_password=False)
    bad_port = url.replace(f":{parts.get('port')}/", ":1/")
    for where in (url, bad_port):
        for tables in (("no_such_table", "no_such_table"),):
            code, out, err = _cli(["evaluate", *tables, "-m", "ndcg@10", "--connection", where])
            assert code == 2 and secret not in out + err, err
            assert err.startswith("sqlmetrics: error: ") and err.count("\n") == 1, err
        with pytest.raises(sqlmetrics.SqlmetricsError) as refused:
            sqlmetrics.evaluate(
                "no_such_table", "t", ["ndcg@10"], connection=sqlalchemy.create_engine(where)
            )
        assert secret not in str(refused.value)


def _cli(argv: list[str]) -> tuple[int, str, str]:
    import contextlib
    import io

    from sqlmetrics.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.postgres
def test_the_cli_with_a_connection_prints_the_apis_numbers(engine_pool: EnginePool) -> None:
    import json

    engine = engine_pool.get("postgres")
    case = next(c for c in CASES if c.name == "extra_string_arms")
    recommendations, interactions = loaded(engine, case, "postgres")
    url = _sqlalchemy_postgres(engine)["connection"].url.render_as_string(hide_password=False)
    code, out, err = _cli(
        [
            "evaluate",
            recommendations,
            interactions,
            "-m",
            "ndcg@2",
            "-m",
            "hit_rate@2",
            "--group-by",
            "arm",
            "--no-relevance",
            "--connection",
            url,
            "--format",
            "json",
            "-q",
        ]
    )
    assert code == 0, err
    api = sqlmetrics.evaluate(
        recommendations,
        interactions,
        ["ndcg@2", "hit_rate@2"],
        group_by="arm",
        columns={"relevance": None},
        connection=_sqlalchemy_postgres(engine)["connection"],
    )
    printed = json.loads(out)
    assert [list(row) for row in printed] == [["arm", "users", "ndcg@2", "hit_rate@2"]] * 2
    for row, (_, want) in zip(printed, api.iterrows(), strict=True):
        assert row["arm"] == want["arm"] and row["users"] == want["users"]
        assert row["ndcg@2"] == pytest.approx(want["ndcg@2"], abs=1e-9)
        assert row["hit_rate@2"] == pytest.approx(want["hit_rate@2"], abs=1e-9)


def _bad_input_cases() -> list[Any]:
    """tests/test_bad_input.py's cases that a database table can hold (a NaN score cannot be
    written as a literal in every engine, and pandas' NaN is NULL)."""
    from tests.test_bad_input import CASES as BAD

    found = []
    for way in (WAYS[1], WAYS[5]):  # psycopg on PostgreSQL, Spark with table names
        for name, (recommendations, interactions, message) in BAD.items():
            if name == "nan score":
                continue
            marks = [getattr(pytest.mark, way.engine)]
            found.append(
                pytest.param(
                    way,
                    name,
                    recommendations,
                    interactions,
                    message,
                    marks=marks,
                    id=f"{way.id}-{name.replace(' ', '_')}",
                )
            )
    return found


def _table(frame: pd.DataFrame) -> Any:
    from tests.engines.cases import Table

    rows = [
        {c: (None if pd.isna(v) else v.item() if hasattr(v, "item") else v) for c, v in r.items()}
        for r in frame.to_dict("records")
    ]
    table = Table.of(rows, list(frame.columns))
    if not rows:  # no values to tell the types: the frame's own
        kinds = {c: "float" if frame[c].dtype.kind == "f" else "int" for c in frame.columns}
        table = Table(tuple((c, kinds[c]) for c in frame.columns), ())
    return table


@pytest.mark.parametrize(
    ("way", "name", "recommendations", "interactions", "message"), _bad_input_cases()
)
def test_bad_input_gets_duckdbs_message_and_nothing_is_written(
    engine_pool: EnginePool,
    way: Way,
    name: str,
    recommendations: pd.DataFrame,
    interactions: pd.DataFrame,
    message: str,
) -> None:
    engine = engine_pool.get(way.engine)
    slug = "".join(c if c.isalnum() else "_" for c in name)
    tables = (f"bad_r_{slug}", f"bad_t_{slug}")
    engine.load(tables[0], _table(recommendations))
    engine.load(tables[1], _table(interactions))
    before = _postgres_state(engine) if way.engine == "postgres" else None
    with pytest.raises(sqlmetrics.SqlmetricsError) as raised:
        sqlmetrics.evaluate(*tables, ["ndcg@3", "precision@2"], **way.connect(engine))
    assert str(raised.value) == message
    if before is not None:
        assert _postgres_state(engine) == before


# fakesnow transpiles each query to DuckDB again (seconds for every metric at once): the cases
# with groups, strings, ranks, ties, NULL scores, items and history (every fixture passed here
# when this was written, in 13 minutes).
FAKESNOW_CASES = frozenset(
    {
        "beyond_lists_by_model",
        "group_by_null_segment",
        "rating_metrics",
        "string_ids",
        "ties_id_text_strings",
        "threshold",
        "extra_string_arms",
        "extra_rank_column",
        "extra_null_scores_first",
        "extra_null_scores_average",
        "extra_profile_lenskit",
    }
)


@pytest.mark.fakesnow
def test_snowflake_connector_through_fakesnow_equals_duckdb() -> None:
    """Snowflake's own connector (patched by fakesnow, in its virtual environment) as the
    connection: every fixture's summary, per-user rows and diagnostics equal DuckDB's. fakesnow
    is DuckDB underneath: this checks the Snowflake SQL and the connector path, not
    Snowflake's numbers."""
    import io
    import json
    import subprocess

    from tests.engines.cases import REPO
    from tests.engines.engines import fakesnow_python

    python = fakesnow_python()
    assert python is not None
    cases = [case for case in CASES if case.name in FAKESNOW_CASES]
    names = [case.name for case in cases]
    answer = subprocess.run(
        [str(python), str(REPO / "tests" / "engines" / "fakesnow_evaluate.py")],
        input=json.dumps(names),
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=1800,
        check=False,
    )
    assert answer.returncode == 0, answer.stderr[-3000:]
    found = json.loads(answer.stdout)
    for case in cases:
        for per_user in (False, True):
            key = f"{case.name} per_user={per_user}"
            want = on_duckdb(case, per_user)
            got = found[key]
            if isinstance(want, str):
                assert got.get("error") == want, key
                continue
            assert "error" not in got, (key, got.get("error"))
            frame = pd.read_json(io.StringIO(got["result"]), orient="split")
            # Integer sums come back from fakesnow's DuckDB as floats: the values are compared,
            # the integer dtypes are the other engines' to check.
            frame = frame.astype(dict(zip(frame.columns, want.dtypes, strict=True)))
            assert_same(frame, want, key)
            counted = pd.read_json(io.StringIO(got["diagnostics"]), orient="split")
            counted.columns = [str(c) for c in counted.columns]
            pd.testing.assert_frame_equal(
                counted, sqlmetrics.read_diagnostics(want), check_dtype=False, obj=key
            )
