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


def _candidates() -> dict[str, Table]:
    """toy_log.yaml's policy and reward model as candidate a, and as candidate b (item 0
    everywhere, predictions 0.6): group_by="model" through the engine."""
    tables = _tables(REPO / "fixtures" / "off_policy" / "toy_log.yaml")
    policy = [dict(zip(tables["policy"].names, row, strict=True)) for row in tables["policy"].rows]
    rewards = [
        dict(zip(tables["rewards"].names, row, strict=True)) for row in tables["rewards"].rows
    ]
    return {
        "log": tables["log"],
        "policy": Table.of(
            [{**row, "model": "a"} for row in policy]
            + [{**row, "item_id": 0, "model": "b"} for row in policy],
            (),
        ),
        "rewards": Table.of(
            [{**row, "model": "a"} for row in rewards]
            + [{**row, "prediction": 0.6, "model": "b"} for row in rewards],
            (),
        ),
    }


CASES = [*FIXTURES, "candidates"]


def _params() -> list[Any]:
    found = []
    for way in OFF_POLICY_WAYS:
        marks: list[Any] = [getattr(pytest.mark, way.engine)]
        if way.engine not in SHARED_ENGINES:
            marks.append(pytest.mark.xdist_group("engines-off-policy"))
        for case in CASES:
            name = case if isinstance(case, str) else case.stem
            found.append(pytest.param(way, case, marks=marks, id=f"{way.id}-{name}"))
    return found


@pytest.mark.parametrize(("way", "case"), _params())
def test_off_policy_through_a_connection_equals_duckdb(
    engine_pool: EnginePool, way: Way, case: Path | str
) -> None:
    engine = engine_pool.get(way.engine)
    tables = _candidates() if case == "candidates" else _tables(Path(case))
    name = case if isinstance(case, str) else case.stem
    options: dict[str, Any] = {"clip": 3, "group_by": "model" if case == "candidates" else ()}
    names = {}
    for role, table in tables.items():
        names[role] = f"op_{name}_{role}"
        engine.load(names[role], table)
    frames = {
        role: pd.DataFrame(list(table.rows), columns=table.names) for role, table in tables.items()
    }
    want = sqlmetrics.off_policy(frames["log"], frames["policy"], frames.get("rewards"), **options)
    got = sqlmetrics.off_policy(
        names["log"], names["policy"], names.get("rewards"), **options, **way.connect(engine)
    )
    assert got.attrs["engine"] != "duckdb" or way.engine == "duckdb"
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-9, atol=1e-12)
