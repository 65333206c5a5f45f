"""The Spark engine's session settings without a Spark: a session that refuses a setting runs
the query without it, and whatever it changed is put back (tests/engines has the real one)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from sqlmetrics.engines import spark as spark_engine


class Conf:
    def __init__(self, values: dict[str, str], refused: set[str]) -> None:
        self.values = values
        self.refused = refused

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def set(self, key: str, value: str) -> None:
        if key in self.refused:
            raise RuntimeError(f"[CANNOT_MODIFY_CONFIG] {key}")
        self.values[key] = value

    def unset(self, key: str) -> None:
        self.values.pop(key, None)


class Session:
    """Enough of a SparkSession for SparkEngine: sql, catalog, conf (no sparkContext)."""

    def __init__(self, conf: Conf) -> None:
        self.conf = conf
        self.catalog = None
        self.ran: list[dict[str, str]] = []

    def sql(self, text: str) -> Any:
        self.ran.append(dict(self.conf.values))
        return Frame()

    def addTag(self, tag: str) -> None:  # pyspark's names
        pass

    def removeTag(self, tag: str) -> None:
        pass

    @property
    def sparkContext(self) -> Any:
        raise RuntimeError("Spark Connect has no SparkContext")


class Frame:
    def __init__(self) -> None:
        self.columns = ["x"]

    def collect(self) -> list[tuple[int]]:
        return [(1,)]


def test_settings_are_set_for_the_query_and_put_back() -> None:
    key = "spark.sql.requireAllClusterKeysForCoPartition"
    assert spark_engine._QUERY_SETTINGS.get(key) == "false"
    conf = Conf({key: "true", "other": "1"}, refused=set())
    session = Session(conf)
    engine = spark_engine.SparkEngine(session)
    assert engine.fetch("SELECT 1") == (["x"], [(1,)])
    assert session.ran == [{key: "false", "other": "1"}]
    assert conf.values == {key: "true", "other": "1"}
    del conf.values[key]  # unset before: unset after
    engine.fetch("SELECT 1")
    assert session.ran[-1] == {key: "false", "other": "1"}
    assert conf.values == {"other": "1"}


def test_a_refused_setting_is_skipped_and_nothing_changes() -> None:
    key = "spark.sql.requireAllClusterKeysForCoPartition"
    conf = Conf({"other": "1"}, refused={key})
    session = Session(conf)
    engine = spark_engine.SparkEngine(session)
    assert engine.fetch("SELECT 1") == (["x"], [(1,)])
    assert session.ran == [{"other": "1"}]
    assert conf.values == {"other": "1"}


class SlowConf(Conf):
    """Takes its time to set a value back: the engine must not return before it has."""

    def set(self, key: str, value: str) -> None:
        if value == "true":
            time.sleep(0.3)
        super().set(key, value)


def test_fetch_returns_only_once_the_settings_are_back() -> None:
    key = "spark.sql.requireAllClusterKeysForCoPartition"
    conf = SlowConf({key: "true"}, refused=set())
    engine = spark_engine.SparkEngine(Session(conf))
    engine.fetch("SELECT 1")
    assert conf.values == {key: "true"}


class Overlapping(Session):
    """Its first query (the cancelled statement, which Spark still plans) ends only once the
    second (a retry on the same session) has begun; the second ends after the first."""

    def __init__(self, conf: Conf) -> None:
        super().__init__(conf)
        self.second_begun = threading.Event()
        self.first_ended = threading.Event()

    def sql(self, text: str) -> Any:
        if text == "SELECT 1":
            self.second_begun.wait(5)
            return super().sql(text)
        self.second_begun.set()
        self.first_ended.wait(5)
        time.sleep(0.1)  # the first statement's thread restores what it holds meanwhile
        return super().sql(text)


def test_overlapping_statements_leave_the_session_as_it_was() -> None:
    """A timeout's caller leaves a statement Spark still plans; a retry on the session begins
    before it ends. The last to end puts back the session's own value, not the retry's view of
    it (the first's setting), and the retry's query keeps the setting to its end."""
    key = "spark.sql.requireAllClusterKeysForCoPartition"
    conf = Conf({key: "true"}, refused=set())
    session = Overlapping(conf)
    first = spark_engine.SparkEngine(session)
    threading.Timer(0.2, first.cancel).start()
    with pytest.raises(spark_engine._Left):
        first.fetch("SELECT 1")
    statement = first.statement
    assert statement is not None
    threading.Thread(
        target=lambda: (statement.ended.wait(5), session.first_ended.set()), daemon=True
    ).start()
    spark_engine.SparkEngine(session).fetch("SELECT 2")
    assert statement.ended.wait(5)
    assert session.ran == [{key: "false"}, {key: "false"}]
    assert conf.values == {key: "true"}


class Stopping(Session):
    """A session stopped while the query ran: removing the statement's tag fails."""

    def removeTag(self, tag: str) -> None:
        raise RuntimeError("the session is stopped")


def test_a_query_that_ran_is_handed_back_though_its_tag_cannot_be_removed() -> None:
    conf = Conf({}, refused=set())
    engine = spark_engine.SparkEngine(Stopping(conf))
    assert engine.fetch("SELECT 1") == (["x"], [(1,)])
