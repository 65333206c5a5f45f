"""A CTE named like one of the user's tables is renamed (SQLite calls it a circular reference,
MariaDB crashes)."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.render import users_sql
from sqlmetrics.render.nodes import Nodes


def distinct_cte_names(tree: exp.Expr, target: Dialect, nodes: Nodes | None = None) -> exp.Expr:
    """A CTE named like a table the query reads (a user's table called ``truth``) is renamed.

    In standard SQL an earlier CTE's ``FROM truth`` is the table, and a later one's is the
    CTE; SQLite reports a circular reference instead, and MariaDB 10.11 crashes on it.
    """
    with_ = tree.args.get("with_")
    if not isinstance(with_, exp.With):
        return tree
    ctes: list[exp.CTE] = list(with_.expressions)
    defined = [cte.alias_or_name.lower() for cte in ctes]
    nodes = nodes or Nodes(tree)
    if not _may_collide(ctes, defined, nodes) and not users_sql.users_tables(tree) & set(defined):
        return tree
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
        nodes.changed()
    return tree


def _may_collide(ctes: list[exp.CTE], defined: list[str], nodes: Nodes) -> bool:
    """Whether a CTE's query reads a table named like a CTE not defined before it (the one case
    a CTE is renamed for, besides a user's table), from the shared walk's tables."""
    place = {id(cte): index for index, cte in enumerate(ctes)}
    first: dict[str, int] = {}
    for index, name in enumerate(defined):
        first.setdefault(name, index)
    for table in nodes.of(exp.Table):
        name = table.name.lower()
        if name not in first or table.args.get("db"):
            continue
        owner: exp.Expr | None = table
        while owner is not None and id(owner) not in place:
            owner = owner.parent
        if owner is not None and first[name] >= place[id(owner)]:
            return True
    return False


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
