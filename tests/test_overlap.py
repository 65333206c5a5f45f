"""The overlap metrics (intersection, rbo, unexpectedness) against their peers on random lists:
RecTools' Intersection, LensKit's rank_biased_overlap and RePlay's Unexpectedness, each model's
lists against the baseline's, users the baseline has no list for and lists shorter than k
included; and the refusals of a call that names no baseline, or one that is no model.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics.errors import SqlmetricsError
from tests.beyond_oracle import overlap_metric, top_lists
from tests.engines.conftest import skip_or_fail
from tests.test_beyond import LIBRARIES_PYTHON

TOLERANCE = 1e-9

PEERS_SCRIPT = """
import json, sys, warnings
import pandas as pd
from rectools import Columns
from rectools.metrics import Intersection
from lenskit.data import ItemList
from lenskit.metrics import GeometricRankWeight
from lenskit.metrics.reranking import rank_biased_overlap
from replay.metrics import Unexpectedness
warnings.simplefilter("ignore")
data = json.load(sys.stdin)
out = {}
for key, pair in data["pairs"].items():
    model, base = pair["model"], pair["baseline"]
    columns = [Columns.User, Columns.Item, Columns.Rank]
    reco = pd.DataFrame([[u, i, r] for u, items in model.items() for r, i in enumerate(items, 1)],
                        columns=columns)
    ref = pd.DataFrame([[u, i, r] for u, items in base.items() for r, i in enumerate(items, 1)],
                       columns=columns)
    for k in data["ks"]:
        out[f"{key}|intersection@{k}"] = Intersection(k=k).calc(reco, ref)
        weight = GeometricRankWeight(data["p"])
        rbo = [
            rank_biased_overlap(
                ItemList(base.get(u, []), ordered=True), ItemList(items, ordered=True), weight, n=k
            )
            for u, items in model.items()
        ]
        out[f"{key}|rbo@{k}"] = sum(rbo) / len(rbo)
        recs = reco.assign(rating=-reco[Columns.Rank]).rename(columns={Columns.User: "query_id"})
        base_recs = ref.assign(rating=-ref[Columns.Rank]).rename(columns={Columns.User: "query_id"})
        value = Unexpectedness([k])(recs[["query_id", Columns.Item, "rating"]],
                                    base_recs[["query_id", Columns.Item, "rating"]])
        out[f"{key}|unexpectedness@{k}"] = value[f"Unexpectedness@{k}"]
print(json.dumps(out))
"""


def run_script(payload: dict[str, Any], script: str) -> str:
    done = subprocess.run(
        [str(LIBRARIES_PYTHON), "-c", script],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def random_lists(seed: int, folds: int) -> list[dict[str, Any]]:
    """Three models' lists over a few folds: some users without a list in a model, lists of
    1 to 8 items, distinct scores within a list (the peers take our order as ranks)."""
    rng = random.Random(seed)
    items = list(range(1, rng.randint(6, 20)))
    rows = []
    for fold in range(folds):
        for model in ("base", "m1", "m2"):
            for user in range(1, rng.randint(3, 10)):
                if rng.random() < 0.2:
                    continue
                picked = rng.sample(items, rng.randint(1, min(8, len(items))))
                scores = rng.sample(range(1000), len(picked))
                rows += [
                    {"fold": fold, "model": model, "user_id": user, "item_id": i, "score": s}
                    for i, s in zip(picked, scores, strict=True)
                ]
    return rows


@pytest.mark.parametrize("seed", range(3))
def test_the_peers_agree(seed: int) -> None:
    if not LIBRARIES_PYTHON.exists():
        skip_or_fail("profiles", "no venv of the profile libraries (make profiles-venv)")
    folds = 1 + seed % 2  # a second group column in seed 1: the lists pair within a fold
    rows = random_lists(seed, folds)
    ks, p = [1, 3, 5], [0.9, 0.8, 0.5][seed]

    def lists(model: str, fold: int) -> dict[str, list[int]]:
        mine = [r for r in rows if r["model"] == model and r["fold"] == fold]
        return {str(u): items for u, items in top_lists(mine, 10**6).items()}

    pairs = {
        f"{model}|{fold}": {"model": lists(model, fold), "baseline": lists("base", fold)}
        for model in ("base", "m1", "m2")
        for fold in range(folds)
    }
    theirs = json.loads(run_script({"pairs": pairs, "ks": ks, "p": p}, PEERS_SCRIPT))
    labels = [f"{name}@{k}" for name in ("intersection", "unexpectedness") for k in ks]
    rbo = [f"rbo(p={p})@{k}" for k in ks]
    ours = sqlmetrics.evaluate(
        pd.DataFrame(rows),
        pd.DataFrame([{"user_id": 1, "item_id": 1}]),
        [*labels, *rbo],
        group_by=["model", "fold"][: 1 + (folds > 1)],
        baseline="base",
    )
    for row in ours.to_dict("records"):
        key = f"{row['model']}|{row.get('fold', 0)}"
        for label in labels:
            assert math.isclose(row[label], theirs[f"{key}|{label}"], abs_tol=TOLERANCE), (
                key,
                label,
            )
        for label, k in zip(rbo, ks, strict=True):
            assert math.isclose(row[label], theirs[f"{key}|rbo@{k}"], abs_tol=TOLERANCE), (
                key,
                label,
            )


@pytest.mark.parametrize("seed", range(6))
def test_random_lists_agree_with_the_oracle(seed: int) -> None:
    """tests/beyond_oracle.py's textbook forms (rbo depth by depth), without the peers' venv."""
    folds = 1 + seed % 2
    rows = random_lists(100 + seed, folds)
    p = [0.9, 0.6, 0.95][seed % 3]
    labels = [f"{name}@{k}" for name in ("intersection", "unexpectedness") for k in (2, 4)]
    labels += [f"rbo(p={p})@{k}" for k in (2, 4)]
    ours = sqlmetrics.evaluate(
        pd.DataFrame(rows),
        pd.DataFrame([{"user_id": 1, "item_id": 1}]),
        labels,
        group_by=["model", "fold"][:folds],
        baseline="base",
    )
    for row in ours.to_dict("records"):
        fold = row.get("fold", 0)
        recs = [r for r in rows if r["model"] == row["model"] and r["fold"] == fold]
        base = [r for r in rows if r["model"] == "base" and r["fold"] == fold]
        for label in labels:
            name, k = label.split("(")[0].split("@")[0], int(label.split("@")[1])
            want = overlap_metric(name, k, recs, base, p)
            assert math.isclose(row[label], want, abs_tol=TOLERANCE), (row["model"], label)


def _tiny() -> tuple[pd.DataFrame, pd.DataFrame]:
    recommendations = pd.DataFrame(
        {
            "model": ["a", "a", "b", "b"],
            "user_id": [1, 1, 1, 1],
            "item_id": [1, 2, 2, 3],
            "score": [0.9, 0.8, 0.9, 0.8],
        }
    )
    return recommendations, pd.DataFrame({"user_id": [1], "item_id": [1]})


def test_without_a_baseline_the_overlap_metrics_are_refused() -> None:
    recommendations, interactions = _tiny()
    with pytest.raises(SqlmetricsError, match="baseline"):
        sqlmetrics.evaluate(recommendations, interactions, ["rbo@2"], group_by="model")
    with pytest.raises(SqlmetricsError, match="group_by"):
        sqlmetrics.evaluate(recommendations, interactions, ["intersection@2"], baseline="a")
    with pytest.raises(SqlmetricsError, match="baseline"):
        sqlmetrics.to_sql(["unexpectedness@2"], group_by="model")


def test_a_baseline_that_is_no_model_is_refused() -> None:
    recommendations, interactions = _tiny()
    with pytest.raises(SqlmetricsError, match=r"'c' is not one of the models \(a, b\)"):
        sqlmetrics.evaluate(
            recommendations, interactions, ["intersection@2"], group_by="model", baseline="c"
        )


def test_two_persistences_in_one_call_are_refused() -> None:
    recommendations, interactions = _tiny()
    with pytest.raises(SqlmetricsError, match="different p"):
        sqlmetrics.evaluate(
            recommendations,
            interactions,
            ["rbo@2", "rbo(p=0.5)@2"],
            group_by="model",
            baseline="a",
        )
    with pytest.raises(SqlmetricsError, match="between 0 and 1"):
        sqlmetrics.to_sql(["rbo(p=1.5)@2"], group_by="model", baseline="a")


def test_without_an_overlap_metric_to_sql_s_baseline_is_compare_s() -> None:
    """baseline asks compare's query, unless an overlap metric reads it: then evaluate's."""
    compared = sqlmetrics.to_sql(["ndcg@2"], group_by="model", baseline="a")
    assert "stats_pairs" in compared
    evaluated = sqlmetrics.to_sql(["ndcg@2", "rbo@2"], group_by="model", baseline="a")
    assert "stats_pairs" not in evaluated and "baseline_lists" in evaluated


def test_the_command_line_takes_baseline(tmp_path: Path) -> None:
    """sqlmetrics evaluate --baseline: the overlap metrics of each model, the baseline's 1."""
    from tests.cli_runner import cli

    recommendations, interactions = _tiny()
    recommendations.to_csv(tmp_path / "recs.csv", index=False)
    interactions.to_csv(tmp_path / "truth.csv", index=False)
    files = [str(tmp_path / "recs.csv"), str(tmp_path / "truth.csv")]
    run = cli(
        "evaluate",
        *files,
        "-m",
        "intersection@2",
        "--group-by",
        "model",
        "--baseline",
        "a",
        "--format",
        "csv",
    )
    assert run.returncode == 0, run.stderr
    # b's top 2 (2, 3) against a's (1, 2): 1 of 2
    assert run.stdout.splitlines()[1:] == ["a,1,1", "b,1,0.5"]
