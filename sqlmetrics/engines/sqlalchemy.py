"""A SQLAlchemy Engine or Connection: the DB-API engine over its driver connection, with the
dialect read off SQLAlchemy's dialect name. An Engine lends a pooled connection, given back
when evaluate ends; a Connection is used as it is and left open."""

from __future__ import annotations

from typing import Any

from sqlmetrics.engines.dbapi import DBAPIEngine
from sqlmetrics.errors import SqlmetricsError

# SQLAlchemy's dialect names (engine.dialect.name) -> sqlglot's.
DIALECTS = {
    "postgresql": "postgres",
    "mysql": "mysql",
    "mariadb": "mysql",
    "sqlite": "sqlite",
    "mssql": "tsql",
    "oracle": "oracle",
    "snowflake": "snowflake",
    "bigquery": "bigquery",
    "redshift": "redshift",
    "trino": "trino",
    "presto": "presto",
    "awsathena": "athena",
    "databricks": "databricks",
    "hive": "hive",
    "clickhouse": "clickhouse",
    "clickhousedb": "clickhouse",
    "duckdb": "duckdb",
    "teradatasql": "teradata",
    "teradata": "teradata",
    "exasol": "exasol",
    "doris": "doris",
    "starrocks": "starrocks",
}


def dialect_of(name: str) -> str | None:
    """sqlglot's dialect for a SQLAlchemy dialect name, or None when sqlmetrics does not know
    it."""
    return DIALECTS.get(name)


def sqlalchemy_engine(
    bind: Any, dialect: str | None, timeout: float | None = None, progress: bool = False
) -> DBAPIEngine:
    import sqlalchemy

    if not isinstance(bind, (sqlalchemy.engine.Engine, sqlalchemy.engine.Connection)):
        raise SqlmetricsError(
            f"connection: a SQLAlchemy {type(bind).__name__} cannot run queries; pass an Engine "
            "(sqlalchemy.create_engine(url)) or a Connection"
        )
    name = bind.dialect.name
    chosen = dialect or dialect_of(name)
    if chosen is None:
        raise SqlmetricsError(
            f"connection: sqlmetrics does not know SQLAlchemy's dialect {name!r}; pass the "
            "sqlglot dialect its SQL follows with dialect= (e.g. dialect='postgres')"
        )
    if isinstance(bind, sqlalchemy.engine.Engine):
        proxy = bind.raw_connection()  # from the pool; closing it gives it back
        engine = _PooledEngine(proxy, chosen, timeout, progress, name)
        return engine
    driver = bind.connection.driver_connection
    return DBAPIEngine(
        bind.connection.dbapi_connection,
        chosen,
        timeout=timeout,
        progress=progress,
        driver=driver,
        name=f"{name} ({chosen})",
    )


class _PooledEngine(DBAPIEngine):
    """A connection lent by a SQLAlchemy Engine's pool, given back on close."""

    def __init__(
        self, proxy: Any, dialect: str, timeout: float | None, progress: bool, name: str
    ) -> None:
        super().__init__(
            proxy,
            dialect,
            timeout=timeout,
            progress=progress,
            driver=proxy.driver_connection,
            name=f"{name} ({dialect})",
        )
        self.proxy = proxy

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.proxy.close()
