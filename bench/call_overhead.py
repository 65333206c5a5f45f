"""sqlmetrics' own cost per call: a small evaluate against DuckDB running the very same SQL.

    python bench/call_overhead.py [--rows 1000] [--rounds 200] [--profile]

Builds ~1,000 rows of recommendations (50 users x 20 items) and ~300 interactions as pandas
DataFrames, captures the DuckDB SQL that ``sqlmetrics.evaluate`` runs for the seven metrics of
the benchmark (ndcg@10, map@10, mrr@10, precision@5, recall@20, hit_rate@10, f1@10), then
alternates rounds of

* ``evaluate``: the whole call (resolving the metrics, binding the DataFrames, the probes and
  checks, composing or fetching the cached SQL, running it, splitting the result), and
* ``bare DuckDB``: the same SQL on a cursor with the same DataFrames registered under the same
  names, fetched as a DataFrame,

and prints each one's median wall time and CPU time, their ratio and their difference: the
difference is what sqlmetrics adds to DuckDB's execution. Then the same for ``to_sql`` in five
dialects (there is nothing to compare it with: all of it is sqlmetrics' own). ``--profile``
prints a cProfile of the evaluate and to_sql calls (cumulative time, top entries).

The machine may be shared: rounds alternate so that a burst of load hits both sides, and medians
ignore the outliers. It is a measurement, not a test; run it by hand.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

METRICS = ["ndcg@10", "map@10", "mrr@10", "precision@5", "recall@20", "hit_rate@10", "f1@10"]
DIALECTS = ["duckdb", "postgres", "snowflake", "bigquery", "spark"]


def frames(rows: int) -> tuple[Any, Any]:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    per_user = 20
    users = max(1, rows // per_user)
    items = 10 * per_user
    recs = pd.DataFrame(
        {
            "user_id": np.repeat(np.arange(users), per_user),
            "item_id": np.concatenate(
                [rng.choice(items, per_user, replace=False) for _ in range(users)]
            ),
            "score": rng.random(users * per_user),
        }
    )
    truth = pd.DataFrame(
        {"user_id": rng.integers(0, users, rows // 3), "item_id": rng.integers(0, items, rows // 3)}
    ).drop_duplicates(ignore_index=True)
    return recs, truth


def captured_sql(recs: Any, truth: Any) -> str:
    """The query evaluate runs, taken from the call itself (duckdb_passes.split_diagnostics,
    which runs evaluate's query on DuckDB)."""
    import sqlmetrics
    from sqlmetrics.engines import duckdb_passes

    seen: list[str] = []
    original = duckdb_passes.split_diagnostics

    def capture(connection: Any, query: str, *args: Any) -> Any:
        seen.append(query)
        return original(connection, query, *args)

    duckdb_passes.split_diagnostics = capture  # type: ignore[assignment]
    try:
        sqlmetrics.evaluate(recs, truth, METRICS)
    finally:
        duckdb_passes.split_diagnostics = original  # type: ignore[assignment]
    assert len(seen) == 1, seen
    return seen[0]


def timed(call: Callable[[], object]) -> tuple[float, float]:
    """(wall, cpu) seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    import duckdb

    import sqlmetrics

    recs, truth = frames(args.rows)
    sql = captured_sql(recs, truth)
    connection = duckdb.connect()
    cursor = connection.cursor()
    cursor.register("sqlmetrics_recommendations", recs)
    cursor.register("sqlmetrics_interactions", truth)

    def bare() -> object:
        return cursor.execute(sql).df()

    def evaluate() -> object:
        return sqlmetrics.evaluate(recs, truth, METRICS)

    def to_sql() -> object:
        return [sqlmetrics.to_sql(METRICS, dialect=dialect) for dialect in DIALECTS]

    def to_sql_fresh() -> object:
        # a new request each time (another threshold): nothing cached can answer it
        to_sql_fresh.count += 1  # type: ignore[attr-defined]
        threshold = to_sql_fresh.count * 1e-9  # type: ignore[attr-defined]
        return [
            sqlmetrics.to_sql(METRICS, dialect=dialect, threshold=threshold) for dialect in DIALECTS
        ]

    to_sql_fresh.count = 0  # type: ignore[attr-defined]

    # same numbers both ways, and a warm-up
    expected = evaluate()
    got = bare()
    assert got is not None and expected is not None
    samples: dict[str, list[tuple[float, float]]] = {
        "evaluate": [],
        "bare": [],
        "to_sql": [],
        "to_sql_fresh": [],
    }
    calls = {"evaluate": evaluate, "bare": bare, "to_sql": to_sql, "to_sql_fresh": to_sql_fresh}
    fresh_rounds = max(5, args.rounds // 10)
    for index in range(args.rounds):
        order = ["evaluate", "bare"] if index % 2 == 0 else ["bare", "evaluate"]
        if index < fresh_rounds:
            order += ["to_sql", "to_sql_fresh"]
        for name in order:
            samples[name].append(timed(calls[name]))

    def median(name: str, which: int) -> float:
        return statistics.median(sample[which] for sample in samples[name]) * 1000

    print(
        f"{len(recs)} recommendation rows, {len(truth)} interactions, {len(METRICS)} metrics, "
        f"{args.rounds} alternating rounds (medians)"
    )
    for name, label in (("evaluate", "sqlmetrics.evaluate"), ("bare", "bare DuckDB, same SQL")):
        print(f"  {label:<28} wall {median(name, 0):7.2f} ms   cpu {median(name, 1):7.2f} ms")
    ratio = median("evaluate", 0) / median("bare", 0)
    print(
        f"  ratio {ratio:.2f}x; sqlmetrics' own time: wall "
        f"{median('evaluate', 0) - median('bare', 0):.2f} ms, cpu "
        f"{median('evaluate', 1) - median('bare', 1):.2f} ms"
    )
    per = len(DIALECTS)
    print(
        f"  to_sql, {per} dialects ({', '.join(DIALECTS)}), {fresh_rounds} rounds: "
        f"repeated request {median('to_sql', 0) / per:.2f} ms per dialect, "
        f"new request {median('to_sql_fresh', 0) / per:.2f} ms per dialect (wall)"
    )

    if args.profile:
        # bench/profile.py would shadow the standard library's profile, which cProfile imports
        here = str(Path(__file__).resolve().parent)
        sys.path[:] = [entry for entry in sys.path if str(Path(entry or ".").resolve()) != here]
        import cProfile
        import pstats

        for label, call, repeat in (
            ("evaluate (repeated request)", evaluate, 50),
            ("to_sql (new request each time, 5 dialects)", to_sql_fresh, 10),
        ):
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(repeat):
                call()
            profiler.disable()
            print(f"\n--- cProfile: {label}, {repeat} calls")
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
