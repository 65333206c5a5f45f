"""Times sqlmetrics' TREC path against trec_eval built from its source.

    python bench/trec.py [--topics 5000] [--docs 1000] [--judged 200] [--rounds 3]
                         [--tools trec_eval_9,trec_eval_10,sqlmetrics_cli,sqlmetrics_api]

Generates (once, deterministically: numpy's PCG64 seeded per topic) a run of topics x docs
lines and qrels of topics x judged lines under ``bench/data/trec/``, builds trec_eval 9.0.8
(tag v9.0.8) and 10.0 (tag v10.0) with their own ``make`` in ``bench/.trec_eval-<version>``
from a clone of usnistgov/trec_eval (``--source``; never committed), then runs every tool in
alternating rounds, each in a fresh child process, with trec_eval's default measures (the
'all' lines; ``--per-query`` adds the per-query lines, trec_eval's ``-q``):

- ``trec_eval_9`` / ``trec_eval_10``: ``trec_eval QRELS RUN``;
- ``sqlmetrics_cli``: ``sqlmetrics evaluate RUN QRELS --input-format trec --format trec -q``
  (``-q``: quiet; trec_eval 10's report, the default);
- ``sqlmetrics_api``: ``sqlmetrics.trec_eval(RUN, QRELS, per_query=False)`` printed by
  ``trec_text``;
- ``sqlmetrics_cli_9``: the CLI with ``--trec-version 9``;
- ``baseline_cli`` (with ``--baseline PATH``): the CLI of the sqlmetrics checked out at PATH.

Each child's wall seconds, CPU seconds (user + system) and peak RSS (``os.wait4``) are kept;
the table gives their medians and each tool's ratio to trec_eval 9.0.8. Every output is
compared line for line with the trec_eval of its version (10.0 for the default report, 9.0.8
for ``sqlmetrics_cli_9``); a difference is printed and fails the run. Results:
``bench/results/trec.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DATA = BENCH / "data" / "trec"
RESULTS = BENCH / "results"
SOURCES = (
    Path("/work/.mirror/usnistgov+trec_eval/repo"),
    Path("/tmp/usnistgov+trec_eval"),  # noqa: S108 (where fetch may leave it)
)
TAGS = {"9": "v9.0.8", "10": "v10.0"}
TOOLS = ("trec_eval_9", "trec_eval_10", "sqlmetrics_cli", "sqlmetrics_api")
COLLECTION = 10_000_000  # docnos are drawn from doc0000000 .. doc9999999

# --- the data ----------------------------------------------------------------------------------


def _topic(topic: int, docs: int, judged: int) -> tuple[str, str]:
    """One topic's run lines (sorted by score descending, as a system writes them; scores of
    4 decimals, so about 5% of a topic's documents tie with another) and qrels lines: a third
    of the judged documents from the run (weighted towards its top), the rest from outside
    it; rel 0, 1 or 2 with probability .5, .35, .15."""
    rng = np.random.Generator(np.random.PCG64([20261128, topic]))
    drawn = rng.choice(COLLECTION, size=docs + judged, replace=False)
    listed, outside = drawn[:docs], drawn[docs:]
    scores = np.round(rng.random(docs), 4)
    order = np.argsort(-scores, kind="stable")
    listed, scores = listed[order], scores[order]
    run = "".join(
        f"{topic} Q0 doc{doc:07d} {rank} {score:.4f} bench\n"
        for rank, (doc, score) in enumerate(zip(listed.tolist(), scores.tolist(), strict=True), 1)
    )
    from_run = judged // 3
    weights = 1.0 / (np.arange(docs) + 20.0)
    picked = rng.choice(docs, size=from_run, replace=False, p=weights / weights.sum())
    judged_docs = np.concatenate([listed[picked], outside[: judged - from_run]])
    rels = rng.choice(3, size=judged, p=[0.5, 0.35, 0.15])
    qrels = "".join(
        f"{topic} 0 doc{doc:07d} {rel}\n"
        for doc, rel in zip(judged_docs.tolist(), rels.tolist(), strict=True)
    )
    return run, qrels


def generate(topics: int, docs: int, judged: int) -> tuple[Path, Path]:
    """The run and qrels files (written once per size; topics 1 .. topics as text, so the
    report's qid order is strcmp's: 1, 10, 100, ...)."""
    folder = DATA / f"{topics}x{docs}x{judged}"
    run_path, qrels_path = folder / "run.txt", folder / "qrels.txt"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    with open(f"{run_path}.part", "w") as run, open(f"{qrels_path}.part", "w") as qrels:
        for topic in range(1, topics + 1):
            run_lines, qrels_lines = _topic(topic, docs, judged)
            run.write(run_lines)
            qrels.write(qrels_lines)
    os.replace(f"{run_path}.part", run_path)
    os.replace(f"{qrels_path}.part", qrels_path)
    print(f"generated {folder} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return run_path, qrels_path


# --- trec_eval -----------------------------------------------------------------------------------


def _source(given: str | None) -> Path:
    candidates = [Path(given)] if given else list(SOURCES)
    for path in candidates:
        if (path / "HEAD").exists() or (path / ".git").exists():
            return path
    raise SystemExit(
        "no clone of usnistgov/trec_eval found: pass --source PATH (a git clone or mirror)"
    )


def build(version: str, source: str | None) -> Path:
    """trec_eval ``version`` built with its own Makefile in bench/.trec_eval-<tag>."""
    tag = TAGS[version]
    folder = BENCH / f".trec_eval-{tag.removeprefix('v')}"
    binary = folder / "trec_eval"
    if binary.exists():
        return binary
    if not folder.exists():
        subprocess.run(["git", "clone", "--quiet", str(_source(source)), str(folder)], check=True)  # noqa: S607
        subprocess.run(["git", "-C", str(folder), "checkout", "--quiet", tag], check=True)  # noqa: S607
    subprocess.run(["make", "-C", str(folder)], check=True, capture_output=True)  # noqa: S607
    return binary


# --- the runs ------------------------------------------------------------------------------------

API = (
    "import sys, sqlmetrics\n"
    "from sqlmetrics.trec import trec_text\n"
    "sys.stdout.write(trec_text(sqlmetrics.trec_eval(sys.argv[1], sys.argv[2], "
    "per_query=sys.argv[3] == '1')))\n"
)


def command(
    tool: str, run: Path, qrels: Path, binaries: dict[str, Path], per_query: bool
) -> list[str]:
    """A tool's command line; ``per_query``: trec_eval -q (sqlmetrics' --per-user)."""
    if tool.startswith("trec_eval_"):
        binary = str(binaries[tool.removeprefix("trec_eval_")])
        return [binary, *(["-q"] if per_query else []), str(qrels), str(run)]
    if tool == "sqlmetrics_api":
        return [sys.executable, "-c", API, str(run), str(qrels), "1" if per_query else "0"]
    # -q is sqlmetrics' --quiet (no progress bar, no diagnostics on stderr)
    cli = [sys.executable, "-m", "sqlmetrics.cli", "evaluate", str(run), str(qrels)]
    cli += ["--input-format", "trec", "--format", "trec", "-q"]
    cli += ["--per-user"] if per_query else []
    return cli + (["--trec-version", "9"] if tool == "sqlmetrics_cli_9" else [])


def measure(argv: list[str], output: Path, root: Path = ROOT) -> dict[str, float]:
    """Runs ``argv`` in a fresh child (importing sqlmetrics from ``root``), its stdout into
    ``output``: wall and CPU seconds, peak RSS (MiB, the child's own, from wait4)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    with open(output, "wb") as out:
        start = time.perf_counter()
        # in root: ``python -m`` puts the working directory first on the path
        child = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE, env=env, cwd=root)
        assert child.stderr is not None
        stderr = child.stderr.read()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{argv[0]} exited {child.returncode}: {stderr.decode()[-2000:]}")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mib": usage.ru_maxrss / 1024,
    }


def reference(tool: str) -> str | None:
    """The trec_eval whose report a tool's must equal, line for line."""
    if tool.startswith("trec_eval_"):
        return None
    return "trec_eval_9" if tool.endswith("_9") else "trec_eval_10"


def differences(mine: Path, theirs: Path) -> list[str]:
    ours, expected = mine.read_text().splitlines(), theirs.read_text().splitlines()
    found = [
        f"line {n}: {a!r} != {b!r}"
        for n, (a, b) in enumerate(zip(ours, expected, strict=False), 1)
        if a != b
    ]
    if len(ours) != len(expected):
        found.append(f"{len(ours)} lines where trec_eval printed {len(expected)}")
    return found


def summary(runs: dict[str, list[dict[str, float]]]) -> dict[str, dict[str, float]]:
    medians = {
        tool: {key: statistics.median(run[key] for run in rows) for key in rows[0]}
        for tool, rows in runs.items()
    }
    base = medians.get("trec_eval_9")
    for row in medians.values():
        if base:
            row["wall_ratio"] = row["wall"] / base["wall"]
            row["cpu_ratio"] = row["cpu"] / base["cpu"]
    return medians


def table(medians: dict[str, dict[str, float]]) -> str:
    lines = [
        "| tool | wall s | CPU s | peak RSS MiB | wall / trec_eval 9.0.8 | CPU / trec_eval 9.0.8 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for tool, row in medians.items():
        ratios = (
            f"{row['wall_ratio']:.2f}x | {row['cpu_ratio']:.2f}x" if "wall_ratio" in row else "| "
        )
        lines.append(
            f"| {tool} | {row['wall']:.2f} | {row['cpu']:.2f} | {row['rss_mib']:.0f} | {ratios} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=5000)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--judged", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument(
        "--per-query", action="store_true", help="the per-query lines too (trec_eval -q)"
    )
    parser.add_argument("--source", help="a clone of usnistgov/trec_eval (found if omitted)")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a checkout of another sqlmetrics commit (git worktree add): its CLI joins the "
        "rounds as baseline_cli, for a before/after in one run",
    )
    args = parser.parse_args()
    tools = [tool.strip() for tool in args.tools.split(",") if tool.strip()]
    tools += ["baseline_cli"] if args.baseline else []
    needed = {tool for tool in tools if tool.startswith("trec_eval_")}
    needed |= {ref for tool in tools if (ref := reference(tool))}
    binaries = {
        name.removeprefix("trec_eval_"): build(name.removeprefix("trec_eval_"), args.source)
        for name in sorted(needed)
    }
    run, qrels = generate(args.topics, args.docs, args.judged)
    outputs = RESULTS / "trec_outputs"
    outputs.mkdir(parents=True, exist_ok=True)
    order = list(dict.fromkeys([*sorted(needed), *tools]))
    runs: dict[str, list[dict[str, float]]] = {tool: [] for tool in order}
    for round_ in range(args.rounds):
        shift = round_ % len(order)
        for tool in order[shift:] + order[:shift]:
            argv = command(tool, run, qrels, binaries, args.per_query)
            root = args.baseline.resolve() if tool == "baseline_cli" else ROOT
            figures = measure(argv, outputs / f"{tool}.txt", root)
            runs[tool].append(figures)
            print(
                f"round {round_ + 1} {tool}: {figures['wall']:.2f} s wall, "
                f"{figures['cpu']:.2f} s CPU, {figures['rss_mib']:.0f} MiB",
                file=sys.stderr,
            )
    failed = False
    for tool in order:
        ref = reference(tool)
        if ref is None:
            continue
        found = differences(outputs / f"{tool}.txt", outputs / f"{ref}.txt")
        lines = len((outputs / f"{tool}.txt").read_text().splitlines())
        print(
            f"{tool} against {ref}: "
            + (f"{lines} lines identical" if not found else f"{len(found)} difference(s)")
        )
        for line in found[:10]:
            print(f"  {line}")
        failed = failed or bool(found)
    medians = summary(runs)
    print(table(medians))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "trec.json").write_text(
        json.dumps(
            {
                "size": {"topics": args.topics, "docs": args.docs, "judged": args.judged},
                "run_bytes": run.stat().st_size,
                "rounds": runs,
                "medians": medians,
                "cpus": os.cpu_count(),
            },
            indent=1,
        )
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
