"""A user's own SELECT (``sqlmetrics.Query``) inside a composed query, kept as written.

The dialect rewrites (``dialects.portable``) give sqlmetrics' own SQL DuckDB's meaning in every
dialect: ``/`` becomes float division, denominators ``NULLIF(x, 0)``, reserved words quoted.
Applied to a user's SELECT, they would change what it computes (its integer division, its
error on a division by zero, ``user`` meaning the current user in PostgreSQL). So a user's
query enters a composed tree as a relation marked as theirs (``users_relation``), and
``hold`` takes every marked relation's query out of the tree while the rewrites run and
``put_back`` puts it back afterwards: the rewrites cannot reach it, whatever they are.
"""

from __future__ import annotations

from sqlglot import exp

from sqlmetrics.render.nodes import Nodes

_MARK = "sqlmetrics_users_sql"
_READS = "sqlmetrics_users_sql_reads"
_INDEX = "sqlmetrics_users_sql_index"
_PLACEHOLDER = "sqlmetrics_users_sql"
_HELD_TABLES = "sqlmetrics_users_sql_tables"


def users_relation(query: exp.Query, alias: str) -> exp.Subquery:
    """``query`` (parsed in the engine's dialect) as the relation ``(query) AS alias``, marked
    so that ``dialects.portable`` leaves it as it is."""
    relation = query.subquery(alias)
    relation.meta[_MARK] = True
    return relation


def is_users_relation(node: exp.Expr) -> bool:
    # meta_get: no empty meta dict left on every other subquery (each copy would copy it)
    return isinstance(node, exp.Subquery) and node.meta_get(_MARK) is True


def tables_read(query: exp.Expr) -> set[str]:
    """The lower-case names of the tables a query reads without a schema, less its own CTEs
    (those may shadow a table of the same name; counting them too only renames more)."""
    own = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
    return {
        table.name.lower()
        for table in query.find_all(exp.Table)
        if not table.args.get("db") and table.name.lower() not in own
    }


def users_tables(tree: exp.Expr) -> set[str]:
    """The tables read by the users' queries that ``hold`` took out of ``tree``."""
    if tree.meta.get(_HELD_TABLES) is not None:  # hold's own record: no need to look again
        return set(tree.meta[_HELD_TABLES])
    names: set[str] = set()
    for node in tree.find_all(exp.Subquery):
        if is_users_relation(node):
            names |= node.meta.get(_READS, set())
    return names


def hold(tree: exp.Expr, nodes: Nodes | None = None) -> list[exp.Expr]:
    """Takes each user's query out of ``tree`` (in place), leaving a placeholder SELECT in its
    relation, which keeps its alias and its mark and records the tables the query reads; returns
    the queries, for ``put_back``. The tables of them all are recorded on ``tree`` too, which
    ``users_tables`` reads instead of looking through the tree again. ``nodes``: the rewrites'
    shared walk of ``tree`` (render/nodes.py), told when a query is taken out."""
    held: list[exp.Expr] = []
    tables: set[str] = set()
    subqueries = nodes.of(exp.Subquery) if nodes is not None else list(tree.find_all(exp.Subquery))
    for node in subqueries:
        if is_users_relation(node):
            query = node.this
            node.meta[_READS] = tables_read(query)
            node.meta[_INDEX] = len(held)
            tables |= node.meta[_READS]
            node.set("this", exp.select(exp.Star()).from_(exp.to_table(_PLACEHOLDER)))
            held.append(query)
    tree.meta[_HELD_TABLES] = frozenset(tables)
    if held and nodes is not None:
        nodes.changed()
    return held


def put_back(tree: exp.Expr, held: list[exp.Expr], held_from: exp.Expr) -> exp.Expr:
    """``tree`` (as the rewrites left it) with the queries ``hold`` took out back in place, and
    the record of their tables taken off the tree ``hold`` was given (``held_from``: a rewrite
    may have put another root above it)."""
    held_from.meta.pop(_HELD_TABLES, None)
    if not held_from.meta:
        held_from._meta = None
    if not held:
        return tree
    placed: set[int] = set()
    for node in list(tree.find_all(exp.Subquery)):
        index = node.meta.pop(_INDEX, None) if is_users_relation(node) else None
        if index is None:
            continue
        node.meta.pop(_READS, None)
        # a rewrite that copied the relation (a FULL JOIN written as a UNION) gets a copy
        node.set("this", held[index] if index not in placed else held[index].copy())
        placed.add(index)
    return tree
