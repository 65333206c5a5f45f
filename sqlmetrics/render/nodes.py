"""The nodes of a tree by type, from one walk that the rewrites share.

Each rewrite looks for a few node types (the selects, the divisions, the identifiers). Walking
the whole composed tree once per rewrite cost as much as the rewrites themselves, so ``portable``
walks it once and each rewrite asks ``Nodes`` for its types, in the order of a breadth-first walk
(``find_all``'s). The walk holds until a rewrite changes the tree's shape (adds, removes or moves
a node) and says so (``changed``): the next question walks the tree again. A rewrite that only
sets a node's own values (an identifier's quotes, an ordering's NULLS FIRST) need not say so; one
that only adds or takes out a few nodes may say which instead (``added``, ``removed``): the added
come after the others in the order.
"""

from __future__ import annotations

from typing import TypeVar

from sqlglot import exp

E = TypeVar("E", bound=exp.Expr)


class Nodes:
    """The nodes of ``tree`` by type, walked when first asked for (see the module)."""

    def __init__(self, tree: exp.Expr) -> None:
        self.tree = tree
        self._walked: list[exp.Expr] | None = None
        self._by_type: dict[type[exp.Expr], list[exp.Expr]] = {}
        self._removed: set[int] = set()  # ids of nodes of ``_walked`` that left the tree

    def of(self, *types: type[E]) -> list[E]:
        """The nodes that are instances of ``types``, in the walk's order (a new list)."""
        walked = self._walk()
        kinds = [kind for kind in self._by_type if issubclass(kind, types)]
        if len(kinds) == 1:
            return list(self._by_type[kinds[0]])  # type: ignore[arg-type]
        if not kinds:
            return []
        removed = self._removed
        return [
            node
            for node in walked
            if isinstance(node, types) and (not removed or id(node) not in removed)
        ]

    def changed(self, tree: exp.Expr | None = None) -> None:
        """The tree's shape changed (``tree``: its new root, if a rewrite replaced it)."""
        if tree is not None:
            self.tree = tree
        self._walked = None
        self._by_type = {}
        self._removed = set()

    def added(self, node: exp.Expr, *moved: exp.Expr) -> None:
        """``node`` and its descendants are new in the tree, but for ``moved`` (nodes of the
        tree put under ``node``, with their own descendants)."""
        if self._walked is None:
            return  # walked afresh when next asked
        stack = [node]
        while stack:
            new = stack.pop()
            if any(new is old for old in moved):
                continue
            self._walked.append(new)
            self._by_type.setdefault(type(new), []).append(new)
            stack.extend(new.iter_expressions())

    def removed(self, *nodes: exp.Expr) -> None:
        """``nodes`` left the tree (each alone: their descendants stay, moved elsewhere)."""
        if self._walked is None:
            return
        for node in nodes:
            self._by_type[type(node)] = [
                kept for kept in self._by_type[type(node)] if kept is not node
            ]
            self._removed.add(id(node))

    def _walk(self) -> list[exp.Expr]:
        if self._walked is None:
            by_type: dict[type[exp.Expr], list[exp.Expr]] = {}
            walked = list(self.tree.walk())
            for node in walked:
                kind = type(node)
                found = by_type.get(kind)
                if found is None:
                    by_type[kind] = [node]
                else:
                    found.append(node)
            self._walked, self._by_type = walked, by_type
        return self._walked
