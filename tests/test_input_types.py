"""Input types as a class (issue 23): ids and group values of every integer width come back
exactly; a group column of two types is refused; infinite relevance and ratings are refused,
infinite scores rank as numbers; every number bound into the query is finite; cutoffs have one
limit; column types the arithmetic cannot take get a message of their own; JSON is strict."""

from __future__ import annotations

import json
import math
import sqlite3
from decimal import Decimal
from typing import Any

import duckdb
import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics import SqlmetricsError
from sqlmetrics.catalog.metrics import MAX_CUTOFF
from tests.cli_runner import cli

# Every integer type DuckDB has, with its least and greatest value.
INTEGER_RANGES = {
    "TINYINT": (-(2**7), 2**7 - 1),
    "SMALLINT": (-(2**15), 2**15 - 1),
    "INTEGER": (-(2**31), 2**31 - 1),
    "BIGINT": (-(2**63), 2**63 - 1),
    "HUGEINT": (-(2**127), 2**127 - 1),
    "UTINYINT": (0, 2**8 - 1),
    "USMALLINT": (0, 2**16 - 1),
    "UINTEGER": (0, 2**32 - 1),
    "UBIGINT": (0, 2**64 - 1),
    "UHUGEINT": (0, 2**128 - 1),
}


def _tables(connection: duckdb.DuckDBPyConnection, kind: str, values: list[Any]) -> None:
    """Two users (ids ``values``), each its own group (g = user_id), with two recommended
    items: the first user's first relevant (precision@2 = 0.5), both of the second's (1.0), so
    keys mixed up show in the numbers as well as in the ids."""
    rows = []
    for position, value in enumerate(values):
        literal = f"CAST({value!r} AS {kind})" if not isinstance(value, str) else f"{value}"
        rows.append(f"({literal}, 1, 0.9, {position})")
        rows.append(f"({literal}, 2, 0.8, {position})")
    connection.execute(
        "CREATE OR REPLACE TABLE recs AS SELECT user_id, item_id, score, user_id AS g, position "
        f"FROM (VALUES {', '.join(rows)}) AS t(user_id, item_id, score, position)"
    )
    connection.execute(
        "CREATE OR REPLACE TABLE truth AS SELECT user_id, item_id, g FROM recs "
        "WHERE item_id = 1 OR position = 1"
    )


def _expected_dtype(values: list[int]) -> str:
    return "int64" if all(-(2**63) <= v < 2**63 for v in values) else "object"


def _check_keys(frame: pd.DataFrame, column: str, values: list[Any], dtype: str) -> None:
    assert sorted(frame[column].tolist()) == sorted(values)
    assert all(type(v) is type(values[0]) for v in frame[column].tolist()) or dtype == "int64"
    assert str(frame[column].dtype) == dtype


def _first_pass_runs_out_of_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """The single query fails as out of memory, so evaluate goes in passes over the users."""
    from sqlmetrics.engines import duckdb_passes

    single = duckdb_passes.split_diagnostics
    calls: list[int] = []

    def once_out_of_memory(*args: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise duckdb.OutOfMemoryException("out of memory")
        return single(*args)

    monkeypatch.setattr(duckdb_passes, "split_diagnostics", once_out_of_memory)


@pytest.mark.parametrize("passes", [False, True], ids=["one query", "passes"])
@pytest.mark.parametrize("extreme", [True, False], ids=["extremes", "small"])
@pytest.mark.parametrize("kind", list(INTEGER_RANGES))
def test_integer_ids_and_groups_round_trip_exactly(
    kind: str, extreme: bool, passes: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Users and group values of every integer width, at its limits or small: the same ints
    back, int64 where they fit it (as BIGINT gives), Python ints in an object column where not;
    in the summary (group column) and per user (user column), in one query or in passes."""
    values = list(INTEGER_RANGES[kind]) if extreme else [5, 7]
    connection = duckdb.connect()
    _tables(connection, kind, values)
    dtype = _expected_dtype(values)
    for per_user in (False, True):
        if passes:
            _first_pass_runs_out_of_memory(monkeypatch)
        result = sqlmetrics.evaluate(
            "recs", "truth", ["ndcg@10", "precision@2"], connection=connection,
            group_by="g", per_user=per_user,
        )  # fmt: skip
        assert (result.attrs["passes"] > 1) == passes
        _check_keys(result, "g", values, dtype)
        if per_user:
            _check_keys(result, "user_id", values, dtype)
            assert result["user_id"].tolist() == result["g"].tolist()
        by_group = dict(zip(result["g"].tolist(), result["precision@2"].tolist(), strict=True))
        assert by_group == {values[0]: 0.5, values[1]: 1.0}
        diagnostics = sqlmetrics.read_diagnostics(result)
        _check_keys(diagnostics, "g", values, dtype)


@pytest.mark.parametrize(
    ("kind", "values", "dtype"),
    [
        ("VARCHAR", ["'a'", "'b'"], None),
        ("DATE", ["DATE '2026-01-01'", "DATE '2026-01-02'"], None),
        ("DECIMAL(18,0)", [-(10**17), 10**17], "int64"),
        ("DECIMAL(38,0)", [-(10**37), 10**37], "object"),
    ],
)
def test_text_dates_and_whole_decimals_round_trip(
    kind: str, values: list[Any], dtype: str | None
) -> None:
    connection = duckdb.connect()
    _tables(connection, kind, values)
    for per_user in (False, True):
        result = sqlmetrics.evaluate(
            "recs", "truth", ["precision@2"], connection=connection, group_by="g",
            per_user=per_user,
        )  # fmt: skip
        expected = [
            row[0]
            for row in connection.execute("SELECT DISTINCT g FROM recs ORDER BY g").fetchall()
        ]
        if kind == "DATE":  # pandas reads a DATE as a datetime64 at midnight (as before)
            expected = [pd.Timestamp(value) for value in expected]
        assert sorted(result["g"].tolist()) == expected
        if per_user:
            assert result["user_id"].tolist() == result["g"].tolist()
        if dtype is not None:
            assert str(result["g"].dtype) == dtype


@pytest.mark.parametrize("kind", ["DECIMAL(10,2)", "DOUBLE", "FLOAT"])
def test_ids_with_a_fraction_are_refused(kind: str) -> None:
    connection = duckdb.connect()
    _tables(connection, kind, [1, 2])
    with pytest.raises(SqlmetricsError, match=rf"user_id \(the user column\) is {kind[:7]}"):
        sqlmetrics.evaluate("recs", "truth", ["ndcg@10"], connection=connection)


def _day(value: str, kind: str) -> str:
    return value[:10] if kind == "DATE" else value


@pytest.mark.parametrize(
    ("recs_type", "truth_type"),
    [
        ("TIMESTAMP", "TIMESTAMP WITH TIME ZONE"),
        ("TIMESTAMP WITH TIME ZONE", "TIMESTAMP"),
        ("TIMESTAMP_NS", "TIMESTAMP WITH TIME ZONE"),
        ("BIGINT", "VARCHAR"),
        ("VARCHAR", "INTEGER"),
        ("DATE", "TIMESTAMP"),
        ("DATE", "VARCHAR"),
    ],
)
def test_a_group_column_of_two_types_is_refused(recs_type: str, truth_type: str) -> None:
    """Compared as they are, a naive and an aware timestamp give numbers that depend on the
    machine's time zone; int and text are an engine error. Refused before any query."""
    connection = duckdb.connect()
    value = (
        "2026-01-01 00:00:00" if "TIME" in recs_type + truth_type or "DATE" in recs_type else "1"
    )
    connection.execute(
        "CREATE TABLE recs AS SELECT 1 AS user_id, 1 AS item_id, 0.5 AS score, "
        f"CAST('{_day(value, recs_type)}' AS {recs_type}) AS day"
    )
    connection.execute(
        "CREATE TABLE truth AS SELECT 1 AS user_id, 1 AS item_id, "
        f"CAST('{_day(value, truth_type)}' AS {truth_type}) AS day"
    )
    with pytest.raises(SqlmetricsError) as raised:
        sqlmetrics.evaluate("recs", "truth", ["ndcg@10"], connection=connection, group_by="day")
    message = str(raised.value)
    assert message.startswith(
        f"group_by column 'day' is {recs_type} in recommendations but {truth_type} in interactions"
    )
    assert "cast" in message


@pytest.mark.parametrize(
    ("recs_type", "truth_type"),
    [("INTEGER", "BIGINT"), ("TIMESTAMP", "TIMESTAMP_NS"), ("VARCHAR", "VARCHAR")],
)
def test_a_group_column_of_one_family_is_taken(recs_type: str, truth_type: str) -> None:
    connection = duckdb.connect()
    value = "2026-01-01 00:00:00" if "TIME" in recs_type else "1"
    connection.execute(
        f"CREATE TABLE recs AS SELECT 1 AS user_id, 1 AS item_id, 0.5 AS score, "
        f"CAST('{value}' AS {recs_type}) AS day"
    )
    connection.execute(
        "CREATE TABLE truth AS SELECT 1 AS user_id, 1 AS item_id, "
        f"CAST('{value}' AS {truth_type}) AS day"
    )
    result = sqlmetrics.evaluate(
        "recs", "truth", ["ndcg@10"], connection=connection, group_by="day"
    )
    assert result["ndcg@10"].tolist() == [1.0]


def _recs() -> pd.DataFrame:
    return pd.DataFrame({"user_id": [1, 1, 2], "item_id": [10, 11, 20], "score": [0.9, 0.8, 0.5]})


def _truth(**columns: list[Any]) -> pd.DataFrame:
    return pd.DataFrame({"user_id": [1, 2], "item_id": [10, 20], **columns})


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
@pytest.mark.parametrize("metric", ["ndcg@10", "ndcg_exp@10", "precision@1"])
def test_non_finite_relevance_is_refused(value: float, metric: str) -> None:
    with pytest.raises(SqlmetricsError) as raised:
        sqlmetrics.evaluate(_recs(), _truth(relevance=[1.0, value]), [metric])
    assert str(raised.value).startswith(
        "interactions.relevance (the relevance column) is NULL, negative, NaN or infinite in 1 "
        "row(s), e.g. user_id=2, item_id=20, relevance="
    )


def test_the_checks_query_counts_infinite_relevance_on_duckdb_and_sqlite() -> None:
    """to_sql(checks=True), the gate of a scheduled job, counts ±inf as bad relevance where
    the engine can hold it (SQLite reads 9e999 as infinity, and its inf * 0 is NULL)."""
    rows = [(1, 10, 1.0), (1, 11, "inf"), (2, 20, "-inf"), (3, 30, "nan"), (4, 40, 2.0)]
    connection = duckdb.connect()
    connection.execute(
        "CREATE TABLE recommendations AS SELECT * FROM (VALUES (1, 10, 0.5), (2, 20, 0.5), "
        "(3, 30, 0.5), (4, 40, 0.5)) AS t(user_id, item_id, score)"
    )
    connection.execute(
        "CREATE TABLE interactions (user_id INTEGER, item_id INTEGER, relevance DOUBLE)"
    )
    connection.executemany("INSERT INTO interactions VALUES (?, ?, CAST(? AS DOUBLE))", rows)
    query = sqlmetrics.to_sql(["ndcg@10"], checks=True)
    result = connection.sql(query)
    names = [column for column, *_ in result.description]
    counted = dict(zip(names, result.fetchall()[0], strict=True))
    assert counted["bad_relevance"] == 3
    lite = sqlite3.connect(":memory:")
    lite.execute("CREATE TABLE recommendations (user_id INTEGER, item_id INTEGER, score REAL)")
    lite.execute("CREATE TABLE interactions (user_id INTEGER, item_id INTEGER, relevance REAL)")
    lite.executemany("INSERT INTO recommendations VALUES (?, ?, 0.5)", [(1, 10), (4, 40)])
    lite.executemany(
        "INSERT INTO interactions VALUES (?, ?, ?)",
        [(1, 10, 1.0), (1, 11, math.inf), (2, 20, -math.inf), (4, 40, 2.0)],
    )
    cursor = lite.execute(sqlmetrics.to_sql(["ndcg@10"], checks=True, dialect="sqlite"))
    names = [column[0] for column in cursor.description]
    counted = dict(zip(names, cursor.fetchall()[0], strict=True))
    assert counted["bad_relevance"] == 2


@pytest.mark.parametrize("value", [math.inf, -math.inf])
def test_infinite_ratings_are_refused(value: float) -> None:
    truth = _truth(relevance=[1, 1], rating=[4.0, value])
    with pytest.raises(SqlmetricsError) as raised:
        sqlmetrics.evaluate(_recs(), truth, ["rmse"])
    assert str(raised.value).startswith(
        "interactions.rating (the rating column) is NaN or infinite in 1 row(s), e.g. "
        "user_id=2, item_id=20, rating="
    )
    with_null = _truth(relevance=[1, 1], rating=[4.0, None])
    assert sqlmetrics.evaluate(_recs(), with_null, ["rmse"])["users"].tolist() == [1]


def test_infinite_scores_rank_first_and_last_as_numbers() -> None:
    recs = pd.DataFrame(
        {"user_id": [1, 1, 1], "item_id": [10, 11, 12], "score": [-math.inf, 0.5, math.inf]}
    )
    truth = pd.DataFrame({"user_id": [1], "item_id": [12]})
    result = sqlmetrics.evaluate(recs, truth, ["precision@1", "mrr@3"])
    assert result[["precision@1", "mrr@3"]].values.tolist() == [[1.0, 1.0]]
    last = truth.assign(item_id=[10])
    assert sqlmetrics.evaluate(recs, last, ["mrr@3"])["mrr@3"].tolist() == [pytest.approx(1 / 3)]


@pytest.mark.parametrize("threshold", [math.inf, -math.inf, math.nan, float("1e400")])
def test_a_non_finite_threshold_is_refused_everywhere(threshold: float) -> None:
    with pytest.raises(SqlmetricsError, match="threshold must be a number >= 0 and finite"):
        sqlmetrics.evaluate(_recs(), _truth(), ["ndcg@10"], threshold=threshold)
    with pytest.raises(SqlmetricsError, match="threshold must be a number >= 0 and finite"):
        sqlmetrics.to_sql(["ndcg@10"], threshold=threshold)


@pytest.mark.parametrize("text", ["inf", "1e400", "nan", "-inf"])
def test_the_cli_refuses_a_non_finite_threshold(text: str) -> None:
    run = cli("sql", "-m", "ndcg@10", f"--threshold={text}")
    assert run.returncode != 0 and run.stdout == ""
    assert "threshold must be a number >= 0 and finite" in run.stderr


@pytest.mark.parametrize("label", ["accuracy@inf", "accuracy@1e400", "accuracy@nan"])
def test_a_non_finite_score_threshold_is_refused(label: str) -> None:
    with pytest.raises(SqlmetricsError, match=r"must be a finite number, like accuracy@0\.5"):
        sqlmetrics.to_sql([label])


def test_every_number_bound_into_the_query_is_finite() -> None:
    from sqlmetrics.compose.stages import number

    assert number(0.5).sql() == "0.5"
    for value in (math.inf, -math.inf, math.nan):
        with pytest.raises(SqlmetricsError, match="not a finite number"):
            number(value)


@pytest.mark.parametrize("cutoff", [MAX_CUTOFF + 1, 10**7, 2**63, 10**40])
def test_a_cutoff_above_the_limit_is_refused_alike_everywhere(cutoff: int) -> None:
    message = f"cutoff in 'ndcg@{cutoff}' is above the largest supported, {MAX_CUTOFF:,}"
    with pytest.raises(SqlmetricsError, match=message):
        sqlmetrics.evaluate(_recs(), _truth(), [f"ndcg@{cutoff}"])
    with pytest.raises(SqlmetricsError, match=message):
        sqlmetrics.to_sql([f"ndcg@{cutoff}"])
    for args in (["-m", f"ndcg@{cutoff}"], ["--all", "--cutoff", str(cutoff)]):
        run = cli("sql", *args)
        assert run.returncode != 0 and run.stdout == ""
        assert f"is above the largest supported, {MAX_CUTOFF:,}" in run.stderr


def test_the_largest_cutoff_works() -> None:
    result = sqlmetrics.evaluate(_recs(), _truth(), [f"ndcg@{MAX_CUTOFF}", f"hits@{MAX_CUTOFF}"])
    assert result["users"].tolist() == [2]


@pytest.mark.parametrize(
    ("table", "column", "kind", "message"),
    [
        ("recs", "score", "DECIMAL(38,38)", "more than 18 decimal places"),
        ("recs", "score", "DECIMAL(38,19)", "more than 18 decimal places"),
        ("truth", "relevance", "DECIMAL(38,36)", "more than 18 decimal places"),
        ("truth", "rating", "DECIMAL(38,38)", "more than 18 decimal places"),
        ("recs", "score", "DOUBLE[]", "is DOUBLE[], not a number"),
        ("truth", "relevance", "INTEGER[]", "is INTEGER[], not a number"),
        ("truth", "rating", "DOUBLE[]", "is DOUBLE[], not a number"),
        ("recs", "score", "INTERVAL", "is INTERVAL, not a number"),
        ("recs", "score", "STRUCT(a DOUBLE)", "not a number"),
    ],
)
def test_column_types_the_metrics_cannot_read_get_a_message(
    table: str, column: str, kind: str, message: str
) -> None:
    connection = duckdb.connect()
    value = {"DOUBLE[]": "[0.5]", "INTEGER[]": "[1]", "INTERVAL": "INTERVAL 1 DAY"}.get(
        kind, "{'a': 0.5}" if kind.startswith("STRUCT") else "0.5"
    )
    score = f"CAST({value} AS {kind})" if table == "recs" else "0.5"
    connection.execute(f"CREATE TABLE recs AS SELECT 1 AS user_id, 1 AS item_id, {score} AS score")
    bad = f"CAST({value} AS {kind})"
    relevance = bad if column == "relevance" else "1"
    rating = bad if column == "rating" else "4.0"
    connection.execute(
        f"CREATE TABLE truth AS SELECT 1 AS user_id, 1 AS item_id, {relevance} AS relevance, "
        f"{rating} AS rating"
    )
    metrics = ["rmse"] if column == "rating" else ["ndcg@10"]
    role = "recommendations" if table == "recs" else "interactions"
    with pytest.raises(SqlmetricsError) as raised:
        sqlmetrics.evaluate("recs", "truth", metrics, connection=connection)
    text = str(raised.value)
    assert text.startswith(f"{role}.{column} (the {column} column) is ") and message in text


@pytest.mark.parametrize("kind", ["DECIMAL(18,18)", "DECIMAL(38,18)", "DECIMAL(10,2)"])
def test_decimals_within_the_scale_are_read(kind: str) -> None:
    connection = duckdb.connect()
    connection.execute(
        f"CREATE TABLE recs AS SELECT 1 AS user_id, 1 AS item_id, CAST(0.5 AS {kind}) AS score"
    )
    connection.execute(
        "CREATE TABLE truth AS SELECT 1 AS user_id, 1 AS item_id, "
        f"CAST(0.5 AS {kind}) AS relevance, CAST(0.5 AS {kind}) AS rating"
    )
    result = sqlmetrics.evaluate("recs", "truth", ["ndcg@10", "rmse"], connection=connection)
    assert result["ndcg@10"].tolist() == [1.0]


def test_json_output_is_strict() -> None:
    """NaN and ±infinity are no JSON numbers: null; exact keys stay exact."""
    from sqlmetrics.cli.output import render

    frame = pd.DataFrame(
        {
            "g": pd.Series([2**64 - 1, 2**127, 1], dtype=object),
            "d": [Decimal("1.50"), Decimal("2"), Decimal("3")],
            "users": [1, 2, 3],
            "x": [math.inf, -math.inf, math.nan],
        }
    )

    def refuse(constant: str) -> None:
        raise AssertionError(f"not strict JSON: {constant}")

    rows = json.loads(render(frame, "json"), parse_constant=refuse)
    assert [row["g"] for row in rows] == [2**64 - 1, 2**127, 1]
    assert [row["x"] for row in rows] == [None, None, None]
    assert [row["d"] for row in rows] == ["1.50", "2", "3"]


def test_the_cli_prints_non_finite_metrics_as_null_in_json(tmp_path: Any) -> None:
    """An infinite score ranks first; an rmse past the largest double is infinite: null."""
    recs = pd.DataFrame({"user_id": [1, 1], "item_id": [10, 11], "score": [math.inf, 1e200]})
    truth = pd.DataFrame({"user_id": [1, 1], "item_id": [10, 11], "rating": [1.0, 0.0]})
    recs.to_parquet(tmp_path / "recs.parquet")
    truth.to_parquet(tmp_path / "truth.parquet")
    run = cli(
        "evaluate", str(tmp_path / "recs.parquet"), str(tmp_path / "truth.parquet"),
        "-m", "ndcg@10", "-m", "mae", "--format", "json", "-q",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "Infinity" not in run.stdout and "NaN" not in run.stdout

    def refuse(constant: str) -> None:
        raise AssertionError(f"not strict JSON: {constant}")

    assert json.loads(run.stdout, parse_constant=refuse) == [
        {"users": 1, "ndcg@10": 1.0, "mae": None}
    ]
