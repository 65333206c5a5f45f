"""A CTE named like one of the user's tables is renamed (SQLite calls it a circular reference,
MariaDB crashes)."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.render import users_sql


def distinct_cte_names(tree: exp.Expr, target: Dialect) -> exp.Expr:
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
            _rename_references(scope, old, new, skip=with_ if scope is tree else None)
    return tree


def _rename_references(scope: exp.Expr, old: str, new: str, skip: exp.With | None) -> None:
    """Every table ``old`` (without a schema) and column qualified by it in ``scope`` now reads
    ``new``; nothing under ``skip`` (the main query's own WITH) changes."""
    for node in scope.find_all(exp.Table, exp.Column):
        if skip is not None and node.find_ancestor(exp.With) is skip:
            continue
        if isinstance(node, exp.Table) and not node.args.get("db"):
            if node.name.lower() == old.lower():
                node.set("this", exp.to_identifier(new))
        elif isinstance(node, exp.Column) and node.table.lower() == old.lower():
            node.set("table", exp.to_identifier(new))
