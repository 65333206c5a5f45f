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
- ClickHouse names an unaliased ``t.col`` projection ``t.col`` and fills the unmatched side of an
  outer join with zeros: every projection gets an alias, and the query ``join_use_nulls = 1``.

``render`` refuses what sqlglot reports it cannot translate, rather than printing SQL that
would give other numbers.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp, transforms
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, UnsupportedError

from sqlmetrics.errors import SqlmetricsError

DIALECTS: tuple[str, ...] = (
    "duckdb",
    "postgres",
    "snowflake",
    "bigquery",
    "databricks",
    "spark",
    "trino",
    "athena",
    "presto",
    "redshift",
    "clickhouse",
    "mysql",
    "sqlite",
    "tsql",
    "oracle",
)
"""The dialects every metric is rendered and verified for (see the README's table)."""

CANONICAL = "duckdb"
"""The dialect of the SQL files: rendered as written, with no rewriting."""

_KEEPS_QUALIFY = ("duckdb", "snowflake")
_NO_FULL_JOIN = ("mysql", "sqlite")  # and the dialects derived from MySQL
_DOUBLE = exp.DataType.build("double")


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


def render(query: exp.Expr, dialect: str, pretty: bool = True) -> str:
    """``query`` (DuckDB semantics) as SQL for ``dialect``, with the same results there."""
    target = get_dialect(dialect)
    tree = portable(query, dialect)
    try:
        return tree.sql(dialect=target, pretty=pretty, unsupported_level=ErrorLevel.RAISE)
    except UnsupportedError as error:
        raise SqlmetricsError(f"sqlglot cannot write this query in {dialect}: {error}") from error


def portable(query: exp.Expr, dialect: str) -> exp.Expr:
    """A copy of ``query`` rewritten so that ``dialect``'s engines compute DuckDB's numbers."""
    tree = query.copy()
    target = get_dialect(dialect)
    if type(target) is type(get_dialect(CANONICAL)):
        return tree
    steps: list[Callable[[exp.Expr, Dialect], exp.Expr]] = [
        _qualify_clause,
        _full_outer_join,
        _log_base,
        _division,
        _float_power,
        _float_average,
        _least_greatest,
        _window_null_order,
        _aliases,
        _clickhouse_join_nulls,
    ]
    for step in steps:
        tree = step(tree, target)
    return tree


def _is_dialect(target: Dialect, *names: str) -> bool:
    return any(isinstance(target, type(Dialect.get_or_raise(name))) for name in names)


def _to_double(node: exp.Expr) -> exp.Expr:
    """``node`` cast to DOUBLE (``node`` itself is moved under the cast, not copied)."""
    if isinstance(node, exp.Cast) and node.to.is_type(*exp.DataType.REAL_TYPES):
        return node
    inner = node.unnest() if isinstance(node, exp.Paren) else node
    return exp.Cast(this=inner, to=_DOUBLE.copy())


def _never_null(node: exp.Expr) -> bool:
    """True when ``node`` cannot be NULL whatever its inputs (a conservative check)."""
    if isinstance(node, exp.Paren):
        return _never_null(node.this)
    if isinstance(node, exp.Literal):
        return True
    if isinstance(node, exp.Case):
        branches = [branch.args["true"] for branch in node.args.get("ifs") or []]
        default = node.args.get("default")
        return default is not None and all(_never_null(b) for b in [*branches, default])
    if isinstance(node, exp.Coalesce):
        return any(_never_null(part) for part in [node.this, *node.expressions])
    if isinstance(node, exp.Cast):
        return _never_null(node.this)
    return isinstance(node, (exp.Count, exp.RowNumber))


# QUALIFY -------------------------------------------------------------------------------------


def _qualify_clause(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """QUALIFY as a filtered subquery (sqlglot's rewrite) except where it is surely native."""
    if _is_dialect(target, *_KEEPS_QUALIFY):
        return tree

    def rewrite(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.Select) or not node.args.get("qualify"):
            return node
        _qualified_star(node)
        return transforms.eliminate_qualify(node)

    return tree.transform(rewrite, copy=False)


def _qualified_star(select: exp.Select) -> None:
    """``SELECT *`` over one table becomes ``SELECT table.*``: other projections may join it."""
    source = select.args.get("from_")
    if select.args.get("joins") or source is None or not isinstance(source.this, exp.Table):
        return
    name = source.this.alias_or_name
    for projection in select.expressions:
        if isinstance(projection, exp.Star):
            projection.replace(exp.Column(this=exp.Star(), table=exp.to_identifier(name)))


# FULL OUTER JOIN ----------------------------------------------------------------------------


def _full_outer_join(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """``a FULL JOIN b ON c`` as ``a LEFT JOIN b ON c UNION ALL b LEFT JOIN a ON c WHERE
    a.key IS NULL`` where the dialect has no FULL OUTER JOIN."""
    if not _is_dialect(target, *_NO_FULL_JOIN):
        return tree

    def rewrite(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Select) and any(
            join.side.upper() == "FULL" for join in node.args.get("joins") or []
        ):
            return _full_join_as_union(node, target)
        return node

    return tree.transform(rewrite, copy=False)


def _full_join_as_union(select: exp.Select, target: Dialect) -> exp.Expr:
    def refuse(why: str) -> SqlmetricsError:
        name = type(target).__name__
        return SqlmetricsError(f"cannot write a FULL OUTER JOIN in {name}: {why}")

    joins = select.args["joins"]
    if len(joins) != 1:
        raise refuse("the select has other joins")
    for clause in ("group", "having", "qualify", "distinct", "order", "limit", "windows"):
        if select.args.get(clause):
            raise refuse(f"the select has {clause.upper()}")
    if any(isinstance(p, exp.Star) or p.find(exp.AggFunc, exp.Window) for p in select.expressions):
        raise refuse("a projection is *, an aggregate or a window")
    join = joins[0]
    left = select.args["from_"].this
    right = join.this
    condition = join.args.get("on")
    if not isinstance(left, exp.Table) or not isinstance(right, exp.Table) or condition is None:
        raise refuse("it joins other than two tables ON a condition")
    # A left row that matched has a non-NULL value in each column of an equality of the ON
    # condition, so the right rows without a match are those where that column is NULL.
    key = next(
        (
            column
            for equality in condition.find_all(exp.EQ)
            for column in (equality.this, equality.expression)
            if isinstance(column, exp.Column) and column.table == left.alias_or_name
        ),
        None,
    )
    if key is None:
        raise refuse("its ON condition has no equality on a column of the left table")

    matched = select.copy()
    matched.args["joins"][0].set("side", "LEFT")
    unmatched = select.copy()
    unmatched.set("from_", exp.From(this=right.copy()))
    unmatched.set(
        "joins", [exp.Join(this=left.copy(), side="LEFT", on=condition.copy(), kind=None)]
    )
    unmatched.where(exp.Is(this=key.copy(), expression=exp.Null()), copy=False)
    return exp.union(matched, unmatched, distinct=False)


# functions and operators --------------------------------------------------------------------


def _log_base(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """One-argument LOG (base 10 in DuckDB, natural elsewhere) gets its base written out."""
    for log in reversed(list(tree.find_all(exp.Log))):
        if log.args.get("expression") is None:
            log.set("expression", log.this)
            log.set("this", exp.Literal.number(10))
    return tree


def _division(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """Float division with a NULL (never an error, inf or a truncation) for a zero divisor."""
    for div in reversed(list(tree.find_all(exp.Div))):
        numerator, denominator = div.this, div.expression
        inner = denominator.unnest() if isinstance(denominator, exp.Paren) else denominator
        guarded = isinstance(inner, exp.Nullif) or (
            isinstance(inner, exp.Literal) and inner.is_number and float(inner.name) != 0
        )
        if not guarded:
            div.set("expression", exp.Nullif(this=inner, expression=exp.Literal.number(0)))
        div.set("this", _to_double(numerator))
    return tree


def _float_power(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """POWER of a DOUBLE base: SQL Server gives POWER the type of its first argument."""
    for power in reversed(list(tree.find_all(exp.Pow))):
        power.set("this", _to_double(power.this))
    return tree


def _float_average(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """AVG of DOUBLE values: SQL Server averages integers into an integer."""
    for average in reversed(list(tree.find_all(exp.Avg))):
        if not isinstance(average.this, exp.Order):
            average.set("this", _to_double(average.this))
    return tree


def _least_greatest(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """LEAST/GREATEST skipping NULLs as DuckDB does, with no engine's NULL rule involved.

    Each argument that may be NULL is coalesced with the others, so the result is NULL only
    when every argument is. SQL Server before 2022 has neither function: there two arguments
    become a CASE.
    """
    for node in reversed(list(tree.find_all(exp.Least, exp.Greatest))):
        arguments = [node.this, *node.expressions]
        guarded = [
            argument.copy()
            if _never_null(argument)
            else exp.Coalesce(
                this=argument.copy(),
                expressions=[other.copy() for other in arguments if other is not argument],
            )
            for argument in arguments
        ]
        if _is_dialect(target, "tsql") and len(guarded) == 2:
            first, second = guarded
            keep_first: exp.Expr = (
                exp.LTE(this=first.copy(), expression=second.copy())
                if isinstance(node, exp.Least)
                else exp.GTE(this=first.copy(), expression=second.copy())
            )
            node.replace(exp.case().when(keep_first, first.copy()).else_(second.copy()))
            continue
        node.set("this", guarded[0])
        node.set("expressions", guarded[1:])
        node.set("ignore_nulls", None)
    return tree


def _window_null_order(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """NULLs placed as in DuckDB inside windows, where some dialects cannot say NULLS LAST.

    sqlglot drops ``NULLS LAST`` from a framed window in MySQL, SQL Server and BigQuery (with a
    warning); the running hit count would then start with the unranked relevant items. An
    explicit ``CASE WHEN x IS NULL THEN 1 ELSE 0 END`` key says it in any dialect.
    """
    if target.generator_class.NULL_ORDERING_SUPPORTED is True:
        return tree
    for window in list(tree.find_all(exp.Window)):
        order = window.args.get("order")
        if order is None:
            continue
        keys: list[exp.Expr] = []
        for ordered in order.expressions:
            if not isinstance(ordered, exp.Ordered):
                keys.append(ordered)
                continue
            descending = bool(ordered.args.get("desc"))
            wanted = bool(ordered.args.get("nulls_first"))
            native = _nulls_first_by_default(target, descending)
            if wanted != native and not _never_null(ordered.this):
                missing = exp.Is(this=ordered.this.copy(), expression=exp.Null())
                key = exp.case().when(missing, exp.Literal.number(1)).else_(exp.Literal.number(0))
                first = _nulls_first_by_default(target, wanted)
                keys.append(exp.Ordered(this=key, desc=wanted or None, nulls_first=first))
            ordered.set("nulls_first", native)
            keys.append(ordered)
        order.set("expressions", keys)
    return tree


def _nulls_first_by_default(target: Dialect, descending: bool) -> bool:
    ordering = target.NULL_ORDERING
    if ordering == "nulls_are_small":
        return not descending
    if ordering == "nulls_are_large":
        return descending
    return False


# names ----------------------------------------------------------------------------------------


def _aliases(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """An alias on every column projection and every subquery in FROM or JOIN."""
    for select in tree.find_all(exp.Select):
        for projection in list(select.expressions):
            if isinstance(projection, exp.Column) and not isinstance(projection.this, exp.Star):
                projection.replace(exp.alias_(projection.copy(), projection.this.copy()))
    # ``(SELECT ...) AS name`` built as an alias of a parenthesis is a table alias: written as
    # one, Oracle gets it without the AS it refuses there.
    for source in list(tree.find_all(exp.From, exp.Join)):
        aliased = source.this
        if isinstance(aliased, exp.Alias) and isinstance(aliased.this, (exp.Paren, exp.Subquery)):
            query = aliased.this.unnest()
            alias = exp.TableAlias(this=aliased.args["alias"])
            source.set("this", exp.Subquery(this=query, alias=alias))
    for index, subquery in enumerate(tree.find_all(exp.Subquery)):
        if isinstance(subquery.parent, (exp.From, exp.Join)) and not subquery.alias:
            subquery.set("alias", exp.TableAlias(this=exp.to_identifier(f"_subquery_{index}")))
    return tree


def _clickhouse_join_nulls(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """ClickHouse fills an outer join's unmatched columns with 0 unless join_use_nulls = 1."""
    if not _is_dialect(target, "clickhouse") or not isinstance(tree, exp.Select):
        return tree
    setting = exp.EQ(this=exp.column("join_use_nulls"), expression=exp.Literal.number(1))
    tree.set("settings", [*(tree.args.get("settings") or []), setting])
    return tree


__all__ = ["CANONICAL", "DIALECTS", "get_dialect", "portable", "render"]
