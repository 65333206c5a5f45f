"""A small call stays small: the round trips a DataFrame evaluate makes to DuckDB, and the
caches of composed SQL returning what a fresh composition would."""

from __future__ import annotations

from typing import Any

import duckdb
import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics.engines import duckdb as duckdb_engine
from sqlmetrics.engines import duckdb_passes, duckdb_schemas
from sqlmetrics.io.database import local_database


class _Traced:
    """A cursor that notes each statement (and registration) sent to DuckDB."""

    def __init__(self, cursor: duckdb.DuckDBPyConnection, seen: list[str]) -> None:
        self._cursor = cursor
        self._seen = seen

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._cursor, name)
        if name not in ("execute", "register", "sql"):
            return found

        def traced(*args: Any, **kwargs: Any) -> Any:
            self._seen.append(" ".join([name, *str(args[0]).split()[:2]]))
            return found(*args, **kwargs)

        return traced


class _Database:
    def __init__(self, seen: list[str]) -> None:
        self._seen = seen

    def cursor(self) -> _Traced:
        return _Traced(local_database().cursor(), self._seen)


@pytest.fixture
def traced(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    # read once per process, before tracing
    duckdb_engine._cursor_progress_bar()
    duckdb_engine._database_memory_limit()
    monkeypatch.setattr(duckdb_engine, "local_database", lambda: _Database(seen))
    return seen


def test_a_dataframe_call_makes_one_round_trip_per_need(
    small: tuple[pd.DataFrame, pd.DataFrame], traced: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each input registered and its columns read, then the query: no setting read or
    written on a cursor of our own (the database's memory limit is read once per process);
    frames of the same columns and dtypes again: their types are known."""
    monkeypatch.setattr(duckdb_schemas, "_known", {})
    recs, truth = small
    sqlmetrics.evaluate(recs, truth, ["ndcg@3", "P@2"])
    assert traced == [
        "register sqlmetrics_recommendations",
        "execute SELECT *",
        "register sqlmetrics_interactions",
        "execute SELECT *",
        "execute WITH input_recommendations",
    ]
    traced.clear()
    sqlmetrics.evaluate(recs.assign(score=recs["score"] / 2), truth.copy(), ["ndcg@3", "P@2"])
    assert traced == [
        "register sqlmetrics_recommendations",
        "register sqlmetrics_interactions",
        "execute WITH input_recommendations",
    ]


def test_a_frame_whose_dtypes_changed_is_read_again(
    small: tuple[pd.DataFrame, pd.DataFrame], traced: list[str]
) -> None:
    """Same column names, another dtype: its types are read, not taken from the frame before
    (an integer score would otherwise be bound as the float it was)."""
    recs, truth = small
    sqlmetrics.evaluate(recs, truth, ["P@2"])
    traced.clear()
    integers = recs.assign(score=(recs["score"] * 10).astype("int32"))
    result = sqlmetrics.evaluate(integers, truth, ["P@2"])
    assert traced[:2] == ["register sqlmetrics_recommendations", "execute SELECT *"]
    engine = duckdb_engine.DuckDBEngine()
    try:
        assert engine.bind(integers, "recommendations").columns["score"] == "INTEGER"
    finally:
        engine.close()
    assert result["P@2"].tolist() == sqlmetrics.evaluate(recs, truth, ["P@2"])["P@2"].tolist()


FRAMES = {
    "numbers": pd.DataFrame(
        {
            "b": [True, False],
            "i8": pd.array([1, 2], dtype="int8"),
            "u64": pd.array([1, 2], dtype="uint64"),
            "f32": pd.array([0.5, 1.5], dtype="float32"),
            "f": [0.5, float("nan")],
        }
    ),
    "times": pd.DataFrame(
        {
            "ns": pd.to_datetime(["2024-01-01", "2024-01-02"]).astype("datetime64[ns]"),
            "us": pd.to_datetime(["2024-01-01", "2024-01-02"]).astype("datetime64[us]"),
        }
    ),
    "text": pd.DataFrame({"s": pd.array(["a", None], dtype="str")}),
}


@pytest.mark.parametrize("name", list(FRAMES))
def test_remembered_types_are_those_duckdb_reads(name: str) -> None:
    """For each dtype the cache admits, the types given from it equal a fresh probe's, and the
    dict handed out is the caller's own."""
    frame = FRAMES[name]
    key = duckdb_schemas.schema_key(frame)
    assert key is not None
    engine = duckdb_engine.DuckDBEngine()
    try:
        first = engine.bind(frame, "items")
        probed = engine._probed(first.relation, None, "items", frame)
        assert duckdb_schemas.known(key) == probed == first.columns
        first.columns["s"] = "changed"
        assert duckdb_schemas.known(key) == probed
    finally:
        engine.close()


def test_frames_whose_values_decide_their_types_are_always_read() -> None:
    objects = pd.DataFrame({"user_id": [1, 2], "item_id": ["a", 3]}, dtype=object)
    categories = pd.DataFrame({"c": pd.Categorical(["a", "b"])})
    nullable = pd.DataFrame({"n": pd.array([1, None], dtype="Int64")})
    repeated = pd.DataFrame([[1, 2]], columns=["a", "a"])
    for frame in (objects, categories, nullable, repeated):
        assert duckdb_schemas.schema_key(frame) is None


def test_the_remembered_schemas_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(duckdb_schemas, "_known", {})
    monkeypatch.setattr(duckdb_schemas, "MAX_SCHEMAS", 3)
    for index in range(5):
        duckdb_schemas.remember(((f"c{index}", "<i8"),), {f"c{index}": "BIGINT"})
    assert list(duckdb_schemas._known) == [((f"c{i}", "<i8"),) for i in (2, 3, 4)]


def test_a_callers_connection_has_its_memory_limit_read_at_each_call(
    small: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    """The limit decides the passes over the users: a caller may change it between calls."""
    recs, truth = small
    connection = duckdb.connect()
    seen: list[float] = []
    reading = duckdb_passes.memory_limit

    def read(cursor: duckdb.DuckDBPyConnection) -> float:
        seen.append(reading(cursor))
        return seen[-1]

    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(duckdb_passes, "memory_limit", read)
        sqlmetrics.evaluate(recs, truth, ["P@2"], connection=connection)
        connection.execute("SET memory_limit = '1GiB'")
        sqlmetrics.evaluate(recs, truth, ["P@2"], connection=connection)
    assert seen[1] == 2**30 != seen[0]


def test_our_databases_memory_limit_is_the_one_a_cursor_reads() -> None:
    cursor = local_database().cursor()
    assert duckdb_engine._database_memory_limit() == duckdb_passes.memory_limit(cursor)


def test_progress_asked_for_is_set_on_our_own_cursor(
    small: tuple[pd.DataFrame, pd.DataFrame], traced: list[str]
) -> None:
    recs, truth = small
    sqlmetrics.evaluate(recs, truth, ["P@2"], progress=True)
    assert "execute SET enable_progress_bar" in traced


def test_our_own_cursor_starts_without_the_progress_bar() -> None:
    """The setting the engine skips writing is the one a new cursor has."""
    cursor = local_database().cursor()
    setting = cursor.execute("SELECT current_setting('enable_progress_bar')").fetchone()
    assert setting is not None
    assert duckdb_engine._cursor_progress_bar() is (setting[0] in (True, "true"))


@pytest.mark.parametrize(
    ("segments", "dtype"),
    [(pd.array([1, 2], dtype="int32"), "int64"), (pd.array([None, 2], dtype="Int32"), "Int32")],
)
def test_split_gives_integer_keys_and_counts_as_int64(
    small: tuple[pd.DataFrame, pd.DataFrame], segments: Any, dtype: str
) -> None:
    """The metric rows and the diagnostics rows come from one result, where each kind's NULLs
    made the other's integer columns floats: user ids, counts and complete integer group keys
    come back int64 (a key with a NULL group as the input had it)."""
    recs, truth = small
    segment = dict(zip([1, 2, 3], [segments[0], segments[1], segments[1]], strict=True))
    recs = recs.assign(segment=pd.array([segment[u] for u in recs["user_id"]], segments.dtype))
    truth = truth.assign(segment=pd.array([segment[u] for u in truth["user_id"]], segments.dtype))
    result = sqlmetrics.evaluate(recs, truth, ["P@2"], group_by="segment", per_user=True)
    assert result.dtypes.astype(str).to_dict() == {
        "segment": dtype,
        "user_id": "int64",
        "P@2": "float64",
    }
    diagnostics = sqlmetrics.read_diagnostics(result)
    assert diagnostics["segment"].dtype == dtype
    counts = diagnostics.drop(columns="segment")
    assert set(counts.dtypes.astype(str)) == {"int64"}
    summary = sqlmetrics.evaluate(recs, truth, ["P@2"], group_by="segment")
    assert summary["users"].dtype == "int64"
