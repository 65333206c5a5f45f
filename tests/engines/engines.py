"""Real SQL engines behind one small interface: load a table, run a query, get rows back.

Each engine says whether it can run here (``available``: cheap, checked at collection) and is
opened once per test session by a fixture in conftest.py. Tables are created through sqlglot
in the engine's dialect, so table and column names go through the same identifier rules as the
package's output. The servers (PostgreSQL, MariaDB) come from the environment when .ci/run (or
you) started them, or are started here on 127.0.0.1 with a throwaway data directory and
stopped by their process id.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from sqlglot import exp

from tests.engines.cases import REPO, Table

Result = tuple[list[str], list[tuple[Any, ...]]]

SQL_TYPES = {"int": "BIGINT", "float": "DOUBLE", "str": "VARCHAR(64)"}


def table_node(name: str | exp.Table, dialect: str) -> exp.Table:
    if isinstance(name, exp.Table):
        return name
    return exp.to_table(name, dialect=dialect)


def literal(value: Any) -> exp.Expr:
    if value is None:
        return exp.Null()
    if isinstance(value, str):
        return exp.Literal.string(value)
    return exp.Literal.number(repr(value))


def column_identifier(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


def create_statements(
    name: str | exp.Table,
    table: Table,
    dialect: str,
    nullable_types: bool = True,
    replace: bool = False,
) -> list[str]:
    """DROP, CREATE and INSERT statements for ``table`` in ``dialect`` (or CREATE OR REPLACE)."""
    target = table_node(name, dialect)
    definitions = []
    for column, kind in table.columns:
        data_type = exp.DataType.build(SQL_TYPES[kind])
        if not nullable_types and not table.nullable(column):
            data_type.set("nullable", False)
        definitions.append(exp.ColumnDef(this=column_identifier(column), kind=data_type))
    schema = exp.Schema(this=target.copy(), expressions=definitions)
    create = exp.Create(this=schema, kind="TABLE", replace=replace or None)
    if dialect == "clickhouse":
        engine = exp.EngineProperty(this=exp.var("Memory"))
        create.set("properties", exp.Properties(expressions=[engine]))
    statements = (
        []
        if replace
        else [exp.Drop(tables=[target.copy()], kind="TABLE", exists=True).sql(dialect)]
    )
    statements.append(create.sql(dialect))
    if table.rows:
        values = exp.values([tuple(literal(v) for v in row) for row in table.rows])
        columns = [column_identifier(column) for column in table.names]
        insert = exp.Insert(
            this=exp.Schema(this=target.copy(), expressions=columns), expression=values
        )
        statements.append(insert.sql(dialect))
    return statements


class Engine:
    """One engine, open for the test session."""

    name = ""
    dialect = ""  # the dialect its own DDL is written in

    def execute(self, sql: str) -> None:
        self.query(sql)

    def query(self, sql: str) -> Result:
        raise NotImplementedError

    def load(self, name: str | exp.Table, table: Table) -> None:
        for statement in create_statements(name, table, self.dialect):
            self.execute(statement)

    def close(self) -> None:
        """Closes connections; servers are stopped by their own fixture."""


# in-process engines ---------------------------------------------------------------------------


class DuckDBEngine(Engine):
    name = dialect = "duckdb"

    def __init__(self) -> None:
        import duckdb

        self.connection = duckdb.connect()

    def query(self, sql: str) -> Result:
        cursor = self.connection.execute(sql)
        if cursor.description is None:
            return [], []
        return [d[0] for d in cursor.description], [tuple(r) for r in cursor.fetchall()]

    def close(self) -> None:
        self.connection.close()


class SQLiteEngine(Engine):
    name = dialect = "sqlite"

    def __init__(self) -> None:
        import sqlite3

        self.connection = sqlite3.connect(":memory:", isolation_level=None)

    @staticmethod
    def missing() -> str | None:
        import sqlite3

        if sqlite3.sqlite_version_info < (3, 25):
            return f"SQLite {sqlite3.sqlite_version} has no window functions (3.25+)"
        with contextlib.closing(sqlite3.connect(":memory:")) as connection:
            try:
                connection.execute("SELECT LOG(2, 8), POWER(2, 3)")
            except sqlite3.OperationalError:
                return "this SQLite build lacks the math functions (SQLITE_ENABLE_MATH_FUNCTIONS)"
        return None

    def query(self, sql: str) -> Result:
        cursor = self.connection.execute(sql)
        if cursor.description is None:
            return [], []
        return [d[0] for d in cursor.description], [tuple(r) for r in cursor.fetchall()]

    def close(self) -> None:
        self.connection.close()


class DataFusionEngine(Engine):
    """DataFusion has no sqlglot dialect of its own; it reads the postgres dialect."""

    name = "datafusion"
    dialect = "postgres"

    def __init__(self) -> None:
        import datafusion

        self.context = datafusion.SessionContext()

    def query(self, sql: str) -> Result:
        table = self.context.sql(sql).to_arrow_table()
        rows = table.to_pylist()
        return list(table.column_names), [tuple(row.values()) for row in rows]

    def load(self, name: str | exp.Table, table: Table) -> None:
        # DataFusion's DROP TABLE IF EXISTS needs no table; CREATE needs no storage options.
        for statement in create_statements(name, table, self.dialect):
            self.query(statement)


class ClickHouseEngine(Engine):
    """ClickHouse embedded (chdb); tables are native: non-Nullable columns where possible."""

    name = "chdb"
    dialect = "clickhouse"

    def __init__(self) -> None:
        from chdb import session

        self.path = tempfile.mkdtemp(prefix="sqlmetrics-chdb-")  # shared with chdb.dbapi
        self.session = session.Session(self.path)

    def query(self, sql: str) -> Result:
        frame = self.session.query(sql, "DataFrame")
        if frame is None or not hasattr(frame, "columns"):
            return [], []
        columns = [str(c) for c in frame.columns]
        rows = [tuple(None if _is_nan(v) else v for v in row) for row in frame.itertuples(False)]
        return columns, rows

    def execute(self, sql: str) -> None:
        self.session.query(sql)

    def load(self, name: str | exp.Table, table: Table) -> None:
        for statement in create_statements(name, table, self.dialect, nullable_types=False):
            self.execute(statement)

    def close(self) -> None:
        self.session.close()
        shutil.rmtree(self.path, ignore_errors=True)


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and value != value


# The tests' inputs are a few rows, and an every-metric query is hundreds of stages: Spark's
# machinery for large inputs costs far more than the rows here (docs/benchmark.md, "The test
# suite's time"). Whole-stage code generation compiles Java for each stage before running it
# once; without it, each operator still compiles its projections, filters and orderings (the
# codegen factory), which interpreted expressions replace (NO_CODEGEN, the mode Spark's own
# tests run too); the optimizer infers filters from every predicate and alias of a plan of
# hundreds of CTEs (constraint propagation), filters the few rows would not miss; adaptive
# execution re-plans after each shuffle stage; each shuffle partition is a task. None of them
# changes a result, which the tests check against DuckDB's. The tests of what a user's session
# does (the plan's shape, cancelling adaptive execution's stages) run with Spark's defaults
# instead (spark_defaults).
TINY_INPUT_SETTINGS = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.constraintPropagation.enabled": "false",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.shuffle.partitions": "1",
}


@contextlib.contextmanager
def spark_defaults(spark: Any) -> Iterator[None]:
    """Spark's own defaults in place of TINY_INPUT_SETTINGS, the session's settings after."""
    before = {key: spark.conf.get(key, None) for key in TINY_INPUT_SETTINGS}
    for key in TINY_INPUT_SETTINGS:
        spark.conf.unset(key)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def view_names(spark: Any) -> set[str]:
    """The session's views, temporary ones included. Not catalog.listTables(): it decodes its
    rows into Table objects through an encoder that interpreted expressions (NO_CODEGEN,
    TINY_INPUT_SETTINGS) cannot build, EXPRESSION_DECODING_FAILED on Spark 4."""
    return {row.viewName for row in spark.sql("SHOW VIEWS").collect()}


class SparkEngine(Engine):
    """Apache Spark in local mode; tables are temporary views over typed VALUES."""

    name = "spark"
    dialect = "spark"

    def __init__(self, warehouse: str) -> None:
        from pyspark.sql import SparkSession

        builder = SparkSession.builder.master("local[2]").appName("sqlmetrics-tests")
        for key, value in TINY_INPUT_SETTINGS.items():
            builder = builder.config(key, value)
        self.spark = (
            builder.config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.default.parallelism", "2")
            .config("spark.sql.warehouse.dir", warehouse)
            .config("spark.sql.session.timeZone", "UTC")
            # One JVM runs every Spark test of a run (their xdist group), ~30,000 jobs: with
            # the default 1 GB heap and the status of the last 1,000 jobs, stages and queries
            # kept, it ran out of memory (CI, AGGREGATE_OUT_OF_MEMORY, then a dead gateway).
            .config("spark.driver.memory", "2g")
            .config("spark.ui.retainedJobs", "50")
            .config("spark.ui.retainedStages", "50")
            .config("spark.sql.ui.retainedExecutions", "50")
            .getOrCreate()
        )
        self.spark.sparkContext.setLogLevel("ERROR")

    def query(self, sql: str) -> Result:
        frame = self.spark.sql(sql)
        return list(frame.columns), [tuple(row) for row in frame.collect()]

    def load(self, name: str | exp.Table, table: Table) -> None:
        columns = [
            exp.alias_(
                exp.cast(exp.column(f"col{i + 1}"), SQL_TYPES[kind]), column_identifier(column)
            )
            for i, (column, kind) in enumerate(table.columns)
        ]
        if table.rows:
            values = exp.values([tuple(literal(v) for v in row) for row in table.rows], "rows")
            body = exp.select(*columns).from_(values)
        else:
            nulls = [
                exp.alias_(exp.cast(exp.Null(), SQL_TYPES[kind]), column_identifier(column))
                for column, kind in table.columns
            ]
            body = exp.select(*nulls).where(exp.false())
        view = exp.Create(
            this=table_node(name, self.dialect),
            kind="VIEW",
            replace=True,
            expression=body,
            properties=exp.Properties(expressions=[exp.TemporaryProperty()]),
        )
        self.execute(view.sql(self.dialect))

    def close(self) -> None:
        self.spark.stop()


# fakesnow: Snowflake syntax on DuckDB, in its own virtual environment ---------------------------


FAKESNOW_RUNNER = Path(__file__).resolve().parent / "fakesnow_runner.py"
DEFAULT_FAKESNOW_PYTHON = REPO / ".venv" / "fakesnow" / "bin" / "python"


DEFAULT_DBT = REPO / ".venv-dbt" / "bin" / "dbt"


def dbt_executable() -> Path | None:
    """dbt-core with dbt-duckdb and dbt-postgres, in a venv of its own (make dbt)."""
    configured = os.environ.get("SQLMETRICS_DBT")
    candidate = Path(configured) if configured else DEFAULT_DBT
    return candidate if candidate.exists() else None


def fakesnow_python() -> Path | None:
    configured = os.environ.get("SQLMETRICS_FAKESNOW_PYTHON")
    candidate = Path(configured) if configured else DEFAULT_FAKESNOW_PYTHON
    return candidate if candidate.exists() else None


class FakesnowEngine(Engine):
    """A fakesnow process fed one JSON request a line (it pins its own sqlglot and duckdb)."""

    name = "fakesnow"
    dialect = "snowflake"

    def __init__(self, python: Path) -> None:
        self.process = subprocess.Popen(
            [str(python), str(FAKESNOW_RUNNER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.query("SELECT 1")

    def load(self, name: str | exp.Table, table: Table) -> None:
        # fakesnow's DROP TABLE answers with a status built by pasting the name into SQL text,
        # which a quote in the name breaks: CREATE OR REPLACE needs no DROP.
        for statement in create_statements(name, table, self.dialect, replace=True):
            self.execute(statement)

    def query(self, sql: str) -> Result:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"sql": sql}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the fakesnow runner exited with {self.process.wait()}")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"fakesnow: {answer['error']}")
        return answer["columns"], [tuple(row) for row in answer["rows"]]

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# servers --------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _as_user(user: str, command: Sequence[str]) -> list[str]:
    """``command`` run as ``user`` when we are root (the servers refuse root)."""
    if os.geteuid() == 0:
        return ["runuser", "-u", user, "--", *command]
    return list(command)


def _owned_tempdir(prefix: str, user: str) -> Path:
    """A fresh directory in the system temp dir, owned by ``user`` when we are root."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    if os.geteuid() == 0:
        shutil.chown(path, user, user)
    return path


def postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version_key)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _version_key(path: str) -> tuple[int, ...]:
    parts = Path(path).parts
    return tuple(int(p) for p in parts if p.isdigit())


@dataclass
class PostgresServer:
    """A PostgreSQL server on 127.0.0.1 with a throwaway data dir, stopped by its pid."""

    root: Path
    port: int
    binaries: Path

    @property
    def dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"

    @staticmethod
    def start() -> PostgresServer:
        binaries = postgres_bin()
        if binaries is None:
            raise RuntimeError("no PostgreSQL binaries (initdb) found")
        root = _owned_tempdir("sqlmetrics-pg-", "postgres")
        server = PostgresServer(root, free_port(), binaries)
        data = root / "data"
        initdb = [str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]
        initdb += ["-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]
        subprocess.run(_as_user("postgres", initdb), check=True, capture_output=True)
        options = f"-c listen_addresses=127.0.0.1 -p {server.port} -k {root} -c fsync=off "
        options += "-c synchronous_commit=off -c full_page_writes=off"
        start = [str(binaries / "pg_ctl"), "-D", str(data), "-l", str(root / "server.log")]
        start += ["-w", "-t", "60", "-o", options, "start"]
        subprocess.run(_as_user("postgres", start), check=True, capture_output=True)
        return server

    def stop(self) -> None:
        pid_file = self.root / "data" / "postmaster.pid"
        if pid_file.exists():
            pid = int(pid_file.read_text().split()[0])
            _stop_pid(pid)
        shutil.rmtree(self.root, ignore_errors=True)


def _stop_pid(pid: int, timeout: float = 30) -> None:
    """SIGTERM to one process we started, then wait for it to go (SIGKILL after timeout)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, 15)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, 9)


class PostgresEngine(Engine):
    name = "postgres"
    dialect = "postgres"

    def __init__(self, dsn: str) -> None:
        import psycopg

        self.dsn = dsn
        self.connection = psycopg.connect(dsn, autocommit=True)

    def query(self, sql: str) -> Result:
        with self.connection.cursor() as cursor:
            cursor.execute(sql.encode("utf-8"))  # bytes: no %-placeholders read
            if cursor.description is None:
                return [], []
            return [d.name for d in cursor.description], [tuple(r) for r in cursor.fetchall()]

    def close(self) -> None:
        self.connection.close()


def mariadb_binaries() -> tuple[str, str] | None:
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/bin"])
    server = shutil.which("mariadbd", path=path) or shutil.which("mysqld", path=path)
    install = shutil.which("mariadb-install-db", path=path)
    install = install or shutil.which("mysql_install_db", path=path)
    return (server, install) if server and install else None


@dataclass
class MariaDBServer:
    """A MariaDB server on 127.0.0.1 with a throwaway data dir, stopped by its pid."""

    root: Path
    port: int
    process: subprocess.Popen[bytes]

    @staticmethod
    def start() -> MariaDBServer:
        binaries = mariadb_binaries()
        if binaries is None:
            raise RuntimeError("no MariaDB server binaries (mariadbd, mariadb-install-db) found")
        server_bin, install = binaries
        user = "mysql" if os.geteuid() == 0 else None
        root = _owned_tempdir("sqlmetrics-mariadb-", user) if user else Path(tempfile.mkdtemp())
        data = root / "data"
        setup = [install, "--no-defaults", f"--datadir={data}", "--skip-test-db"]
        setup += ["--auth-root-authentication-method=normal", "--skip-name-resolve"]
        setup += [f"--user={user}"] if user else []
        subprocess.run(setup, check=True, capture_output=True)
        port = free_port()
        command = [server_bin, "--no-defaults", f"--datadir={data}", f"--port={port}"]
        command += [f"--socket={root / 'mysqld.sock'}", f"--pid-file={root / 'mysqld.pid'}"]
        command += ["--bind-address=127.0.0.1", "--skip-name-resolve", "--skip-log-bin"]
        command += ["--innodb-buffer-pool-size=64M", "--innodb-flush-log-at-trx-commit=0"]
        command += [f"--log-error={root / 'error.log'}"] + ([f"--user={user}"] if user else [])
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        server = MariaDBServer(root, port, process)
        deadline = time.monotonic() + 60
        while True:
            try:
                MariaDBEngine("127.0.0.1", port, "root").close()
                return server
            except Exception:
                if process.poll() is not None or time.monotonic() > deadline:
                    server.stop()
                    log = (root / "error.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"MariaDB did not start:\n{log}") from None
                time.sleep(0.2)

    def stop(self) -> None:
        if self.process.poll() is None:
            _stop_pid(self.process.pid)
        self.process.wait()
        shutil.rmtree(self.root, ignore_errors=True)


class MariaDBEngine(Engine):
    name = "mariadb"
    dialect = "mysql"
    database = "sqlmetrics_tests"

    def __init__(self, host: str, port: int, user: str, password: str = "") -> None:
        import pymysql

        self.connection = pymysql.connect(
            host=host, port=port, user=user, password=password, autocommit=True, charset="utf8mb4"
        )
        self.execute(f"CREATE DATABASE IF NOT EXISTS {self.database}")
        self.execute(f"USE {self.database}")

    def query(self, sql: str) -> Result:
        with self.connection.cursor() as cursor:
            cursor.execute(sql)
            if cursor.description is None:
                return [], []
            return [d[0] for d in cursor.description], [tuple(r) for r in cursor.fetchall()]

    def close(self) -> None:
        self.connection.close()


# availability ---------------------------------------------------------------------------------


def _module(name: str) -> str | None:
    return None if find_spec(name) else f"the Python package {name!r} is not installed"


def unavailable(engine: str) -> str | None:
    """Why ``engine`` cannot run here, or None. Cheap: no engine is started."""
    if engine in ("duckdb", "roundtrip"):
        return None
    if engine == "sqlite":
        return SQLiteEngine.missing()
    if engine == "datafusion":
        return _module("datafusion")
    if engine == "chdb":
        return _module("chdb")
    if engine == "spark":
        java = os.environ.get("JAVA_HOME") or shutil.which("java")
        return _module("pyspark") or (None if java else "no Java runtime (java) for Spark")
    if engine == "fakesnow":
        if fakesnow_python() is None:
            return (
                "no fakesnow virtual environment: set SQLMETRICS_FAKESNOW_PYTHON or run "
                "make engines"
            )
        return None
    if engine == "dbt":
        if dbt_executable() is None:
            return (
                "no dbt virtual environment: set SQLMETRICS_DBT (a dbt executable) or run make dbt"
            )
        return None
    if engine == "postgres":
        if os.environ.get("SQLMETRICS_POSTGRES_DSN"):
            return _module("psycopg")
        return _module("psycopg") or (
            None if postgres_bin() else "no PostgreSQL server: set SQLMETRICS_POSTGRES_DSN"
        )
    if engine == "mariadb":
        if os.environ.get("SQLMETRICS_MYSQL_HOST"):
            return _module("pymysql")
        return _module("pymysql") or (
            None if mariadb_binaries() else "no MariaDB server: set SQLMETRICS_MYSQL_HOST"
        )
    return f"unknown engine {engine!r}"


@contextlib.contextmanager
def opened(engine: str, scratch: Path) -> Iterator[Engine]:
    """The engine, started (with its server when none is configured) and closed after."""
    server: PostgresServer | MariaDBServer | None = None
    instance: Engine
    try:
        if engine == "duckdb" or engine == "roundtrip":
            instance = DuckDBEngine()
        elif engine == "sqlite":
            instance = SQLiteEngine()
        elif engine == "datafusion":
            instance = DataFusionEngine()
        elif engine == "chdb":
            instance = ClickHouseEngine()
        elif engine == "spark":
            instance = SparkEngine(str(scratch / "spark-warehouse"))
        elif engine == "fakesnow":
            python = fakesnow_python()
            assert python is not None
            instance = FakesnowEngine(python)
        elif engine == "postgres":
            dsn = os.environ.get("SQLMETRICS_POSTGRES_DSN")
            if not dsn:
                server = PostgresServer.start()
                dsn = server.dsn
            instance = PostgresEngine(dsn)
        elif engine == "mariadb":
            host = os.environ.get("SQLMETRICS_MYSQL_HOST")
            if host:
                port = int(os.environ.get("SQLMETRICS_MYSQL_PORT", "3306"))
                user = os.environ.get("SQLMETRICS_MYSQL_USER", "root")
                password = os.environ.get("SQLMETRICS_MYSQL_PASSWORD", "")
                instance = MariaDBEngine(host, port, user, password)
            else:
                server = MariaDBServer.start()
                instance = MariaDBEngine("127.0.0.1", server.port, "root")
        else:
            raise ValueError(engine)
        try:
            yield instance
        finally:
            instance.close()
    finally:
        if server is not None:
            server.stop()
