"""The process's own in-memory DuckDB database, where local files are read and evaluated when the
caller gives no connection: one per process (a new database costs milliseconds, a cursor of it
microseconds), each call on a cursor of its own."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb


@functools.cache
def local_database() -> duckdb.DuckDBPyConnection:
    import duckdb

    return duckdb.connect()
