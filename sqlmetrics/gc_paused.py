"""Composing and writing a query with Python's cyclic garbage collector paused.

Composing a query makes and drops hundreds of thousands of sqlglot nodes, and every node
points at its parent, so each young generation that fills up is traced, and every so often the
whole heap is (pandas, numpy and DuckDB's modules: ~180,000 objects). For 39 metrics on a
1,000-row input, composing and writing the query took 141 CPU ms with the collector on and 31
ms with it paused (docs/benchmark.md). The pause lasts as long as the call; the nodes it drops
are collected at the first collection after it.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def gc_paused(function: Callable[P, R]) -> Callable[P, R]:
    """``function`` run with the collector paused, and left as it was found afterwards (a
    call inside another paused one does not re-enable it)."""

    @functools.wraps(function)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        if not gc.isenabled():
            return function(*args, **kwargs)
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            gc.enable()

    return paused
