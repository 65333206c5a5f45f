"""The exposure table (fixtures/tables/exposure_providers.yaml) on every engine: its query in
each dialect run where an engine runs it (a round trip to DuckDB elsewhere), and evaluate's
``exposure_k`` through each way of connecting of test_connections.py."""

from __future__ import annotations

from typing import Any

import pytest

import sqlmetrics
from sqlmetrics.api import _prepared
from sqlmetrics.compose.exposure import compose_exposure
from sqlmetrics.compose.inputs import Options
from sqlmetrics.options import QueryOptions, filled
from sqlmetrics.render.dialects import render
from tests.engines.cases import REPO, Case, Table, compare, read_yaml
from tests.engines.conftest import SHARED_ENGINES, EnginePool
from tests.engines.test_connections import WAYS, Way, inputs
from tests.engines.test_engines import TARGETS, Target, loaded, rows_of, to_duckdb

DATA: dict[str, Any] = read_yaml(REPO / "fixtures" / "tables" / "exposure_providers.yaml")
GIVEN = DATA["given"]
CASE = Case(
    name="exposure_providers",
    recommendations=Table.of(GIVEN["recommendations"], []),
    interactions=Table.of(GIVEN["interactions"], []),
    options={},
    metrics=["ndcg@3"],
    expect=[],
    items=Table.of(GIVEN["items"], []),
)
OPTIONS = DATA["options"]


def marks(engine: str) -> list[Any]:
    found: list[Any] = [getattr(pytest.mark, engine)]
    if engine not in SHARED_ENGINES:  # its tables loaded once, on one worker
        found.append(pytest.mark.xdist_group(f"engines-{CASE.name}"))
    return found


def sql_of(dialect: str) -> str:
    recommendations, interactions = f"r_{CASE.name}", f"t_{CASE.name}"
    given = filled(
        QueryOptions,
        {
            "group_by": OPTIONS["group_by"],
            "interactions_group_by": [],
            "items": f"i_{CASE.name}",
            "columns": OPTIONS["columns"],
            "dialect": dialect,
        },
        "test",
    )
    inputs_, _ = _prepared(["ndcg@3"], recommendations, interactions, given)
    query = compose_exposure(
        inputs_, Options(), OPTIONS["exposure_k"], OPTIONS["exposure_patience"], dialect
    )
    return render(query, dialect)


@pytest.mark.parametrize(
    "target", [pytest.param(t, marks=marks(t.engine), id=t.id) for t in TARGETS]
)
def test_the_query_of_every_dialect_gives_the_fixture(
    engine_pool: EnginePool, target: Target
) -> None:
    engine = engine_pool.get(target.engine)
    loaded(engine, CASE, target.dialect)
    sql = sql_of(target.dialect)
    if target.engine == "roundtrip":
        sql = to_duckdb(sql, target.dialect)
    columns, rows = rows_of(engine, sql)
    compare(columns, rows, DATA["expect"], f"{target.id} exposure")


@pytest.mark.parametrize(
    "way", [pytest.param(w, marks=marks(w.engine), id=w.id) for w in WAYS if not w.dataframes]
)
def test_evaluate_gives_the_fixture_through_every_connection(
    engine_pool: EnginePool, way: Way
) -> None:
    engine = engine_pool.get(way.engine)
    given = inputs(engine, CASE, way)
    result = sqlmetrics.evaluate(metrics=["ndcg@3"], **given, **way.connect(engine), **OPTIONS)
    table = sqlmetrics.read_exposure(result)
    table = table.astype(object).where(table.notna(), None)  # the NULL item group as None
    rows = [tuple(row) for row in table.itertuples(index=False)]
    compare(list(table.columns), rows, DATA["expect"], way.id)
