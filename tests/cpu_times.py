"""Where the suite's CPU goes: an opt-in pytest plugin (``SQLMETRICS_TEST_CPU=1``).

Each test's CPU seconds, setup and teardown included: user + sys of the test's process, of the
children it waited for, and of its live descendants (a JVM, a server the test started, read
from /proc), taken before its setup and after its teardown. A session-scoped fixture is charged
to the first test that uses it. Under pytest-xdist each worker measures its own tests and sends
the figure with the teardown report, so the controller prints one table for the whole run:
the files by CPU seconds, then the slowest tests. ``SQLMETRICS_TEST_CPU=FILE`` also appends
each test's line to FILE as it finishes (tab-separated: node id, CPU s, wall s, xdist worker),
so a run can be read while it goes on. CPU seconds rather than wall time: on a shared machine
the wall clock measures the neighbours too.
"""

from __future__ import annotations

import os
import resource
import time
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path

import pytest

ENV = "SQLMETRICS_TEST_CPU"
_TICKS = os.sysconf("SC_CLK_TCK")
_KEY = "cpu_s"
TOP_FILES = 40
TOP_TESTS = 40


def _process_table() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU s of the process and of the children it waited for)."""
    table: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                text = stat.read()
        except OSError:  # gone meanwhile
            continue
        # the command name (field 2) may hold spaces: the fields after it start past its ')'
        fields = text[text.rindex(b")") + 2 :].split()
        ticks = sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
        table[int(entry)] = (int(fields[1]), ticks / _TICKS)
    return table


def _descendants(table: dict[int, tuple[int, float]], root: int) -> dict[int, float]:
    children: dict[int, list[int]] = defaultdict(list)
    for pid, (parent, _) in table.items():
        children[parent].append(pid)
    found: dict[int, float] = {}
    stack = list(children.get(root, ()))
    while stack:
        pid = stack.pop()
        found[pid] = table[pid][1]
        stack.extend(children.get(pid, ()))
    return found


class _Snapshot:
    def __init__(self) -> None:
        own = resource.getrusage(resource.RUSAGE_SELF)
        waited = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.own = own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime
        self.live = _descendants(_process_table(), os.getpid())
        self.wall = time.perf_counter()

    def cpu_since(self, before: _Snapshot) -> float:
        # A descendant gone since is in RUSAGE_CHILDREN (or its parent's cutime) with its whole
        # time: take back what it had before. A new one counts from zero.
        live = sum(cpu - before.live.get(pid, 0.0) for pid, cpu in self.live.items())
        gone = sum(cpu for pid, cpu in before.live.items() if pid not in self.live)
        return self.own - before.own + live - gone


class CpuTimes:
    def __init__(self, log: Path | None) -> None:
        self.log = log  # None on an xdist worker: the controller writes the file
        self.started: dict[str, _Snapshot] = {}
        self.per_test: dict[str, tuple[float, float]] = {}
        self.per_worker: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.started[item.nodeid] = _Snapshot()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, None]:
        outcome = yield
        before = self.started.pop(item.nodeid, None) if call.when == "teardown" else None
        if before is not None:
            after = _Snapshot()
            report = outcome.get_result()
            spent = (after.cpu_since(before), after.wall - before.wall)
            report.user_properties.append((_KEY, spent))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """On the controller under xdist (the workers' reports) and in a single process."""
        for key, value in report.user_properties:
            if key == _KEY and report.when == "teardown":
                cpu, wall = value
                self.per_test[report.nodeid] = (cpu, wall)
                node = getattr(report, "node", None)  # the xdist worker
                worker = node.gateway.id if node is not None else "-"
                self.per_worker[worker][0] += cpu
                self.per_worker[worker][1] += wall
                if self.log is not None:
                    with self.log.open("a", encoding="utf-8") as out:
                        out.write(f"{report.nodeid}\t{cpu:.3f}\t{wall:.3f}\t{worker}\n")

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.per_test:
            return
        files: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
        for nodeid, (cpu, wall) in self.per_test.items():
            row = files[nodeid.split("::")[0]]
            row[0] += 1
            row[1] += cpu
            row[2] += wall
        total = sum(cpu for cpu, _ in self.per_test.values())
        write = terminalreporter.write_line
        terminalreporter.section(f"CPU s per file ({ENV}; {total:,.1f} CPU s in all)")
        write(f"{'file':<52} {'tests':>6} {'CPU s':>9} {'wall s':>9}")
        ranked = sorted(files.items(), key=lambda pair: -pair[1][1])
        for name, (count, cpu, wall) in ranked[:TOP_FILES]:
            write(f"{name:<52} {int(count):>6} {cpu:>9.1f} {wall:>9.1f}")
        # the busiest worker's wall clock is the run's: a group pinned to one worker (Spark's,
        # a server's) can make it the longest
        for worker, (cpu, wall) in sorted(self.per_worker.items()):
            write(f"worker {worker}: {cpu:,.1f} CPU s, {wall:,.1f} s in its tests")
        terminalreporter.section(f"the {TOP_TESTS} tests with the most CPU s")
        slowest = sorted(self.per_test.items(), key=lambda pair: -pair[1][0])
        for nodeid, (cpu, wall) in slowest[:TOP_TESTS]:
            write(f"{cpu:>8.1f} {wall:>8.1f}  {nodeid}")


def register(config: pytest.Config) -> None:
    value = os.environ.get(ENV, "").strip()
    if value in ("", "0"):
        return
    worker = hasattr(config, "workerinput")
    log = None if value == "1" or worker else Path(value)
    config.pluginmanager.register(CpuTimes(log), "sqlmetrics-cpu-times")
