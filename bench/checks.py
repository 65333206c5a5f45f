"""What evaluate's checks and diagnostics cost: evaluate against the bare query of the same
metrics, in one process.

    python bench/checks.py [--rows 1e7] [--rounds 6]

Times, in alternating rounds of one process (medians of wall and CPU seconds): the query
``to_sql`` writes for the seven metrics at k = 10 (no checks, no diagnostics) on a DuckDB
connection over the Parquet files of ``generate.py``; ``evaluate`` on the same files (its checks
and diagnostics in the same query); and ``evaluate(..., checks="full")`` (repeated items looked
for anywhere in each list). One process spares each round the imports and DuckDB's start, so
the ratios show the checks' own price; ``run.py``'s ``sqlmetrics_bare`` and ``sqlmetrics_full``
time the same in fresh processes beside the other tools. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import generate

METRICS = ["ndcg@10", "map@10", "mrr@10", "precision@10", "recall@10", "hit_rate@10", "f1@10"]


def main(argv: list[str] | None = None) -> int:
    import duckdb
    from sqlglot import exp

    import sqlmetrics

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1e7")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args(argv)
    folder = generate.DATA / args.rows
    recs, truth = str(folder / "recommendations.parquet"), str(folder / "interactions.parquet")
    connection = duckdb.connect()
    for name, path in (("recommendations", recs), ("interactions", truth)):
        read = exp.select("*").from_(exp.func("read_parquet", exp.Literal.string(path)))
        connection.execute(exp.Create(this=exp.to_table(name), kind="VIEW", expression=read).sql())
    bare_sql = sqlmetrics.to_sql(METRICS)
    calls: dict[str, Callable[[], object]] = {
        "bare query": lambda: connection.execute(bare_sql).fetchall(),
        "evaluate": lambda: sqlmetrics.evaluate(recs, truth, METRICS),
        'checks="full"': lambda: sqlmetrics.evaluate(recs, truth, METRICS, checks="full"),
    }
    names = list(calls)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    for round_ in range(args.rounds):
        for name in names[round_ % 3 :] + names[: round_ % 3]:
            wall, cpu = time.perf_counter(), time.process_time()
            calls[name]()
            times[name].append((time.perf_counter() - wall, time.process_time() - cpu))
    base_wall = statistics.median(t[0] for t in times["bare query"])
    base_cpu = statistics.median(t[1] for t in times["bare query"])
    for name in names:
        wall = statistics.median(t[0] for t in times[name])
        cpu = statistics.median(t[1] for t in times[name])
        print(
            f"{name:15s} {wall:7.3f} s wall {cpu:7.3f} CPU s   "
            f"{wall / base_wall:5.2f}x wall {cpu / base_cpu:5.2f}x CPU"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
