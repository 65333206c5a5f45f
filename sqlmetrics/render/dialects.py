"""Writes a composed query in a target dialect: the one place where engines differ.

The stages and metric files are DuckDB SQL. sqlglot translates syntax, but some of DuckDB's
semantics have no spelling of their own, so before generating, ``portable`` rewrites the tree
into a form that means the same everywhere:

- ``/`` is float division in DuckDB. Elsewhere ``int / int`` truncates (PostgreSQL, SQL Server,
  SQLite, Trino), or gives a DECIMAL with four extra digits (MySQL) or six (Snowflake): every
  numerator is cast to DOUBLE, and every denominator is wrapped in ``NULLIF(x, 0)``, since
  ``x / 0`` is inf, NULL or an error depending on the engine.
- One-argument ``LOG`` is base 10 in DuckDB and the natural log elsewhere: it gets base 10.
- ``POWER(2, int)`` and ``AVG(int)`` stay integers in SQL Server: their arguments are cast.
- ``LEAST``/``GREATEST`` skip NULLs in DuckDB and return NULL in MySQL: every argument that can
  be NULL is coalesced with the others.
- NULLs sort last in DuckDB. Where a window's ORDER BY cannot say ``NULLS LAST`` (MySQL, SQL
  Server, BigQuery), an explicit ``CASE WHEN x IS NULL`` key comes first.
- QUALIFY becomes a filtered subquery except in the dialects sure to have it, with ``SELECT *``
  qualified by its table (Oracle refuses ``*, expr``).
- MySQL has no FULL OUTER JOIN (nor SQLite before 3.39): a LEFT JOIN, UNION ALL the rows of the
  right side that match nothing.
- ISNAN exists in DuckDB, Spark, ClickHouse, BigQuery and Trino; PostgreSQL, Redshift,
  Snowflake and Oracle compare to NaN (equal to itself there); MySQL, SQLite and SQL Server
  doubles cannot hold NaN, so the check is false.
- A text sort key (``CAST(item_id AS VARCHAR)``, ties="id_text") compares bytes in DuckDB, but
  by the default collation elsewhere: PostgreSQL gets ``COLLATE "C"``, MySQL a BINARY cast, SQL
  Server ``COLLATE Latin1_General_BIN2`` (code points), Oracle a VARCHAR2 (a CLOB cannot be
  sorted; the order is then NLS_SORT's, BINARY by default). The other dialects compare strings by
  bytes or code points (the same order for UTF-8) by default.
- ``MAX(x) AS x ... HAVING MAX(x) > 0`` reads the inner ``x`` as the alias in Spark and
  ClickHouse: such a column is qualified with its table.
- Spark shuffles the interactions once, by user (``DISTRIBUTE BY``): truth's grouping by
  (user, item), its windows and the diagnostics' counts by user all read that partitioning;
  a full outer join on user_id and item_id joins on user_id alone, the item's equality a
  condition Spark cannot take as a key (``(a = b) IS TRUE``), so that the sides partitioned by
  user are joined as they are.
- A CTE named like one of the user's tables is renamed (SQLite calls it a circular
  reference, MariaDB crashes).
- MariaDB takes at most 64 CTEs in one WITH clause: past that, CTEs are written where they
  are read, as derived tables, the last first: those read in one place, then those read in
  several (copied into each).
- ClickHouse names an unaliased ``t.col`` projection ``t.col``, fills the unmatched side of an
  outer join with zeros, and reads ``MAX(x) AS x ... ORDER BY MAX(x)`` as ``MAX(MAX(x))``:
  every projection gets an alias, and the query ``join_use_nulls = 1`` and
  ``prefer_column_name_to_alias = 1``.

- In every dialect, DuckDB included: an unquoted name that is a reserved word somewhere
  (``user``, ``order``) or not plain ASCII is quoted, folded as the dialect folds unquoted names.

``render`` refuses what sqlglot reports it cannot translate, rather than printing SQL that
would give other numbers. Each rewrite above is a module of render/rules/, run in the order of
``RULES``.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, UnsupportedError

from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.gc_paused import gc_paused
from sqlmetrics.render import users_sql
from sqlmetrics.render.nodes import Nodes
from sqlmetrics.render.rules import (
    aliases,
    clickhouse,
    cte_names,
    distinct,
    full_join,
    functions,
    null_order,
    qualify,
    reserved,
    spark_interactions,
    spark_join_keys,
    text_order,
    values,
    with_limit,
)
from sqlmetrics.render.rules.common import DIALECTS
from sqlmetrics.render.rules.reserved import RESERVED_WORDS

CANONICAL = "duckdb"
"""The dialect of the SQL files: rendered as written, only with names made unambiguous."""


def get_dialect(dialect: str) -> Dialect:
    """The sqlglot dialect named ``dialect``; an unknown name is refused with the verified ones."""
    try:
        return Dialect.get_or_raise(dialect)
    except ValueError as error:
        hint = str(error).partition(".")[2].strip()
        raise SqlmetricsError(
            f"unknown dialect {dialect!r}.{' ' + hint if hint else ''} sqlmetrics verifies "
            f"{', '.join(DIALECTS)}"
        ) from error


@gc_paused
def render(query: exp.Expr, dialect: str, pretty: bool = True, copy: bool = True) -> str:
    """``query`` (DuckDB semantics) as SQL for ``dialect``, with the same results there.

    ``copy=False``: the caller hands ``query`` over (to_sql's freshly composed tree), and the
    rewrites work on it in place instead of on a copy."""
    target = get_dialect(dialect)
    tree = portable(query, dialect, copy=copy)
    try:
        # The tree is our own copy (or handed over): the generator need not copy it again.
        return tree.sql(
            dialect=target, pretty=pretty, unsupported_level=ErrorLevel.RAISE, copy=False
        )
    except UnsupportedError as error:
        raise SqlmetricsError(f"sqlglot cannot write this query in {dialect}: {error}") from error


@gc_paused
def portable(query: exp.Expr, dialect: str, copy: bool = True) -> exp.Expr:
    """A copy of ``query`` rewritten so that ``dialect``'s engines compute DuckDB's numbers
    (``copy=False``: ``query`` itself, rewritten in place, for a caller that discards it)."""
    tree = query.copy() if copy else query
    target = get_dialect(dialect)
    # A user's own query is held out of every rewrite: it runs as written, in its dialect.
    held_from = tree
    nodes = Nodes(tree)  # one walk for the rewrites, until one changes the tree's shape
    held = users_sql.hold(tree, nodes)
    try:
        for step in _steps(target):
            tree = step(tree, target, nodes)
            if tree is not nodes.tree:  # a rewrite put another root above it
                nodes.changed(tree)
    finally:
        tree = users_sql.put_back(tree, held, held_from)
    return tree


Rule = Callable[[exp.Expr, Dialect, Nodes], exp.Expr]

# The rewrites of render/rules/, in the order they run: each takes the tree, the target dialect
# and the walk of the tree they share (render/nodes.py: a rewrite that changes the tree's shape
# says so there) and returns the tree (most rewrite it in place).
RULES: tuple[Rule, ...] = (
    spark_interactions.distribute_interactions,  # before the composer's names may change
    cte_names.distinct_cte_names,
    qualify.qualify_clause,
    full_join.full_outer_join,
    distinct.distinct_per_user,
    spark_join_keys.user_join_keys,
    functions.functions,
    null_order.null_order,
    values.values_tables,
    text_order.byte_order_text,
    aliases.aliases,  # and aliases.unshadow, in the same walk
    clickhouse.clickhouse_settings,
    with_limit.inline_past_limit,  # after every rewrite that reads the CTEs by their place
    reserved.quote_reserved,
)
# DuckDB gets the SQL files as written, only with names made unambiguous.
CANONICAL_RULES: tuple[Rule, ...] = (cte_names.distinct_cte_names, reserved.quote_reserved)


def _steps(target: Dialect) -> tuple[Rule, ...]:
    return CANONICAL_RULES if type(target) is type(get_dialect(CANONICAL)) else RULES


__all__ = ["CANONICAL", "DIALECTS", "RESERVED_WORDS", "get_dialect", "portable", "render"]
