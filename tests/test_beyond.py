"""The metrics over the top-k lists against the oracle on random data, and against RecTools.

The oracle (tests/beyond_oracle.py) computes the textbook forms; the SQL uses closed forms
(personalization from item counts, Gini from the recommended items' ranks), so agreement on
random lists with ties, short lists, cold items and groups is a real check.
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics.errors import SqlmetricsError
from tests.beyond_oracle import LIST_METRICS, PER_USER, list_metric, per_user_values, top_lists
from tests.engines.conftest import skip_or_fail

REPO = Path(__file__).resolve().parent.parent
TOLERANCE = 1e-9


def random_case(
    seed: int,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(seed)
    items = list(range(1, rng.randint(5, 30)))
    recommendations = [
        {
            "model": model,
            "user_id": user,
            "item_id": item,
            "score": rng.choice([0.1, 0.5, 0.9, rng.random()]),
        }
        for model in ("a", "b")
        for user in range(1, rng.randint(2, 12))
        for item in rng.sample(items, rng.randint(1, min(8, len(items))))
    ]
    interactions = [
        {"user_id": user, "item_id": item}
        for user in range(1, 15)
        for item in rng.sample(items, rng.randint(0, 4))
    ]
    catalogue = [{"item_id": item, "category": rng.choice("xyz")} for item in [*items, 99]]
    return recommendations, interactions, catalogue


def random_history(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed + 1000)
    items = list(range(1, 6))
    return [
        {"user_id": user, "item_id": item}
        for user in range(1, 15)
        for item in rng.sample(items, rng.randint(0, 3))
    ]


@pytest.mark.parametrize("seed", range(12))
def test_random_lists_agree_with_the_oracle(seed: int) -> None:
    recommendations, interactions, catalogue = random_case(seed)
    with_items = seed % 2 == 0
    # the popularity over the history in two seeds of three, over the interactions otherwise
    history = random_history(seed) if seed % 3 else None
    labels = [f"{name}@{k}" for name in sorted(LIST_METRICS) for k in (1, 3, 5)]
    labels = [label for label in labels if with_items or not label.startswith(("ild", "ser"))]
    labels = [label for label in labels if history or not label.startswith("ser")]
    result = sqlmetrics.evaluate(
        pd.DataFrame(recommendations),
        pd.DataFrame(interactions),
        ["ndcg@3", *labels],
        group_by="model",
        items=pd.DataFrame(catalogue) if with_items else None,
        history=None if history is None else pd.DataFrame(history),
    )
    for _, row in result.iterrows():
        recs = [r for r in recommendations if r["model"] == row["model"]]
        for label in labels:
            name, k = label.split("@")
            want = list_metric(
                name,
                int(k),
                recs,
                interactions,
                catalogue if with_items else None,
                all_recommendations=recommendations,
                history=history,
            )
            got = row[label]
            if math.isnan(want):
                assert math.isnan(got), (label, got)
            else:
                assert math.isclose(got, want, rel_tol=0, abs_tol=TOLERANCE), (label, got, want)


@pytest.mark.parametrize("seed", range(4))
def test_the_long_tail_by_a_column_of_both_tables_agrees_with_the_oracle(seed: int) -> None:
    """Grouped by a day both tables carry: pop_reo's relevant items are each day's (the join of
    the lists with them keeps a user's rows within the day), the catalogue and the popularity
    are every day's. The history (odd seeds) holds items no other table has, which pop_rsp
    leaves out of the long tail's denominator."""
    rng = random.Random(seed + 2000)
    items = list(range(1, 12))
    recommendations = [
        {"day": day, "user_id": user, "item_id": item, "score": rng.random()}
        for day in (1, 2)
        for user in range(1, 8)
        for item in rng.sample(items, rng.randint(1, 6))
    ]
    interactions = [
        {"day": day, "user_id": user, "item_id": item}
        for day in (1, 2)
        for user in range(1, 9)
        for item in rng.sample(items, rng.randint(0, 4))
    ]
    history = None
    if seed % 2:
        history = [{"user_id": 1, "item_id": 99}, {"user_id": 2, "item_id": 98}]
        history += [
            {"user_id": user, "item_id": item}
            for user in range(1, 9)
            for item in rng.sample(items, rng.randint(0, 4))
        ]
    labels = [f"{name}@{k}" for name in ("pop_reo", "pop_rsp", "tail_coverage") for k in (1, 3)]
    result = sqlmetrics.evaluate(
        pd.DataFrame(recommendations),
        pd.DataFrame(interactions),
        labels,
        group_by="day",
        history=None if history is None else pd.DataFrame(history),
    )
    for _, row in result.iterrows():
        for label in labels:
            name, k = label.split("@")
            want = list_metric(
                name,
                int(k),
                [r for r in recommendations if r["day"] == row["day"]],
                interactions,
                all_recommendations=recommendations,
                history=history,
                relevant_interactions=[r for r in interactions if r["day"] == row["day"]],
            )
            got = row[label]
            assert (
                math.isnan(got) if math.isnan(want) else math.isclose(got, want, abs_tol=TOLERANCE)
            ), (
                seed,
                row["day"],
                label,
                got,
                want,
            )


def test_per_user_rows_show_the_users_own_values() -> None:
    recommendations, interactions, catalogue = random_case(3)
    labels = ["novelty@3", "arp@3", "ild@3", "serendipity@3", "coverage@3", "ndcg@3"]
    labels += ["aplt@3", "aclt@3", "surprisal@3"]
    history = random_history(3)
    result = sqlmetrics.evaluate(
        pd.DataFrame(recommendations),
        pd.DataFrame(interactions),
        labels,
        group_by="model",
        per_user=True,
        items=pd.DataFrame(catalogue),
        history=pd.DataFrame(history),
    )
    assert result["coverage@3"].isna().all()  # a group-level value has no per-user value
    for model in ("a", "b"):
        lists = top_lists([r for r in recommendations if r["model"] == model], 3)
        rows = result[result["model"] == model].set_index("user_id")
        for name in PER_USER:
            want = per_user_values(name, lists, interactions, catalogue, history, k=3)
            for user, row in rows.iterrows():
                if user in want:
                    assert math.isclose(row[f"{name}@3"], want[user], abs_tol=TOLERANCE)
                else:
                    # in the population, without a list (or a history for serendipity)
                    assert math.isnan(row[f"{name}@3"])


def test_a_ranking_metric_alone_reads_no_list_stage() -> None:
    sql = sqlmetrics.to_sql(["ndcg@10"], items="items")
    assert "catalogue" not in sql and "input_items" not in sql and "m1_groups" not in sql


def test_a_history_row_without_a_user_or_an_item_is_refused_where_the_history_is_read() -> None:
    """The popularity and serendipity read the history: a NULL id there would drop silently."""
    recs = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [1, 2, 1], "score": [0.9, 0.8, 0.7]})
    truth = pd.DataFrame({"user_id": [1, 2], "item_id": [1, 1]})
    history = pd.DataFrame({"user_id": [1, None, 2], "item_id": [3, 1, None]})
    for metric in ("novelty@2", "aplt@2", "pop_rsp@2"):
        with pytest.raises(SqlmetricsError, match=r"history: 2 row\(s\) have a NULL user_id or"):
            sqlmetrics.evaluate(recs, truth, [metric], history=history)
    # a metric that does not read the history runs
    assert sqlmetrics.evaluate(recs, truth, ["ndcg@2"], history=history)["ndcg@2"].tolist() == [1.0]
    # over an empty history nobody consumed anything: novelty's log2(0 users) is undefined
    empty = history.dropna().iloc[:0].astype("int64")
    with pytest.raises(SqlmetricsError, match="history: no row, and the popularity novelty@2"):
        sqlmetrics.evaluate(recs, truth, ["novelty@2", "ndcg@2"], history=empty)


def test_list_metrics_do_not_need_a_relevant_interaction() -> None:
    """Issue 22: coverage@k was NaN (users 0) when no interaction is relevant, although the
    metrics over the lists read only the lists and the interactions' items and users."""
    recs = pd.DataFrame(
        {"user_id": [1, 1, 2, 2], "item_id": [10, 11, 10, 12], "score": [0.9, 0.8, 0.7, 0.6]}
    )
    truth = pd.DataFrame({"user_id": [1, 2], "item_id": [10, 12], "relevance": [0, 0]})
    labels = ["coverage@2", "novelty@2", "arp@2", "gini@2", "entropy@2", "personalization@2"]
    result = sqlmetrics.evaluate(recs, truth, [*labels, "precision@2"])
    relevant = truth.assign(relevance=1)  # the same items and users, now relevant
    want = sqlmetrics.evaluate(recs, relevant, labels)
    assert result["users"].iloc[0] == 0 and pd.isna(result["precision@2"].iloc[0])
    assert result["coverage@2"].iloc[0] == pytest.approx(1.0)  # items 10, 11, 12 of 3
    for label in labels:
        assert result[label].iloc[0] == pytest.approx(want[label].iloc[0], abs=TOLERANCE), label


def test_list_metrics_by_group_do_not_need_a_relevant_interaction() -> None:
    """Issue 22: with group_by, a group of lists without a population user (here: nothing is
    relevant) still gets its row, users 0, NaN for the ranking metrics, and the metrics over
    the lists, as without groups; the same for a group column both tables have."""
    recs = pd.DataFrame(
        {"model": ["a", "a", "b"], "user_id": [1, 2, 1], "item_id": [10, 12, 11], "score": 0.5}
    )
    truth = pd.DataFrame({"user_id": [1, 2], "item_id": [10, 12], "relevance": [0, 0]})
    result = sqlmetrics.evaluate(recs, truth, ["coverage@2"], group_by=["model"])
    assert list(result["model"]) == ["a", "b"] and list(result["users"]) == [0, 0]
    assert list(result["coverage@2"]) == pytest.approx([2 / 3, 1 / 3])  # of items 10, 11, 12
    # user 2 finds item 12 relevant: the population of each model (model b lists nothing to
    # user 2: 0), and the metrics over the lists as each model's lists alone give them
    truth.loc[1, "relevance"] = 1
    labels = ["coverage@2", "novelty@2", "precision@2"]
    result = sqlmetrics.evaluate(recs, truth, labels, group_by=["model"])
    assert list(result["users"]) == [1, 1]
    assert list(result["precision@2"]) == pytest.approx([1 / 2, 0])
    assert list(result["coverage@2"]) == pytest.approx([2 / 3, 1 / 3])  # the same catalogue
    for model in ("a", "b"):  # novelty reads each list and the interactions' popularity
        alone = recs[recs["model"] == model].drop(columns="model")
        want = sqlmetrics.evaluate(alone, truth, ["novelty@2"])["novelty@2"].iloc[0]
        got = result.loc[result["model"] == model, "novelty@2"].iloc[0]
        assert got == pytest.approx(want, abs=TOLERANCE), model
    # a group column of both tables: day 2 has lists and nothing relevant
    recs = recs.assign(day=[1, 1, 2])
    days = pd.DataFrame({"user_id": [1, 2, 1], "item_id": [10, 12, 11], "relevance": [1, 0, 0]})
    result = sqlmetrics.evaluate(
        recs.drop(columns="model"), days.assign(day=[1, 1, 2]), ["coverage@2"], group_by="day"
    )
    assert list(result["day"]) == [1, 2] and list(result["users"]) == [1, 0]
    assert list(result["coverage@2"]) == pytest.approx([2 / 3, 1 / 3])  # one catalogue


def test_cutoff_is_required_and_categories_are_checked() -> None:
    recs = pd.DataFrame({"user_id": [1], "item_id": [1], "score": [1.0]})
    truth = pd.DataFrame({"user_id": [1], "item_id": [1]})
    with pytest.raises(SqlmetricsError, match="needs a cutoff"):
        sqlmetrics.evaluate(recs, truth, ["coverage"])
    with pytest.raises(SqlmetricsError, match="need an items table"):
        sqlmetrics.evaluate(recs, truth, ["ild@3"])
    with pytest.raises(SqlmetricsError, match="no category column"):
        sqlmetrics.evaluate(recs, truth, ["ild@3"], items=pd.DataFrame({"item_id": [1]}))
    with pytest.raises(SqlmetricsError, match="has no category"):
        items = pd.DataFrame({"item_id": [2], "category": ["x"]})
        sqlmetrics.evaluate(recs, truth, ["ild@3"], items=items)
    with pytest.raises(SqlmetricsError, match="has 2 rows"):
        items = pd.DataFrame({"item_id": [1, 1], "category": ["x", "y"]})
        sqlmetrics.evaluate(recs, truth, ["ild@3"], items=items)
    genre = pd.DataFrame({"item_id": [1], "genre": ["x"]})
    result = sqlmetrics.evaluate(recs, truth, ["ild@3"], items=genre, columns={"category": "genre"})
    assert result["ild@3"].tolist() == [0.0]


# RecTools and MS Recommenders pin numpy < 2 and pandas < 3: they run in the virtual environment
# of the profile libraries (`make profiles-venv`), which holds both.
LIBRARIES_PYTHON = Path(
    os.environ.get("SQLMETRICS_PROFILES_PYTHON", REPO / ".venv-profiles" / "bin" / "python")
)
RECTOOLS_SCRIPT = """
import json, sys
import pandas as pd
from rectools import Columns
from rectools.metrics import AvgRecPopularity, CatalogCoverage, IntraListDiversity, MeanInvUserFreq
from rectools.metrics.distances import PairwiseHammingDistanceCalculator
data = json.load(sys.stdin)
reco = pd.DataFrame(data["reco"], columns=[Columns.User, Columns.Item, Columns.Rank])
prev = pd.DataFrame(data["interactions"], columns=[Columns.User, Columns.Item])
features = pd.DataFrame(data["categories"], columns=[Columns.Item, "category"])
features = features.set_index(Columns.Item)
out = {}
for k in data["ks"]:
    out[f"coverage@{k}"] = CatalogCoverage(k=k, normalize=True).calc(reco, data["catalogue"])
    out[f"novelty@{k}"] = MeanInvUserFreq(k=k).calc(reco, prev)
    out[f"arp@{k}"] = AvgRecPopularity(k=k).calc(reco, prev)
    ild = IntraListDiversity(k=k, distance_calculator=PairwiseHammingDistanceCalculator(features))
    out[f"ild@{k}"] = ild.calc(reco)
print(json.dumps(out))
"""


@pytest.mark.parametrize("seed", range(3))
def test_rectools_agrees(seed: int) -> None:
    if not LIBRARIES_PYTHON.exists():
        skip_or_fail("rectools", "no venv of the profile libraries (make profiles-venv)")
    recommendations, interactions, catalogue = random_case(seed)
    # RecTools' prev_interactions: the history when one is given (seeds 1, 2), else ours
    history = random_history(seed) if seed else None
    recs = [r for r in recommendations if r["model"] == "a"]
    lists = top_lists(recs, 10**6)  # our order, handed to RecTools as ranks
    reco = [
        [user, item, rank] for user, items in lists.items() for rank, item in enumerate(items, 1)
    ]
    codes = {"x": 0, "y": 1, "z": 2}
    ks = [1, 3, 5]
    payload = {
        "reco": reco,
        "interactions": [[r["user_id"], r["item_id"]] for r in history or interactions],
        "categories": [[c["item_id"], codes[c["category"]]] for c in catalogue],
        # our catalogue: the items table plus every recommended item (all in it here)
        "catalogue": sorted({c["item_id"] for c in catalogue}),
        "ks": ks,
    }
    done = subprocess.run(
        [str(LIBRARIES_PYTHON), "-c", RECTOOLS_SCRIPT],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=True,
    )
    theirs = json.loads(done.stdout)
    ours = sqlmetrics.evaluate(
        pd.DataFrame(recs),
        pd.DataFrame(interactions),
        list(theirs),
        items=pd.DataFrame(catalogue),
        history=None if history is None else pd.DataFrame(history),
    )
    for label, value in theirs.items():
        assert math.isclose(ours[label].iloc[0], value, rel_tol=0, abs_tol=TOLERANCE), (
            label,
            value,
        )


RECOMMENDERS_SCRIPT = """
import json, sys
import numpy as np
import pandas as pd
from recommenders.evaluation.python_evaluation import (
    catalog_coverage, distributional_coverage, diversity, serendipity,
)
data = json.load(sys.stdin)
train = pd.DataFrame(data["interactions"], columns=["userID", "itemID"])
features = pd.DataFrame(
    {"itemID": [i for i, _ in data["categories"]],
     "features": [np.eye(3)[c] for _, c in data["categories"]]}
)
out = {}
for k, rows in data["lists"].items():
    reco = pd.DataFrame(rows, columns=["userID", "itemID"])
    out[f"coverage@{k}"] = catalog_coverage(train, reco)
    out[f"entropy@{k}"] = distributional_coverage(train, reco)
    out[f"ild@{k}"] = diversity(
        train, reco, item_feature_df=features, item_sim_measure="item_feature_vector"
    )
    relevant = {tuple(pair) for pair in data["relevant"]}
    reco["relevance"] = [int((u, i) in relevant) for u, i in zip(reco.userID, reco.itemID)]
    out[f"serendipity@{k}"] = serendipity(
        train, reco, item_feature_df=features, item_sim_measure="item_feature_vector",
        col_relevance="relevance",
    )
print(json.dumps(out))
"""


@pytest.mark.parametrize("seed", range(3))
def test_ms_recommenders_agrees(seed: int) -> None:
    """catalog_coverage (its catalogue: the items of train_df, here every recommended item is
    one), distributional_coverage (entropy), diversity with one-hot category features (ILD;
    every list has two items or more, as users with one item have no pair there) and
    serendipity (train_df is our history; its col_relevance is our interactions)."""
    if not LIBRARIES_PYTHON.exists():
        skip_or_fail("recommenders", "no venv of the profile libraries (make profiles-venv)")
    rng = random.Random(seed)
    items = list(range(1, 25))
    interactions = [{"user_id": 100, "item_id": item} for item in items]  # every item known
    recommendations = []
    for user in range(1, 10):
        seen = rng.sample(items, rng.randint(1, 4))
        interactions += [{"user_id": user, "item_id": item} for item in seen]
        unseen = [item for item in items if item not in seen]  # MS refuses seen pairs
        for item in rng.sample(unseen, rng.randint(5, 9)):
            recommendations.append({"user_id": user, "item_id": item, "score": rng.random()})
    catalogue = [{"item_id": item, "category": rng.choice("xyz")} for item in items]
    relevant = [
        {"user_id": r["user_id"], "item_id": r["item_id"]}
        for r in recommendations
        if rng.random() < 0.4
    ]
    codes = {"x": 0, "y": 1, "z": 2}
    ks = [2, 5]
    payload = {
        "relevant": [[r["user_id"], r["item_id"]] for r in relevant],
        "interactions": [[r["user_id"], r["item_id"]] for r in interactions],
        "categories": [[c["item_id"], codes[c["category"]]] for c in catalogue],
        "lists": {
            str(k): [
                [u, i]
                for u, items_of_u in top_lists(recommendations, k).items()
                for i in items_of_u
            ]
            for k in ks
        },
    }
    done = subprocess.run(
        [str(LIBRARIES_PYTHON), "-c", RECOMMENDERS_SCRIPT],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=True,
    )
    theirs = json.loads(done.stdout)
    ours = sqlmetrics.evaluate(
        pd.DataFrame(recommendations),
        pd.DataFrame(interactions),
        [label for label in theirs if not label.startswith("serendipity")],
        items=pd.DataFrame(catalogue),
    )
    # serendipity: the relevant pairs are the ground truth, MS's train_df the history
    unexpected = sqlmetrics.evaluate(
        pd.DataFrame(recommendations),
        pd.DataFrame(relevant),
        [label for label in theirs if label.startswith("serendipity")],
        items=pd.DataFrame(catalogue),
        history=pd.DataFrame(interactions),
    )
    for label, value in theirs.items():
        got = (unexpected if label.startswith("serendipity") else ours)[label].iloc[0]
        assert math.isclose(got, value, rel_tol=0, abs_tol=TOLERANCE), (
            label,
            value,
        )


REPLAY_SCRIPT = """
import json, sys
import pandas as pd
from replay.metrics import Surprisal
data = json.load(sys.stdin)
recs = pd.DataFrame(data["reco"], columns=["query_id", "item_id", "rating"])
train = pd.DataFrame(data["train"], columns=["query_id", "item_id"])
print(json.dumps(Surprisal(data["ks"])(recs, train)))
"""


@pytest.mark.parametrize("seed", range(3))
def test_replay_surprisal_agrees(seed: int) -> None:
    """RePlay's Surprisal, its train the history (seeds 1, 2) or the interactions (seed 0)."""
    if not LIBRARIES_PYTHON.exists():
        skip_or_fail("profiles", "no venv of the profile libraries (make profiles-venv)")
    recommendations, interactions, _ = random_case(seed)
    history = random_history(seed) if seed else None
    recs = [r for r in recommendations if r["model"] == "a"]
    lists = top_lists(recs, 10**6)  # our order, handed to RePlay as descending ratings
    payload = {
        "reco": [
            [user, item, -rank] for user, items in lists.items() for rank, item in enumerate(items)
        ],
        "train": [[r["user_id"], r["item_id"]] for r in history or interactions],
        "ks": [1, 3, 5],
    }
    done = subprocess.run(
        [str(LIBRARIES_PYTHON), "-c", REPLAY_SCRIPT],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=True,
    )
    theirs = json.loads(done.stdout)
    ours = sqlmetrics.evaluate(
        pd.DataFrame(recs),
        pd.DataFrame(interactions),
        [f"surprisal@{k}" for k in payload["ks"]],
        history=None if history is None else pd.DataFrame(history),
    )
    for k in payload["ks"]:
        value = theirs[f"Surprisal@{k}"]
        assert math.isclose(ours[f"surprisal@{k}"].iloc[0], value, abs_tol=TOLERANCE), (k, value)
