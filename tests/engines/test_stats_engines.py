"""Confidence intervals and comparisons (issue 19) on every engine: for the same seed, the same
t-intervals, bootstrap intervals and p-values as DuckDB's, to 1e-9.

The bootstrap and the randomization test draw from uniform_draw (stats/draws.py), integer
arithmetic every engine computes alike, with the users dealt into buckets in the byte order of
their id's text; so equal numbers here check the draws, the buckets and the SQL of each
dialect at once. Each way of connecting of test_connections.py runs the cases below (Spark's
DataFrames only the string case: the SQL is Spark's tables' one); fakesnow runs them through
its own venv.
"""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
from typing import Any

import pandas as pd
import pytest
import sqlglot
from sqlglot import exp

import sqlmetrics
from tests.engines.cases import REPO, Case
from tests.engines.conftest import EnginePool
from tests.engines.engines import DuckDBEngine, fakesnow_python
from tests.engines.stats_cases import CALLS, CASES, calls, metrics_of, model_values, run
from tests.engines.test_connections import WAYS, Way, inputs
from tests.engines.test_engines import loaded, table_names, to_duckdb

_duckdb: list[DuckDBEngine] = []
_references: dict[tuple[str, str], pd.DataFrame] = {}


def on_duckdb(case: Case, call: str) -> pd.DataFrame:
    key = (case.name, call)
    if key not in _references:
        if not _duckdb:
            _duckdb.append(DuckDBEngine())
        engine = _duckdb[0]
        given = inputs(engine, case, Way("duckdb", "duckdb", lambda _: {}))
        _references[key] = run(case, call, given, {"connection": engine.connection})
    return _references[key]


def assert_close(got: pd.DataFrame, want: pd.DataFrame, where: str) -> None:
    assert list(got.columns) == list(want.columns), where
    pd.testing.assert_frame_equal(
        got.reset_index(drop=True),
        want.reset_index(drop=True),
        check_exact=False,
        check_dtype=False,
        rtol=0,
        atol=1e-9,
        obj=where,
    )


def parameters() -> list[Any]:
    found = []
    for way in WAYS:
        for case in CASES:
            if way.dataframes and case.name != "string_ids":
                continue
            marks = [getattr(pytest.mark, way.engine)]
            found.append(pytest.param(way, case, marks=marks, id=f"{way.id}-{case.name}"))
    return found


@pytest.mark.parametrize(("way", "case"), parameters())
def test_intervals_and_comparisons_equal_duckdbs_for_the_same_seed(
    engine_pool: EnginePool, way: Way, case: Case
) -> None:
    engine = engine_pool.get(way.engine)
    given = inputs(engine, case, way)
    for call in calls(case):
        got = run(case, call, given, way.connect(engine))
        assert_close(got, on_duckdb(case, call), f"{way.id} {case.name} {call}")


@pytest.mark.fakesnow
def test_intervals_through_fakesnow_equal_duckdbs() -> None:
    python = fakesnow_python()
    assert python is not None
    request = [{"case": case.name, "call": call} for case in CASES for call in calls(case)]
    answer = subprocess.run(
        [str(python), str(REPO / "tests" / "engines" / "fakesnow_stats.py")],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=1800,
        check=False,
    )
    assert answer.returncode == 0, answer.stderr[-3000:]
    found = json.loads(answer.stdout)
    for item in request:
        case = next(case for case in CASES if case.name == item["case"])
        key = f"{item['case']} {item['call']}"
        got = pd.read_json(io.StringIO(found[key]), orient="split")
        got.columns = [str(column) for column in got.columns]
        assert_close(got, on_duckdb(case, item["call"]), key)


# The dialects without an engine here: their statistics SQL read back and run on DuckDB. A
# developer's run reads back the three whose integer arithmetic and casts are rewritten the most
# (T-SQL, BigQuery, Oracle); CI every one (full_matrix, tests/conftest.py).
ROUND_TRIP = ("bigquery", "trino", "athena", "presto", "tsql", "oracle", "snowflake", "redshift")
SAMPLED_ROUND_TRIPS = ("tsql", "bigquery", "oracle")


def _to_sql(case: Case, call: str, dialect: str) -> str:
    recommendations, interactions = table_names(case, dialect)
    options = dict(CALLS[call])
    if call == "compare":
        options["baseline"] = str(model_values(case)[0])
    return sqlmetrics.to_sql(
        metrics_of(call),
        recommendations,
        interactions,
        dialect=dialect,
        **case.kwargs(),
        **options,
    )


def _read_back(sql: str, dialect: str) -> str:
    """to_duckdb's SQL; Oracle's INT (NUMBER(38), exact) read back as DuckDB's BIGINT rather
    than its 32-bit INT, which the draws' products (below 2^62) would overflow."""
    text = to_duckdb(sql, dialect)
    if dialect != "oracle":
        return text
    tree = sqlglot.parse_one(text, read="duckdb")
    for data_type in tree.find_all(exp.DataType):
        if data_type.this == exp.DataType.Type.INT:
            data_type.replace(exp.DataType.build("bigint"))
    return tree.sql(dialect="duckdb")


def _rows(engine: DuckDBEngine, sql: str) -> list[tuple[Any, ...]]:
    columns, rows = engine.query(sql)
    del columns
    # A replicate's mean over buckets with no value is 0 / 0: NaN in DuckDB's own SQL, NULL
    # where dialects.py guards the division; both read as "no value" (rows.float_or_nan).
    rows = [tuple(math.nan if value is None else value for value in row) for row in rows]
    # the union's rows come in no particular order: sorted by their text
    return sorted(rows, key=lambda row: [repr(value) for value in row])


@pytest.mark.roundtrip
@pytest.mark.parametrize(
    "dialect",
    [
        pytest.param(
            dialect, marks=() if dialect in SAMPLED_ROUND_TRIPS else pytest.mark.full_matrix
        )
        for dialect in ROUND_TRIP
    ],
)
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_the_statistics_sql_of_every_dialect_reads_back_to_duckdbs_numbers(
    dialect: str, case: Case
) -> None:
    if not _duckdb:
        _duckdb.append(DuckDBEngine())
    engine = _duckdb[0]
    loaded(engine, case, "duckdb")
    for call in calls(case):
        want = _rows(engine, _to_sql(case, call, "duckdb"))
        got = _rows(engine, _read_back(_to_sql(case, call, dialect), dialect))
        assert len(got) == len(want), (dialect, call)
        for a, b in zip(got, want, strict=True):
            assert a == pytest.approx(b, abs=1e-9, nan_ok=True), (dialect, call)
