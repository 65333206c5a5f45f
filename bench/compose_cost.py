"""The CPU cost of composing and rendering a query afresh, every cache of finished SQL bypassed.

    python bench/compose_cost.py [--rounds 5] [--dialects duckdb,postgres,spark,tsql]

For each dialect: ``to_sql`` of every metric (each at @5 and @10, or without a cutoff, as
tests/test_dialects.py asks) and of the seven metrics of bench/call_overhead.py, then
evaluate's DuckDB query of those seven composed afresh (``duckdb_passes._query_sql`` without
its cache). to_sql's caches (``api._cached_to_sql``, the shared compositions) are cleared
before each call; the templates stay parsed, as in any process that composed once. Prints the
mean CPU per call over a loop (the garbage collections the calls cause included) and the
median of the calls. It is a measurement, not a test; run it by hand, and compare trees in
alternating runs on a shared machine.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

SEVEN = ["ndcg@10", "map@10", "mrr@10", "precision@5", "recall@20", "hit_rate@10", "f1@10"]


def every_metric() -> list[str]:
    from sqlmetrics.catalog.metrics import metrics
    from sqlmetrics.compose.lists import reads_baseline

    labels: list[str] = []
    for metric in metrics().values():
        if reads_baseline(metric):
            continue  # the overlap metrics compare the lists with a baseline model's
        labels += [f"{metric.name}@5", f"{metric.name}@10"] if metric.takes_cutoff else []
        labels += [] if metric.requires_cutoff else [metric.name]
    return labels


def to_sql_call(labels: list[str], dialect: str) -> Callable[[], Any]:
    import sqlmetrics
    from sqlmetrics import api

    def call() -> Any:
        api._cached_to_sql.cache_clear()
        api._shared_trees.clear()
        api._seen_once.clear()
        return sqlmetrics.to_sql(
            labels, "a.recs", "a.truth", dialect=dialect, items="a.items", history="a.history"
        )

    return call


def evaluate_query() -> Callable[[], Any]:
    """evaluate's query of the seven metrics on bench/call_overhead.py's frames, composed and
    written afresh at each call."""
    from call_overhead import frames  # type: ignore[import-not-found]

    import sqlmetrics
    from sqlmetrics.engines import duckdb_passes

    recs, truth = frames(1000)
    seen: list[tuple[Any, Any]] = []
    cached = duckdb_passes._query_sql

    def capture(*args: Any, **kwargs: Any) -> Any:
        seen.append((args, kwargs))
        return cached(*args, **kwargs)

    duckdb_passes._query_sql = capture  # type: ignore[assignment]
    try:
        sqlmetrics.evaluate(recs, truth, SEVEN)
    finally:
        duckdb_passes._query_sql = cached
    args, kwargs = seen[0]
    return lambda: cached.__wrapped__(*args, **kwargs)


def measure(label: str, call: Callable[[], Any], calls: int) -> None:
    call()
    gc.collect()
    each: list[float] = []
    start = time.process_time()
    for _ in range(calls):
        before = time.process_time()
        call()
        each.append(time.process_time() - before)
    gc.collect()
    mean = (time.process_time() - start) / calls
    median = statistics.median(each)
    print(f"{label:32s} {mean * 1000:8.1f} CPU ms per call (median {median * 1000:.1f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dialects", default="duckdb,postgres,spark,tsql")
    options = parser.parse_args()
    import pandas  # noqa: F401  (a test process's heap, which the collector walks)

    every = every_metric()
    for dialect in options.dialects.split(","):
        measure(f"every metric, {dialect}", to_sql_call(every, dialect), options.rounds)
    for dialect in options.dialects.split(","):
        measure(f"seven metrics, {dialect}", to_sql_call(SEVEN, dialect), options.rounds * 8)
    measure("evaluate's query, seven metrics", evaluate_query(), options.rounds * 8)


if __name__ == "__main__":
    main()
