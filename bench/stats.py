"""Issue 19: what the intervals and the comparison cost, as ratios measured in one run.

- evaluate with ``ci=0.95, ci_method="bootstrap", replicates=1000`` against evaluate without
  intervals (goal: at most 1.3x), and with the t-interval for reference;
- ``compare`` of two models against evaluating both (``group_by="model"``; goal: at most 1.3x).

The seven metrics of bench/run.py at k = 10, on bench/generate.py's data (generated if
missing). The two models are the data's lists (model a) and the same lists with the scores
reversed (model b, so that the top 10 differ), in one Parquet file written beside the data.
Each timing is the median of ``--rounds`` runs, alternated so that a burst of load on a shared
machine spreads over all of them. A calibration run at scale (``--calibrate``) repeats the
coverage simulation of tests/test_stats.py with more datasets.

    python bench/stats.py --rows 1e7 --rounds 3
    python bench/stats.py --calibrate 5000
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import generate

import sqlmetrics

METRICS = ["ndcg@10", "map@10", "mrr@10", "precision@10", "recall@10", "hit_rate@10", "f1@10"]
RESULTS = Path(__file__).resolve().parent / "results"


def two_models(data: Path) -> Path:
    """The data's lists as model a, and with reversed scores as model b, in one file."""
    import duckdb

    target = data / "two_models.parquet"
    if not target.exists():
        source = str(data / "recommendations.parquet").replace("'", "''")
        duckdb.sql(
            f"COPY (SELECT 'a' AS model, user_id, item_id, score FROM read_parquet('{source}') "
            f"UNION ALL SELECT 'b' AS model, user_id, item_id, ROUND(1 - score, 4) AS score "
            f"FROM read_parquet('{source}')) TO '{target}' (FORMAT parquet)"
        )
    return target


def timed(run: Any) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def measure(rows: int, rounds: int, replicates: int) -> dict[str, Any]:
    data = generate.data_dir(rows)
    if not (data / "recommendations.parquet").exists():
        generate.generate(rows)
    recs, truth = str(data / "recommendations.parquet"), str(data / "interactions.parquet")
    both = str(two_models(data))
    runs = {
        "evaluate": lambda: sqlmetrics.evaluate(recs, truth, METRICS),
        "evaluate_ci_t": lambda: sqlmetrics.evaluate(recs, truth, METRICS, ci=0.95),
        "evaluate_ci_bootstrap": lambda: sqlmetrics.evaluate(
            recs, truth, METRICS, ci=0.95, ci_method="bootstrap", replicates=replicates
        ),
        "evaluate_two_models": lambda: sqlmetrics.evaluate(both, truth, METRICS, group_by="model"),
        "compare_two_models": lambda: sqlmetrics.compare(
            both, truth, METRICS, group_by="model", baseline="a", replicates=replicates
        ),
    }
    for run in runs.values():  # warm: the file cache, DuckDB's first connection
        run()
        break
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            times[name].append(timed(run))
    median = {name: statistics.median(values) for name, values in times.items()}
    return {
        "rows": rows,
        "rounds": rounds,
        "replicates": replicates,
        "seconds": times,
        "median": median,
        "ratio_bootstrap": median["evaluate_ci_bootstrap"] / median["evaluate"],
        "ratio_t": median["evaluate_ci_t"] / median["evaluate"],
        "ratio_compare": median["compare_two_models"] / median["evaluate_two_models"],
    }


def calibrate(datasets: int) -> dict[str, float]:
    """Coverage of the known mean by 95% intervals over ``datasets`` datasets (the recipe of
    tests/test_stats.py at a larger count)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(1919)
    users, p = 100, 0.3
    recs = pd.DataFrame(
        {
            "dataset": np.repeat(np.arange(datasets), users * 10),
            "user_id": np.tile(np.repeat(np.arange(users), 10), datasets),
            "item_id": np.tile(np.arange(10), datasets * users),
        }
    )
    recs["score"] = (10 - recs["item_id"]).astype(float)
    truth = recs.loc[rng.random(len(recs)) < p, ["dataset", "user_id", "item_id"]]
    mean = p / (1 - (1 - p) ** 10)
    found = {}
    for method in ("t", "bootstrap"):
        result = sqlmetrics.evaluate(
            recs,
            truth,
            ["precision@10"],
            group_by="dataset",
            ci=0.95,
            ci_method=method,
            replicates=1000,
        )
        low, high = result["precision@10_lo"], result["precision@10_hi"]
        found[method] = float(((low <= mean) & (mean <= high)).mean())
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=generate.parse_rows, default=None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--calibrate", type=int, default=0, metavar="DATASETS")
    args = parser.parse_args(argv)
    RESULTS.mkdir(exist_ok=True)
    if args.rows:
        result = measure(args.rows, args.rounds, args.replicates)
        label = generate.rows_label(args.rows)
        (RESULTS / f"stats_{label}.json").write_text(json.dumps(result, indent=2) + "\n")
        for name, seconds in result["median"].items():
            print(f"{name:24} {seconds:8.2f} s  {result['seconds'][name]}")
        print(
            f"bootstrap / evaluate {result['ratio_bootstrap']:.2f}x, t / evaluate "
            f"{result['ratio_t']:.2f}x, compare / evaluate both {result['ratio_compare']:.2f}x"
        )
    if args.calibrate:
        coverage = calibrate(args.calibrate)
        print(f"coverage over {args.calibrate} datasets: {coverage}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
