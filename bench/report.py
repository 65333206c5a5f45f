"""Merges every ``bench/results/<rows>.json`` into ``report.md`` and ``time_vs_rows.png``.

    python bench/report.py

The report names the machine, the versions, the sqlmetrics commit measured, and per scale: the
table printed by run.py, the per-metric differences from sqlmetrics, the issue's targets that the
scale speaks to, and every tool that was skipped or failed with the reason.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path
from typing import Any

import run

RESULTS = run.RESULTS
PLOT_ORDER = (*run.PEERS, *run.EXTRAS)


def load_results(folder: Path) -> list[dict[str, Any]]:
    results = []
    for path in folder.glob("*.json"):
        try:
            result = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if "tools" in result and "dataset" in result:
            result["_file"] = path.name
            results.append(result)
    return sorted(results, key=lambda r: r["dataset"]["recommendation_rows"])


def markdown_table(header: list[str], rows: list[list[str]], text_last: bool = False) -> str:
    """A GitHub table: the first column (and the last, with ``text_last``) left-aligned."""
    align = ["---"] + ["---:"] * (len(header) - 1)
    if text_last:
        align[-1] = "---"
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(str(x).replace("|", "\\|") for x in row) + " |" for row in rows]
    return "\n".join(lines)


def _version(result: dict[str, Any], name: str) -> str:
    """The package's version in run.py's environment, or, where it is not installed there
    (polars from bench/.lib-polars), the version the tool's children reported."""
    version: str = result["versions"].get(name, "-")
    child = result["tools"].get(name, {}).get("summary", {}).get("version")
    if version == "not installed" and child:
        return f"{child} (children)"
    return version


def machine_section(results: list[dict[str, Any]]) -> list[str]:
    latest = results[-1]
    box = latest["machine"]
    lines = [
        f"Generated {dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')} from "
        f"{', '.join(r['_file'] for r in results)}.",
        "",
        f"Machine: {box['nproc']} cores ({box['cpu']}), {box['memory_gib']} GiB memory, "
        f"{box['platform']}.",
        "",
    ]
    names = sorted({name for r in results for name in r["versions"]})
    rows = [
        [r["label"], r["date"], r.get("sqlmetrics_commit", "?")]
        + [_version(r, name) for name in names]
        for r in results
    ]
    header = ["scale", "run (UTC)", "sqlmetrics commit", *names]
    lines.append(markdown_table(header, rows).replace("| ---: | ---: |", "| --- | --- |", 1))
    peers = {
        run.display(tool): entry["summary"].get("version")
        for r in results
        for tool, entry in r["tools"].items()
        if entry.get("summary", {}).get("version") and tool in ("rectools", "ranx")
    }
    if peers:
        lines += ["", "In the children: " + ", ".join(f"{k} {v}" for k, v in peers.items()) + "."]
    return lines


def overview(results: list[dict[str, Any]]) -> list[str]:
    """Median seconds per tool and scale, with the ratio to sqlmetrics."""
    tools = [t for t in PLOT_ORDER if any(t in r["tools"] for r in results)]
    header = ["tool", *[f"{r['dataset']['recommendation_rows']:,} rows" for r in results]]
    rows = []
    for tool in tools:
        cells = []
        for result in results:
            entry = result["tools"].get(tool)
            base = result["tools"].get("sqlmetrics", {}).get("summary", {}).get("median_s")
            summary = (entry or {}).get("summary", {})
            if entry is None and result["rows_requested"] > run.MEMORY_BOUND.get(tool, 10**18):
                cells.append("skipped (memory)")
            elif entry is None:
                cells.append("not asked")
            elif summary.get("status") == "ok":
                ratio = f" ({summary['median_s'] / base:.2f}x)" if base else ""
                cells.append(f"{summary['median_s']:.3f} s{ratio}")
            elif summary.get("status") == "timeout":
                cells.append(f"> {result['timeout_s']:g} s")
            else:
                cells.append("skipped" if entry.get("reason") else summary.get("status", "-"))
        rows.append([run.display(tool), *cells])
    return [markdown_table(header, rows)]


def scale_section(result: dict[str, Any]) -> list[str]:
    data = result["dataset"]
    lines = [
        f"## {data['recommendation_rows']:,} recommendation rows ({result['label']})",
        "",
        f"{data['interaction_rows']:,} interaction rows; {data['users']:,} users, population "
        f"{data['population']:,} (users with a relevant item; "
        f"{data['population_without_recs']:,} of them without recommendations); "
        f"{data['users_tie_in_top11']:,} users with a tie among their top 11, "
        f"{data['users_tie_at_10_11']:,} with one straddling ranks 10/11. Parquet "
        f"{data['recommendations_bytes'] / 1e6:.1f} MB + "
        f"{data['interactions_bytes'] / 1e6:.1f} MB. "
        f"{result['rounds']} round(s), timeout {result['timeout_s']:g} s, k = {result['k']}, "
        f"run {result['date']}.",
        "",
        markdown_table(run.HEADER, run.table_rows(result), text_last=True),
        "",
    ]
    checks = run.targets(result)
    if checks:
        lines += ["Targets:", ""]
        lines += [f"- **{c['verdict']}** {c['target']}: {c['figure']}" for c in checks]
        lines.append("")
    labels = [f"{m}@{result['k']}" for m in ("ndcg", "map", "mrr", "precision", "recall")]
    labels += [f"{m}@{result['k']}" for m in ("hit_rate", "f1")]
    reference = None
    base_runs = result["tools"].get("sqlmetrics", {}).get("runs", [])
    for base_run in base_runs:
        if base_run.get("status") == "ok":
            reference = base_run["metrics"]
            break
    diff_rows = []
    if reference:
        diff_rows.append(["sqlmetrics (value)", *[f"{reference[x]:.6f}" for x in labels]])
    for tool, entry in result["tools"].items():
        diffs = entry.get("summary", {}).get("abs_diff")
        if diffs:
            diff_rows.append(
                [run.display(tool), *[f"{diffs.get(x, float('nan')):.1e}" for x in labels]]
            )
    if diff_rows:
        lines += [
            "Absolute difference from sqlmetrics per metric (first successful round):",
            "",
            markdown_table(["tool", *labels], diff_rows),
            "",
        ]
    notes = []
    for tool, entry in result["tools"].items():
        summary = entry.get("summary", {})
        name = run.display(tool)
        if entry.get("reason"):
            notes.append(f"- {name}: not run: {entry['reason']}")
        elif summary.get("status") not in (None, "ok"):
            notes.append(f"- {name}: {summary['status']}: {summary.get('message', '')}")
        for failure in summary.get("failed_rounds", []):
            notes.append(f"- {name}: {failure}")
        info = summary.get("agreement", {})
        if info.get("note") and info.get("verdict") == "ties differ":
            notes.append(f"- {name}: {info['note']}")
        for label, why in info.get("definition_differs", {}).items():
            notes.append(f"- {name}: {label} not compared: {why}")
        passes = summary.get("passes")
        if passes and passes > 1:
            notes.append(f"- {name}: evaluate split the users into {passes} passes")
    for tool, bound in run.MEMORY_BOUND.items():
        if tool not in result["tools"] and result["rows_requested"] > bound:
            notes.append(
                f"- {tool}: not run above 1e7 rows: it builds Python objects per row "
                "(~30-60 GB projected at 1e8 rows, perf.md)"
            )
    if notes:
        lines += ["Notes:", "", *notes, ""]
    return lines


def plot(results: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 5.5))
    for tool in PLOT_ORDER:
        xs, ys, dnf = [], [], []
        for result in results:
            entry = result["tools"].get(tool, {})
            summary = entry.get("summary", {})
            rows = result["dataset"]["recommendation_rows"]
            if summary.get("status") == "ok":
                xs.append(rows)
                ys.append(summary["median_s"])
            elif summary.get("status") == "timeout":
                dnf.append((rows, result["timeout_s"]))
        if not xs and not dnf:
            continue
        style = "--" if tool in run.EXTRAS else "-"
        width = 2.5 if tool == "sqlmetrics" else 1.5
        (line,) = axes.plot(xs, ys, style, marker="o", linewidth=width, label=run.display(tool))
        for x, y in dnf:
            axes.plot([x], [y], marker="x", markersize=10, color=line.get_color())
            axes.annotate("did not finish", (x, y), textcoords="offset points", xytext=(5, 5))
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("recommendation rows")
    axes.set_ylabel("median seconds (load + compute), log scale")
    box = results[-1]["machine"]
    axes.set_title(
        f"Seven metrics @{results[-1]['k']} on Parquet, {box['nproc']} cores, "
        f"{box['memory_gib']} GiB"
    )
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    results = load_results(args.results)
    if not results:
        print(f"no results in {args.results}: run bench/run.py first")
        return 1
    lines = ["# sqlmetrics benchmark", "", *machine_section(results), ""]
    lines += [
        "Seconds are the median over rounds of load (Parquet to the library's input) + compute",
        "(ranking included), measured inside a fresh child process per tool and round, after an",
        "untimed warm-up on a tiny input; `x sqlmetrics` is that median over sqlmetrics' median;",
        "peak MB is the child's own peak RSS; `other load` is the share of the machine that other",
        "processes used while the child ran (noise). See bench/README.md for each implementation.",
        "",
        "## Time against rows",
        "",
        *overview(results),
        "",
        "![time against rows](time_vs_rows.png)",
        "",
    ]
    for result in results:
        lines += scale_section(result)
    report = args.results / "report.md"
    report.write_text("\n".join(lines).rstrip() + "\n")
    plot(results, args.results / "time_vs_rows.png")
    print(f"wrote {report} and {args.results / 'time_vs_rows.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
