"""A PEP 249 (DB-API) connection: psycopg, pymysql, sqlite3, snowflake-connector,
databricks-sql-connector, trino, clickhouse-connect... (engines/drivers.py: the driver names
its database, and ``dialect=`` must fit it). Inputs are table names or ``Query`` objects; nothing is
created in the database, and a transaction this engine opened is rolled back when it closes."""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from sqlglot import exp

from sqlmetrics.engines.base import NUMBER, UNKNOWN, Engine, Query, Source, normal_type
from sqlmetrics.errors import SqlmetricsError


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
        self.began_idle = _in_transaction(self.driver) is False

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
        cursor = self.connection.cursor()
        try:
            self.cursor = cursor
            cursor.execute(sql)
            return list(cursor.description or ())
        finally:
            self.cursor = None
            cursor.close()

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
        cursor = self.connection.cursor()
        try:
            self.cursor = cursor
            cursor.execute(sql)
            names = [str(column[0]) for column in cursor.description or ()]
            return names, [tuple(row) for row in cursor.fetchall()]
        finally:
            self.cursor = None
            cursor.close()

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
    info = getattr(connection, "info", None)
    status = getattr(info, "transaction_status", None)
    if status is not None:
        return int(status) != 0  # psycopg's TransactionStatus.IDLE is 0
    in_transaction = getattr(connection, "in_transaction", None)
    if isinstance(in_transaction, bool):
        return in_transaction
    return None
