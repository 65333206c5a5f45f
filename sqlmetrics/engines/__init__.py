"""Where evaluate runs: one small engine per kind of connection (see base.Engine).

``open_engine`` picks it from what the caller passed, without importing a driver the caller
does not use: DuckDB (the default, and a DuckDB connection), a SparkSession, a SQLAlchemy
Engine or Connection, or a PEP 249 (DB-API) connection of a driver whose database it
knows (engines/drivers.py), with ``dialect=`` checked against that database.
``connection_of`` names the SparkSession that inputs given as Spark DataFrames belong to, so
that they are evaluated where their rows are.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlmetrics.engines.base import Engine, Query, Source
from sqlmetrics.errors import SqlmetricsError


def _module_of(value: object) -> str:
    """The top package of a value's type, without importing it (DuckDB's is _duckdb)."""
    return type(value).__module__.split(".")[0].lstrip("_")


def _is_spark_frame(value: object) -> bool:
    """A pyspark DataFrame (classic or Spark Connect), told without importing pyspark."""
    return _module_of(value) == "pyspark" and hasattr(value, "sparkSession")


def _described(value: object) -> str:
    return f"the path or table name {value!r}" if isinstance(value, str) else type(value).__name__


def connection_of(connection: object, inputs: Mapping[str, object]) -> object:
    """The connection evaluate runs through: ``connection`` if given; else the SparkSession
    of inputs given as Spark DataFrames, which are evaluated there as if ``connection=``
    named it (read into DuckDB, every row would travel through Spark's driver, past its
    spark.driver.maxResultSize); else None (DuckDB). A Spark DataFrame beside an input of
    another kind, or of another session, is refused: one query reads them all."""
    if connection is not None:
        return connection
    given = {role: value for role, value in inputs.items() if value is not None}
    frames = {role: value for role, value in given.items() if _is_spark_frame(value)}
    if not frames:
        return None
    for role, value in given.items():
        if role not in frames:
            raise SqlmetricsError(
                f"{next(iter(frames))} is a Spark DataFrame but {role} is "
                f"{_described(value)}: one query reads every input, in Spark or in DuckDB. "
                "Give Spark every input (spark.createDataFrame(frame) for a pandas DataFrame, "
                "spark.read.parquet(path) for a file, table names with connection=spark), or "
                "none (frame.toPandas() brings a small Spark DataFrame's rows here)"
            )
    sessions = {id(frame.sparkSession): frame.sparkSession for frame in frames.values()}  # type: ignore[attr-defined]
    if len(sessions) > 1:
        raise SqlmetricsError(
            f"{' and '.join(frames)} are Spark DataFrames of different SparkSessions; one query "
            "reads every input: build them in the same session"
        )
    return next(iter(sessions.values()))


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


__all__ = ["Engine", "Query", "Source", "connection_of", "open_engine"]
