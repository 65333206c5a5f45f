"""What every engine does the same way: the interface, input types, and result shaping.

An engine binds the inputs (a file, a DataFrame, a table name, a user's SELECT) as relations,
runs one composed query, fetches the small result, and can cancel what it runs. The checks,
the diagnostics and the shape of the result are written once, above it (sqlmetrics.engines.checks,
sqlmetrics.run); the plans DuckDB alone can run stay in its own engine.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeVar

from sqlglot import exp
from sqlglot.errors import SqlglotError

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose.diagnostics import CHECKS, DIAGNOSTICS, KIND
from sqlmetrics.compose.inputs import Inputs, Options
from sqlmetrics.compose.query import compose, compose_checks
from sqlmetrics.engines.credentials import scrub
from sqlmetrics.engines.sharing import Watchdog, checked_timeout, exclusive
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.render.dialects import render
from sqlmetrics.render.names import table_name
from sqlmetrics.render.users_sql import users_relation

if TYPE_CHECKING:
    import pandas as pd

T = TypeVar("T")

# Dialects whose engines get the metrics and the diagnostics as two queries: ClickHouse
# computes some metrics of the combined query differently (accuracy, auc of the fixture
# auc_group_by_model, against its own to_sql query and DuckDB), so it runs them apart.
SEPARATE_DIAGNOSTICS = frozenset({"clickhouse"})

# Column types as the checks read them: DuckDB's names, which other engines' types are mapped
# to (normal_type). UNKNOWN: the driver did not say, so the type checks let the engine decide.
UNKNOWN = "UNKNOWN"
NUMBER = "NUMBER"  # a number of a type the driver does not name further (DB-API's NUMBER)
INTEGER_TYPES = (
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "UHUGEINT",
)
# INT, NUMERIC: how sqlglot writes other engines' int4 and numeric in DuckDB's spelling.
NUMERIC_TYPES = (*INTEGER_TYPES, "INT", "FLOAT", "DOUBLE", "DECIMAL", "NUMERIC", "REAL", NUMBER)


@dataclass(frozen=True)
class Query:
    """A SELECT of your own as an input, written in the engine's dialect:
    ``evaluate(sqlmetrics.Query("SELECT ... FROM recs WHERE ds = '2026-11-01'"), ...)``.

    A string alone is always a path or a table name, never guessed to be SQL."""

    sql: str

    def parsed(self, dialect: str, role: str) -> exp.Query:
        """The one SELECT (or set operation) it holds; anything else is refused, saying what
        the text holds in words (not in sqlglot's classes)."""
        import sqlglot

        try:
            statements = [s for s in sqlglot.parse(self.sql, dialect=dialect) if s is not None]
        except SqlglotError as error:
            raise SqlmetricsError(
                f"{role}: the Query {_excerpt(self.sql)} does not parse in {dialect}: "
                f"{_parse_problem(error)}"
            ) from None
        except RecursionError:
            raise SqlmetricsError(
                f"{role}: the Query {_excerpt(self.sql)} nests too deeply to be read"
            ) from None
        if len(statements) == 1 and isinstance(statements[0], exp.Query):
            return statements[0]
        if len(statements) == 1:
            holds = f"begins with {_first_word(self.sql, dialect)!r}"
        else:
            holds = f"holds {len(statements) or 'no'} statement{'s' * (len(statements) != 1)}"
        raise SqlmetricsError(
            f"{role}: a Query must be one SELECT statement in {dialect} (SELECT ..., WITH ... "
            f"SELECT ..., or a UNION of them); {_excerpt(self.sql)} {holds}"
        )

    def relation(self, dialect: str, role: str) -> exp.Subquery:
        """The query as a relation of a composed query, which the dialect rewrites leave as
        written (users_sql)."""
        return users_relation(self.parsed(dialect, role), f"{role}_query")


def _excerpt(text: str, width: int = 60) -> str:
    """A user's text for a message: quoted, on one line, cut at ``width`` characters."""
    line = " ".join(text.split())
    return repr(line if len(line) <= width else line[: width - 3] + "...")


def _first_word(text: str, dialect: str) -> str:
    """The first token of ``text`` (comments skipped), or its first word."""
    from sqlglot.dialects.dialect import Dialect

    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(text)
    except (SqlglotError, RecursionError):
        tokens = []
    if tokens:
        return str(tokens[0].text)
    words = text.split()
    return words[0] if words else ""


def _parse_problem(error: SqlglotError) -> str:
    """Where the parser stopped, in words: near which text, at which line and column."""
    found = getattr(error, "errors", None) or []
    if found and found[0].get("highlight"):
        where = found[0]
        return (
            f"it stops near {where['highlight']!r} (line {where.get('line')}, column "
            f"{where.get('col')})"
        )
    return first_line(error)


@dataclass(frozen=True)
class Source:
    """An input as a relation in the engine, with its column names and (normalised) types."""

    role: str  # "recommendations", "interactions", "items" or "history", for messages
    relation: exp.Expr
    columns: dict[str, str]  # name -> DuckDB type name (normal_type), or UNKNOWN
    origin: object = None  # what the caller passed, for hints such as its number of rows


def normal_type(text: str, dialect: str) -> str:
    """An engine's type name as the checks read it (DuckDB's names: BIGINT, DOUBLE,
    DECIMAL(10,2), VARCHAR, TIMESTAMP, TIMESTAMP WITH TIME ZONE...), or UNKNOWN."""
    try:
        data_type = exp.DataType.build(text, dialect=dialect)
    except (SqlglotError, ValueError):
        return UNKNOWN
    if data_type.is_type(*exp.DataType.TEXT_TYPES):
        return "VARCHAR"
    return data_type.sql("duckdb").upper()


def result_frame(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> pd.DataFrame:
    """Fetched rows as a DataFrame with the composed query's own column names (engines fold or
    rename output columns in their own ways; the positions are the query's)."""
    import pandas as pd

    return pd.DataFrame([tuple(row) for row in rows], columns=list(names), dtype=object)


def split_result(
    frame: pd.DataFrame, inputs: Inputs, per_user: bool, labels: Sequence[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """evaluate's single result set as the metric rows and the diagnostics rows (shape_result)."""
    kinds = frame[KIND].astype(str)
    metric_rows = frame.loc[kinds == "metrics"].reset_index(drop=True)
    counted_rows = frame.loc[kinds == "diagnostics"].reset_index(drop=True)
    return shape_result(metric_rows, counted_rows, inputs, per_user, labels)


def shape_result(
    metric_rows: pd.DataFrame,
    counted_rows: pd.DataFrame,
    inputs: Inputs,
    per_user: bool,
    labels: Sequence[str],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The metric rows and the diagnostics rows as fetched, with DuckDB's dtypes: metrics as
    _numbers, ``users`` and the counts int64, keys as _keys."""
    import pandas as pd

    groups = [group.name for group in inputs.groups]
    keys = [*groups, inputs.user.name] if per_user else groups
    columns: dict[str, pd.Series] = {key: _keys(metric_rows[key]) for key in keys}
    if not per_user:
        columns["users"] = pd.to_numeric(metric_rows["users"]).fillna(0).astype("int64")
    for label in labels:
        columns[label] = _numbers(metric_rows[label])
    # built at once: a column inserted at a time fragments a frame of hundreds (k = 1..100)
    metrics = pd.DataFrame(columns, index=metric_rows.index)
    return metrics, diagnostics_frame(counted_rows, inputs)


def diagnostics_frame(counted_rows: pd.DataFrame, inputs: Inputs) -> pd.DataFrame:
    """The diagnostics rows as fetched: keys as _keys, the counts int64."""
    import pandas as pd

    groups = [group.name for group in inputs.groups]
    counted = pd.DataFrame({group: _keys(counted_rows[group]) for group in groups})
    for column in (*DIAGNOSTICS, *CHECKS):
        counted[column] = pd.to_numeric(counted_rows[column]).fillna(0).astype("int64")
    return counted


def _keys(column: pd.Series) -> pd.Series:
    """Group or user keys: integers as int64 when they fit and none is missing (DuckDB's
    BIGINT), anything else as the engine returned it."""
    import pandas as pd

    values = column.tolist()
    present = [v for v in values if v is not None]
    complete = bool(present) and len(present) == len(values)
    if complete and all(_is_int(v) and -(2**63) <= int(v) < 2**63 for v in present):
        return pd.Series([int(v) for v in values], dtype="int64")
    return pd.Series(values).infer_objects()


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _numbers(column: pd.Series) -> pd.Series:
    """A metric column as DuckDB types it: an integer SQL type (counts, hits, cg over integer
    relevance) is int64 when no value is missing, anything else float64. Drivers give an
    integer type as int, or as a Decimal without fraction digits (SUM of integers in
    PostgreSQL and MariaDB)."""
    import pandas as pd

    values = column.tolist()
    if values and all(_is_int(v) or _is_whole_decimal(v) for v in values):
        return pd.Series([int(v) for v in values], dtype="int64")
    return pd.to_numeric(column, errors="coerce").astype("float64")


def _is_whole_decimal(value: object) -> bool:
    return isinstance(value, Decimal) and value.is_finite() and int(value.as_tuple().exponent) >= 0


class Engine:
    """Where evaluate's queries run. Subclasses bind inputs and run SQL; this class composes
    the portable query, fetches it and shapes the result. Use as a context manager: leaving
    it drops whatever it registered and restores what it changed."""

    name = ""
    dialect = ""

    def __init__(self, timeout: float | None = None, progress: bool = False) -> None:
        self.timeout = checked_timeout(timeout)
        self.progress = progress
        self.watchdog = Watchdog(self.timeout, self.cancel)
        self.secrets: tuple[str, ...] = ()  # never shown in a message (a URL's password)
        self._turn = contextlib.ExitStack()

    @property
    def timed_out(self) -> bool:
        return self.watchdog.expired

    def hold(self, connection: object) -> None:
        """The caller's ``connection`` to this call alone until it closes (sharing.py)."""
        self._turn.enter_context(exclusive(connection))

    def release(self) -> None:
        """Gives the connection held by ``hold`` back (on close, or a failed start)."""
        self._turn.close()

    # what each engine implements ----------------------------------------------------------

    def bind(self, value: object, role: str) -> Source:
        raise NotImplementedError

    def fetch(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Runs ``sql`` (in this engine's dialect) and returns its column names and rows."""
        raise NotImplementedError

    def cancel(self) -> None:
        """Cancels the statement running now, from another thread (timeout) or after Ctrl-C."""

    def close(self) -> None:
        """Drops what bind registered and restores what the engine changed."""

    # shared -------------------------------------------------------------------------------

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.close()
        finally:
            self.release()

    def sql(self, query: exp.Expr, copy: bool = True) -> str:
        """A query in DuckDB's semantics as this engine's SQL (``copy=False``: rewritten in
        place, for a query composed for this call alone)."""
        return render(query, self.dialect, pretty=False, copy=copy)

    def named_relation(self, value: object, role: str) -> exp.Expr | None:
        """A Query or a table name as a relation in this engine's dialect (names parsed
        strictly, junk refused); None for anything else."""
        if isinstance(value, Query):
            return value.relation(self.dialect, role)
        if isinstance(value, str):
            return table_name(value, self.dialect, role)
        return None

    def rows(self, query: exp.Expr) -> list[tuple[Any, ...]]:
        """A small query's rows (probes, counts and the examples of error messages)."""
        return self.guarded(lambda: self.fetch(self.sql(query)))[1]

    def first_row(self, query: exp.Expr) -> tuple[Any, ...] | None:
        rows = self.rows(query)
        return rows[0] if rows else None

    def is_nan(self, column: exp.Expr) -> exp.Expr:
        """A NaN test for a WHERE clause (dialects.py writes ISNAN for each engine)."""
        return exp.func("ISNAN", column)

    def inputs_changed(self) -> str | None:
        """Why the inputs are no longer what the call bound (a file rewritten while it was
        read), or None; engines that read files say (duckdb.py)."""
        return None

    def guarded(self, run: Callable[[], T]) -> T:
        """``run`` with the timeout and Ctrl-C cancelling the statement on the server; an input
        file rewritten meanwhile is refused, whatever ``run`` gave."""
        result = self._guarded(run)
        changed = self.inputs_changed()
        if changed:
            raise SqlmetricsError(changed)
        return result

    def _guarded(self, run: Callable[[], T]) -> T:
        with self.watchdog.watching():
            try:
                return run()
            except KeyboardInterrupt:
                self.cancel()
                raise
            except SqlmetricsError:
                raise
            except Exception as error:
                if type(error).__name__ == "InterruptException":  # DuckDB's, on Ctrl-C
                    raise KeyboardInterrupt from error
                if self.timed_out:
                    raise SqlmetricsError(
                        f"the query ran past timeout={self.timeout:g} s on {self.name} and was "
                        "cancelled; raise timeout= or evaluate fewer rows"
                    ) from None
                changed = self.inputs_changed()
                if changed:
                    raise SqlmetricsError(changed) from error
                raise SqlmetricsError(
                    f"{self.name} could not run the query: {self.scrub(first_line(error))}"
                ) from (None if self.secrets else error)

    def scrub(self, text: str) -> str:
        """``text`` without the connection's secrets where they stand as credentials."""
        return scrub(text, self.secrets)

    def evaluate(
        self,
        requests: Sequence[MetricRequest],
        inputs: Inputs,
        options: Options,
        per_user: bool,
        recommendations: Source | None = None,
    ) -> tuple[pd.DataFrame, pd.DataFrame, int]:
        """The metrics, the diagnostics and the number of passes (1): one portable query.
        ``recommendations``: its Source, for engines that read hints from it (DuckDB)."""
        labels = [request.label for request in requests]
        if self.dialect in SEPARATE_DIAGNOSTICS:
            metrics = self._frame(compose(requests, inputs, options, per_user, self.dialect))
            counted = self._frame(compose_checks(requests, inputs, options, self.dialect))
            return (*shape_result(metrics, counted, inputs, per_user, labels), 1)
        query = compose(requests, inputs, options, per_user, dialect=self.dialect, diagnostics=True)
        frame = self._frame(query)
        return (*split_result(frame, inputs, per_user, labels), 1)

    def score_floor(
        self,
        requests: Sequence[MetricRequest],
        inputs: Inputs,
        options: Options,
        recommendations: Source | None,
    ) -> float | None:
        """The score floor a composed query may take (compose's ``score_floor``): DuckDB's
        engine has one for its top-k aggregate; the others none."""
        return None

    def _frame(self, query: exp.Query) -> pd.DataFrame:
        """A composed query's rows under its own column names (``query`` is composed for this
        call and given over: it is written without a copy)."""
        names = query.named_selects
        text = self.sql(query, copy=False)
        fetched_names, rows = self.guarded(lambda: self.fetch(text))
        if len(fetched_names) != len(names):
            raise SqlmetricsError(
                f"{self.name} returned {len(fetched_names)} columns where the query has "
                f"{len(names)}; please report this"
            )
        return result_frame(names, rows)


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
