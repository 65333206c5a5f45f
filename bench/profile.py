"""Where the time goes: DuckDB's operator profile of sqlmetrics' query, polars' stages.

    python bench/profile.py --rows 1e7 [--k 10]

After a warm-up call, runs ``sqlmetrics.evaluate`` once on a connection with DuckDB's JSON
profiling on and prints, per query it ran, its wall time and the operators that took the most time
(DuckDB's operator timing is summed over threads). Then times the polars query of ``tools.py``
stage by stage (polars 2 has no per-node profile). Run it on a quiet machine; it is not part of
``run.py``'s timings.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import generate
import run
import tools


def _operators(node: dict[str, Any], out: list[tuple[float, str, int]]) -> None:
    """(seconds, label, rows) of every operator in a DuckDB JSON profile (1.x or 2.x layout)."""
    name = node.get("type") or node.get("operator_name") or node.get("operator_type") or ""
    if name and name != "QUERY":
        extra = node.get("extra_info") or {}
        detail = ""
        if isinstance(extra, dict):
            found = extra.get("Aggregates") or extra.get("Function") or extra.get("Conditions")
            detail = str(found or "")[:70]
        timing = node.get("timing", node.get("operator_timing", 0.0))
        rows = node.get("intermediate_rows", node.get("operator_cardinality", 0))
        out.append((float(timing), f"{name.strip()} {detail}".strip(), int(rows)))
    children = node.get("children", [])
    if isinstance(node.get("operator"), list):
        children = [*children, *node["operator"]]
    for child in children:
        _operators(child, out)


def profile_sqlmetrics(recs: str, truth: str, metrics: list[str], top: int) -> None:
    import duckdb

    import sqlmetrics
    from sqlmetrics.engines import duckdb_passes

    with tempfile.TemporaryDirectory() as folder:
        connection = duckdb.connect()
        outputs: list[dict[str, Any]] = []
        original = duckdb_passes.split_diagnostics

        def profiled(cursor: Any, query: str, *args: Any) -> Any:
            """evaluate's query (each pass's, under a memory limit) with DuckDB's profile on."""
            path = Path(folder) / f"q{len(outputs)}.json"
            for setting in (
                "SET enable_profiling = 'json'",
                "SET profiling_mode = 'detailed'",
                f"SET profiling_output = '{path}'",
            ):
                cursor.execute(setting)
            try:
                return original(cursor, query, *args)
            finally:
                cursor.execute("RESET enable_profiling")
                outputs.append({"path": path, "query": query})

        duckdb_passes.split_diagnostics = profiled  # type: ignore[assignment]
        try:
            start = time.perf_counter()
            sqlmetrics.evaluate(recs, truth, metrics, connection=connection)
            total = time.perf_counter() - start
        finally:
            duckdb_passes.split_diagnostics = original  # type: ignore[assignment]
        print(f"sqlmetrics.evaluate: {total:.3f} s wall")
        for number, entry in enumerate(outputs):
            try:
                profile = json.loads(entry["path"].read_text())
            except (OSError, json.JSONDecodeError):
                continue
            operators: list[tuple[float, str, int]] = []
            _operators(profile, operators)
            if not operators:
                continue
            query = profile.get("query", {})
            wall = float(query.get("total_time", profile.get("latency", 0.0)))
            summed = sum(t for t, _, _ in operators)
            first = " ".join(entry["query"].split())[:70]
            print(f"\n  query {number}: {wall:.3f} s wall, operators {summed:.3f} s (all threads)")
            print(f"    {first} ...")
            for timing, label, rows in sorted(operators, reverse=True)[:top]:
                print(f"    {timing:8.3f} s  {rows:>12,} rows  {label}")
        connection.close()


def _timed(label: str, frame: Any) -> float:
    start = time.perf_counter()
    frame.collect()
    seconds = time.perf_counter() - start
    print(f"    {seconds:8.3f} s  {label}")
    return seconds


def profile_polars(recs: str, truth: str, k: int) -> None:
    """polars 2 has no per-node profile for its streaming engine: times its stages instead."""
    import polars as pl

    print("\npolars, stage by stage (each collected on its own):")
    columns = ("user_id", "item_id", "score")
    _timed("scan recs (sum of the 3 columns)", pl.scan_parquet(recs).select(pl.col(columns).sum()))
    top = tools.polars_top_k(recs, k)
    _timed(f"top {k} per user (sum of item_id, pos)", top.select(pl.col("item_id", "pos").sum()))
    _timed("the whole query", tools.polars_query(recs, truth, k))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=generate.parse_rows, required=True)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--top", type=int, default=12, help="operators shown per query")
    args = parser.parse_args(argv)
    data = generate.data_dir(args.rows)
    recs, truth = str(data / "recommendations.parquet"), str(data / "interactions.parquet")
    if not Path(recs).exists():
        print(f"no data in {data}: run bench/generate.py --rows {args.rows:g} first")
        return 1
    warmup = run.WARMUP
    tools.run_sqlmetrics(
        str(warmup / "recommendations.parquet"), str(warmup / "interactions.parquet"), args.k
    )
    profile_sqlmetrics(recs, truth, tools.labels(args.k), args.top)
    profile_polars(recs, truth, args.k)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
