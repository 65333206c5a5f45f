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
- A CTE named like one of the user's tables is renamed (SQLite calls it a circular
  reference, MariaDB crashes).
- ClickHouse names an unaliased ``t.col`` projection ``t.col``, fills the unmatched side of an
  outer join with zeros, and reads ``MAX(x) AS x ... ORDER BY MAX(x)`` as ``MAX(MAX(x))``:
  every projection gets an alias, and the query ``join_use_nulls = 1`` and
  ``prefer_column_name_to_alias = 1``.

- In every dialect, DuckDB included: an unquoted name that is a reserved word somewhere
  (``user``, ``order``) or not plain ASCII is quoted, folded as the dialect folds unquoted names.

``render`` refuses what sqlglot reports it cannot translate, rather than printing SQL that
would give other numbers.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from sqlglot import exp, transforms
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, UnsupportedError

from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.gc_paused import gc_paused
from sqlmetrics.render import users_sql

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
"""The dialect of the SQL files: rendered as written, only with names made unambiguous."""

_KEEPS_QUALIFY = ("duckdb", "snowflake")
_NO_FULL_JOIN = ("mysql", "sqlite")  # and the dialects derived from MySQL
_DOUBLE = exp.DataType.build("double")
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Words that some engine reads as something other than a name: sqlglot's reserved words of every
# dialect, SQL:2016's reserved words, and the niladic functions and pseudo-columns of PostgreSQL,
# Oracle and SQL Server (``SELECT user`` is the current user in PostgreSQL, not a column).
_STANDARD_RESERVED = """
abs all allocate alter and any are array as asensitive asymmetric at atomic authorization avg
begin between bigint binary blob boolean both by call called cascaded case cast ceil char
character check clob close coalesce collate column commit condition connect constraint convert
corresponding count create cross cube current current_catalog current_date current_path
current_role current_row current_schema current_time current_timestamp current_user cursor cycle
date day deallocate dec decimal declare default delete deref describe deterministic disconnect
distinct double drop dynamic each element else end escape every except exec execute exists
external extract false fetch filter float for foreign free from full function fusion get global
grant group grouping having hold hour identity in indicator inner inout insensitive insert int
integer intersect intersection interval into is join language large lateral leading left like
local localtime localtimestamp match max member merge method min minute mod modifies module month
multiset national natural nchar nclob new no none normalize not null nullif numeric of old on
only open or order out outer over overlaps parameter partition position precision prepare
primary procedure range rank reads real recursive ref references referencing release result
return returns revoke right rollback rollup row rows savepoint scope scroll search second select
sensitive session_user set similar smallint some specific sql sqlexception sqlstate sqlwarning
start static submultiset symmetric system system_user table tablesample then time timestamp
timezone_hour timezone_minute to trailing translation treat trigger true union unique unknown
unnest update upper user using value values varchar varying when whenever where window with
within without year
access audit cluster comment compress exclusive file identified increment initial level lock
long maxextents mode noaudit nocompress nowait number offline online pctfree prior raw rename
resource rowid rownum session share size successful synonym sysdate systimestamp uid validate
view browse bulk checkpoint clustered compute database dbcc deny disk distributed dump errlvl
fillfactor freetext holdlock identitycol key kill lineno load nocheck nonclustered off offsets
percent pivot plan print proc public raiserror readtext reconfigure replication restore restrict
revert rowcount rowguidcol rule save schema securityaudit setuser shutdown statistics textsize
top tran transaction truncate tsequal unpivot updatetext use waitfor while writetext
"""


def _reserved_words() -> frozenset[str]:
    words = set(_STANDARD_RESERVED.split())
    for name in DIALECTS:
        generator = Dialect.get_or_raise(name).generator_class
        words |= {word.strip().lower() for word in generator.RESERVED_KEYWORDS}
    return frozenset(words)


RESERVED_WORDS = _reserved_words()
"""Unquoted names that ``render`` quotes in every dialect (with the dialect's case folding)."""


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
    held = users_sql.hold(tree)
    try:
        for step in _steps(target):
            tree = step(tree, target)
    finally:
        tree = users_sql.put_back(tree, held)
    return tree


def _steps(target: Dialect) -> list[Callable[[exp.Expr, Dialect], exp.Expr]]:
    if type(target) is type(get_dialect(CANONICAL)):
        # DuckDB gets the SQL files as written, only with names made unambiguous.
        return [_distinct_cte_names, _quote_reserved]
    return [
        _distinct_cte_names,
        _qualify_clause,
        _full_outer_join,
        _distinct_per_user,
        _functions,
        _null_order,
        _values_tables,
        _byte_order_text,
        _aliases,
        _unshadow,
        _clickhouse_settings,
        _quote_reserved,
    ]


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


def _functions(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """The rewrites of single functions and operators (LOG, ISNAN, ``/``, POWER, AVG, LEAST and
    GREATEST), in one walk of the tree: each reads and rewrites only its node and the node's
    arguments, and every node comes after its descendants (the walk's order reversed), so each
    sees its arguments as rewritten, as it would if each rewrite walked the tree in turn."""
    is_nan = _is_nan_rewrite(target)
    two_argument_case = _is_dialect(target, "tsql")
    for node in reversed(list(tree.walk())):
        if isinstance(node, exp.Log):
            _log_base(node)
        elif isinstance(node, exp.IsNan):
            is_nan(node)
        elif isinstance(node, exp.Div):
            _division(node)
        elif isinstance(node, exp.Pow):
            _float_power(node)
        elif isinstance(node, exp.Avg):
            _float_average(node)
        elif isinstance(node, (exp.Least, exp.Greatest)):
            _least_greatest(node, two_argument_case)
    return tree


def _log_base(log: exp.Log) -> None:
    """One-argument LOG (base 10 in DuckDB, natural elsewhere) gets its base written out."""
    if log.args.get("expression") is None:
        log.set("expression", log.this)
        log.set("this", exp.Literal.number(10))


# Engines whose doubles cannot hold NaN (it arrives as NULL or is refused on insert).
_NO_NAN = ("mysql", "sqlite", "tsql")
# Engines with NaN but no ISNAN function; NaN equals itself there, so it is compared to.
_NAN_EQUALS_ITSELF = ("postgres", "snowflake", "oracle")  # Redshift reads as PostgreSQL


def _is_nan_rewrite(target: Dialect) -> Callable[[exp.IsNan], None]:
    """ISNAN(x) (the input checks) where the engine has no such function."""
    no_nan = _is_dialect(target, *_NO_NAN)
    equals_itself = _is_dialect(target, *_NAN_EQUALS_ITSELF)
    oracle = _is_dialect(target, "oracle")

    def rewrite(node: exp.IsNan) -> None:
        if no_nan:
            node.replace(exp.EQ(this=exp.Literal.number(1), expression=exp.Literal.number(0)))
        elif equals_itself:
            nan: exp.Expr = exp.Cast(this=exp.Literal.string("NaN"), to=_DOUBLE.copy())
            if oracle:  # its DOUBLE PRECISION is a NUMBER, without NaN
                nan = exp.func("TO_BINARY_DOUBLE", exp.Literal.string("NaN"))
            node.replace(exp.EQ(this=node.this, expression=nan))

    return rewrite


def _distinct_per_user(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """On Spark, COUNT(DISTINCT x) per user (the repeats of list_counts.sql and of the
    interactions) as SIZE(COLLECT_SET(x)): Spark plans a distinct count as an Expand and a
    second aggregation keyed on (user, x), which shuffles every row; a set per user is built
    before the shuffle by user, the one the other counts of the same GROUP BY take anyway. Only
    where the select groups by user_id, so a set never spans a whole table."""
    if not _is_dialect(target, "spark", "databricks"):
        return tree
    for select in tree.find_all(exp.Select):
        group = select.args.get("group")
        if group is None or not any(
            isinstance(key, exp.Column) and key.name == "user_id" for key in group.expressions
        ):
            continue
        for count in list(select.find_all(exp.Count)):
            if count.find_ancestor(exp.Select) is not select or not isinstance(
                count.this, exp.Distinct
            ):
                continue
            (value,) = count.this.expressions
            count.replace(exp.ArraySize(this=exp.ArrayUniqueAgg(this=value.copy())))
    return tree


def _division(div: exp.Div) -> None:
    """Float division with a NULL (never an error, inf or a truncation) for a zero divisor."""
    numerator, denominator = div.this, div.expression
    inner = denominator.unnest() if isinstance(denominator, exp.Paren) else denominator
    guarded = isinstance(inner, exp.Nullif) or (
        isinstance(inner, exp.Literal) and inner.is_number and float(inner.name) != 0
    )
    if not guarded:
        div.set("expression", exp.Nullif(this=inner, expression=exp.Literal.number(0)))
    div.set("this", _to_double(numerator))


def _float_power(power: exp.Pow) -> None:
    """POWER of a DOUBLE base: SQL Server gives POWER the type of its first argument."""
    power.set("this", _to_double(power.this))


def _float_average(average: exp.Avg) -> None:
    """AVG of DOUBLE values: SQL Server averages integers into an integer."""
    if not isinstance(average.this, exp.Order):
        average.set("this", _to_double(average.this))


def _least_greatest(node: exp.Least | exp.Greatest, two_argument_case: bool) -> None:
    """LEAST/GREATEST skipping NULLs as DuckDB does, with no engine's NULL rule involved.

    Each argument that may be NULL is coalesced with the others, so the result is NULL only
    when every argument is. SQL Server before 2022 has neither function: there
    (``two_argument_case``) two arguments become a CASE.
    """
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
    if two_argument_case and len(guarded) == 2:
        first, second = guarded
        keep_first: exp.Expr = (
            exp.LTE(this=first.copy(), expression=second.copy())
            if isinstance(node, exp.Least)
            else exp.GTE(this=first.copy(), expression=second.copy())
        )
        node.replace(exp.case().when(keep_first, first.copy()).else_(second.copy()))
        return
    node.set("this", guarded[0])
    node.set("expressions", guarded[1:])
    node.set("ignore_nulls", None)


def _null_order(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """NULLs placed as in DuckDB in windows and results, where some dialects cannot say NULLS LAST.

    sqlglot drops ``NULLS LAST`` from a framed window in MySQL, SQL Server and BigQuery (with a
    warning); the running hit count would then start with the unranked relevant items. An
    explicit ``CASE WHEN x IS NULL THEN 1 ELSE 0 END`` key says it in any dialect. In a result's
    ORDER BY (a NULL group last) sqlglot writes that key itself, but as one term that reads
    back as two: written here, the SQL reads back to itself.
    """
    if _orders_nulls(type(target)):
        return tree
    for order in list(tree.find_all(exp.Order)):
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


@functools.cache
def _orders_nulls(dialect: type[Dialect]) -> bool:
    """Whether the dialect's generator writes NULLS FIRST/LAST, read from an instance: in
    sqlglot's compiled build (sqlglot[c]) a generator's setting is not a class attribute."""
    return dialect().generator().NULL_ORDERING_SUPPORTED is True


def _nulls_first_by_default(target: Dialect, descending: bool) -> bool:
    ordering = target.NULL_ORDERING
    if ordering == "nulls_are_small":
        return not descending
    if ordering == "nulls_are_large":
        return descending
    return False


# names ----------------------------------------------------------------------------------------


def _values_tables(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """A VALUES table naming its columns (curve_sums' cutoffs) as a UNION ALL of one-row
    selects where VALUES cannot name them: SQLite drops the names, Oracle has no VALUES."""
    if not _is_dialect(target, "sqlite", "oracle"):
        return tree
    for values in list(tree.find_all(exp.Values)):
        alias = values.args.get("alias")
        if alias is None or not alias.columns:
            continue
        names = [column.name for column in alias.columns]
        rows: list[exp.Select] = []
        for row in values.expressions:
            cells = row.expressions if isinstance(row, exp.Tuple) else [row]
            rows.append(
                exp.select(
                    *(
                        exp.alias_(cell.copy(), name)
                        for cell, name in zip(cells, names, strict=True)
                    )
                )
            )
        union: exp.Query = rows[0]
        for row in rows[1:]:
            union = exp.union(union, row, distinct=False)
        values.replace(exp.alias_(exp.paren(union), alias.name))
    return tree


def _byte_order_text(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """Text sort keys in byte order (trec_eval's strcmp), where the default collation is not."""
    for ordered in list(tree.find_all(exp.Ordered)):
        key = ordered.this
        if not (isinstance(key, exp.Cast) and key.to.is_type("varchar", "text")):
            continue
        if _is_dialect(target, "redshift"):
            continue  # case-sensitive (byte) comparison by default; it has no COLLATE "C"
        if _is_dialect(target, "postgres"):
            key.replace(exp.Collate(this=key.copy(), expression=exp.to_identifier("C", True)))
        elif _is_dialect(target, "mysql"):
            key.set("to", exp.DataType.build("binary", dialect="mysql"))
        elif _is_dialect(target, "tsql"):
            key.set("to", exp.DataType.build("nvarchar(4000)", dialect="tsql"))
            key.replace(exp.Collate(this=key.copy(), expression=exp.var("Latin1_General_BIN2")))
        elif _is_dialect(target, "oracle"):
            key.set("to", exp.DataType.build("varchar2(4000)", dialect="oracle"))
    return tree


def _aliases(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """An alias on every column projection and every subquery in FROM or JOIN."""
    # One walk for both (neither adds a node the other looks for).
    for node in list(tree.walk()):
        if isinstance(node, exp.Select):
            for projection in list(node.expressions):
                if isinstance(projection, exp.Column) and not isinstance(projection.this, exp.Star):
                    alias = exp.Alias(alias=projection.this.copy())
                    projection.replace(alias)
                    alias.set("this", projection)
        elif isinstance(node, (exp.From, exp.Join)):
            # ``(SELECT ...) AS name`` built as an alias of a parenthesis is a table alias:
            # written as one, Oracle gets it without the AS it refuses there.
            aliased = node.this
            if isinstance(aliased, exp.Alias) and isinstance(
                aliased.this, (exp.Paren, exp.Subquery)
            ):
                query = aliased.this.unnest()
                name = exp.TableAlias(this=aliased.args["alias"])
                node.set("this", exp.Subquery(this=query, alias=name))
    for index, subquery in enumerate(tree.find_all(exp.Subquery)):
        if isinstance(subquery.parent, (exp.From, exp.Join)) and not subquery.alias:
            subquery.set("alias", exp.TableAlias(this=exp.to_identifier(f"_subquery_{index}")))
    return tree


def _unshadow(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """``MAX(relevance) AS relevance ... HAVING MAX(relevance) > 0``: DuckDB (and the standard)
    reads the inner ``relevance`` as the column, Spark and ClickHouse as the alias (an aggregate
    of an aggregate). Such a column is qualified with its CTE's name, which no engine reads as
    an alias; only where the CTE has the column, so a lateral alias reference stays one."""
    ctes: dict[str, exp.Expr] = {}
    selects: list[exp.Select] = []
    for node in tree.walk():  # one walk for both
        if isinstance(node, exp.CTE):
            ctes[node.alias_or_name] = node.this
        elif isinstance(node, exp.Select):
            selects.append(node)
    for select in selects:
        source = select.args.get("from_")
        if source is None or select.args.get("joins") or not isinstance(source.this, exp.Table):
            continue
        body = ctes.get(source.this.name) if not source.this.db else None
        if not isinstance(body, exp.Query):
            continue
        provided = set(body.named_selects)
        shadowing = {
            projection.alias
            for projection in select.expressions
            if isinstance(projection, exp.Alias)
            and not (
                isinstance(projection.this, exp.Column) and projection.this.name == projection.alias
            )
        } & provided
        if not shadowing:
            continue
        qualifier = source.this.alias_or_name
        for column in list(select.find_all(exp.Column)):
            if column.table or column.name not in shadowing:
                continue
            if column.find_ancestor(exp.Select) is not select or column.parent is select:
                continue
            if isinstance(column.parent, exp.Alias) and column.parent.parent is select:
                continue
            column.set("table", exp.to_identifier(qualifier))
    return tree


def _distinct_cte_names(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """A CTE named like a table the query reads (a user's table called ``truth``) is renamed.

    In standard SQL an earlier CTE's ``FROM truth`` is the table, and a later one's is the
    CTE; SQLite reports a circular reference instead, and MariaDB 10.11 crashes on it.
    """
    with_ = tree.args.get("with_")
    if not isinstance(with_, exp.With):
        return tree
    ctes: list[exp.CTE] = list(with_.expressions)
    defined = [cte.alias_or_name.lower() for cte in ctes]
    physical = {
        table.name.lower()
        for index, cte in enumerate(ctes)
        for table in cte.this.find_all(exp.Table)
        if not table.args.get("db") and table.name.lower() not in defined[:index]
    }
    # A user's query reads its tables wherever it stands, never a CTE of ours: any CTE named
    # like one of them is renamed, even one defined before it.
    physical |= users_sql.users_tables(tree)
    taken = set(defined) | physical
    for index, cte in enumerate(ctes):
        old = cte.alias_or_name
        if old.lower() not in physical:
            continue
        new = next(f"{old}_{n}" for n in range(1, 1000) if f"{old}_{n}".lower() not in taken)
        taken.add(new.lower())
        cte.set("alias", exp.TableAlias(this=exp.to_identifier(new)))
        later: list[exp.Expr] = [c.this for c in ctes[index + 1 :]]
        later.append(tree)  # the main query: its own clauses, not the WITH (skipped below)
        for scope in later:
            for node in scope.find_all(exp.Table, exp.Column):
                if node.find_ancestor(exp.With) is with_ and scope is tree:
                    continue
                if isinstance(node, exp.Table) and not node.args.get("db"):
                    if node.name.lower() == old.lower():
                        node.set("this", exp.to_identifier(new))
                elif isinstance(node, exp.Column) and node.table.lower() == old.lower():
                    node.set("table", exp.to_identifier(new))
    return tree


def _quote_reserved(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """An unquoted name that is a reserved word somewhere (``user``, ``order``, ``rank``) or not
    a plain ASCII name is quoted, folded first as the dialect folds unquoted names (``order``
    is ``"ORDER"`` in Snowflake), so it names the same column and no engine reads it as SQL."""
    for identifier in tree.find_all(exp.Identifier):
        name = identifier.name
        if identifier.quoted or (
            _PLAIN_NAME.fullmatch(name) and name.lower() not in RESERVED_WORDS
        ):
            continue
        target.normalize_identifier(identifier)
        identifier.set("quoted", True)
    return tree


def _clickhouse_settings(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """ClickHouse with standard SQL's meaning: an outer join's unmatched columns are NULL (not
    0) and a column name inside an expression means the column, not a projection's alias."""
    if not _is_dialect(target, "clickhouse") or not isinstance(tree, exp.Select):
        return tree
    settings = [
        exp.EQ(this=exp.column(name), expression=exp.Literal.number(1))
        for name in ("join_use_nulls", "prefer_column_name_to_alias")
    ]
    tree.set("settings", [*(tree.args.get("settings") or []), *settings])
    return tree


__all__ = ["CANONICAL", "DIALECTS", "RESERVED_WORDS", "get_dialect", "portable", "render"]
