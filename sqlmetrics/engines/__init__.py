"""Where evaluate runs: one small engine per kind of connection (see base.Engine).

``open_engine`` picks it from what the caller passed, without importing a driver the caller
does not use: DuckDB (the default, and a DuckDB connection), a SparkSession, a SQLAlchemy
Engine or Connection, or a PEP 249 (DB-API) connection of a driver whose database it
knows (engines/drivers.py), with ``dialect=`` checked against that database.
"""

from __future__ import annotations

from sqlmetrics.engines.base import Engine, Query, Source
from sqlmetrics.errors import SqlmetricsError


def _module_of(value: object) -> str:
    """The top package of a value's type, without importing it (DuckDB's is _duckdb)."""
    return type(value).__module__.split(".")[0].lstrip("_")


def open_engine(
    connection: object = None,
    dialect: str | None = None,
    timeout: float | None = None,
    progress: bool = False,
) -> Engine:
    """The engine for ``connection`` (None: DuckDB in memory)."""
    module = _module_of(connection)
    if connection is None or module == "duckdb":
        if dialect not in (None, "duckdb"):
            raise SqlmetricsError(
                f"dialect={dialect!r} applies to a connection of another engine; DuckDB "
                "reads DuckDB SQL"
            )
        from sqlmetrics.engines.duckdb import DuckDBEngine

        return DuckDBEngine(connection, timeout=timeout, progress=progress)  # type: ignore[arg-type]
    if module == "pyspark":
        from sqlmetrics.engines.spark import SparkEngine

        return SparkEngine(connection, dialect=dialect, timeout=timeout, progress=progress)
    if module == "sqlalchemy":
        from sqlmetrics.engines.sqlalchemy import sqlalchemy_engine

        return sqlalchemy_engine(connection, dialect=dialect, timeout=timeout, progress=progress)
    if callable(getattr(connection, "cursor", None)):
        from sqlmetrics.engines.dbapi import DBAPIEngine
        from sqlmetrics.engines.drivers import checked_dialect, database_of

        # the driver's module names its database: dialect= must fit it
        chosen = checked_dialect(dialect, *database_of(connection))
        return DBAPIEngine(connection, dialect=chosen, timeout=timeout, progress=progress)
    raise SqlmetricsError(
        f"connection: cannot run queries through a {type(connection).__name__}; pass a DuckDB "
        "connection, a SQLAlchemy Engine or Connection, a DB-API connection or a SparkSession"
    )


__all__ = ["Engine", "Query", "Source", "open_engine"]
