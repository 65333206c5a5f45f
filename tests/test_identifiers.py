"""Hostile table and column names, in every dialect: a quoted identifier or a clear error.

Whatever a user passes as a table or column name, ``to_sql`` either refuses it with a
SqlmetricsError or writes one statement that reads exactly the tables it should and names the
column as given (reserved words quoted, folded as the dialect folds unquoted names): never a
second statement, a comment, or a name read as SQL. tests/engines/test_hostile_names.py runs
such names on the real engines.
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

import sqlmetrics
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.render.dialects import DIALECTS, RESERVED_WORDS

HOSTILE = [
    "x; DROP TABLE y",
    'x"; DROP TABLE y; --',
    "x`; DROP TABLE y; --",
    "x]; DROP TABLE y; --",
    "x'; DROP TABLE y; --",
    "recs -- */ DROP TABLE y; /*",
    "recs /* c */",
    "recs r",
    "recs WHERE 1 = 1",
    "recs UNION SELECT 1",
    "read_csv('/etc/passwd')",
    "(SELECT 1)",
    "recs TABLESAMPLE (10 ROWS)",
    "select",
    "user",
    "order",
    "rank",
    "current_user",
    "naïve",
    "用户",
    "emoji_😀",
    "a b",
    "a--b",
    "a\nb",
    "a\\b",
    '"quoted ""x"""',
    "`back``tick`",
    "[bra]]cket]",
    "'single'",
    "",
    " ",
]
ROLES = ("recommendations", "interactions", "user", "relevance", "group")
STATEMENTS = (exp.Drop, exp.Insert, exp.Delete, exp.Update, exp.Command, exp.Create, exp.Merge)


def call(dialect: str, role: str, name: str) -> str:
    kwargs: dict[str, Any] = {"dialect": dialect, "pretty": True}
    tables = {"recommendations": "recs", "interactions": "clicks"}
    if role in tables:
        tables[role] = name
    elif role == "group":
        kwargs["group_by"] = [name]
    else:
        kwargs["columns"] = {role: name}
    return sqlmetrics.to_sql(
        ["ndcg@3"], tables["recommendations"], tables["interactions"], **kwargs
    )


def parts(table: exp.Table, dialect: str) -> tuple[str, ...]:
    return tuple(folded(part, dialect) for part in table.parts)


def folded(identifier: exp.Identifier, dialect: str) -> str:
    copy = identifier.copy()
    Dialect.get_or_raise(dialect).normalize_identifier(copy)
    return copy.name


# The dialect varies fastest: a name asked of every dialect in turn is composed once for those
# that read it alike (api._shared_composition).
@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("role", ROLES)
def test_hostile_names_are_quoted_or_refused(dialect: str, role: str) -> None:
    for name in HOSTILE:
        try:
            sql = call(dialect, role, name)
        except SqlmetricsError as error:
            assert str(error), name
            continue
        statements = sqlglot.parse(sql, read=dialect)
        assert len(statements) == 1, (name, sql)
        tree = statements[0]
        assert tree is not None and isinstance(tree, exp.Query), name
        assert not list(tree.find_all(*STATEMENTS)), (name, sql)
        assert tree.sql(dialect=dialect, pretty=True) == sql, name
        assert not any(node.comments for node in tree.walk()), (name, sql)
        ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
        tables = {parts(t, dialect) for t in tree.find_all(exp.Table) if t.name not in ctes}
        given = {"recommendations": "recs", "interactions": "clicks"}
        if role in given:
            given[role] = name
        expected = {
            parts(exp.maybe_parse(text, into=exp.Table, dialect=dialect), dialect)
            for text in given.values()
        }
        assert tables == expected, (name, tables)
        # The name arrives as one identifier: not split, not read as a keyword or a function.
        identifiers = {folded(i, dialect) for i in tree.find_all(exp.Identifier)}
        user_name = _expected(name, dialect, role)
        assert user_name in identifiers, (name, user_name, sql)


def _expected(name: str, dialect: str, role: str) -> str:
    if role in ("recommendations", "interactions"):
        table = exp.maybe_parse(name, into=exp.Table, dialect=dialect)
        assert isinstance(table, exp.Table)
        return folded(table.this, dialect)
    identifier = exp.parse_identifier(name, dialect=dialect)
    return folded(identifier, dialect)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_statement_injection_through_a_table_name_is_refused(dialect: str) -> None:
    for name in ("x; DROP TABLE y", "recs -- c", "recs /* c */", "read_csv('/etc/passwd')", "a b"):
        with pytest.raises(SqlmetricsError, match="is not a table name"):
            sqlmetrics.to_sql(["ndcg@3"], name, "truth", dialect=dialect)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_reserved_word_is_quoted_as_the_dialect_folds_it(dialect: str) -> None:
    sql = sqlmetrics.to_sql(["ndcg@3"], "order", "truth", dialect=dialect, columns={"user": "user"})
    tree = sqlglot.parse_one(sql, read=dialect)
    quoted = {i.name for i in tree.find_all(exp.Identifier) if i.quoted}
    want = "ORDER" if dialect in ("snowflake", "oracle") else "order"
    assert want in quoted, sql
    assert ("USER" if dialect in ("snowflake", "oracle") else "user") in quoted, sql


def test_plain_names_stay_unquoted() -> None:
    sql = sqlmetrics.to_sql(
        ["ndcg@3"],
        "analytics.recs",
        "analytics.truth",
        dialect="snowflake",
        columns={"user": "CUSTOMER_ID"},
    )
    assert "FROM analytics.recs" in sql and "CUSTOMER_ID AS user_id" in sql
    assert {"user", "order", "rank", "select"} <= RESERVED_WORDS


def test_a_quoted_group_column_is_labelled_with_its_name_not_its_quotes() -> None:
    sql = sqlmetrics.to_sql(["ndcg@3"], dialect="snowflake", group_by=['"My Model"'])
    assert 'group_1 AS "My Model"' in sql
    assert '"My Model" AS group_1' in sql
