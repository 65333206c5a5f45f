"""sampled='s histogram query (compose/sampled.py) on every engine: the hand-derived histogram
and list counts of fixtures/sampled/two_models.yaml, under each tie policy the form takes
(tests/test_sampled.py runs evaluate itself on DuckDB and through SQLite's connection)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlglot import exp

from sqlmetrics.compose.inputs import Group, Inputs, Options
from sqlmetrics.compose.sampled import sampled_query
from sqlmetrics.render.dialects import render
from tests.engines.cases import Table, read_yaml
from tests.engines.conftest import SHARED_ENGINES, EnginePool
from tests.engines.engines import table_node

FIXTURE = Path(__file__).parent.parent.parent / "fixtures" / "sampled" / "two_models.yaml"
ENGINES = ("duckdb", "sqlite", "postgres", "mariadb", "chdb", "datafusion", "spark")
TIES = ("id", "id_text", "optimistic", "pessimistic")
KNOWN_GAPS = {
    ("datafusion", "id_text"): 'ties="id_text" sorts by the item id as text with COLLATE "C", '
    "which DataFusion cannot parse (as test_engines.py's known gap)",
}
# Two lists of a positive (item 2) tied with one negative (item 1, then 3) above a third row:
# the histogram of r' = 1..3 under each policy (id: item id descending, 2 before 1, after 3).
TIED = [
    {"user_id": 1, "item_id": 1, "score": 0.5},
    {"user_id": 1, "item_id": 2, "score": 0.5},
    {"user_id": 1, "item_id": 4, "score": 0.1},
    {"user_id": 2, "item_id": 3, "score": 0.5},
    {"user_id": 2, "item_id": 2, "score": 0.5},
    {"user_id": 2, "item_id": 4, "score": 0.1},
]
TIED_HISTOGRAM = {
    "id": [1, 1, 0],
    "id_text": [1, 1, 0],
    "optimistic": [2, 0, 0],
    "pessimistic": [0, 2, 0],
}


def _params() -> list[Any]:
    found = []
    for engine in ENGINES:
        for ties in TIES:
            marks = [getattr(pytest.mark, engine)]
            if engine not in SHARED_ENGINES:
                marks.append(pytest.mark.xdist_group("engines-sampled"))
            gap = KNOWN_GAPS.get((engine, ties))
            if gap:
                marks.append(pytest.mark.xfail(reason=gap, strict=True, raises=Exception))
            found.append(pytest.param(engine, ties, marks=marks, id=f"{engine}-{ties}"))
    return found


@pytest.mark.parametrize(("engine_name", "ties"), _params())
def test_the_histogram_on_each_engine(engine_pool: EnginePool, engine_name: str, ties: str) -> None:
    case: dict[str, Any] = read_yaml(FIXTURE)
    engine = engine_pool.get(engine_name)
    done: set[str] = engine.__dict__.setdefault("loaded_cases", set())
    if "sampled" not in done:
        given = case["given"]
        engine.load("r_sampled", Table.of(given["recommendations"], ()))
        engine.load("t_sampled", Table.of(given["interactions"], ()))
        engine.load("r_sampled_tied", Table.of(TIED, ()))
        engine.load(
            "t_sampled_tied",
            Table.of([{"user_id": 1, "item_id": 2}, {"user_id": 2, "item_id": 2}], ()),
        )
        done.add("sampled")
    dialect = engine.dialect
    _, rows = engine.query(
        render(sampled_query(_inputs("", dialect, True), Options(ties=ties)), dialect)
    )
    m = case["sampled"]["negatives"]
    histograms: dict[str, list[int]] = {}
    others = []
    for kind, model, value, count in rows:
        if kind == "histogram":
            histograms.setdefault(model, [0] * (m + 1))[int(value) - 1] += int(count)
        else:
            others.append((kind, model, int(value), int(count)))
    assert histograms == case["expect"]["histogram"]
    assert sorted(others) == [("negatives", "a", 3, 3), ("negatives", "b", 3, 3)]
    query = sampled_query(_inputs("_tied", dialect, False), Options(ties=ties))
    _, rows = engine.query(render(query, dialect))
    tied = [0, 0, 0]
    for kind, value, count in rows:
        if kind == "histogram":
            tied[int(value) - 1] += int(count)
    assert tied == TIED_HISTOGRAM[ties]


def _inputs(suffix: str, dialect: str, grouped: bool) -> Inputs:
    groups = (Group("model", exp.to_identifier("model"), False),) if grouped else ()
    return Inputs(
        recommendations=table_node(f"r_sampled{suffix}", dialect),
        interactions=table_node(f"t_sampled{suffix}", dialect),
        user=exp.to_identifier("user_id"),
        item=exp.to_identifier("item_id"),
        score=exp.to_identifier("score"),
        groups=groups,
    )
