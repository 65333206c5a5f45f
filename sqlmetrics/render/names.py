"""Names the user gives (tables and columns) as the target dialect reads them: each becomes an
identifier node or is refused, never quoted into something else."""

from __future__ import annotations

from typing import TypeGuard

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError

from sqlmetrics.errors import SqlmetricsError


def table_name(name: str, dialect: str, role: str) -> exp.Table:
    """A table name as the target dialect reads it; anything else is refused, never quoted."""
    if not isinstance(name, str):  # to_sql's inputs are names (evaluate reads a Query)
        raise SqlmetricsError(
            f"{role}: a table name is a string, not a {type(name).__name__}; to_sql writes SQL "
            "over table names (evaluate also takes a sqlmetrics.Query)"
        )
    try:
        table = (
            None
            if _has_comment(name, dialect)
            else exp.maybe_parse(name, into=exp.Table, dialect=dialect)
        )
    except SqlglotError:
        table = None
    if not _plain_table(table) or table.sql(dialect=dialect) != exp.maybe_parse(
        table.sql(dialect=dialect), into=exp.Table, dialect=dialect
    ).sql(dialect=dialect):
        table = None
    if table is None or not table.name:
        raise SqlmetricsError(
            f"{role}: {name!r} is not a table name in {dialect} (write it as you would in SQL, "
            'like analytics.recs or "My Schema"."Recs")'
        )
    return table


_TABLE_PARTS = ("this", "db", "catalog")


def _has_comment(name: str, dialect: str) -> bool:
    """A comment in a name is refused: some dialects' parsers drop it without a word."""
    return any(token.comments for token in Dialect.get_or_raise(dialect).tokenize(name))


def _plain_table(table: exp.Expr | None) -> TypeGuard[exp.Table]:
    """A [catalog.][schema.]name of identifiers only: no function, alias, sample or comment."""
    if not isinstance(table, exp.Table) or any(node.comments for node in table.walk()):
        return False
    extra = [key for key, value in table.args.items() if value and key not in _TABLE_PARTS]
    return not extra and all(isinstance(part, exp.Identifier) for part in table.parts)


def column_name(name: str, dialect: str, role: str) -> exp.Identifier:
    """A column name as the target dialect reads it: ``UserId`` folds as the dialect folds,
    ``"UserId"`` stays quoted."""
    try:
        identifier = (
            None if _has_comment(name, dialect) else exp.parse_identifier(name, dialect=dialect)
        )
    except SqlglotError:
        identifier = None
    if not isinstance(identifier, exp.Identifier) or not identifier.name or identifier.comments:
        raise SqlmetricsError(
            f"the {role} column {name!r} is not a column name in {dialect}; quote it as the "
            'dialect does (e.g. "my column")'
        )
    return identifier
