"""Aliases some engines read differently: every projection named, an inner column that an alias
would shadow qualified with its table."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.render.nodes import Nodes


def aliases(tree: exp.Expr, target: Dialect, nodes: Nodes | None = None) -> exp.Expr:
    """An alias on every column projection and every subquery in FROM or JOIN, then
    ``unshadow``'s qualified columns. One walk finds the nodes of both: neither adds a node the
    other looks for, nor changes what the other reads (a column projection wrapped in an alias
    of its own name is not an alias of another value, nor a change of its select's names).
    The nodes it adds are handed to the shared walk (``nodes``) for the rewrites after it."""
    nodes = nodes or Nodes(tree)
    found = nodes.of(exp.Select, exp.From, exp.Join, exp.CTE)
    sources: list[exp.From | exp.Join] = []
    for node in found:
        if isinstance(node, exp.Select):
            _named_projections(node, nodes)
        elif isinstance(node, (exp.From, exp.Join)):
            _subquery_alias(node, nodes)
            sources.append(node)
    # Numbered in the order of every subquery in the tree, when one in FROM or JOIN lacks a name.
    if any(
        isinstance(child, exp.Subquery) and not child.alias
        for source in sources
        for child in source.iter_expressions()
    ):
        for index, subquery in enumerate(tree.find_all(exp.Subquery)):
            if isinstance(subquery.parent, (exp.From, exp.Join)) and not subquery.alias:
                name = exp.to_identifier(f"_subquery_{index}")
                subquery.set("alias", exp.TableAlias(this=name))
                nodes.added(subquery.args["alias"])
    _unshadow(found, nodes)
    return tree


def _named_projections(select: exp.Select, nodes: Nodes) -> None:
    for projection in list(select.expressions):
        if isinstance(projection, exp.Column) and not isinstance(projection.this, exp.Star):
            alias = exp.Alias(alias=projection.this.copy())
            projection.replace(alias)
            alias.set("this", projection)
            nodes.added(alias, projection)


def _subquery_alias(source: exp.From | exp.Join, nodes: Nodes) -> None:
    # ``(SELECT ...) AS name`` built as an alias of a parenthesis is a table alias: written as
    # one, Oracle gets it without the AS it refuses there.
    aliased = source.this
    if isinstance(aliased, exp.Alias) and isinstance(aliased.this, (exp.Paren, exp.Subquery)):
        query = aliased.this.unnest()
        name = exp.TableAlias(this=aliased.args["alias"])
        subquery = exp.Subquery(this=query, alias=name)
        gone: list[exp.Expr] = [aliased]
        while gone[-1].this is not query:  # the parentheses around the query
            gone.append(gone[-1].this)
        source.set("this", subquery)
        nodes.removed(*gone)
        nodes.added(subquery, query, name.this)


def unshadow(tree: exp.Expr, target: Dialect) -> exp.Expr:
    """``MAX(relevance) AS relevance ... HAVING MAX(relevance) > 0``: DuckDB (and the standard)
    reads the inner ``relevance`` as the column, Spark and ClickHouse as the alias (an aggregate
    of an aggregate). Such a column is qualified with its CTE's name, which no engine reads as
    an alias; only where the CTE has the column, so a lateral alias reference stays one
    (``aliases`` does this too, in its walk)."""
    _unshadow(list(tree.find_all(exp.CTE, exp.Select)), Nodes(tree))
    return tree


def _unshadow(found: Sequence[exp.Expr], nodes: Nodes) -> None:
    ctes: dict[str, exp.Expr] = {}
    selects: list[exp.Select] = []
    for node in found:
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
        shadowing = _aliases_of_other_values(select) & set(body.named_selects)
        if shadowing:
            _qualify(select, shadowing, source.this.alias_or_name, nodes)


def _aliases_of_other_values(select: exp.Select) -> set[str]:
    """The aliases of ``select`` given to something other than a column of the same name."""
    return {
        projection.alias
        for projection in select.expressions
        if isinstance(projection, exp.Alias)
        and not (
            isinstance(projection.this, exp.Column) and projection.this.name == projection.alias
        )
    }


def _qualify(select: exp.Select, names: set[str], qualifier: str, nodes: Nodes) -> None:
    """The unqualified columns ``names`` inside ``select``'s expressions (not its own bare
    projections, nor a nested select's) get the table ``qualifier``."""
    for column in list(select.find_all(exp.Column)):
        if column.table or column.name not in names:
            continue
        if column.find_ancestor(exp.Select) is not select or column.parent is select:
            continue
        if isinstance(column.parent, exp.Alias) and column.parent.parent is select:
            continue
        column.set("table", exp.to_identifier(qualifier))
        nodes.added(column.args["table"])
