"""A SQLAlchemy Engine or Connection: the DB-API engine over its driver connection, with the
dialect read off SQLAlchemy's dialect name. An Engine lends a pooled connection, given back
when evaluate ends; a Connection is used as it is and left open."""

from __future__ import annotations

from typing import Any

from sqlmetrics.engines.base import first_line
from sqlmetrics.engines.credentials import scrub, shown, url_secrets
from sqlmetrics.engines.dbapi import DBAPIEngine
from sqlmetrics.engines.drivers import Database, checked_dialect
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.render.dialects import get_dialect

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
    chosen = _checked_dialect(name, dialect)
    secrets = url_secrets(bind.engine.url)
    if isinstance(bind, sqlalchemy.engine.Engine):
        try:
            proxy = bind.raw_connection()  # from the pool; closing it gives it back
        except Exception as error:
            message = scrub(first_line(error), secrets)
            raise SqlmetricsError(f"cannot connect to {shown(bind.url)}: {message}") from None
        pooled = _PooledEngine(proxy, chosen, timeout, progress, name)
        pooled.secrets = secrets
        return pooled
    driver = bind.connection.driver_connection
    engine = DBAPIEngine(
        bind.connection.dbapi_connection,
        chosen,
        timeout=timeout,
        progress=progress,
        driver=driver,
        name=f"{name} ({chosen})",
    )
    engine.secrets = secrets
    return engine


def _checked_dialect(name: str, dialect: str | None) -> str:
    """The dialect for SQLAlchemy's dialect ``name``: its own, or ``dialect=`` where it fits
    (Redshift's SQL on a postgresql engine); a name sqlmetrics does not know needs
    ``dialect=``, which SQLAlchemy's name vouches for (it names the database)."""
    known = dialect_of(name)
    if known is not None:
        return checked_dialect(dialect, f"SQLAlchemy {name}", Database(name, known))
    if dialect is None:
        raise SqlmetricsError(
            f"connection: sqlmetrics does not know SQLAlchemy's dialect {name!r}; pass the "
            "sqlglot dialect its SQL follows with dialect= (e.g. dialect='postgres')"
        )
    get_dialect(dialect)  # an unknown name is refused with the verified ones
    return dialect


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


def engine_from_url(url: str) -> Any:
    """A SQLAlchemy Engine for a URL given on the command line; a missing SQLAlchemy or driver
    is one line naming what to install, and the password never shows in a message."""
    try:
        import sqlalchemy
    except ImportError:
        raise SqlmetricsError(
            "--connection needs SQLAlchemy: pip install 'sqlmetrics[sqlalchemy]' (and your "
            "warehouse's driver, e.g. psycopg, snowflake-sqlalchemy, sqlalchemy-bigquery)"
        ) from None
    try:
        parsed = sqlalchemy.make_url(url)
    except Exception:
        raise SqlmetricsError(
            "--connection is not a SQLAlchemy URL (like postgresql+psycopg://user@host/db, "
            "snowflake://user@account/db/schema, bigquery://project/dataset)"
        ) from None
    try:
        return sqlalchemy.create_engine(parsed)
    except Exception as error:  # NoSuchModuleError, ModuleNotFoundError of the driver...
        message = scrub(first_line(error), url_secrets(parsed))
        raise SqlmetricsError(
            f"--connection {shown(parsed)}: {message} (is the dialect's driver installed?)"
        ) from None
