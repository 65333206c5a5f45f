"""A WITH clause of more CTEs than MariaDB takes (it counts them in a 64-bit map): CTEs are
written where they are read, as derived tables, until the rest fit: first those read in one
place, the last first, then those read in several (their query then runs once per place)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.render.nodes import Nodes
from sqlmetrics.render.rules.common import is_dialect

# The most CTEs one WITH clause holds in MySQL's dialect (MariaDB refuses a 65th: "Too many
# WITH elements in WITH clause"). A WITH nested in a derived table or a CTE would hold the
# rest, but MariaDB 10.11 then fails to find the outer CTEs that the inner ones read.
MOST_CTES = 64


def inline_past_limit(tree: exp.Expr, target: Dialect, nodes: Nodes | None = None) -> exp.Expr:
    """``WITH ..., c AS (q), ... SELECT ... FROM c`` becomes ``... FROM (q) AS c`` while the
    WITH holds more than MOST_CTES."""
    with_ = tree.args.get("with_")
    if not is_dialect(target, "mysql") or not isinstance(with_, exp.With):
        return tree
    ctes: list[exp.CTE] = list(with_.expressions)
    if len(ctes) <= MOST_CTES or with_.args.get("recursive"):
        return tree
    readers = _readers((nodes or Nodes(tree)).of(exp.Table))
    for most_readers in (1, len(ctes)):
        for cte in reversed(list(ctes)):
            if len(ctes) <= MOST_CTES:
                break
            name = cte.alias_or_name.lower()
            if len(readers[name]) > most_readers:
                continue
            ctes.remove(cte)
            for table in cte.this.find_all(exp.Table):  # its own reads leave with it
                readers[table.name.lower()] = [
                    t for t in readers[table.name.lower()] if t is not table
                ]
            for reader in readers.pop(name, []):
                body = cte.this.copy()
                alias = exp.TableAlias(this=exp.to_identifier(reader.alias_or_name))
                reader.replace(exp.Subquery(this=body, alias=alias))
                for name_read, tables in _readers(body.find_all(exp.Table)).items():
                    readers[name_read] += tables
    with_.set("expressions", ctes)
    if nodes is not None:
        nodes.changed()
    return tree


def _readers(tables: Iterable[exp.Table]) -> defaultdict[str, list[exp.Table]]:
    """Every table read without a schema (a schema names a table of the user's, never a CTE),
    by its name in lower case (as the dialect folds it)."""
    readers: defaultdict[str, list[exp.Table]] = defaultdict(list)
    for table in tables:
        if not table.args.get("db"):
            readers[table.name.lower()].append(table)
    return readers
