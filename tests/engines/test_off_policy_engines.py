"""sqlmetrics.off_policy through each engine's connection (test_connections.py's ways) on the
fixtures of fixtures/off_policy/: the same estimates as on DuckDB."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

import sqlmetrics
from tests.engines.cases import REPO, Table
from tests.engines.conftest import SHARED_ENGINES, EnginePool
from tests.engines.test_connections import WAYS, Way

FIXTURES = sorted((REPO / "fixtures" / "off_policy").glob("*.yaml"))
# Spark's DataFrames bind as its tables do (test_connections.py); its tables are enough here.
OFF_POLICY_WAYS = [way for way in WAYS if not way.dataframes]


def _tables(path: Path) -> dict[str, Table]:
    given = yaml.safe_load(path.read_text())["given"]
    tables = {role: Table.of(given[role], ()) for role in ("log", "policy")}
    model = given.get("rewards")
    if model is not None:
        rows = [
            {"context_id": context, "item_id": item, "prediction": model["prediction"]}
            for context in model["contexts"]
            for item in model["items"]
        ]
        tables["rewards"] = Table.of(rows, ())
    return tables


def _params() -> list[Any]:
    found = []
    for way in OFF_POLICY_WAYS:
        marks: list[Any] = [getattr(pytest.mark, way.engine)]
        if way.engine not in SHARED_ENGINES:
            marks.append(pytest.mark.xdist_group("engines-off-policy"))
        for path in FIXTURES:
            found.append(pytest.param(way, path, marks=marks, id=f"{way.id}-{path.stem}"))
    return found


@pytest.mark.parametrize(("way", "path"), _params())
def test_off_policy_through_a_connection_equals_duckdb(
    engine_pool: EnginePool, way: Way, path: Path
) -> None:
    engine = engine_pool.get(way.engine)
    tables = _tables(path)
    names = {}
    for role, table in tables.items():
        names[role] = f"op_{path.stem}_{role}"
        engine.load(names[role], table)
    frames = {
        role: pd.DataFrame(list(table.rows), columns=table.names) for role, table in tables.items()
    }
    want = sqlmetrics.off_policy(frames["log"], frames["policy"], frames.get("rewards"), clip=3)
    got = sqlmetrics.off_policy(
        names["log"], names["policy"], names.get("rewards"), clip=3, **way.connect(engine)
    )
    assert got.attrs["engine"] != "duckdb" or way.engine == "duckdb"
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-9, atol=1e-12)
