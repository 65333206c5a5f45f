"""A PEP 249 (DB-API) connection: psycopg, pymysql, sqlite3, snowflake-connector,
databricks-sql-connector, trino, clickhouse-connect... (engines/drivers.py: the driver names
its database, and ``dialect=`` must fit it). Inputs are table names or ``Query`` objects;
nothing is created in the database, a transaction this engine opened is rolled back when it
closes, and inside the caller's transaction each statement runs in a savepoint."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from sqlglot import exp

from sqlmetrics.engines.base import NUMBER, UNKNOWN, Engine, Query, Source, normal_type
from sqlmetrics.errors import SqlmetricsError

T = TypeVar("T")


# The statements of the savepoint around each statement inside the caller's transaction:
# fixed text, no input in them (sqlglot has no expressions for them).
SAVEPOINT = "SAVEPOINT sqlmetrics"
ROLLBACK_TO_SAVEPOINT = "ROLLBACK TO SAVEPOINT sqlmetrics"
RELEASE_SAVEPOINT = "RELEASE SAVEPOINT sqlmetrics"
# The dialects of databases with those three statements (Redshift, ClickHouse, BigQuery and
# Snowflake have no savepoints, Oracle no RELEASE; their drivers do not say whether a
# transaction is open either).
SAVEPOINT_DIALECTS = frozenset({"postgres", "mysql", "sqlite"})


class DBAPIEngine(Engine):
    def __init__(
        self,
        connection: Any,
        dialect: str,
        timeout: float | None = None,
        progress: bool = False,
        driver: Any = None,
        name: str | None = None,
    ) -> None:
        """``connection`` makes the cursors; ``driver`` is the driver's own connection when
        ``connection`` wraps it (SQLAlchemy's pool proxy): its cancel and transaction state."""
        super().__init__(timeout=timeout, progress=progress)
        self.dialect = dialect  # checked against the driver's database (engines/drivers.py)
        self.connection = connection
        self.driver = driver if driver is not None else connection
        self.module = sys.modules.get(type(self.driver).__module__.split(".")[0])
        self.name = name or f"{type(self.driver).__module__.split('.')[0]} ({dialect})"
        self.cursor: Any = None
        # the caller's connection may be shared by threads: one call at a time runs on it
        self.hold(self.driver)
        state = _transaction_state(self.driver)
        if state == "failed":
            self.release()
            raise SqlmetricsError(
                "connection: its transaction has failed (an earlier statement's error), so the "
                "database refuses every statement until it is rolled back; roll it back (or "
                "back to a savepoint of yours) before evaluate"
            )
        self.began_idle = state == "idle"
        # Inside the caller's open transaction each statement runs in a savepoint of its own:
        # one that fails or is cancelled (a mistyped table, a timeout) is undone alone, and
        # the caller's transaction and its uncommitted work stay as they were.
        self.savepoints = state == "open" and dialect in SAVEPOINT_DIALECTS

    def bind(self, value: object, role: str) -> Source:
        relation = self.named_relation(value, role)
        if relation is None:
            raise SqlmetricsError(
                f"{role}: on {self.name} an input is a table name or a sqlmetrics.Query, not a "
                f"{type(value).__name__} (the rows stay in the database; to evaluate local data "
                "leave connection= out and DuckDB reads it)"
            )
        probe = exp.select("*").from_(relation.copy()).limit(0)
        try:
            description = self.guarded(lambda: self._description(self.sql(probe)))
        except SqlmetricsError as error:
            shown = value.sql if isinstance(value, Query) else value
            raise SqlmetricsError(f"{role}: cannot read {shown!r}: {error}") from None
        columns = {str(column[0]): self._type_of(column) for column in description}
        return Source(role, relation, columns, origin=value)

    def _description(self, sql: str) -> list[Any]:
        return self._run(sql, lambda cursor: list(cursor.description or ()))

    def _type_of(self, column: Any) -> str:
        """A column's type: psycopg names it (type_display), some drivers give its name as the
        type code; otherwise the driver's PEP 249
        type objects tell numbers from text; anything else is UNKNOWN (the engine decides)."""
        display = getattr(column, "type_display", None)
        if isinstance(display, str):
            return normal_type(display, self.dialect)
        code = column[1]
        if isinstance(code, str):  # chdb, clickhouse-connect, trino: the type's own name
            return normal_type(code, self.dialect)
        if code is None or self.module is None:
            return UNKNOWN
        for kind, name in (("NUMBER", NUMBER), ("STRING", "VARCHAR"), ("DATETIME", "TIMESTAMP")):
            type_object = getattr(self.module, kind, None)
            if type_object is not None and _equal(code, type_object):
                return name
        return UNKNOWN

    def fetch(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        def read(cursor: Any) -> tuple[list[str], list[tuple[Any, ...]]]:
            names = [str(column[0]) for column in cursor.description or ()]
            return names, [tuple(row) for row in cursor.fetchall()]

        return self._run(sql, read)

    def _run(self, sql: str, read: Callable[[Any], T]) -> T:
        """``sql`` run on a cursor of its own, read by ``read`` (in a savepoint inside the
        caller's transaction)."""
        cursor = self.connection.cursor()
        try:
            self.cursor = cursor
            if not self.savepoints:
                cursor.execute(sql)
                return read(cursor)
            return self._in_savepoint(cursor, sql, read)
        finally:
            self.cursor = None
            cursor.close()

    def _in_savepoint(self, cursor: Any, sql: str, read: Callable[[Any], T]) -> T:
        # The savepoint's own statements are never cancelled by the timeout: a cancelled
        # ROLLBACK TO would leave the caller's transaction failed.
        with self.watchdog.held():
            cursor.execute(SAVEPOINT)
        try:
            if self.watchdog.expired:  # the time ran out before the statement began
                raise TimeoutError("the timeout expired")
            cursor.execute(sql)
            result = read(cursor)
        except BaseException:
            with self.watchdog.held(), contextlib.suppress(Exception):
                cursor.execute(ROLLBACK_TO_SAVEPOINT)
                cursor.execute(RELEASE_SAVEPOINT)
            raise
        with self.watchdog.held():
            cursor.execute(RELEASE_SAVEPOINT)
        return result

    def cancel(self) -> None:
        """The driver's cancel: psycopg's connection.cancel (a cancel request on a connection
        of its own), sqlite3's interrupt, or the cursor's cancel (Databricks, Trino...)."""
        for owner, method in (
            (self.driver, "cancel"),
            (self.driver, "interrupt"),
            (self.cursor, "cancel"),
        ):
            action = getattr(owner, method, None)
            if owner is not None and callable(action):
                with contextlib.suppress(Exception):  # best effort: it may have ended already
                    action()
                return

    def close(self) -> None:
        # Our SELECTs opened a transaction on an idle connection: end it, so nothing is left
        # open on the server (a connection whose state the driver does not tell is left as is).
        if self.began_idle and _in_transaction(self.driver):
            self.driver.rollback()


def _equal(code: Any, type_object: Any) -> bool:
    """PEP 249 type objects compare equal to the codes of their types; some raise on codes
    of another kind."""
    try:
        return bool(code == type_object)
    except Exception:
        return False


def _in_transaction(connection: Any) -> bool | None:
    """Whether the connection is inside a transaction, when its driver says (psycopg, sqlite3);
    None when it does not."""
    state = _transaction_state(connection)
    return None if state is None else state != "idle"


def _transaction_state(connection: Any) -> str | None:
    """ "idle", "open" (a transaction is open) or "failed" (it is, and an error aborted it),
    when the driver says (psycopg's, libpq's transaction status; sqlite3's in_transaction);
    None when it does not, or a statement is running on it."""
    info = getattr(connection, "info", None)
    status = getattr(info, "transaction_status", None)
    if status is not None:
        # libpq's PQtransactionStatus: IDLE 0, ACTIVE 1, INTRANS 2, INERROR 3, UNKNOWN 4
        return {0: "idle", 2: "open", 3: "failed"}.get(int(status))
    in_transaction = getattr(connection, "in_transaction", None)
    if isinstance(in_transaction, bool):
        return "open" if in_transaction else "idle"
    return None
