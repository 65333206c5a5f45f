"""Exposure between groups of items (``evaluate(..., exposure_k=...)``, ``read_exposure``): the
hand-derived fixture (fixtures/tables/exposure_providers.yaml) on DuckDB and through SQLite's
DB-API, a Python oracle of the definition on random lists, LensKit's exposure weights
(ExposureGini's GeometricRankWeight) summed per item group, the command line, and the
refusals. The query's snapshot in every dialect is tests/test_dialects.py's.
"""

from __future__ import annotations

import json
import math
import random
import sqlite3
from typing import Any

import duckdb
import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics.compose.exposure import EXPOSURE_COLUMNS
from sqlmetrics.errors import SqlmetricsError
from tests.engines.cases import REPO, read_yaml
from tests.engines.conftest import skip_or_fail
from tests.test_beyond import LIBRARIES_PYTHON
from tests.test_dialects import exposure_query
from tests.test_overlap import run_script

FIXTURE = REPO / "fixtures" / "tables" / "exposure_providers.yaml"
TOLERANCE = 1e-9


def fixture() -> dict[str, Any]:
    data: dict[str, Any] = read_yaml(FIXTURE)
    return data


def frames(data: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    given = data["given"]
    return tuple(pd.DataFrame(given[name]) for name in ("recommendations", "interactions", "items"))  # type: ignore[return-value]


def assert_table(got: pd.DataFrame, want: list[dict[str, Any]]) -> None:
    expected = pd.DataFrame(want)
    assert list(got.columns) == list(expected.columns)
    assert len(got) == len(expected)
    for mine, theirs in zip(got.to_dict("records"), want, strict=True):
        for name, value in theirs.items():
            if isinstance(value, float):
                assert math.isclose(mine[name], value, abs_tol=TOLERANCE), (name, mine, theirs)
            elif value is None:
                assert pd.isna(mine[name]), (name, mine)
            else:
                assert mine[name] == value, (name, mine, theirs)


@pytest.mark.parametrize("grouped", [True, False], ids=["by_model", "model_b_alone"])
def test_the_fixture_holds_on_duckdb(grouped: bool) -> None:
    data = fixture()
    recommendations, interactions, items = frames(data)
    options = dict(data["options"])
    if not grouped:
        options.pop("group_by")
        recommendations = recommendations[recommendations["model"] == "b"].drop(columns="model")
    result = sqlmetrics.evaluate(recommendations, interactions, ["ndcg@3"], items=items, **options)
    want = data["expect" if grouped else "expect_without_groups"]
    assert_table(sqlmetrics.read_exposure(result), want)


def test_the_fixture_holds_through_a_connection() -> None:
    data = fixture()
    connection = sqlite3.connect(":memory:")
    for name, frame in zip(("recs", "truth", "items"), frames(data), strict=True):
        frame.to_sql(name, connection, index=False)
    result = sqlmetrics.evaluate(
        "recs", "truth", ["ndcg@3"], items="items", connection=connection, **data["options"]
    )
    assert result.attrs["dialect"] == "sqlite"
    assert_table(sqlmetrics.read_exposure(result), data["expect"])


def random_case(seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Two models over two days (a column of both inputs), lists of 1 to 8 items with
    distinct scores, some users without a list, relevance 0 to 2, an items table that lacks
    a few of the items (their group NULL)."""
    rng = random.Random(seed)
    catalogue = list(range(1, rng.randint(8, 25)))
    groups = ["g1", "g2", "g3", "g4"][: rng.randint(2, 4)]
    items = [
        {"item_id": i, "provider": rng.choice(groups)} for i in catalogue if rng.random() > 0.1
    ]
    recommendations, interactions = [], []
    for day in (1, 2):
        for user in range(1, rng.randint(3, 9)):
            interactions += [
                {"day": day, "user_id": user, "item_id": i, "relevance": rng.randint(0, 2)}
                for i in rng.sample(catalogue, rng.randint(1, 4))
            ]
            for model in ("a", "b"):
                if rng.random() < 0.2:
                    continue
                picked = rng.sample(catalogue, rng.randint(1, min(8, len(catalogue))))
                scores = rng.sample(range(1000), len(picked))
                recommendations += [
                    {"model": model, "day": day, "user_id": user, "item_id": i, "score": s}
                    for i, s in zip(picked, scores, strict=True)
                ]
    return pd.DataFrame(recommendations), pd.DataFrame(interactions), pd.DataFrame(items)


def top_k(recommendations: pd.DataFrame, keys: list[str], k: int) -> dict[Any, list[Any]]:
    """Each list's first k items (score descending; the scores are distinct within a list)."""
    lists: dict[Any, list[Any]] = {}
    ordered = recommendations.sort_values("score", ascending=False)
    for row in ordered.to_dict("records"):
        key = tuple(row[name] for name in [*keys, "user_id"])
        lists.setdefault(key, []).append(row["item_id"])
    return {key: items[:k] for key, items in lists.items()}


def oracle(
    recommendations: pd.DataFrame,
    interactions: pd.DataFrame,
    items: pd.DataFrame,
    keys: list[str],
    k: int,
    patience: float,
) -> list[dict[str, Any]]:
    """The definition, written out: per group, each item group's sum of patience^(p - 1) over
    the first k positions of its lists, its count of relevant (user, item) pairs, and its
    items (of the items table, the lists and the relevant pairs), each over its group's total."""
    group_of = dict(zip(items["item_id"], items["provider"], strict=True))
    relevant = interactions[interactions["relevance"] > 0]
    truth_keys = [key for key in keys if key in interactions.columns]
    pairs = relevant.groupby([*truth_keys, "user_id", "item_id"]).size().reset_index()
    every = set(items["item_id"]) | set(recommendations["item_id"]) | set(pairs["item_id"])
    sizes: dict[Any, int] = {}
    for item in every:
        sizes[group_of.get(item)] = sizes.get(group_of.get(item), 0) + 1
    models = {tuple(row) for row in recommendations[keys].itertuples(index=False)}
    rows = []
    for model in sorted(models):
        exposure = dict.fromkeys(sizes, 0.0)
        for key, listed in top_k(recommendations, keys, k).items():
            if key[: len(keys)] == model:
                for position, item in enumerate(listed, start=1):
                    exposure[group_of.get(item)] += patience ** (position - 1)
        counts = dict.fromkeys(sizes, 0)
        mine = dict(zip(keys, model, strict=True))
        for row in pairs.to_dict("records"):
            if all(row[name] == mine[name] for name in truth_keys):
                counts[group_of.get(row["item_id"])] += 1
        for group in sorted(sizes, key=lambda g: (g is None, g or "")):
            rows.append(
                {
                    **mine,
                    "item_group": group,
                    "items": sizes[group],
                    "catalogue_share": sizes[group] / sum(sizes.values()),
                    "exposure": exposure[group],
                    "exposure_share": exposure[group] / sum(exposure.values()),
                    "relevant": counts[group],
                    "relevant_share": counts[group] / sum(counts.values()),
                }
            )
    return rows


@pytest.mark.parametrize("seed", range(4))
def test_random_lists_agree_with_the_oracle(seed: int) -> None:
    recommendations, interactions, items = random_case(seed)
    keys = [["model", "day"], ["model"], ["day", "model"], ["model"]][seed]
    if keys == ["model"]:
        interactions = interactions.drop(columns="day")
        # a user's lists of two days are one list per model now: an item on both repeats
        recommendations = recommendations.drop(columns="day").drop_duplicates(
            ["model", "user_id", "item_id"]
        )
        interactions = interactions.groupby(["user_id", "item_id"], as_index=False).max()
    k, patience = [(3, 0.85), (5, 0.5), (1, 0.9), (10, 0.7)][seed]
    result = sqlmetrics.evaluate(
        recommendations,
        interactions,
        ["recall@3"],
        group_by=keys,
        items=items,
        columns={"item_group": "provider"},
        exposure_k=k,
        exposure_patience=patience,
    )
    assert_table(
        sqlmetrics.read_exposure(result),
        oracle(recommendations, interactions, items, keys, k, patience),
    )


LENSKIT_SCRIPT = """
import json, sys
import numpy as np
import pandas as pd
from lenskit.data import ItemList
from lenskit.metrics import GeometricRankWeight
from lenskit.metrics.ranking import ExposureGini
data = json.load(sys.stdin)
out = {}
for model, lists in data["lists"].items():
    metric = ExposureGini(data["k"], items=len(data["groups"]),
                          weight=GeometricRankWeight(data["patience"]))
    totals = {}
    for items in lists:
        ids, weights = metric.compute_list_data(ItemList(items, ordered=True), None)
        for item, weight in zip(ids.to_pylist(), weights.to_pylist()):
            group = data["groups"].get(str(item))
            totals[str(group)] = totals.get(str(group), 0.0) + weight
    out[model] = totals
print(json.dumps(out))
"""


@pytest.mark.parametrize("seed", range(2))
def test_lenskit_s_exposure_weights_agree(seed: int) -> None:
    """LensKit has no per-group table: its ExposureGini weighs each list's items
    (compute_list_data, GeometricRankWeight), which summed per item group are our exposure."""
    if not LIBRARIES_PYTHON.exists():
        skip_or_fail("profiles", "no venv of the profile libraries (make profiles-venv)")
    recommendations, interactions, items = random_case(seed)
    recommendations = recommendations[recommendations["day"] == 1].drop(columns="day")
    interactions = interactions.drop(columns="day").groupby(["user_id", "item_id"]).max()
    k, patience = (5, [0.85, 0.6][seed])
    result = sqlmetrics.evaluate(
        recommendations,
        interactions.reset_index(),
        ["recall@3"],
        group_by="model",
        items=items,
        columns={"item_group": "provider"},
        exposure_k=k,
        exposure_patience=patience,
    )
    lists: dict[str, list[list[int]]] = {}
    for (model, _), listed in top_k(recommendations, ["model"], 10**6).items():
        lists.setdefault(model, []).append([int(item) for item in listed])
    groups = {str(i): g for i, g in zip(items["item_id"], items["provider"], strict=True)}
    payload = {"lists": lists, "groups": groups, "k": k, "patience": patience}
    theirs = json.loads(run_script(payload, LENSKIT_SCRIPT))
    table = sqlmetrics.read_exposure(result)
    for row in table.to_dict("records"):
        group = "None" if pd.isna(row["item_group"]) else row["item_group"]
        want = theirs[row["model"]].get(group, 0.0)
        # LensKit keeps the weights as float32
        assert math.isclose(row["exposure"], want, rel_tol=1e-6, abs_tol=1e-6), (row, want)


def test_the_duckdb_text_runs_and_names_its_columns() -> None:
    data = fixture()
    recommendations, interactions, items = frames(data)
    connection = duckdb.connect()
    for name, frame in (
        ("recommendations", recommendations.assign(day=1)),
        ("interactions", interactions.assign(day=1)),
        ("items", items),
    ):
        connection.register(name, frame)
    got = connection.sql(exposure_query("duckdb").rstrip(";\n")).df()
    assert list(got.columns) == ["model", "day", *EXPOSURE_COLUMNS]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"items": None}, "pass items="),
        ({"columns": {}}, "no item_group column"),
        ({"ties": "average"}, "ties='average'"),
        ({"exposure_k": 0}, "exposure_k must be a whole number"),
        ({"exposure_patience": 1.0}, "exposure_patience must be a number between 0 and 1"),
        ({"group_by": "items"}, "also a column of read_exposure"),
    ],
)
def test_what_cannot_be_computed_is_refused(change: dict[str, Any], message: str) -> None:
    data = fixture()
    recommendations, interactions, items = frames(data)
    options: dict[str, Any] = {**data["options"], "items": items, **change}
    if change.get("group_by") == "items":
        recommendations = recommendations.rename(columns={"model": "items"})
    with pytest.raises(SqlmetricsError, match=message.replace("(", r"\(").replace("=", "=")):
        sqlmetrics.evaluate(recommendations, interactions, ["ndcg@3"], **options)


def test_an_item_of_two_rows_is_refused() -> None:
    data = fixture()
    recommendations, interactions, items = frames(data)
    items = pd.concat([items, items.head(1).assign(provider="Q")])
    options = {**data["options"], "items": items}
    with pytest.raises(SqlmetricsError, match="item 1 has 2 rows"):
        sqlmetrics.evaluate(recommendations, interactions, ["ndcg@3"], **options)


def test_the_command_line_prints_the_table(tmp_path: Any) -> None:
    from tests.cli_runner import cli

    data = fixture()
    paths = []
    for name, frame in zip(("recs", "truth", "items"), frames(data), strict=True):
        paths.append(str(tmp_path / f"{name}.csv"))
        frame.to_csv(paths[-1], index=False)
    flags = ["--group-by", "model", "--items", paths[2], "--item-group-column", "provider"]
    flags += ["--exposure-k", "3", "--exposure-patience", "0.5", "-m", "ndcg@3"]
    done = cli("evaluate", paths[0], paths[1], *flags, "-q")
    assert done.returncode == 0, done.stderr
    _, table = done.stdout.split("exposure between item groups:\n")
    lines = [line.split() for line in table.strip().splitlines()]
    assert lines[0] == ["model", *EXPOSURE_COLUMNS]
    assert lines[1][:5] == ["a", "P", "2", "0.285714", "4.00"]
    assert lines[4][:2] == ["a", "NULL"]  # the items of no row of the items table
    as_csv = cli("evaluate", paths[0], paths[1], *flags, "--format", "csv")
    assert "exposure between item groups:" in as_csv.stderr
    assert "exposure between" not in as_csv.stdout
