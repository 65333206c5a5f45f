"""The stage files of ``sql/stages/`` as sqlglot trees, and the rewrites every part of the
composed query makes to them.

A fresh copy of a stage (``stage``), its user key widened to the group columns
(``widen_keys``, ``group_key``, ``same_group``), its placeholders bound to literals
(``bind_placeholders``, ``number``), the projections nobody reads dropped (``prune``), CTEs put
in front of a query (``with_ctes``), and result rows ordered with a NULL group last
(``nulls_last``). They depend on nothing else of the composer, so that each of its modules
(and arms.py, curve_steps.py) can import them without a cycle.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TypeVar, cast

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.catalog.metrics import parsed, sql_folder
from sqlmetrics.errors import SqlmetricsError

E = TypeVar("E", bound=exp.Expr)


@functools.cache
def _parsed_stage(name: str) -> exp.Select:
    tree = parsed((sql_folder() / "stages" / f"{name}.sql").read_text(encoding="utf-8"))
    for node in tree.walk():
        node.comments = None  # so outputs stay clean
    if not isinstance(tree, exp.Select):
        raise SqlmetricsError(f"sql/stages/{name}.sql must hold exactly one query")
    return tree


def stage(name: str) -> exp.Select:
    """A fresh copy of one stage file's tree (parsed once per process)."""
    return _parsed_stage(name).copy()


def group_key(index: int) -> str:
    """Internal name of the index-th group column: stage column names never clash with it."""
    return f"group_{index + 1}"


def _is_user_key(node: exp.Expr) -> bool:
    return isinstance(node, exp.Column) and node.name == "user_id"


def same_users(condition: exp.Expr) -> bool:
    """Whether a condition is ``a.user_id = b.user_id``: a join of two stages' rows of a user."""
    return _is_user_key(condition.this) and _is_user_key(condition.expression)


def renamed(node: exp.Expr, name: str) -> exp.Expr:
    """A copy of node with every user_id column (and alias) renamed to ``name``."""
    copy = node.copy()
    for column in list(copy.find_all(exp.Column)):
        if column.name == "user_id":
            column.set("this", exp.to_identifier(name))
    if isinstance(copy, exp.Alias) and copy.alias == "user_id":
        copy.set("alias", exp.to_identifier(name))
    return copy


def same_group(left: exp.Expr, right: exp.Expr) -> exp.Expr:
    """The join condition on a group column: null-safe, so that a NULL value is a group of its
    own, as GROUP BY makes it (user_id's own equality stays the join's hash key). In
    parentheses: DataFusion's parser binds IS NOT DISTINCT FROM more loosely than AND."""
    return exp.paren(exp.NullSafeEQ(this=left, expression=right))


def derived_table(query: exp.Expr, alias: str) -> exp.Expr:
    """``(query) AS alias``, to read from: ``query`` is handed over, not copied (the builders'
    default copies the whole tree at each step, which costs what composing it did)."""
    return exp.alias_(exp.paren(query, copy=False), alias, copy=False)


def nulls_last(columns: Sequence[exp.Expr]) -> list[exp.Ordered]:
    """ORDER BY terms with NULL (a NULL group value) last on every engine, as DuckDB puts it."""
    return [exp.Ordered(this=column, nulls_first=False) for column in columns]


def widen_keys(tree: exp.Expr, keys: Sequence[str]) -> exp.Expr:
    """Makes (keys..., user_id) the key wherever a stage keys on user_id.

    Partitions, GROUP BY lists and projections get the group columns before user_id; join
    conditions ``a.user_id = b.user_id`` get a same_group condition per group column. A window
    without user_id spans the group (like scored.sql's ``SUM(negatives) OVER ()``): its
    partition gets the group columns first.
    """
    if not keys:
        return tree
    for node in list(tree.walk()):
        if isinstance(node, exp.Window):
            partition = node.args.get("partition_by") or []
            if not any(_is_user_key(column) for column in partition):
                partition = [exp.column(key) for key in keys] + partition
            node.set("partition_by", _widened_list(partition, keys))
        elif isinstance(node, exp.Group):
            node.set("expressions", _widened_list(node.expressions, keys))
        elif isinstance(node, exp.Select):
            node.set("expressions", _widened_list(node.expressions, keys, projections=True))
        elif isinstance(node, (exp.EQ, exp.NullSafeEQ)) and same_users(node):
            groups = [
                same_group(renamed(node.this, key), renamed(node.expression, key)) for key in keys
            ]
            node.replace(exp.and_(*groups, node.copy()))
    return tree


def _widened_list(
    items: list[exp.Expr], keys: Sequence[str], projections: bool = False
) -> list[exp.Expr]:
    widened: list[exp.Expr] = []
    for item in items:
        is_key = item.alias_or_name == "user_id" if projections else _is_user_key(item)
        if is_key:
            widened.extend(renamed(item, key) for key in keys)
        widened.append(item)
    return widened


def bind_placeholders(tree: E, **values: exp.Expr) -> E:
    """``$name`` placeholders replaced by literal nodes (never by SQL text), in ``tree`` itself:
    every caller binds a fresh copy and keeps only the result. Each placeholder gets a copy of
    its value: a node shared by two parents would be rewritten in one only."""
    for placeholder in list(tree.find_all(exp.Placeholder)):
        value = values.get(placeholder.name)
        if value is not None:
            bound = placeholder.replace(value.copy())
            if placeholder is tree:
                tree = cast(E, bound)
    return tree


# sqlglot's own dialect, the one ``exp.func`` reads function names in when given none (it makes a
# new instance of it at each call without one).
_FUNCTIONS_DIALECT = Dialect()


def call(name: str, *arguments: exp.Expr) -> exp.Func:
    """``name(arguments...)`` as ``exp.func`` builds it, the arguments handed over (not copied:
    the caller made them or copied them)."""
    return exp.func(name, *arguments, copy=False, dialect=_FUNCTIONS_DIALECT)


@functools.cache
def _data_type(name: str) -> exp.DataType:
    return exp.DataType.build(name)


def cast_to(value: exp.Expr, type_name: str) -> exp.Expr:
    """``CAST(value AS type_name)``, ``value`` handed over (not copied). The builder ``exp.cast``
    parses the type's name and copies ``value`` at each call; the type is built once here."""
    if isinstance(value, exp.Cast):  # the builder's rule: no second cast to an equal type
        return exp.cast(value, _data_type(type_name).copy(), copy=False)
    return exp.Cast(this=value, to=_data_type(type_name).copy())


def number(value: float) -> exp.Expr:
    """A number bound into the query: a finite literal. ``exp.convert`` writes infinity as the
    identifier ``inf`` (a column, to the engine), so anything else is refused here."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SqlmetricsError(f"{value!r} is not a finite number; the query takes only those")
    return exp.convert(value)


def prune(select: exp.Select, needed: set[str]) -> set[str]:
    """Drops projections nobody reads; returns the column names the rest read."""
    select.set("expressions", [p for p in select.expressions if p.alias_or_name in needed])
    return {column.name for column in select.find_all(exp.Column)}


def numbers_table(name: str, column: str, numbers: Sequence[int]) -> exp.Values:
    """A table ``name(column)`` of literal integers: VALUES, which Spark runs as one task (a
    UNION ALL of one-row selects is a task each); dialects.py writes it as a UNION ALL where
    VALUES cannot name its column (SQLite, Oracle)."""
    alias = exp.TableAlias(this=exp.to_identifier(name), columns=[exp.to_identifier(column)])
    rows = [exp.Tuple(expressions=[exp.Literal.number(n)]) for n in numbers]
    return exp.Values(expressions=rows, alias=alias)


def materialize(query: exp.Query, name: str) -> None:
    """Marks the query's CTE ``name`` MATERIALIZED (DuckDB): computed once for its readers."""
    for cte in query.args["with_"].expressions:
        if cte.alias == name:
            cte.set("materialized", True)


def with_ctes(query: exp.Query, ctes: Sequence[tuple[str, exp.Expr]]) -> exp.Query:
    """Puts ``ctes`` first in the query's WITH clause, before the CTEs it already has."""
    existing = query.args.get("with_")
    new = [
        exp.CTE(this=body, alias=exp.TableAlias(this=exp.to_identifier(name)))
        for name, body in ctes
    ]
    query.set("with_", exp.With(expressions=new + (existing.expressions if existing else [])))
    return query
