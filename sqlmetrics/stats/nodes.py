"""The small sqlglot helpers the statistics query is built with: quoted names, casts, a
null-safe comparison, CTEs and group keys."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp


def quoted(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


def column(name: str, table: str | None = None) -> exp.Column:
    return exp.column(quoted(name), table)


# Built once: exp.cast parses a type given as text on every call (thousands in a query of
# hundreds of metrics).
TYPES = {kind: exp.DataType.build(kind) for kind in ("DOUBLE", "BIGINT")}


def cast(node: exp.Expr, kind: str) -> exp.Expr:
    return exp.Cast(this=node, to=TYPES[kind].copy())


def double(node: exp.Expr) -> exp.Expr:
    return cast(node, "DOUBLE")


def null(kind: str = "DOUBLE") -> exp.Expr:
    return cast(exp.Null(), kind)


def same(left: exp.Expr, right: exp.Expr) -> exp.Expr:
    """Null-safe, as GROUP BY treats a NULL group value (parenthesized: stages.same_group)."""
    return exp.paren(exp.NullSafeEQ(this=left, expression=right))


def cte(name: str, body: exp.Expr) -> exp.CTE:
    return exp.CTE(this=body, alias=exp.TableAlias(this=exp.to_identifier(name)))


def keys(count: int, table: str | None = None) -> list[exp.Expr]:
    return [exp.column(f"g{i}", table) for i in range(count)]


def grouped(select: exp.Select, keys: Sequence[exp.Expr]) -> exp.Select:
    return select.group_by(*(key.copy() for key in keys)) if keys else select
