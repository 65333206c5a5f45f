"""A pyspark SparkSession: inputs are table names, ``Query`` objects, or Spark DataFrames of the
same session (registered as temporary views under names of their own, dropped afterwards). The
query runs on a thread of its own as a Spark job group of its own (a tag on Spark Connect),
which a timeout or Ctrl-C cancels with the jobs it starts afterwards: the caller returns at the
deadline even while Spark still plans the query, before any job exists. ``progress`` prints
the running stages' tasks on stderr.

A few session settings that spare shuffles are set around each query and restored after it,
by the last of the queries running on the session when they overlap (``_QUERY_SETTINGS``;
measured in docs/benchmark.md, "Spark (issue 18)").
"""

from __future__ import annotations

import contextlib
import itertools
import queue
import sys
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from sqlglot import exp

from sqlmetrics.engines.base import Engine, Query, Source, normal_type
from sqlmetrics.errors import SqlmetricsError

_views = itertools.count(1)
_JOB_PROPERTIES = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")
# Session settings while sqlmetrics' queries run, restored afterwards (the session is the
# user's; another thread's queries on it meanwhile see them too, and get the same results).
_QUERY_SETTINGS: dict[str, str] = {
    # A join on (user_id, item_id) whose sides are both hashed by user_id alone keeps that
    # partitioning, instead of hashing both sides again by both keys.
    "spark.sql.requireAllClusterKeysForCoPartition": "false",
}


# The statements running on each session (by id) and the session's own values of the settings
# the first of them set, which the last to end puts back: statements overlap after a timeout or
# Ctrl-C (the caller leaves one that Spark still plans, and may begin another) or from two
# threads, and each putting back what it found would leave the session with sqlmetrics' values.
_holders: dict[int, tuple[int, dict[str, str | None]]] = {}
_holders_lock = threading.Lock()


# How often a cancelled statement's group is cancelled again, until the statement ends: the
# jobs started after the first cancel (adaptive execution's stages; before Spark 4.0 any job;
# on Spark Connect an operation submitted after it).
RECANCEL_SECONDS = 0.1
# How often the caller, waiting for a statement, looks whether it was cancelled.
WAIT_SECONDS = 0.05
T = TypeVar("T")


class _Left(Exception):
    """The caller left a cancelled statement (a timeout's, or Ctrl-C's) that Spark was still
    planning: guarded reports the timeout."""


class _Statement:
    """One query of a call, run on a thread of its own under a job group of its own. Spark
    cannot stop a query while it plans it, so a cancelled statement is left to end on its
    thread, its jobs cancelled as they start; the caller returns at once."""

    def __init__(self) -> None:
        self.group = f"sqlmetrics-{uuid.uuid4().hex}"
        self.cancelled = threading.Event()
        self.ended = threading.Event()


def _cancel_with_later_jobs(context: Any, group: str) -> bool:
    """Cancels ``group``'s jobs and every job it starts later (Spark 4.0 and later); False
    where Spark has no such call."""
    try:
        context._jsc.sc().cancelJobGroupAndFutureJobs(group)
    except Exception:  # py4j's error for a method Spark does not have
        return False
    return True


class SparkEngine(Engine):
    name = "Spark"

    def __init__(
        self,
        spark: Any,
        dialect: str | None = None,
        timeout: float | None = None,
        progress: bool = False,
    ) -> None:
        super().__init__(timeout=timeout, progress=progress)
        if not callable(getattr(spark, "sql", None)) or not hasattr(spark, "catalog"):
            raise SqlmetricsError(
                f"connection: a {type(spark).__name__} is not a SparkSession; pass the session "
                "(spark), not a DataFrame or a context"
            )
        if dialect not in (None, "spark", "databricks"):
            raise SqlmetricsError(
                f"dialect={dialect!r} does not apply to a SparkSession: it reads 'spark' SQL "
                "(or 'databricks')"
            )
        self.dialect = dialect or "spark"
        self.spark = spark
        self.views: list[str] = []
        self.statement: _Statement | None = None  # the last one begun, which cancel stops
        # Classic Spark has a SparkContext (job groups, status tracker); Spark Connect has tags.
        try:
            self.context: Any = spark.sparkContext
        except Exception:  # Spark Connect raises on sparkContext
            self.context = None

    def bind(self, value: object, role: str) -> Source:
        relation = self.named_relation(value, role)
        if relation is None:
            relation = self._view(value, role)
        probe = exp.select("*").from_(relation.copy()).limit(0)
        try:
            text = self.sql(probe)
            schema = self.guarded(lambda: self._run(lambda: self.spark.sql(text).schema))
        except SqlmetricsError as error:
            shown = value.sql if isinstance(value, Query) else value
            if not isinstance(shown, str):
                shown = type(value).__name__
            raise SqlmetricsError(f"{role}: cannot read {shown!r}: {error}") from None
        columns = {
            field.name: normal_type(field.dataType.simpleString(), "spark")
            for field in schema.fields
        }
        return Source(role, relation, columns, origin=value)

    def _view(self, frame: object, role: str) -> exp.Table:
        """A Spark DataFrame of this session as a temporary view of its own (dropped on
        close)."""
        if not callable(getattr(frame, "createOrReplaceTempView", None)):
            raise SqlmetricsError(
                f"{role}: on Spark an input is a Spark DataFrame, a table name or a "
                f"sqlmetrics.Query, not a {type(frame).__name__} (for a pandas DataFrame: "
                "spark.createDataFrame(frame))"
            )
        if getattr(frame, "sparkSession", self.spark) is not self.spark:
            raise SqlmetricsError(
                f"{role}: this Spark DataFrame belongs to another SparkSession than connection="
            )
        name = f"sqlmetrics_{role}_{next(_views)}_{uuid.uuid4().hex[:8]}"
        frame.createOrReplaceTempView(name)  # type: ignore[attr-defined]
        self.views.append(name)
        return exp.to_table(name)

    def fetch(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        def collect() -> tuple[list[str], list[tuple[Any, ...]]]:
            frame = self.spark.sql(sql)
            rows = frame.collect()
            return list(frame.columns), [tuple(row) for row in rows]

        return self._run(collect)

    def _run(self, run: Callable[[], T]) -> T:
        """``run`` as a statement of its own (_Statement): on a thread of its own, which the
        caller leaves when the statement is cancelled, though Spark is still planning it."""
        statement = self.statement = _Statement()
        outcome: queue.Queue[tuple[bool, Any]] = queue.Queue()

        def work() -> None:
            # the outcome is handed over once the settings are restored, not before: the
            # caller must not see the session with them still set
            try:
                with self._running(statement.group):
                    value = run()
            except BaseException as error:  # handed to the caller, who raises it
                outcome.put((False, error))
            else:
                outcome.put((True, value))
            finally:
                statement.ended.set()

        # pyspark's thread takes the caller's job properties (a scheduler pool, a notebook's
        # own) or Spark Connect tags into the one that runs the query; a session that is not
        # pyspark's own (a stand-in, without pyspark installed) has none to carry
        name = "sqlmetrics-spark"
        if type(self.spark).__module__.startswith("pyspark."):
            from pyspark.util import InheritableThread

            InheritableThread(work, name=name, daemon=True, session=self.spark).start()
        else:
            threading.Thread(target=work, name=name, daemon=True).start()
        while True:
            try:
                ok, value = outcome.get(timeout=WAIT_SECONDS)
            except queue.Empty:
                if statement.cancelled.is_set():
                    raise _Left("the statement was cancelled while Spark planned it") from None
                continue
            if ok:
                return value  # type: ignore[no-any-return]
            raise value

    @contextlib.contextmanager
    def _running(self, group: str) -> Iterator[None]:
        """The statement's job group, settings and progress line around a query."""
        previous = self._start_group(group)
        self._hold_settings()
        stop = threading.Event()
        reporter = None
        if self.progress and self.context is not None:
            reporter = threading.Thread(
                target=self._report_progress, args=(stop, group), daemon=True
            )
            reporter.start()
        try:
            yield
        finally:
            stop.set()
            if reporter is not None:
                reporter.join()
            self._release_settings()
            # a session stopped meanwhile refuses it: the query's result or error is the news
            with contextlib.suppress(Exception):
                self._end_group(group, previous)

    def _hold_settings(self) -> None:
        """_QUERY_SETTINGS set by the first statement running on the session."""
        with _holders_lock:
            running, saved = _holders.get(id(self.spark), (0, {}))
            if not running:
                saved = self._set(_QUERY_SETTINGS)
            _holders[id(self.spark)] = (running + 1, saved)

    def _release_settings(self) -> None:
        """The session's own values put back by the last statement running on it."""
        with _holders_lock:
            running, saved = _holders.pop(id(self.spark))
            if running > 1:
                _holders[id(self.spark)] = (running - 1, saved)
            else:
                self._set(saved)

    def _set(self, settings: Mapping[str, str | None]) -> dict[str, str | None]:
        """Sets (None: unsets) session settings; returns what they were, for those it set.
        A setting the session refuses (a managed service may) is skipped: it only saves
        shuffles, the results are the same without it."""
        conf = self.spark.conf
        previous: dict[str, str | None] = {}
        for key, value in settings.items():
            with contextlib.suppress(Exception):  # pyspark's and Spark Connect's errors differ
                before = conf.get(key, None)
                if value is None:
                    conf.unset(key)
                else:
                    conf.set(key, value)
                previous[key] = before
        return previous

    def _start_group(self, group: str) -> dict[str, Any]:
        if self.context is None:
            self.spark.addTag(group)
            return {}
        previous = {key: self.context.getLocalProperty(key) for key in _JOB_PROPERTIES}
        self.context.setJobGroup(group, "sqlmetrics evaluate", interruptOnCancel=True)
        return previous

    def _end_group(self, group: str, previous: dict[str, Any]) -> None:
        """The thread's job properties as they were: no setting is left behind."""
        if self.context is None:
            self.spark.removeTag(group)
            return
        for key, value in previous.items():
            self.context.setLocalProperty(key, value)

    def cancel(self) -> None:
        """Cancels the statement: its jobs, those running and those it starts later (a
        deadline may pass while Spark plans it, before any job exists), and the caller leaves
        it. Its group is its own, so no one else's work is touched."""
        statement = self.statement
        if statement is None or statement.cancelled.is_set():
            return
        statement.cancelled.set()
        if self.context is None or not _cancel_with_later_jobs(self.context, statement.group):
            self._cancel_now(statement.group)
        # Spark 4 refuses the group's later jobs, but not the shuffle stages adaptive execution
        # submits on their own: until the statement ends, whatever starts is cancelled again.
        threading.Thread(target=self._recancel, args=(statement,), daemon=True).start()

    def _cancel_now(self, group: str) -> None:
        with contextlib.suppress(Exception):  # a stopped session has nothing left to cancel
            if self.context is None:
                self.spark.interruptTag(group)
            else:
                self.context.cancelJobGroup(group)

    def _recancel(self, statement: _Statement) -> None:
        while not statement.ended.wait(RECANCEL_SECONDS):
            self._cancel_now(statement.group)

    def _report_progress(self, stop: threading.Event, group: str) -> None:
        """Spark's stages of this job group as a line on stderr, like DuckDB's bar."""
        tracker = self.context.statusTracker()
        shown = False
        while not stop.wait(0.5):
            done = total = 0
            for job_id in tracker.getJobIdsForGroup(group):
                job = tracker.getJobInfo(job_id)
                for stage_id in job.stageIds if job else ():
                    stage = tracker.getStageInfo(stage_id)
                    if stage is not None:
                        done += stage.numCompletedTasks
                        total += stage.numTasks
            if total:
                width = 40
                filled = width * done // total
                bar = "#" * filled + " " * (width - filled)
                sys.stderr.write(f"\rSpark [{bar}] {done}/{total} tasks")
                sys.stderr.flush()
                shown = True
        if shown:
            sys.stderr.write("\n")

    def close(self) -> None:
        for name in self.views:
            self.spark.catalog.dropTempView(name)
        self.views.clear()


def spark_session(master: str) -> Any:
    """A SparkSession for ``--spark MASTER`` (local[*] by default); a missing pyspark is one
    line naming the extra to install."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise SqlmetricsError("--spark needs pyspark: pip install 'sqlmetrics[spark]'") from None
    builder = SparkSession.builder.master(master).appName("sqlmetrics")
    if master.startswith("local"):
        # On one machine: no web UI, and the driver on loopback.
        builder = builder.config("spark.ui.enabled", "false")
        builder = builder.config("spark.driver.host", "127.0.0.1")
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
