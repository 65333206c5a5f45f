"""DuckDB: files, globs, folders, DataFrames, Arrow tables and tables of a DuckDB connection.

Files are queried in place (``read_parquet('…')`` as a string literal), never loaded into pandas.
DuckDB alone gets its own plans (the top-k aggregate, sorted lists) and passes over the users
under a memory limit (duckdb_passes.py).
"""

from __future__ import annotations

import functools
import glob
import heapq
import itertools
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp
from sqlglot.errors import ParseError

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose.inputs import Inputs, Options
from sqlmetrics.compose.plan import lists_stage
from sqlmetrics.engines import duckdb_passes, duckdb_schemas
from sqlmetrics.engines.base import Engine, Query, Source, first_line
from sqlmetrics.engines.duckdb_limits import refuse_too_wide
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.io import trec_reader
from sqlmetrics.io.database import local_database
from sqlmetrics.io.file_state import FileStates

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")
CSV_SUFFIXES = (".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz", ".csv.zst")


class _Names:
    """Names for the inputs registered on a caller's connection: unique while in use (two calls
    may share a connection), handed out again once freed, so that a call like the one before
    composes the same SQL and reuses it from duckdb_passes._query_sql's cache."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._free: dict[str, list[int]] = {}
        self._next: dict[str, itertools.count[int]] = {}

    def take(self, role: str) -> str:
        with self._lock:
            free = self._free.setdefault(role, [])
            number = (
                heapq.heappop(free)
                if free
                else next(self._next.setdefault(role, itertools.count(1)))
            )
        return f"sqlmetrics_{role}_{number}"

    def give_back(self, name: str) -> None:
        role, _, number = name.removeprefix("sqlmetrics_").rpartition("_")
        with self._lock:
            heapq.heappush(self._free.setdefault(role, []), int(number))


_names = _Names()


@functools.cache
def _database_memory_limit() -> float:
    """The process's database's memory limit, read once: DuckDB sets it when the database is
    made, and sqlmetrics never changes it (a caller's connection is read at each call)."""
    cursor = local_database().cursor()
    try:
        return duckdb_passes.memory_limit(cursor)
    finally:
        cursor.close()


@functools.cache
def _cursor_progress_bar() -> bool:
    """Whether a new cursor of the process's database shows DuckDB's progress bar (a setting
    of each connection, which the database cannot change for them all)."""
    cursor = local_database().cursor()
    try:
        rows = cursor.execute("SELECT current_setting('enable_progress_bar')").fetchall()
    finally:
        cursor.close()
    return bool(rows and rows[0][0] in (True, "true"))


class DuckDBEngine(Engine):
    """The caller's DuckDB connection (one call at a time: sharing.exclusive), or a cursor of
    one in-memory database per process: a new database costs ~10 ms, a cursor microseconds;
    its registrations and settings are its own."""

    name = dialect = "duckdb"

    def __init__(
        self,
        connection: duckdb.DuckDBPyConnection | None = None,
        timeout: float | None = None,
        progress: bool = False,
    ) -> None:
        super().__init__(timeout=timeout, progress=progress)
        self.own_connection = connection is None
        if connection is not None:
            # the caller's connection may be shared by threads: one call at a time runs on it
            self.hold(connection)
        self.connection = connection if connection is not None else local_database().cursor()
        self.registered: list[str] = []
        self.files = FileStates()
        try:
            # a cursor of our own starts from the database's setting and is closed afterwards:
            # nothing to read back, nor to set when it is already as asked
            self.progress_setting = None
            if not self.own_connection:
                self.progress_setting = self._setting("enable_progress_bar")
            if not self.own_connection or progress != _cursor_progress_bar():
                self._set_progress_bar(progress)
        except BaseException:
            self.release()
            raise

    def _set_progress_bar(self, on: bool) -> None:
        setting = exp.EQ(this=exp.column("enable_progress_bar"), expression=exp.Boolean(this=on))
        self.connection.execute(exp.Set(expressions=[exp.SetItem(this=setting)]).sql("duckdb"))

    def _setting(self, name: str) -> Any:
        rows = self.connection.execute("SELECT current_setting(?)", [name]).fetchall()
        return rows[0][0] if rows else None

    def fetch(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        cursor = self.connection.execute(sql)
        names = [str(column[0]) for column in cursor.description or ()]
        return names, [tuple(row) for row in cursor.fetchall()]

    def sql(self, query: exp.Expr, copy: bool = True) -> str:
        refuse_too_wide(query)
        return query.sql("duckdb", copy=copy)

    def is_nan(self, column: exp.Expr) -> exp.Expr:
        """DuckDB 2.0 answers ``WHERE isnan(x)`` over Parquet from column statistics that do
        not record NaN, and finds nothing; comparing text does not."""
        text = exp.cast(column, "VARCHAR")
        return exp.In(
            this=text, expressions=[exp.Literal.string("nan"), exp.Literal.string("-nan")]
        )

    def cancel(self) -> None:
        self.connection.interrupt()

    def inputs_changed(self) -> str | None:
        return self.files.changed()

    def close(self) -> None:
        if self.own_connection:
            self.connection.close()
            return
        # The caller's connection: what evaluate registered goes, and the setting comes back.
        for name in self.registered:
            self.connection.unregister(name)
            _names.give_back(name)
        if self.progress_setting is not None:
            self._set_progress_bar(self.progress_setting in (True, "true"))

    def bind(self, value: object, role: str) -> Source:
        """A path, glob, directory, DataFrame, Arrow table, Query or table name, as a
        relation."""
        relation: exp.Expr
        # On our own cursor (registrations and temporary views are its own) the inputs get the
        # same names on every call, so the composed SQL is reused from _query_sql's cache; on
        # the caller's connection, names from _names, the same again once a call has closed.
        name = f"sqlmetrics_{role}"
        view: exp.Expr | None = None
        is_csv = False
        if isinstance(value, Query):
            relation = self._users_query(value, role, name)
        elif isinstance(value, trec_reader.TrecFile) and self.own_connection:
            # parsed once into a table of this database (evaluate loads it first)
            relation = trec_reader.relation(trec_reader.load(value))
        elif isinstance(value, (str, os.PathLike)):
            relation = _path_or_table(os.fspath(value), role, self.own_connection)
            is_csv = relation.sql("duckdb").lower().startswith("read_csv")
            read = relation.find(exp.Literal)  # read_parquet's or read_csv's pattern
            if isinstance(relation, exp.Func) and read is not None and read.is_string:
                self.files.watch(role, read.this)
            if self.own_connection:
                view = exp.Create(
                    this=exp.to_table(name),
                    kind="VIEW",
                    replace=True,
                    expression=exp.select("*").from_(relation),
                    properties=exp.Properties(expressions=[exp.TemporaryProperty()]),
                )
                relation = exp.to_table(name)
        else:
            if isinstance(value, trec_reader.TrecFile):  # the caller's connection: its rows
                value = trec_reader.frame(trec_reader.load(value))
            relation = self._registered(value, role, name)
        schema = duckdb_schemas.schema_key(value)
        columns = None if schema is None else duckdb_schemas.known(schema)
        if columns is not None:
            return Source(role, relation, columns, origin=value)
        columns = self._probed(relation, view, role, value)
        if schema is not None:
            duckdb_schemas.remember(schema, columns)
        # A CSV file with a header and no rows reads as text columns: say it is empty rather
        # than that its score is not a number.
        if is_csv and all(kind == "VARCHAR" for kind in columns.values()) and self._empty(relation):
            raise SqlmetricsError(f"{role}: no rows to evaluate; check the file or filter")
        return Source(role, relation, columns, origin=value)

    def _probed(
        self, relation: exp.Expr, view: exp.Expr | None, role: str, value: object
    ) -> dict[str, str]:
        """The relation's column types, read from DuckDB (after creating its view, if any)."""
        probe = exp.select("*").from_(relation.copy()).limit(0)
        try:
            if view is not None:
                self.connection.execute(view.sql("duckdb"))
            description = self.connection.execute(probe.sql("duckdb")).description
        except Exception as error:
            raise SqlmetricsError(f"{role}: cannot read {value!r}: {first_line(error)}") from error
        return {str(name): str(kind).upper() for name, kind, *_ in description}

    def _registered(self, value: object, role: str, name: str) -> exp.Expr:
        """A DataFrame, an Arrow table or a DuckDB relation registered under a name of its
        own."""
        if not self.own_connection:
            name = _names.take(role)
        try:
            self.connection.register(name, value)
        except Exception as error:  # duckdb raises several types for unsupported objects
            if not self.own_connection:
                _names.give_back(name)
            raise SqlmetricsError(
                f"{role}: cannot read a {type(value).__name__}; pass a pandas DataFrame, a "
                "pyarrow Table, a Parquet or CSV path, or a table name in `connection`"
            ) from error
        self.registered.append(name)
        return exp.to_table(name)

    def _users_query(self, value: Query, role: str, name: str) -> exp.Expr:
        """A user's SELECT as a view of its own: the composed query reads it by name, so none
        of its CTEs (``ranked``, ``judged``...) can stand for a table the SELECT reads."""
        query = value.parsed("duckdb", role).sql("duckdb")
        try:
            relation = self.connection.sql(query)
        except Exception as error:
            raise SqlmetricsError(
                f"{role}: cannot read {value.sql!r}: {first_line(error)}"
            ) from error
        return self._registered(relation, role, name)

    def _empty(self, relation: exp.Expr) -> bool:
        first = exp.select("1").from_(relation.copy()).limit(1)
        return not self.connection.execute(first.sql("duckdb")).fetchall()

    def evaluate(
        self,
        requests: Sequence[MetricRequest],
        inputs: Inputs,
        options: Options,
        per_user: bool,
        recommendations: Source | None = None,
    ) -> tuple[pd.DataFrame, pd.DataFrame, int]:
        # Counted (a query of its own on Parquet) only for what reads it: the score floor of
        # the top-k aggregate and the passes of a plan that sorts every row.
        top_k = lists_stage(requests, options, "duckdb") == "top_lists"
        reads_rows = top_k or duckdb_passes.sorts_every_row(requests, options)
        rows = None
        if reads_rows and recommendations is not None:
            rows = known_rows(recommendations.origin, inputs.recommendations, self.connection)
        connection = self.connection

        limit = _database_memory_limit() if self.own_connection else None

        def run() -> tuple[pd.DataFrame, pd.DataFrame, int]:
            floor = duckdb_passes.score_floor(connection, requests, inputs, options, rows)
            return duckdb_passes.run(
                connection, requests, inputs, options, per_user, floor=floor, rows=rows, limit=limit
            )

        return self.guarded(run)

    def metrics_only(
        self, requests: Sequence[MetricRequest], inputs: Inputs, options: Options, per_user: bool
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """The values without the diagnostics (duckdb_passes.metrics_only) as column names and
        rows, or, where DuckDB runs out of memory in one query, evaluate's values from its
        passes over the users."""
        connection = self.connection
        found = self.guarded(
            lambda: duckdb_passes.metrics_only(connection, requests, inputs, options, per_user)
        )
        if found is None:
            frame = self.evaluate(requests, inputs, options, per_user)[0]
            return [str(name) for name in frame.columns], list(
                frame.itertuples(index=False, name=None)
            )
        return found

    def score_floor(
        self,
        requests: Sequence[MetricRequest],
        inputs: Inputs,
        options: Options,
        recommendations: Source | None,
    ) -> float | None:
        """evaluate's floor for the top-k aggregate (duckdb_passes.score_floor), for the
        statistics query (sqlmetrics/stats/query.py), which composes its own."""
        return _floor(self, requests, inputs, options, recommendations)


def _floor(
    engine: DuckDBEngine,
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    recommendations: Source | None,
) -> float | None:
    rows = None
    if recommendations is not None:
        rows = known_rows(recommendations.origin, inputs.recommendations, engine.connection)
    connection = engine.connection
    return engine.guarded(
        lambda: duckdb_passes.score_floor(connection, requests, inputs, options, rows)
    )


def known_rows(
    value: object, relation: exp.Expr, connection: duckdb.DuckDBPyConnection
) -> int | None:
    """The number of rows where it costs nothing: a pandas or polars DataFrame's or an Arrow
    table's length, a local Parquet input's (from the file footers). None for CSV files, tables,
    relations and remote files, which it would mean reading."""
    if not isinstance(value, (str, os.PathLike)):
        if type(value).__module__.split(".")[0] not in ("pandas", "polars", "pyarrow"):
            return None
        try:
            return len(value)  # type: ignore[arg-type]
        except TypeError:  # a lazy frame or a stream
            return None
    path = os.fspath(value)
    if "://" in path or not (path.lower().endswith(PARQUET_SUFFIXES) or os.path.isdir(path)):
        return None
    import duckdb

    count = exp.select(exp.func("COUNT", exp.Star())).from_(relation.copy())
    try:
        row = connection.execute(count.sql("duckdb")).fetchone()
    except duckdb.Error:  # only a speed hint: the query itself reports what is wrong
        return None
    return int(row[0]) if row else None


def _folder(text: str, escaped: str, role: str) -> exp.Expr:
    """A folder's Parquet files, or its CSV files; a folder with both is refused rather than
    read in part."""
    parquet = os.path.join(escaped, "**", "*.parquet")
    csv = os.path.join(escaped, "**", "*.csv")
    found = {
        name: glob.glob(pattern, recursive=True)
        for name, pattern in (("parquet", parquet), ("csv", csv))
    }
    if found["parquet"] and found["csv"]:
        raise SqlmetricsError(
            f"{role}: folder {text!r} holds both Parquet ({len(found['parquet'])}) and CSV "
            f"({len(found['csv'])}) files; sqlmetrics reads one format at a time: pass a glob "
            f"such as {os.path.join(text, '**', '*.parquet')!r}"
        )
    if found["parquet"]:
        return exp.func("read_parquet", exp.Literal.string(parquet))
    if found["csv"]:
        return exp.func("read_csv", exp.Literal.string(csv))
    raise SqlmetricsError(f"{role}: folder {text!r} holds no .parquet or .csv files")


def _path_or_table(text: str, role: str, own_connection: bool) -> exp.Expr:
    """``text`` as DuckDB reads it: a folder's files, a Parquet or CSV file or glob, or a table
    of the connection (refused on sqlmetrics' own connection, which has none)."""
    # An existing path is a path, brackets and all: escaped, as DuckDB globs every path it reads.
    literal = glob.escape(text) if os.path.exists(text) else None
    is_glob = literal is None and any(char in text for char in "*?[")
    if os.path.isdir(text):
        return _folder(text, literal or text, role)
    if text.lower().endswith(PARQUET_SUFFIXES + CSV_SUFFIXES) or is_glob:
        return _files(text, literal, is_glob, role)
    if literal is not None:
        raise _neither(text, role)
    return _table(text, role, own_connection)


def _files(text: str, literal: str | None, is_glob: bool, role: str) -> exp.Expr:
    """A Parquet or CSV file, or a glob of them, read by its reader; a local one must exist
    (``literal``: the existing path, escaped)."""
    lowered = text.lower()
    if "://" not in text and not glob.glob(literal or text, recursive=True):
        what = "no file matches" if is_glob else "no such file"
        raise SqlmetricsError(f"{role}: {what} {text!r}")
    if not lowered.endswith(PARQUET_SUFFIXES + CSV_SUFFIXES):
        raise _neither(text, role)
    reader = "read_csv" if lowered.endswith(CSV_SUFFIXES) else "read_parquet"
    return exp.func(reader, exp.Literal.string(literal or text))


def _neither(text: str, role: str) -> SqlmetricsError:
    return SqlmetricsError(
        f"{role}: {text!r} is neither Parquet ({', '.join(PARQUET_SUFFIXES)}) "
        f"nor CSV ({', '.join(CSV_SUFFIXES)})"
    )


def _table(text: str, role: str, own_connection: bool) -> exp.Table:
    """Not a file: a table or view in the connection, parsed strictly so junk is refused."""
    try:
        table = exp.maybe_parse(text, into=exp.Table, dialect="duckdb")
    except ParseError:
        table = None
    if table is None or own_connection:
        raise SqlmetricsError(
            f"{role}: no such file {text!r}"
            + ("" if own_connection else " and it is not a table name")
            + "; pass a Parquet or CSV path, a DataFrame, or a table name with `connection=`"
        )
    return table
