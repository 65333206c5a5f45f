"""Which database a connection reaches, read off its driver, so that ``dialect=`` is checked.

A wrong dialect is not always refused by the engine: SQLite runs PostgreSQL's SQL and gives
other numbers (its integer division), PostgreSQL runs SQLite's a few ulps away. So the dialect a
caller names must be the one of the database the driver reaches, or one derived from it in
sqlglot (Redshift from PostgreSQL, Databricks from Spark, Athena from Trino); where the driver
reaches one database only, its dialect is the default. A driver sqlmetrics does not know is
refused: nothing tells which SQL the connection speaks.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.render.dialects import DIALECTS, get_dialect


@dataclass(frozen=True)
class Database:
    """What a driver reaches: its name for messages, the sqlglot dialect of its SQL, and
    whether that is the only database the driver reaches (then ``dialect=`` may be left out)."""

    name: str
    dialect: str
    only: bool = True


_POSTGRES_WIRE = Database("PostgreSQL (or a database of its protocol)", "postgres", only=False)
_MYSQL_WIRE = Database("MySQL or MariaDB (or a database of their protocol)", "mysql", only=False)

# The driver's module (its top package, or a module of it) -> what it reaches.
DRIVERS: dict[str, Database] = {
    "sqlite3": Database("SQLite", "sqlite"),
    "psycopg": _POSTGRES_WIRE,
    "psycopg2": _POSTGRES_WIRE,
    "pg8000": _POSTGRES_WIRE,
    "redshift_connector": Database("Redshift", "redshift"),
    "pymysql": _MYSQL_WIRE,
    "MySQLdb": _MYSQL_WIRE,
    "mysql": _MYSQL_WIRE,  # mysql-connector-python
    "mariadb": _MYSQL_WIRE,
    "snowflake": Database("Snowflake", "snowflake"),
    "fakesnow": Database("Snowflake (fakesnow)", "snowflake"),
    "databricks": Database("Databricks", "databricks"),
    "trino": Database("Trino", "trino"),
    "prestodb": Database("Presto", "presto"),
    "pyathena": Database("Athena", "athena"),
    "pyhive.hive": Database("Hive or Spark", "hive", only=False),
    "pyhive.presto": Database("Presto", "presto"),
    "pyhive.trino": Database("Trino", "trino"),
    "clickhouse_connect": Database("ClickHouse", "clickhouse"),
    "clickhouse_driver": Database("ClickHouse", "clickhouse"),
    "chdb": Database("ClickHouse (chdb)", "clickhouse"),
    "google.cloud.bigquery": Database("BigQuery", "bigquery"),
    "oracledb": Database("Oracle", "oracle"),
    "cx_Oracle": Database("Oracle", "oracle"),
    "pymssql": Database("SQL Server", "tsql"),
    "teradatasql": Database("Teradata", "teradata"),
}


def database_of(connection: object) -> tuple[str, Database | None]:
    """The driver's module (for messages) and the database it reaches, from the modules of the
    connection's class and its bases (a subclass of sqlite3.Connection is sqlite3's); None for
    a driver sqlmetrics does not know."""
    for kind in type(connection).__mro__:
        module = kind.__module__
        for prefix in _prefixes(module):
            if prefix in DRIVERS:
                return prefix, DRIVERS[prefix]
    return f"{type(connection).__module__}.{type(connection).__qualname__}", None


def _prefixes(module: str) -> list[str]:
    """``a.b.c`` -> ``a.b.c``, ``a.b``, ``a``: the longest known name wins."""
    parts = module.split(".")
    return [".".join(parts[:n]) for n in range(len(parts), 0, -1)]


def fits(dialect: str, database: Database) -> bool:
    """Whether SQL of ``dialect`` is SQL of ``database``: its dialect or one derived from it."""
    return isinstance(get_dialect(dialect), type(get_dialect(database.dialect)))


def checked_dialect(dialect: str | None, driver: str, database: Database | None) -> str:
    """The dialect to write for a connection of ``driver``: ``dialect`` once checked against
    the database the driver reaches, or that database's own when the driver reaches it alone."""
    if dialect is not None:
        get_dialect(dialect)  # an unknown name is refused with the verified ones
    if database is None:
        raise SqlmetricsError(
            f"connection: sqlmetrics cannot tell which database a {driver} connection reaches, "
            f"so it cannot check that its SQL is {dialect or 'the dialect named'} (a wrong "
            "dialect gives wrong numbers, not an error). Pass a SQLAlchemy Engine instead, "
            "whose URL names the database: sqlalchemy.create_engine('mssql+pyodbc://', "
            "creator=lambda: connection), or a connection of a driver it knows: "
            f"{', '.join(sorted({name.split('.')[0] for name in DRIVERS}))}"
        )
    if dialect is None:
        if database.only:
            return database.dialect
        raise SqlmetricsError(
            f"connection: a {driver} connection reaches {database.name}; pass the dialect its "
            f"SQL follows with dialect= (e.g. dialect={database.dialect!r})"
        )
    if not fits(dialect, database):
        fitting = [name for name in DIALECTS if fits(name, database)] or [database.dialect]
        raise SqlmetricsError(
            f"connection: dialect={dialect!r} does not fit a {driver} connection, which reaches "
            f"{database.name}: pass {' or '.join(repr(name) for name in fitting)} (a wrong "
            "dialect gives wrong numbers, not an error)"
        )
    return dialect
