"""Hostile table and column names on the real engines: the golden values, under those names.

Each engine gets tables and columns named with SQL punctuation, quotes, unicode, reserved words,
and the names of the query's own CTEs, created through sqlglot in the engine's dialect. The user
writes each name as in that dialect (quoted where it must be, or a bare reserved word, which the
dialect folds), and ``to_sql`` must read exactly those tables and columns: the fixture's
hand-derived values come back. tests/test_identifiers.py checks the same for every dialect
without an engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

import sqlmetrics
from tests.engines.cases import FIXTURES, Case, Table, compare, load_case
from tests.engines.conftest import EnginePool
from tests.engines.test_engines import EXECUTED, Target


@dataclass(frozen=True)
class Name:
    """A name as the engine stores it, and whether the user writes it quoted or bare."""

    text: str
    quoted: bool = True

    def stored(self, dialect: str) -> exp.Identifier:
        """The identifier the table is created with: a bare name as the dialect folds it."""
        identifier = exp.to_identifier(self.text, quoted=False)
        if not self.quoted:
            Dialect.get_or_raise(dialect).normalize_identifier(identifier)
        identifier.set("quoted", True)
        return identifier

    def written(self, dialect: str) -> str:
        """The name as a user of ``dialect`` writes it."""
        if not self.quoted:
            return self.text
        return exp.to_identifier(self.text, quoted=True).sql(dialect=dialect)


@dataclass(frozen=True)
class NameSet:
    id: str
    fixture: str
    recommendations: Name
    interactions: Name
    columns: dict[str, Name]  # the fixture's column -> its hostile name


NAME_SETS = [
    NameSet(
        "punctuation_and_unicode",
        "graded_relevance",
        Name("x; DROP TABLE y"),
        Name("naïve 用户 -- c"),
        {
            "user_id": Name("select"),
            "item_id": Name("a b /* c */"),
            "score": Name("naïve"),
            "relevance": Name("用户"),
        },
    ),
    NameSet(
        "emoji",
        "graded_relevance",
        Name("emoji_recs"),
        Name("emoji_truth"),
        {"relevance": Name("relevance 😀")},
    ),
    NameSet(
        "quotes",
        "graded_relevance",
        Name("it's"),
        Name('say "hi" `there`'),
        {
            "user_id": Name("o'clock"),
            "item_id": Name('a"b'),
            "score": Name("a`b"),
            "relevance": Name("[x]]"),
        },
    ),
    NameSet(
        "bare_reserved_words",
        "graded_relevance",
        Name("order", quoted=False),
        Name("user", quoted=False),
        {
            "user_id": Name("user", quoted=False),
            "item_id": Name("order", quoted=False),
            "score": Name("rank", quoted=False),
            "relevance": Name("value", quoted=False),
        },
    ),
    NameSet(
        "the_query_own_names",
        "group_by_day",
        Name("ranked", quoted=False),
        Name("truth", quoted=False),
        {
            "user_id": Name("item_id", quoted=False),
            "item_id": Name("user_id", quoted=False),
            "day": Name("group_1", quoted=False),
        },
    ),
]

# (target id, name set id) -> (kind, reason), as in test_engines.KNOWN_GAPS.
KNOWN_GAPS: dict[tuple[str, str], tuple[str, str]] = {
    ("mysql", "emoji"): (
        "never",
        "MariaDB and MySQL store names in utf8mb3: a 4-byte character (an emoji) cannot be in a "
        "column name",
    ),
    ("snowflake", "quotes"): (
        "notyet",
        "fakesnow answers CREATE and DROP TABLE with a status query built by pasting the table "
        "name into SQL text, so it cannot create a table named it's (Snowflake can)",
    ),
}


def parameters() -> list[Any]:
    found = []
    for target in EXECUTED:
        for names in NAME_SETS:
            marks = [getattr(pytest.mark, target.engine)]
            known = KNOWN_GAPS.get((target.id, names.id))
            if known:
                marks.append(
                    pytest.mark.xfail(
                        reason=f"{known[0]}: {known[1]}", strict=True, raises=Exception
                    )
                )
            found.append(pytest.param(target, names, marks=marks, id=f"{target.id}-{names.id}"))
    return found


def renamed(table: Table, names: NameSet, dialect: str) -> Table:
    columns = tuple(
        (names.columns[column].stored(dialect).name if column in names.columns else column, kind)
        for column, kind in table.columns
    )
    return Table(columns, table.rows)


@pytest.mark.parametrize(("target", "names"), parameters())
def test_hostile_names_on_engine(engine_pool: EnginePool, target: Target, names: NameSet) -> None:
    engine = engine_pool.get(target.engine)
    case: Case = load_case(FIXTURES / f"{names.fixture}.yaml")
    dialect = target.dialect
    recommendations = exp.Table(this=names.recommendations.stored(dialect))
    interactions = exp.Table(this=names.interactions.stored(dialect))
    engine.load(recommendations, renamed(case.recommendations, names, dialect))
    engine.load(interactions, renamed(case.interactions, names, dialect))

    roles = {"user_id": "user", "item_id": "item", "score": "score", "relevance": "relevance"}
    kwargs = case.kwargs()
    columns = dict(kwargs.pop("columns", {}))
    for column, name in names.columns.items():
        if column in roles:
            columns[roles[column]] = name.written(dialect)
    groups = kwargs.pop("group_by", [])
    shared = kwargs.pop("interactions_group_by", [])
    rename = {g: names.columns[g].written(dialect) if g in names.columns else g for g in groups}
    sql = sqlmetrics.to_sql(
        case.metrics,
        names.recommendations.written(dialect),
        names.interactions.written(dialect),
        dialect=dialect,
        columns=columns,
        group_by=[rename[g] for g in groups],
        interactions_group_by=[rename[g] for g in shared],
        **kwargs,
    )
    got_columns, rows = engine.query(sql)
    # The group column's output is labelled as the user wrote the group name.
    expect = [{rename.get(k, k): v for k, v in row.items()} for row in case.expect]
    compare(got_columns, rows, expect, f"{target.id} {names.id}")
