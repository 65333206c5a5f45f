"""Times sqlmetrics against the tools a user would otherwise pick, on the data of generate.py.

    python bench/run.py --rows 1e7 [--tools sqlmetrics,polars,pandas,pytrec_eval,ranx,rectools]
                        [--rounds 3] [--timeout 600] [--force] [--no-extras]

Each round runs every tool once, in a fresh child process (``bench/tools.py``), the order rotating
from round to round so that background load hits all tools alike. A child's peak RSS is its own
(``os.wait4``); a child still running after ``--timeout`` seconds is killed and reported as not
finishing. With sqlmetrics in the list, three more sqlmetrics runs join each round: the same seven
metrics at k = 1, 5, 10, 20, 50, 100 in one call, the single-k call on a DuckDB connection
with ``memory_limit='1GB'``, and ``gauc`` (per-user AUC over whole lists) alone. Results: a
table on stdout and ``bench/results/<rows>.json``; ``bench/report.py`` merges the scales into
``bench/results/report.md`` and a plot.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata, util
from pathlib import Path
from typing import Any

import generate

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results"
WARMUP = generate.DATA / "warmup"
WARMUP_ROWS = 2_000
RECTOOLS_VENV = BENCH / ".venv-rectools"
# polars, when the environment lacks it, goes here (pip --target) rather than into that
# environment, which may be shared; the children find it through PYTHONPATH.
POLARS_LIB = BENCH / ".lib-polars"
TOOLS_SCRIPT = BENCH / "tools.py"

PEERS = ("sqlmetrics", "polars", "pandas", "pytrec_eval", "ranx", "rectools")
EXTRAS = (
    "sqlmetrics_bare",
    "sqlmetrics_full",
    "sqlmetrics_multik",
    "sqlmetrics_1gb",
    "sqlmetrics_gauc",
)
DISPLAY = {
    "sqlmetrics_bare": "to_sql's query alone",
    "sqlmetrics_full": "sqlmetrics checks=full",
    "sqlmetrics_multik": "sqlmetrics k=1..100",
    "sqlmetrics_1gb": "sqlmetrics 1GB",
    "sqlmetrics_gauc": "sqlmetrics gauc",
}
# Runs of other metrics than the seven: nothing to compare with sqlmetrics' numbers.
OTHER_METRICS = {"sqlmetrics_gauc"}
# Implementations that rank exactly as sqlmetrics does (score desc, item id desc): they must agree.
EXACT = {
    "polars",
    "pandas",
    "rectools",
    "sqlmetrics_multik",
    "sqlmetrics_1gb",
    "sqlmetrics_bare",
    "sqlmetrics_full",
}
EXACT_TOLERANCE = 1e-9
TIES_DIFFER = {
    "pytrec_eval": "trec_eval breaks equal scores by docno, descending string order",
    "ranx": "ranx breaks equal scores arbitrarily (its sort is not stable on ties)",
}
DEFINITION_DIFFERS = {
    ("rectools", "ndcg@10"): "RecTools' NDCG has binary gain (ignores graded relevance)",
}
# pytrec_eval and ranx build Python objects per row: ~30 and ~60 GB at 1e8 rows (perf.md).
MEMORY_BOUND = {"pytrec_eval": 10_000_000, "ranx": 10_000_000}
PIP_NAMES = {"pytrec_eval": "pytrec-eval-terrier", "ranx": "ranx", "polars": "polars"}


def display(tool: str) -> str:
    return DISPLAY.get(tool, tool)


# ------------------------------------------------------------------------------------------------
# Environment: machine, versions, the tools' interpreters.
# ------------------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "nproc": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }
    try:
        meminfo = Path("/proc/meminfo").read_text()
        kb = int(next(x for x in meminfo.splitlines() if x.startswith("MemTotal")).split()[1])
        info["memory_gib"] = round(kb / 1024**2, 1)
    except (OSError, StopIteration, ValueError):
        info["memory_gib"] = None
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        model = next(x for x in cpuinfo.splitlines() if x.startswith("model name"))
        info["cpu"] = model.split(":", 1)[1].strip()
    except (OSError, StopIteration):
        info["cpu"] = platform.processor() or "?"
    return info


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("sqlmetrics", "duckdb", "polars", "pandas", "numpy", "pyarrow", "ranx"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    try:
        out["pytrec_eval"] = metadata.version("pytrec_eval-terrier")
    except metadata.PackageNotFoundError:
        out["pytrec_eval"] = "not installed"
    return out


def git_state() -> str:
    git = shutil.which("git")
    if git is None:
        return "?"
    try:
        head = subprocess.run(
            [git, "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            [git, "-C", str(ROOT), "status", "--porcelain", "--", "sqlmetrics", "sql"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return head + (" + uncommitted changes to sqlmetrics/ or sql/" if dirty else "")


def _pip_install(python: str, *packages: str) -> bool:
    command = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    done = subprocess.run([*command, *packages], capture_output=True, text=True)
    if done.returncode:
        print(done.stderr.strip()[-2000:], file=sys.stderr)
    return done.returncode == 0


def _imports(python: str, code: str) -> bool:
    return subprocess.run([python, "-c", code], capture_output=True).returncode == 0


def rectools_python() -> tuple[str | None, str]:
    """The RecTools venv's interpreter, made on first use; (None, reason) when it cannot be."""
    python = RECTOOLS_VENV / "bin" / "python"
    probe = "import rectools.metrics, pyarrow.parquet"
    if python.exists() and _imports(str(python), probe):
        return str(python), ""
    print(f"setting up RecTools in {RECTOOLS_VENV.relative_to(ROOT)} (pip install rectools) ...")
    if not python.exists():
        made = subprocess.run([sys.executable, "-m", "venv", str(RECTOOLS_VENV)])
        if made.returncode:
            return None, "could not create its virtual environment"
    if not _pip_install(str(python), "rectools", "pyarrow"):
        return None, "pip install rectools failed (see above)"
    if not _imports(str(python), probe):
        # RecTools pins numpy < 2; recent pyarrow wheels need numpy >= 2 at import time.
        _pip_install(str(python), "pyarrow<20")
    if not _imports(str(python), probe):
        return None, "rectools or pyarrow does not import in its virtual environment"
    return str(python), ""


def interpreter(tool: str) -> tuple[str | None, str]:
    """(python to run the tool with, "") or (None, why it is skipped)."""
    if tool == "rectools":
        return rectools_python()
    module = "sqlmetrics" if tool.startswith("sqlmetrics") else tool
    if util.find_spec(module) is None:
        if tool == "polars":
            if not (POLARS_LIB / "polars").exists():
                print(f"polars is not installed: pip install --target {POLARS_LIB.name} polars ...")
                _pip_install(sys.executable, "--target", str(POLARS_LIB), "polars")
            paths = [str(POLARS_LIB), *filter(None, [os.environ.get("PYTHONPATH")])]
            os.environ["PYTHONPATH"] = os.pathsep.join(paths)  # the children inherit it
            if _imports(sys.executable, "import polars"):
                return sys.executable, ""
            return None, "polars is not installed and pip install polars failed"
        return None, f"not installed (pip install {PIP_NAMES.get(tool, tool)})"
    return sys.executable, ""


def busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy since boot (all cores, from /proc/stat)."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def wait_for_idle(limit: float) -> float:
    """Waits (at most ``limit`` s) until other processes use under a quarter of one core; returns
    the share of the machine they used in the last half second sampled."""
    cores = os.cpu_count() or 1
    deadline = time.monotonic() + limit
    while True:
        before = busy_seconds()
        time.sleep(0.5)
        share = (busy_seconds() - before) / (0.5 * cores)
        if share < 0.25 / cores or time.monotonic() >= deadline:
            return share
        time.sleep(1.0)


# ------------------------------------------------------------------------------------------------
# One child process.
# ------------------------------------------------------------------------------------------------


@dataclass
class Run:
    tool: str
    round: int
    status: str  # "ok", "error", "timeout", "killed"
    wall_s: float
    peak_rss_mb: float
    background: float  # share of the machine (0-1) used by other processes during the run
    output: dict[str, Any]
    message: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "status": self.status,
            "message": self.message,
            "wall_s": round(self.wall_s, 4),
            "peak_rss_mb": round(self.peak_rss_mb, 1),
            "background_cpu_share": round(self.background, 3),
            **{key: value for key, value in self.output.items() if key not in ("tool", "error")},
        }


def run_child(tool: str, python: str, data: Path, k: int, timeout: float, round_: int) -> Run:
    command = [
        python,
        str(TOOLS_SCRIPT),
        tool,
        "--recs",
        str(data / "recommendations.parquet"),
        "--truth",
        str(data / "interactions.parquet"),
        "--k",
        str(k),
        "--warmup-recs",
        str(WARMUP / "recommendations.parquet"),
        "--warmup-truth",
        str(WARMUP / "interactions.parquet"),
    ]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        busy_before = busy_seconds()
        child = subprocess.Popen(command, stdout=out, stderr=err, cwd=ROOT, start_new_session=True)
        timed_out = False
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > timeout:
                timed_out = True
                os.killpg(child.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(child.pid, 0)
                break
            time.sleep(0.02)
        wall = time.perf_counter() - start
        others = busy_seconds() - busy_before - (usage.ru_utime + usage.ru_stime)
        background = max(0.0, others) / (wall * (os.cpu_count() or 1))
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    peak = usage.ru_maxrss / 1024  # KiB on Linux
    output: dict[str, Any] = {}
    for line in reversed(stdout.strip().splitlines()):
        try:
            output = json.loads(line)
            break
        except json.JSONDecodeError:
            continue
    if timed_out:
        return Run(
            tool, round_, "timeout", wall, peak, background, {}, f"did not finish in {timeout:g} s"
        )
    if child.returncode < 0:
        name = signal.Signals(-child.returncode).name
        hint = " (out of memory?)" if child.returncode == -signal.SIGKILL else ""
        return Run(tool, round_, "killed", wall, peak, background, {}, f"killed by {name}{hint}")
    if "error" in output or not output:
        tail = stderr.strip().splitlines()[-1:] or ["no output"]
        message = str(output.get("error") or tail[0])
        return Run(tool, round_, "error", wall, peak, background, output, message[:500])
    return Run(tool, round_, "ok", wall, peak, background, output)


# ------------------------------------------------------------------------------------------------
# Summaries.
# ------------------------------------------------------------------------------------------------


def summarize(tool: str, runs: list[Run], reference: dict[str, float] | None) -> dict[str, Any]:
    ok = [r for r in runs if r.status == "ok"]
    if not ok:
        first = runs[0] if runs else None
        return {
            "status": first.status if first else "not run",
            "message": first.message if first else "",
            "peak_rss_mb": max((r.peak_rss_mb for r in runs), default=None),
        }
    totals = [r.output["total_s"] for r in ok]
    summary: dict[str, Any] = {
        "status": "ok",
        "rounds_ok": len(ok),
        "median_s": statistics.median(totals),
        "min_s": min(totals),
        "max_s": max(totals),
        "load_s": statistics.median(r.output["load_s"] for r in ok),
        "compute_s": statistics.median(r.output["compute_s"] for r in ok),
        "cpu_s": statistics.median(r.output["cpu_s"] for r in ok),
        "warmup_s": statistics.median(r.output.get("warmup_s", 0.0) for r in ok),
        "peak_rss_mb": max(r.peak_rss_mb for r in ok),
        "background_cpu_share": statistics.median(r.background for r in ok),
        "users": ok[0].output.get("users"),
        "version": ok[0].output.get("version"),
    }
    if "passes" in ok[0].output:
        summary["passes"] = ok[0].output["passes"]
    failed = [r for r in runs if r.status != "ok"]
    if failed:
        summary["failed_rounds"] = [f"round {r.round}: {r.message}" for r in failed]
    if reference is not None:
        metrics = ok[0].output["metrics"]
        diffs = {
            label: abs(metrics[label] - reference[label]) for label in reference if label in metrics
        }
        summary["abs_diff"] = diffs
        summary["agreement"] = agreement(tool, diffs)
        spread = max(
            abs(r.output["metrics"][label] - metrics[label]) for r in ok for label in metrics
        )
        if spread > 0:
            summary["run_to_run_spread"] = spread
    return summary


def agreement(tool: str, diffs: dict[str, float]) -> dict[str, Any]:
    """Max |difference| vs sqlmetrics, apart from metrics whose definition differs."""
    differs = {
        label: DEFINITION_DIFFERS[(tool, label)]
        for label in diffs
        if (tool, label) in DEFINITION_DIFFERS
    }
    comparable = {label: d for label, d in diffs.items() if label not in differs}
    worst = max(comparable.values(), default=0.0)
    if tool.startswith("sqlmetrics") or tool in EXACT:
        verdict = "agrees" if worst <= EXACT_TOLERANCE else "DISAGREES"
    else:
        verdict = "ties differ" if worst > EXACT_TOLERANCE else "agrees"
    return {
        "max_abs_diff": worst,
        "verdict": verdict,
        "note": TIES_DIFFER.get(tool, ""),
        "definition_differs": differs,
    }


def agreement_text(summary: dict[str, Any]) -> str:
    info = summary.get("agreement")
    if not info:
        return "-"
    text = f"{info['max_abs_diff']:.1e} {info['verdict']}"
    for label in info["definition_differs"]:
        text += f"; {label.split('@')[0]} differs by definition ({summary['abs_diff'][label]:.4f})"
    return text


def targets(result: dict[str, Any]) -> list[dict[str, str]]:
    """The issue's targets that this scale can speak to, each with its figure and verdict."""
    tools = result["tools"]
    rows = result["dataset"]["recommendation_rows"]

    def median(tool: str) -> float | None:
        summary = tools.get(tool, {}).get("summary", {})
        return summary.get("median_s") if summary.get("status") == "ok" else None

    def cpu_ratio(tool: str) -> str:
        """The fastest rounds' ratio and the CPU seconds' ratio: steadier on a busy machine."""
        mine = tools.get("sqlmetrics", {}).get("summary", {})
        theirs = tools.get(tool, {}).get("summary", {})
        if not mine.get("cpu_s") or not theirs.get("cpu_s"):
            return ""
        return (
            f" (fastest rounds {theirs['min_s'] / mine['min_s']:.2f}x, "
            f"CPU seconds {theirs['cpu_s'] / mine['cpu_s']:.2f}x)"
        )

    def ratio_target(tool: str, goal: float, what: str) -> dict[str, str]:
        base, other = median("sqlmetrics"), median(tool)
        entry = tools.get(tool, {})
        if base is None or other is None:
            reason = entry.get("reason") or entry.get("summary", {}).get("message")
            if (
                not reason
                and tool in MEMORY_BOUND
                and result["rows_requested"] > MEMORY_BOUND[tool]
            ):
                reason = f"{tool} is not run above 1e7 rows: ~30-60 GB projected (perf.md)"
            reason = reason or f"{tool} not run"
            return {"target": what, "figure": f"n/a ({reason})", "verdict": "n/a"}
        ratio = other / base
        verdict = "PASS" if ratio >= goal else "FAIL"
        return {"target": what, "figure": f"{ratio:.2f}x{cpu_ratio(tool)}", "verdict": verdict}

    out = checks_targets(tools, rows, median, cpu_ratio)
    if rows >= 50_000_000:
        out.append(ratio_target("polars", 1.6, "sqlmetrics >= 1.6x faster than polars"))
        out.append(ratio_target("pandas", 10, "sqlmetrics >= 10x faster than pandas"))
        out.append(ratio_target("pytrec_eval", 10, "sqlmetrics >= 10x faster than pytrec_eval"))
        mine = tools.get("sqlmetrics", {}).get("summary", {})
        theirs = tools.get("polars", {}).get("summary", {})
        if mine.get("status") == "ok" and theirs.get("status") == "ok":
            a, b = mine["peak_rss_mb"], theirs["peak_rss_mb"]
            out.append(
                {
                    "target": "peak memory below polars'",
                    "figure": f"{a:,.0f} MB vs {b:,.0f} MB",
                    "verdict": "PASS" if a < b else "FAIL",
                }
            )
        limited = tools.get("sqlmetrics_1gb", {}).get("summary", {})
        base = median("sqlmetrics")
        if limited:
            if limited.get("status") == "ok" and base:
                ratio = limited["median_s"] / base
                out.append(
                    {
                        "target": "memory_limit='1GB' finishes within 3x of unlimited",
                        "figure": f"{ratio:.2f}x ({limited['median_s']:.1f} s, peak "
                        f"{limited['peak_rss_mb']:,.0f} MB)",
                        "verdict": "PASS" if ratio <= 3 else "FAIL",
                    }
                )
            else:
                out.append(
                    {
                        "target": "memory_limit='1GB' finishes within 3x of unlimited",
                        "figure": f"failed: {limited.get('message', '')[:160]}",
                        "verdict": "FAIL",
                    }
                )
    gauc = tools.get("sqlmetrics_gauc", {}).get("summary", {})
    if rows >= 50_000_000 and gauc:
        ok = gauc.get("status") == "ok"
        seconds, peak = gauc.get("median_s", math.inf), gauc.get("peak_rss_mb") or math.inf
        out.append(
            {
                "target": "per-user AUC (gauc) at 98 M rows: <= 25 s and <= 4 GB (perf.md)",
                "figure": f"{seconds:.1f} s, peak {peak:,.0f} MB"
                if ok
                else f"failed: {gauc.get('message', '')[:160]}",
                "verdict": "PASS" if ok and seconds <= 25 and peak <= 4096 else "FAIL",
            }
        )
    multi, single = median("sqlmetrics_multik"), median("sqlmetrics")
    if multi is not None and single is not None:
        ratio = multi / single
        out.append(
            {
                "target": "k=1,5,10,20,50,100 in one call <= 1.5x the single-k time",
                "figure": f"{ratio:.2f}x{cpu_ratio('sqlmetrics_multik')}",
                "verdict": "PASS" if ratio <= 1.5 else "FAIL",
            }
        )
    if rows <= 1_000_000:
        mine_s, theirs_s = median("sqlmetrics"), median("polars")
        if mine_s is not None and theirs_s is not None:
            out.append(
                {
                    "target": "inputs <= 1e6 rows: no slower than polars",
                    "figure": f"{mine_s:.3f} s vs {theirs_s:.3f} s ({theirs_s / mine_s:.2f}x)",
                    "verdict": "PASS" if mine_s <= theirs_s else "FAIL",
                }
            )
    return out


def checks_targets(
    tools: dict[str, Any],
    rows: int,
    median: Callable[[str], float | None],
    cpu_ratio: Callable[[str], str],
) -> list[dict[str, str]]:
    """Issue 40's targets: evaluate (its checks and diagnostics in the same pass) against the
    bare query of the same metrics, the whole-list audit, and polars at 1e7 rows and above."""
    out: list[dict[str, str]] = []
    base = median("sqlmetrics_bare")
    for tool, goal, what in (
        ("sqlmetrics", 1.15, "evaluate <= 1.15x its own bare query"),
        ("sqlmetrics_full", 1.5, "checks='full' <= 1.5x the bare query"),
    ):
        other = median(tool)
        if base is None or other is None:
            continue
        mine = tools.get(tool, {}).get("summary", {})
        bare = tools.get("sqlmetrics_bare", {}).get("summary", {})
        cpu = mine.get("cpu_s", 0) / bare["cpu_s"] if bare.get("cpu_s") else math.nan
        out.append(
            {
                "target": what,
                "figure": f"{other / base:.2f}x ({other:.2f} s vs {base:.2f} s; CPU {cpu:.2f}x)",
                "verdict": "PASS" if other / base <= goal else "FAIL",
            }
        )
    mine_s, theirs_s = median("sqlmetrics"), median("polars")
    if rows >= 5_000_000 and mine_s is not None and theirs_s is not None:
        out.append(
            {
                "target": "evaluate >= 1.3x faster than polars",
                "figure": f"{theirs_s / mine_s:.2f}x{cpu_ratio('polars')}",
                "verdict": "PASS" if theirs_s / mine_s >= 1.3 else "FAIL",
            }
        )
    return out


def table_rows(result: dict[str, Any]) -> list[list[str]]:
    rows = f"{result['dataset']['recommendation_rows']:,}"
    base = result["tools"].get("sqlmetrics", {}).get("summary", {}).get("median_s")
    out = []
    for tool, entry in result["tools"].items():
        summary = entry.get("summary", {})
        if summary.get("status") == "ok":
            ratio = f"{summary['median_s'] / base:.2f}" if base else "-"
            out.append(
                [
                    display(tool),
                    rows,
                    f"{summary['median_s']:.3f}",
                    f"{summary['min_s']:.3f}",
                    f"{summary['load_s']:.3f}",
                    f"{summary['compute_s']:.3f}",
                    f"{summary['cpu_s']:.2f}",
                    f"{summary['peak_rss_mb']:,.0f}",
                    f"{summary['background_cpu_share']:.0%}",
                    ratio,
                    agreement_text(summary),
                ]
            )
        else:
            why = entry.get("reason") or summary.get("message") or summary.get("status", "")
            out.append([display(tool), rows, *["-"] * 8, f"not measured: {why}"])
    return out


HEADER = [
    "tool",
    "rec rows",
    "median s",
    "min s",
    "load s",
    "compute s",
    "CPU s",
    "peak MB",
    "other load",
    "x sqlmetrics",
    "agreement vs sqlmetrics (max abs diff)",
]


def print_table(rows: list[list[str]]) -> None:
    widths = [max(len(str(x)) for x in column) for column in zip(HEADER, *rows, strict=True)]
    for line in [HEADER, ["-" * w for w in widths], *rows]:
        print(
            "  ".join(
                str(x).rjust(w) if 0 < i < len(line) - 1 else str(x).ljust(w)
                for i, (x, w) in enumerate(zip(line, widths, strict=True))
            )
        )


# ------------------------------------------------------------------------------------------------
# Main.
# ------------------------------------------------------------------------------------------------


def previous_timeouts(rows: int) -> dict[str, str]:
    """Tools that did not finish a smaller scale in an earlier run: not tried at this one."""
    skipped: dict[str, str] = {}
    for path in sorted(RESULTS.glob("*.json")):
        try:
            earlier = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if earlier.get("rows_requested", rows) >= rows:
            continue
        for tool, entry in earlier.get("tools", {}).items():
            if entry.get("summary", {}).get("status") == "timeout":
                skipped[tool] = (
                    f"did not finish {earlier['label']} in {earlier['timeout_s']:g} s "
                    f"({path.name}); a larger scale cannot either"
                )
    return skipped


def ensure_data(rows: int) -> tuple[Path, dict[str, Any]]:
    if not (WARMUP / "meta.json").exists():
        generate.generate(WARMUP_ROWS, WARMUP, quiet=True)
    data = generate.data_dir(rows)
    if not (data / "meta.json").exists():
        print(f"no data for {generate.rows_label(rows)} yet: generating it ...", flush=True)
        generate.generate(rows)
    return data, json.loads((data / "meta.json").read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=generate.parse_rows, required=True)
    parser.add_argument("--tools", default=",".join(PEERS), help=f"default: {','.join(PEERS)}")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per child")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=10.0,
        metavar="S",
        help="before each child, wait up to S seconds for other processes to go quiet (0: never)",
    )
    parser.add_argument(
        "--force", action="store_true", help="run pytrec_eval and ranx above 1e7 rows anyway"
    )
    parser.add_argument(
        "--no-extras",
        action="store_true",
        help="without the multi-k, 1 GB and gauc sqlmetrics runs",
    )
    args = parser.parse_args(argv)
    wanted = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = [t for t in wanted if t not in PEERS + EXTRAS]
    if unknown:
        parser.error(f"unknown tool(s) {', '.join(unknown)}; choose from {', '.join(PEERS)}")
    if "sqlmetrics" in wanted and not args.no_extras:
        wanted += [t for t in EXTRAS if t not in wanted]
    if "sqlmetrics" not in wanted:
        wanted.insert(0, "sqlmetrics")  # the reference every ratio and difference is taken to
        print("sqlmetrics added: it is the reference of the ratios and the agreement check")

    data, meta = ensure_data(args.rows)
    label = generate.rows_label(args.rows)
    print(
        f"data {data.relative_to(ROOT)}: {meta['recommendation_rows']:,} recommendation rows, "
        f"{meta['interaction_rows']:,} interaction rows, population {meta['population']:,} users"
    )
    result: dict[str, Any] = {
        "label": label,
        "rows_requested": args.rows,
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "versions": versions(),
        "sqlmetrics_commit": git_state(),
        "k": args.k,
        "rounds": args.rounds,
        "timeout_s": args.timeout,
        "dataset": meta,
        "tools": {},
    }
    pythons: dict[str, str] = {}
    earlier = previous_timeouts(args.rows)
    for tool in wanted:
        reason = ""
        if tool in MEMORY_BOUND and args.rows > MEMORY_BOUND[tool] and not args.force:
            reason = (
                "skipped above 1e7 rows: it builds Python dicts per row and would need "
                "~30-60 GB at 1e8 (perf.md); --force runs it anyway"
            )
        elif tool in earlier:
            reason = earlier[tool]
        else:
            python, reason = interpreter(tool)
            if python:
                pythons[tool] = python
        result["tools"][tool] = {"display": display(tool), "reason": reason, "runs": []}
        if reason:
            print(f"{display(tool)}: {reason}")

    runs: dict[str, list[Run]] = {tool: [] for tool in pythons}
    order = list(pythons)
    if not order:
        print("nothing to run")
        return 1
    given_up: set[str] = set()
    RESULTS.mkdir(parents=True, exist_ok=True)
    for round_ in range(1, args.rounds + 1):
        shift = (round_ - 1) % len(order)
        for tool in order[shift:] + order[:shift]:
            if tool in given_up:
                continue
            if args.wait_idle > 0:
                wait_for_idle(args.wait_idle)
            run = run_child(tool, pythons[tool], data, args.k, args.timeout, round_)
            runs[tool].append(run)
            if run.status == "ok":
                out = run.output
                print(
                    f"round {round_}/{args.rounds}  {display(tool):<20} {out['total_s']:9.3f} s"
                    f"  (load {out['load_s']:.3f}, compute {out['compute_s']:.3f}, "
                    f"CPU {out['cpu_s']:.2f})  peak {run.peak_rss_mb:,.0f} MB"
                    f"  background CPU {run.background:.0%}",
                    flush=True,
                )
            else:
                print(
                    f"round {round_}/{args.rounds}  {display(tool):<20} {run.status}: "
                    f"{run.message}",
                    flush=True,
                )
                given_up.add(tool)  # a timeout or a failure would repeat: not run again
        _store(result, runs)
        _write(result, label)

    print()
    print_table(table_rows(result))
    print()
    for entry in targets(result):
        print(f"{entry['verdict']:>4}  {entry['target']}: {entry['figure']}")
    mine = result["tools"]["sqlmetrics"].get("summary", {}).get("users")
    if mine is not None and mine != meta["population"]:
        print(f"WARNING: sqlmetrics reports {mine} users, the data has {meta['population']}")
    print(
        f"\nwrote {(RESULTS / f'{label}.json').relative_to(ROOT)}; "
        "python bench/report.py merges every scale"
    )
    return 0


def _store(result: dict[str, Any], runs: dict[str, list[Run]]) -> None:
    base_runs = [r for r in runs.get("sqlmetrics", []) if r.status == "ok"]
    reference = base_runs[0].output["metrics"] if base_runs else None
    for tool, tool_runs in runs.items():
        entry = result["tools"][tool]
        entry["runs"] = [r.as_json() for r in tool_runs]
        compare = None if tool in {"sqlmetrics", *OTHER_METRICS} else reference
        entry["summary"] = summarize(tool, tool_runs, compare)
    result["targets"] = targets(result)


def _write(result: dict[str, Any], label: str) -> None:
    path = RESULTS / f"{label}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n")
    os.replace(tmp, path)


if __name__ == "__main__":
    raise SystemExit(main())
