"""The report's cost against evaluate's (issue 20): on the bench data, the time of
``sqlmetrics.report(recs, truth, METRICS, k_max=K)`` over the time of ``evaluate`` of the same
metrics at k = K alone. Each run in a fresh child process, alternating, medians over rounds.

    python bench/generate.py --rows 1e7 && python bench/report_page.py --rows 1e7 --rounds 3

The report's time is split into its evaluate call (every k at once, with the intervals and the
per-user distributions in the same query) and the rest (row counts, drawing, writing the page),
from the timings the child prints.
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
METRICS = ["ndcg", "map", "recall", "hit_rate"]

CHILD = """
import json, sys, time
import sqlmetrics
from sqlmetrics.reporting import data
recs, truth, what, k_max = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
metrics = {metrics!r}
times = {{}}
def timed(name, function):
    def call(*args, **kwargs):
        start = time.perf_counter()
        result = function(*args, **kwargs)
        times[name] = times.get(name, 0) + time.perf_counter() - start
        return result
    return call
start = time.perf_counter()
if what == "evaluate":
    frame = sqlmetrics.evaluate(recs, truth, [f"{{m}}@{{k_max}}" for m in metrics])
    columns = len(frame.columns)
else:
    import sqlmetrics.run
    from sqlmetrics.reporting import curves
    # data.gather imports evaluate from sqlmetrics.run, and calls curves.gathered
    sqlmetrics.run.evaluate = timed("summary", sqlmetrics.run.evaluate)
    curves.gathered = timed("curves", curves.gathered)
    page = sqlmetrics.report(recs, truth, metrics, k_max=k_max)
    columns = len(page.summary.columns)
    times["page_bytes"] = len(page.html.encode())
total = time.perf_counter() - start
print(json.dumps({{"what": what, "seconds": total, "columns": columns, **times}}))
"""


def run(what: str, folder: Path, k_max: int) -> dict[str, float]:
    code = CHILD.format(metrics=METRICS)
    recs, truth = str(folder / "recommendations.parquet"), str(folder / "interactions.parquet")
    answer = subprocess.run(
        [sys.executable, "-c", code, recs, truth, what, str(k_max)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(answer.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", default="1e7")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--k-max", type=int, default=100)
    args = parser.parse_args()
    folder = HERE / "data" / args.rows
    if not folder.is_dir():
        sys.exit(f"no bench data in {folder}: run python bench/generate.py --rows {args.rows}")
    results: dict[str, list[dict[str, float]]] = {"evaluate": [], "report": []}
    for round_number in range(args.rounds):
        order = ["evaluate", "report"] if round_number % 2 == 0 else ["report", "evaluate"]
        for what in order:
            started = time.perf_counter()
            results[what].append(run(what, folder, args.k_max))
            print(f"round {round_number + 1} {what}: {time.perf_counter() - started:.1f} s wall")
    evaluate = statistics.median(r["seconds"] for r in results["evaluate"])
    report = statistics.median(r["seconds"] for r in results["report"])
    curves = statistics.median(r.get("curves", 0.0) for r in results["report"])
    summary = statistics.median(r.get("summary", 0.0) for r in results["report"])
    print(
        f"rows {args.rows}, {len(METRICS)} metrics, k_max {args.k_max}: evaluate at k={args.k_max} "
        f"{evaluate:.2f} s; report {report:.2f} s ({report / evaluate:.2f}x): the curves' query "
        f"{curves:.2f} s (rows per k), the summary's evaluate calls {summary:.2f} s (intervals, "
        f"distributions), the rest {report - curves - summary:.2f} s; page "
        f"{results['report'][0]['page_bytes'] / 1e6:.2f} MB"
    )
    out = HERE / "results" / f"report_page_{args.rows}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
