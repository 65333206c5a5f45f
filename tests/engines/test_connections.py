"""evaluate(connection=...) on real engines: the same numbers, checks and diagnostics as DuckDB.

Each golden fixture and extra case of the engine matrix is loaded into the engine (tests/engines
/engines.py), then evaluated there through a user's own connection: a SQLAlchemy engine and a
raw psycopg connection on PostgreSQL, pymysql on MariaDB, sqlite3, and a SparkSession with
table names and with Spark DataFrames as the inputs. The summary, the per-user rows and the
diagnostics must equal DuckDB's evaluate on the same tables to 1e-9, with the same columns and
dtypes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pytest

import sqlmetrics
from tests.engines.cases import BAD_ROWS, TOLERANCE, Case, extra_cases, load_cases
from tests.engines.conftest import EnginePool
from tests.engines.engines import DuckDBEngine, Engine
from tests.engines.test_engines import loaded


@dataclass(frozen=True)
class Way:
    """One way a user connects: the engine that holds the tables and how evaluate is called."""

    id: str
    engine: str
    connect: Callable[[Engine], dict[str, Any]]  # evaluate's connection= and dialect=
    dataframes: bool = False  # the inputs as Spark DataFrames instead of table names


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


WAYS = [
    Way("postgres-sqlalchemy", "postgres", _sqlalchemy_postgres),
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
    ),
    Way("spark-tables", "spark", lambda engine: {"connection": engine.spark}),  # type: ignore[attr-defined]
    Way(
        "spark-dataframes",
        "spark",
        lambda engine: {"connection": engine.spark},  # type: ignore[attr-defined]
        dataframes=True,
    ),
]

CASES = [case for case in load_cases() + extra_cases() if case.name != BAD_ROWS]

# (way id, case name) -> why the engine cannot give DuckDB's numbers there (strict xfails).
KNOWN_GAPS: dict[tuple[str, str], str] = {}


def parameters() -> list[Any]:
    found = []
    for way in WAYS:
        for case in CASES:
            marks: list[Any] = [getattr(pytest.mark, way.engine)]
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
