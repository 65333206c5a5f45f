"""Engine selection for the tests in this folder.

Every test here carries one engine marker (``duckdb``, ``sqlite``, ``postgres``, ``mariadb``,
``datafusion``, ``chdb``, ``spark``, ``fakesnow``, ``roundtrip``, ``dbt``). A test whose engine
cannot run on this machine is deselected (and says so in the summary), unless ``SQLMETRICS_ENGINES``
names that engine (a comma-separated list, or ``all``, as .ci/run sets it): then it fails, and so
does the session if any such test was skipped, so CI cannot quietly lose an engine. Select one
engine with ``-m spark``. Each engine is opened once per session, on first use, and closed (its
server stopped by pid) at the end.
"""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engines.engines import Engine, opened, unavailable

ENGINES = (
    "duckdb",
    "sqlite",
    "postgres",
    "mariadb",
    "datafusion",
    "chdb",
    "spark",
    "fakesnow",
    "roundtrip",
    "dbt",
)


# Libraries the cross-check tests run in the virtual environment of their own (make profiles-venv),
# and the browser the report's test opens its page in: not engines, but CI requires them the same
# way.
LIBRARIES = ("profiles", "rectools", "recommenders", "chromium", "obp")


def required_engines() -> set[str]:
    value = os.environ.get("SQLMETRICS_ENGINES", "").strip()
    known = (*ENGINES, *LIBRARIES)
    if value == "all":
        return set(known)
    required = {part.strip() for part in value.split(",") if part.strip()}
    unknown = required - set(known)
    if unknown:
        raise pytest.UsageError(
            f"SQLMETRICS_ENGINES names unknown engines {sorted(unknown)}; known: {known}"
        )
    return required


def skip_or_fail(name: str, reason: str) -> None:
    """Skips a test whose engine or library is missing, unless SQLMETRICS_ENGINES requires it
    (CI sets it to all): then it fails, so CI cannot quietly lose a check."""
    if name in required_engines():
        pytest.fail(f"{reason} (required: SQLMETRICS_ENGINES={os.environ['SQLMETRICS_ENGINES']})")
    pytest.skip(reason)


@functools.cache
def why_unavailable(engine: str) -> str | None:
    return unavailable(engine)


def engine_of(item: pytest.Item) -> str | None:
    names = {marker.name for marker in item.iter_markers()}
    found = [engine for engine in ENGINES if engine in names]
    return found[0] if found else None


# Engines whose tests share something outside this process when run in parallel (pytest-xdist):
# a server .ci/run started (fixed table names in one database), or a JVM (Spark) that two
# workers should not both start on a 2-core machine. Their tests go to one worker per engine
# (xdist_group, honoured by --dist loadgroup, which `make unit` uses); the in-process engines
# (duckdb, sqlite, datafusion, chdb, roundtrip) open one of their own per worker.
SHARED_ENGINES = ("postgres", "mariadb", "spark", "fakesnow", "dbt")

# Filled here at collection and read by the summary hooks in tests/conftest.py: a root conftest,
# so that under pytest-xdist they run on the controller too (which loads no conftest below it).
_deselected_engines: dict[str, str] = {}
_skipped: list[str] = []


@pytest.hookimpl(tryfirst=True)  # before xdist's, which reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    required = required_engines()
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        engine = engine_of(item)
        why = why_unavailable(engine) if engine else None
        if engine and why and engine not in required:
            _deselected_engines[engine] = why
            drop.append(item)
        else:
            if engine in SHARED_ENGINES:
                # test_dbt.py's tests (dbt on postgres too: a schema of its own) share its
                # session-scoped package
                dbt = any(marker.name == "dbt" for marker in item.iter_markers())
                item.add_marker(pytest.mark.xdist_group("dbt" if dbt else engine))
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


class EnginePool:
    """Engines opened on first use, each once; a failed start fails every test of it fast."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.stack = contextlib.ExitStack()
        self.engines: dict[str, Engine] = {}
        self.failures: dict[str, str] = {}

    def get(self, engine: str) -> Engine:
        if engine in self.engines:
            return self.engines[engine]
        if engine in self.failures:
            pytest.fail(self.failures[engine], pytrace=False)
        why = why_unavailable(engine)
        if why:
            self.failures[engine] = f"engine {engine} is required (SQLMETRICS_ENGINES) but {why}"
            pytest.fail(self.failures[engine], pytrace=False)
        try:
            self.engines[engine] = self.stack.enter_context(opened(engine, self.scratch))
        except Exception as error:
            why = f"{type(error).__name__}: {error}"
            self.failures[engine] = f"engine {engine} did not start: {why}"
            raise
        return self.engines[engine]


@pytest.fixture(scope="session")
def engine_pool() -> Iterator[EnginePool]:
    with tempfile.TemporaryDirectory(prefix="sqlmetrics-engines-") as scratch:
        pool = EnginePool(Path(scratch))
        with pool.stack:
            yield pool
