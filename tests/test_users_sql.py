"""A user's own SELECT (``sqlmetrics.Query``) runs as written, in the user's dialect.

The dialect rewrites give sqlmetrics' SQL DuckDB's meaning everywhere (float division, NULLIF
around denominators, casts, quoted reserved words); applied to the user's SELECT they changed
its numbers (``item_id / 5`` became float division, ``1 / 0`` NULL instead of PostgreSQL's
error). Here hypothesis draws hostile SELECTs, and each must come out of the rendered query
exactly as sqlglot writes it in that dialect, none of its tables read as a CTE of ours. Then a
real SQLite computes a golden value that only integer division gives.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3

import pandas as pd
import pytest
import sqlglot
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sqlglot import exp

import sqlmetrics
from sqlmetrics.catalog.metrics import parse_requests
from sqlmetrics.compose.inputs import Inputs, Options
from sqlmetrics.compose.query import compose
from sqlmetrics.engines.base import Query
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.render.dialects import DIALECTS, portable, render

# Each example is a whole call: the invariants' count (200 in CI, .ci/run), not the oracle
# families' 2,000.
EXAMPLES = int(os.environ.get("SQLMETRICS_HYPOTHESIS_INVARIANT_EXAMPLES", "30"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# Names of sqlmetrics' own CTEs among the user's tables: the user's query must read its table.
TABLES = ("recs", "truth", "ranked", "judged", "input_interactions", "per_user", "users")
ATOMS = ("item_id", "user_id", "score", "0", "5", "2.5", "NULL")
FUNCTIONS = (
    "LOG({})",
    "LN({})",
    "ABS({})",
    "POWER(2, {})",
    "CAST({} AS INT)",
    "LEAST({}, 1)",
    "GREATEST({}, 0)",
    "COALESCE({}, 0)",
    "NULLIF({}, 0)",
    "AVG({}) OVER (PARTITION BY user_id)",
)


def _extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binary = st.tuples(children, st.sampled_from(["/", "*", "+", "-"]), children)
    function = st.tuples(st.sampled_from(FUNCTIONS), children)
    return binary.map(lambda t: f"({t[0]} {t[1]} {t[2]})") | function.map(
        lambda t: t[0].format(t[1])
    )


EXPRESSIONS = st.recursive(st.sampled_from(ATOMS), _extend, max_leaves=6)


@st.composite
def selects(draw: st.DrawFn) -> str:
    """A user's SELECT of user_id, item_id and a score expression, with a WHERE, a CTE of its
    own or an ORDER BY now and then."""
    score = draw(EXPRESSIONS)
    table = draw(st.sampled_from(TABLES))
    text = f"SELECT user_id, item_id, {score} AS score FROM {table}"
    if draw(st.booleans()):
        text += f" WHERE {draw(EXPRESSIONS)} > 0"
    if draw(st.booleans()):
        text = f"WITH base AS (SELECT * FROM {table}) " + text.replace(f"FROM {table}", "FROM base")
    return text


def _portable(recommendations: str, interactions: str, dialect: str) -> exp.Expr:
    """evaluate's query over the two Queries, rewritten for ``dialect`` (before sqlglot writes
    it: what is written from here is sqlglot's own writing of each node)."""
    inputs = Inputs(
        recommendations=Query(recommendations).relation(dialect, "recommendations"),
        interactions=Query(interactions).relation(dialect, "interactions"),
        user=exp.to_identifier("user_id"),
        item=exp.to_identifier("item_id"),
        score=exp.to_identifier("score"),
    )
    query = compose(parse_requests(["map@10", "mrr"]), inputs, Options(), dialect=dialect)
    tree = portable(query, dialect)
    render(tree, dialect)  # and it can be written
    return tree


def _users_queries(tree: exp.Expr) -> list[exp.Expr]:
    """The queries inside the relations the user's Queries became, in the order of the
    tree."""
    return [
        node.this
        for node in tree.find_all(exp.Subquery)
        if node.alias in ("recommendations_query", "interactions")
    ]


@SETTINGS
@given(
    recommendations=selects(),
    interactions=st.sampled_from(TABLES).map(lambda t: f"SELECT user_id, item_id FROM {t}"),
    dialect=st.sampled_from(DIALECTS),
)
def test_a_users_query_is_left_as_written(
    recommendations: str, interactions: str, dialect: str
) -> None:
    try:
        given = [sqlglot.parse_one(text, read=dialect) for text in (recommendations, interactions)]
    except sqlglot.errors.SqlglotError:
        assume(False)  # not SQL in this dialect (the Query would be refused)
        raise
    try:
        tree = _portable(recommendations, interactions, dialect)
    except SqlmetricsError as error:
        assume("cannot write" not in str(error))  # sqlglot cannot write the user's SQL there
        raise
    users = _users_queries(tree)
    assert users == given
    # no CTE of ours is named like a table the user's queries read
    inside = {id(cte) for query in users for cte in query.find_all(exp.CTE)}
    ours = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE) if id(cte) not in inside}
    read = {t.name.lower() for query in given for t in query.find_all(exp.Table)} - {"base"}
    assert not ours & read, ours & read


@pytest.mark.parametrize(
    "text",
    [
        # sqlmetrics quotes its reserved words: the user's `user` stays PostgreSQL's function
        "SELECT user AS who, user_id, item_id, score FROM recs",
        "SELECT r.user_id, r.item_id, r.score / 2 AS score FROM recs AS r",
        "SELECT user_id, item_id, LOG(score) AS score FROM recs",
    ],
)
def test_reserved_words_divisions_and_logs_of_the_users_query_are_left_alone(text: str) -> None:
    for dialect in ("postgres", "mysql", "tsql", "snowflake"):
        given = sqlglot.parse_one(text, read=dialect)
        assert _users_queries(_portable(text, "SELECT * FROM truth", dialect))[0] == given


def _sqlite() -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE recs (user_id INTEGER, item_id INTEGER)")
    connection.executemany("INSERT INTO recs VALUES (?, ?)", [(1, 4), (1, 5)])
    connection.execute("CREATE TABLE truth (user_id INTEGER, item_id INTEGER)")
    connection.execute("INSERT INTO truth VALUES (1, 4)")
    return connection


def test_sqlite_divides_the_users_integers_as_sqlite_does() -> None:
    """User 1 has items 4 and 5, item 4 relevant, scored ``10 / item_id``. SQLite divides
    integers as integers: 10 / 4 = 2 and 10 / 5 = 2, a tie, which ties="id" breaks by item id
    descending (METRICS.md): item 5 first, item 4 second, so mrr = 1/2 and hit_rate@1 = 0.
    Float division (2.5 against 2.0) would put item 4 first: mrr = 1."""
    query = sqlmetrics.Query("SELECT user_id, item_id, 10 / item_id AS score FROM recs")
    with _sqlite() as connection:
        result = sqlmetrics.evaluate(
            query, "truth", ["mrr", "hit_rate@1"], connection=connection, dialect="sqlite"
        )
    assert result["mrr"].tolist() == [0.5]
    assert result["hit_rate@1"].tolist() == [0.0]


def test_duckdb_reads_the_users_query_as_a_view_it_drops_afterwards() -> None:
    """On the caller's DuckDB connection the Query is a view of its own, registered for the
    call and gone after it; a Query that fails says which input and what DuckDB said. Golden
    value: DuckDB divides integers as floats (10 / 4 = 2.5 > 10 / 5 = 2), item 4 first, mrr 1;
    `//` is its integer division, a tie broken by item id descending: mrr 1/2."""
    import duckdb

    connection = duckdb.connect()
    connection.execute(
        "CREATE TABLE recs AS SELECT 1 AS user_id, i AS item_id FROM range(4, 6) t(i)"
    )
    connection.execute("CREATE TABLE truth AS SELECT 1 AS user_id, 4 AS item_id")
    for operator, mrr in (("/", 1.0), ("//", 0.5)):
        query = sqlmetrics.Query(
            f"SELECT user_id, item_id, 10 {operator} item_id AS score FROM recs"
        )
        result = sqlmetrics.evaluate(query, "truth", ["mrr"], connection=connection)
        assert result["mrr"].tolist() == [mrr]
    views = "SELECT view_name FROM duckdb_views() WHERE NOT internal"
    assert connection.execute(views).fetchall() == []
    with pytest.raises(
        SqlmetricsError, match=r"^recommendations: cannot read 'SELECT \* FROM gone'"
    ):
        sqlmetrics.evaluate(
            sqlmetrics.Query("SELECT * FROM gone"), "truth", ["mrr"], connection=connection
        )


FRAGMENTS = (
    "SELECT", "SELEC", "FROM", "FRM", "recs", "*", "user_id", "item_id", "score", ",", "(",
    ")", ";", "WHERE", "1 / 0", "'", '"', "--", "/*", "WITH", "AS", "UNION", "DELETE",
    "DROP TABLE recs", "VALUES", "user_id AS score", "LIMIT 1", "JOIN", "NULL",
)  # fmt: skip
HOSTILE = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3), min_size=0, max_size=12).map(
    " ".join
)
SQLGLOT_CLASSES = re.compile(r"\b(Alias|Column|Command|Identifier|Anonymous|Literal|Paren)\b")


@SETTINGS
@given(text=HOSTILE, dialect=st.sampled_from(DIALECTS))
def test_a_hostile_query_text_is_one_select_or_refused_in_words(text: str, dialect: str) -> None:
    """Whatever the text, a Query is one SELECT or a refusal that starts with the input's role
    and names no sqlglot class ("must be a SELECT, not Alias")."""
    try:
        parsed = Query(text).parsed(dialect, "recommendations")
    except SqlmetricsError as error:
        message = str(error)
        assert message.startswith("recommendations: "), message
        assert not SQLGLOT_CLASSES.search(message), message
    else:
        assert isinstance(parsed, exp.Query)


@SETTINGS
@given(text=HOSTILE)
def test_a_hostile_query_evaluates_or_is_refused_on_duckdb(text: str) -> None:
    """Through evaluate on a DuckDB connection: numbers or a SqlmetricsError, never another
    exception, and nothing but a SELECT runs (the table is still there)."""
    import duckdb

    connection = duckdb.connect()
    connection.execute("CREATE TABLE recs AS SELECT 1 AS user_id, 4 AS item_id, 0.5 AS score")
    truth = pd.DataFrame({"user_id": [1], "item_id": [4]})
    with contextlib.suppress(SqlmetricsError):
        sqlmetrics.evaluate(Query(text), truth, ["mrr"], connection=connection)
    assert connection.execute("SELECT count(*) FROM recs").fetchone() == (1,)


def test_a_query_that_is_no_select_says_what_it_begins_with() -> None:
    with pytest.raises(SqlmetricsError) as refused:
        Query("SELEC * FRM recs").parsed("postgres", "recommendations")
    assert str(refused.value) == (
        "recommendations: a Query must be one SELECT statement in postgres (SELECT ..., "
        "WITH ... SELECT ..., or a UNION of them); 'SELEC * FRM recs' begins with 'SELEC'"
    )
    with pytest.raises(SqlmetricsError, match=r"'SELECT \* FROM t WHERE' does not parse in "):
        Query("SELECT * FROM t WHERE").parsed("postgres", "recommendations")
