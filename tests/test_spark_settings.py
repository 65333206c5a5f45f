"""The Spark engine's session settings without a Spark: a session that refuses a setting runs
the query without it, and whatever it changed is put back (tests/engines has the real one)."""

from __future__ import annotations

import time
from typing import Any

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
