"""What several rewrites share: the dialects verified, which dialect a target is, a cast to
DOUBLE, whether an expression can be NULL."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

DOUBLE = exp.DataType.build("double")


def is_dialect(target: Dialect, *names: str) -> bool:
    return any(isinstance(target, type(Dialect.get_or_raise(name))) for name in names)


def to_double(node: exp.Expr) -> exp.Expr:
    """``node`` cast to DOUBLE (``node`` itself is moved under the cast, not copied)."""
    if isinstance(node, exp.Cast) and node.to.is_type(*exp.DataType.REAL_TYPES):
        return node
    inner = node.unnest() if isinstance(node, exp.Paren) else node
    return exp.Cast(this=inner, to=DOUBLE.copy())


def never_null(node: exp.Expr) -> bool:
    """True when ``node`` cannot be NULL whatever its inputs (a conservative check)."""
    if isinstance(node, exp.Paren):
        return never_null(node.this)
    if isinstance(node, exp.Literal):
        return True
    if isinstance(node, exp.Case):
        branches = [branch.args["true"] for branch in node.args.get("ifs") or []]
        default = node.args.get("default")
        return default is not None and all(never_null(b) for b in [*branches, default])
    if isinstance(node, exp.Coalesce):
        return any(never_null(part) for part in [node.this, *node.expressions])
    if isinstance(node, exp.Cast):
        return never_null(node.this)
    return isinstance(node, (exp.Count, exp.RowNumber))


# The dialects every metric is rendered and verified for (see the README's table).
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
