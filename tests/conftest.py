from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests import cpu_times
from tests.engines.conftest import _deselected_engines, _skipped, required_engines

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


@pytest.fixture
def small() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two users with lists, one population user without; see test_api for the values."""
    recs = pd.DataFrame(
        {
            "user_id": [1, 1, 1, 2, 2],
            "item_id": [10, 11, 12, 20, 21],
            "score": [0.9, 0.8, 0.7, 0.9, 0.5],
        }
    )
    truth = pd.DataFrame(
        {"user_id": [1, 1, 2, 3], "item_id": [11, 13, 20, 30], "relevance": [1, 1, 2, 1]}
    )
    return recs, truth


@pytest.fixture(scope="session")
def exported_dbt_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`sqlmetrics dbt export`'s package, rendered once per session (a minute of CPU) for
    tests/engines/test_dbt.py and tests/test_dbt_export.py's every-adapter test, which share
    the xdist_group "dbt" and so one worker."""
    from sqlmetrics.dbt import package

    folder = tmp_path_factory.mktemp("dbt-package") / "sqlmetrics"
    package.export(folder)
    return folder


# The exhaustive matrices' developer tier (issue 24), like the hypothesis examples (30 by
# default, 2,000 in CI): a test marked full_matrix is one cell of a matrix whose every cell CI
# runs (.ci/run sets SQLMETRICS_FULL_MATRIX=1); a developer's run deselects it and keeps a
# fixed, documented sample of the matrix (the marks are set where the matrix is built:
# tests/test_dialects.py's every-option round trips, tests/engines/test_engines.py's round
# trips of every metric).
FULL_MATRIX = os.environ.get("SQLMETRICS_FULL_MATRIX", "").strip() == "1"

# ranx (test_crosscheck, test_rank_biased, test_stats' randomization test) compiles its numba
# functions at their first call in each process, and a new environment has no cache of them:
# on the tests' few dozen users its Python source, run as it stands, gives the same numbers in
# a fraction of that time. A developer's run reads ranx's definitions that way; CI runs the
# compiled library (docs/benchmark.md, the suite's time). Set before anything imports numba.
if not FULL_MATRIX:
    os.environ.setdefault("NUMBA_DISABLE_JIT", "1")
_left_to_ci: list[int] = []


def _sample_the_full_matrix(config: pytest.Config, items: list[pytest.Item]) -> None:
    if FULL_MATRIX:
        return
    # A test named on the command line (path::name[id]) runs whatever its mark.
    named = [str(arg).removeprefix("./") for arg in config.args if "::" in str(arg)]

    def sampled_out(item: pytest.Item) -> bool:
        if item.get_closest_marker("full_matrix") is None:
            return False
        return not any(item.nodeid.startswith(name) for name in named)

    drop = [item for item in items if sampled_out(item)]
    if drop:
        _left_to_ci.append(len(drop))
        config.hook.pytest_deselected(items=drop)
        items[:] = [item for item in items if not sampled_out(item)]


def pytest_configure(config: pytest.Config) -> None:
    cpu_times.register(config)  # opt-in: SQLMETRICS_TEST_CPU (tests/cpu_times.py)


# The tests parse and write queries of every metric with sqlglot outside sqlmetrics' own paused
# calls (round trips, snapshots, assertions on trees) in processes holding pandas, Spark's
# client and thousands of collected tests: with Python's default thresholds the collector
# traces that heap again and again while a large tree is built. The objects alive after
# collection are moved out of its way (gc.freeze), and it runs after 50,000 allocations rather
# than 700 (docs/benchmark.md, "The test suite's time"). No result depends on when it runs.
GC_THRESHOLDS = (50_000, 20, 20)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    if os.environ.get("SQLMETRICS_TEST_GC") == "default":  # to measure what it saves
        return
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


_UNGROUPED = (
    "pytest-xdist did not put this test in its xdist_group (--dist loadgroup), so tests sharing "
    "a database server or a JVM would race on other workers: this pytest and pytest-xdist do "
    "not work together; install the versions the dev extra allows (pip install -e '.[dev]')"
)
_ungrouped: set[str] = set()


@pytest.hookimpl(trylast=True)  # after pytest-xdist's, which names each item's group
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under --dist loadgroup, pytest-xdist appends "@group" to the node id of each item with
    an xdist_group mark; when it does not (pytest 9.2 with xdist 3.8), every group is silently
    ignored. Those tests then fail with the reason rather than race. And the developer's tier
    of the exhaustive matrices (above)."""
    _sample_the_full_matrix(config, items)
    if getattr(config.option, "loadgroup", False):
        for item in items:
            if item.get_closest_marker("xdist_group") and "@" not in item.nodeid:
                _ungrouped.add(item.nodeid)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.nodeid in _ungrouped:
        pytest.fail(_UNGROUPED, pytrace=False)


# The engine summary (tests/engines/conftest.py selects the engines). These hooks live in the
# root conftest so that they run where the summary is printed and the exit status decided: in
# the one process without xdist, on the controller with it (pytest -n), which gets every
# worker's reports but collects nothing and loads no conftest below this one.


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail") and "/engines/" in report.fspath:
        _skipped.append(report.nodeid)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _left_to_ci:
        terminalreporter.write_line(
            f"full matrix: {max(_left_to_ci)} test(s) of the exhaustive matrices deselected; "
            "CI runs them (SQLMETRICS_FULL_MATRIX=1)"
        )
    for engine, why in sorted(_deselected_engines.items()):
        terminalreporter.write_line(f"engine {engine} deselected: {why}")
    if _skipped and required_engines():
        terminalreporter.write_line(
            f"SQLMETRICS_ENGINES is set but {len(_skipped)} engine test(s) were skipped, "
            f"e.g. {_skipped[0]}",
            red=True,
        )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: it tells the controller what it deselected
        workeroutput["sqlmetrics_deselected_engines"] = dict(_deselected_engines)
        workeroutput["sqlmetrics_left_to_ci"] = max(_left_to_ci, default=0)
    if _skipped and required_engines() and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's: a worker has finished
def pytest_testnodedown(node: Any, error: object) -> None:
    output = getattr(node, "workeroutput", None) or {}
    _deselected_engines.update(output.get("sqlmetrics_deselected_engines", {}))
    if output.get("sqlmetrics_left_to_ci"):  # every worker collects the same tests
        _left_to_ci.append(output["sqlmetrics_left_to_ci"])
