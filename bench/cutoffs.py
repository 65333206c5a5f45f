"""Time against the number of cutoffs (issue 21): the seven metrics at k = 10 alone, at k = 100
alone (the depth of the calls after it), at k = 1, 5, 10, 20, 50, 100, and at every k from 1 to
100, in one ``evaluate`` call each, on the bench data. Each run is a fresh child process timing
its second call (the first warms the file cache and sqlmetrics' caches), the calls alternate
within a round, and the medians of wall seconds, CPU seconds and peak memory go to
bench/results/cutoffs_<rows>.json; with ``--plot`` (matplotlib) the ratios to k = 10 at every
scale found there are drawn in docs/cutoffs.png.

    python bench/cutoffs.py --rows 1e7 --rounds 3
    python bench/cutoffs.py --rows 1e8 --rounds 2 --plot

Each result says how many passes evaluate made: k = 1..100 takes the curve plan in one query
(sqlmetrics/compose/plan.py), or the window plan per pass of users when the input is large
enough for evaluate to go in passes (the curve plan does not run in passes).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAMES = ["ndcg", "map", "mrr", "precision", "recall", "hit_rate", "f1"]
CALLS = {
    "k = 10": [10],
    "k = 100": [100],  # the depth every call below ranks to, alone
    "k = 1, 5, 10, 20, 50, 100": [1, 5, 10, 20, 50, 100],
    "k = 1..100": list(range(1, 101)),
}

CHILD = """
import json, resource, sys, time
import duckdb, sqlmetrics
recs, truth, cutoffs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
metrics = [f"{{name}}@{{k}}" for name in {names!r} for k in cutoffs]
connection = duckdb.connect()
sqlmetrics.evaluate(recs, truth, metrics, connection=connection)
cpu, wall = time.process_time(), time.perf_counter()
frame = sqlmetrics.evaluate(recs, truth, metrics, connection=connection)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
print(json.dumps({{
    "wall": wall,
    "cpu": cpu,
    "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    "passes": frame.attrs.get("passes", 1),
    "columns": len(frame.columns),
    "ndcg_at_deepest": float(frame[f"ndcg@{{cutoffs[-1]}}"].iloc[0]),
}}))
"""


def run(folder: Path, cutoffs: list[int], timeout: float) -> dict[str, float]:
    recs, truth = str(folder / "recommendations.parquet"), str(folder / "interactions.parquet")
    answer = subprocess.run(
        [sys.executable, "-c", CHILD.format(names=NAMES), recs, truth, json.dumps(cutoffs)],
        capture_output=True,
        text=True,
        check=True,
        timeout=timeout,
    )
    return json.loads(answer.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def measure(rows: str, rounds: int, timeout: float) -> dict[str, dict[str, object]]:
    folder = HERE / "data" / rows
    if not folder.is_dir():
        sys.exit(f"no bench data in {folder}: run python bench/generate.py --rows {rows}")
    runs: dict[str, list[dict[str, float]]] = {call: [] for call in CALLS}
    for round_number in range(rounds):
        order = list(CALLS) if round_number % 2 == 0 else list(reversed(CALLS))
        for call in order:
            result = run(folder, CALLS[call], timeout)
            runs[call].append(result)
            print(
                f"{rows} round {round_number + 1} {call}: {result['wall']:.2f} s, "
                f"{result['cpu']:.2f} CPU s, {result['peak_rss_gb']:.2f} GB, "
                f"{result['passes']} pass(es)",
                flush=True,
            )
    summary: dict[str, dict[str, object]] = {}
    for call, results in runs.items():
        summary[call] = {
            "cutoffs": len(CALLS[call]),
            **{
                key: statistics.median(r[key] for r in results)
                for key in ("wall", "cpu", "peak_rss_gb")
            },
            "passes": max(r["passes"] for r in results),
            "runs": results,
        }
    single = summary["k = 10"]
    for figures in summary.values():
        for key in ("wall", "cpu", "peak_rss_gb"):
            figures[f"{key}_ratio"] = float(figures[key]) / float(single[key])  # type: ignore[arg-type]
    return summary


def plot(output: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(10, 4))
    for path in sorted((HERE / "results").glob("cutoffs_*.json")):
        rows = path.stem.split("_", 1)[1]
        summary = json.loads(path.read_text())
        curve = [call for call in CALLS if call != "k = 100"]
        counts = [summary[call]["cutoffs"] for call in curve]
        for axis, key in zip(axes, ("wall", "cpu"), strict=True):
            ratios = [summary[call][f"{key}_ratio"] for call in curve]
            (line,) = axis.plot(counts, ratios, marker="o", label=f"{rows} rows")
            depth = summary["k = 100"][f"{key}_ratio"]
            axis.plot([1], [depth], marker="x", color=line.get_color(), linestyle="none")
            axis.annotate(f"k = 100 alone ({rows})", (1, depth), fontsize=8)
    for axis, key in zip(axes, ("wall seconds", "CPU seconds"), strict=True):
        axis.set_xscale("log")
        axis.set_xticks([1, 6, 100], labels=["1 (k = 10)", "6", "100 (k = 1..100)"])
        axis.axhline(2, color="grey", linestyle="--", linewidth=1, label="target for 100: 2x")
        axis.axhline(1.5, color="grey", linestyle=":", linewidth=1, label="target for 6: 1.5x")
        axis.set_xlabel("cutoffs in one call (7 metrics each)")
        axis.set_ylabel(f"{key} / k = 10's")
        axis.set_title(f"evaluate: {key} against the number of cutoffs")
        axis.legend()
    figure.tight_layout()
    figure.savefig(output, dpi=100)
    print(f"wrote {output}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", nargs="*", default=["1e7"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per child")
    parser.add_argument("--plot", action="store_true", help="draw docs/cutoffs.png")
    args = parser.parse_args()
    (HERE / "results").mkdir(exist_ok=True)
    for rows in args.rows:
        started = time.perf_counter()
        summary = measure(rows, args.rounds, args.timeout)
        path = HERE / "results" / f"cutoffs_{rows}.json"
        path.write_text(json.dumps(summary, indent=1))
        print(f"{rows}: {time.perf_counter() - started:.0f} s in all; wrote {path}")
        for call, figures in summary.items():
            print(
                f"  {call}: {figures['wall']:.2f} s ({figures['wall_ratio']:.2f}x), "
                f"{figures['cpu']:.2f} CPU s ({figures['cpu_ratio']:.2f}x), "
                f"{figures['peak_rss_gb']:.2f} GB ({figures['peak_rss_gb_ratio']:.2f}x), "
                f"{figures['passes']} pass(es)"
            )
    if args.plot:
        plot(HERE.parent / "docs" / "cutoffs.png")


if __name__ == "__main__":
    main()
