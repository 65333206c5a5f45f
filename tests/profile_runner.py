"""Runs one recommender library on the shared random data and prints its numbers as JSON.

Used by tests/test_profiles.py through ``.venv-profiles/bin/python`` (make profiles-venv): the
libraries there pin their own numpy, pandas and torch, so they cannot share the test venv.

    python tests/profile_runner.py LIBRARY < data.json > numbers.json

data.json: {"recommendations": [{user_id, item_id, score or rank}], "interactions": [{user_id,
item_id, relevance}], "ks": [1, 3, ...]}, interactions already one row per (user, item).
Output: {"per_user": {label: {str(user): value}}, "means": {label: value}} with sqlmetrics
labels (``precision@10``) for the library's own functions; nothing here computes a metric.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from typing import Any

Numbers = dict[str, dict[str, Any]]


def ranked(recommendations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with a 1-based rank: score descending, then item id descending (ties="id")."""
    by_user: dict[Any, list[dict[str, Any]]] = {}
    for row in recommendations:
        by_user.setdefault(row["user_id"], []).append(row)
    out = []
    for rows in by_user.values():
        rows = sorted(rows, key=lambda r: (r["score"], r["item_id"]), reverse=True)
        out += [{**row, "rank": rank} for rank, row in enumerate(rows, start=1)]
    return out


def recommenders(data: dict[str, Any]) -> Numbers:
    """MS Recommenders python_evaluation (means over the users in both tables)."""
    import pandas as pd
    from recommenders.evaluation import python_evaluation as evaluation

    truth = pd.DataFrame(data["interactions"]).rename(
        columns={"user_id": "userID", "item_id": "itemID", "relevance": "rating"}
    )
    predictions = pd.DataFrame(data["recommendations"]).rename(
        columns={"user_id": "userID", "item_id": "itemID", "score": "prediction"}
    )
    functions: dict[str, Callable[..., float]] = {
        "precision": evaluation.precision_at_k,
        "recall": evaluation.recall_at_k,
        "map": evaluation.map_at_k,
        "map_gt": evaluation.map,
        "ndcg": evaluation.ndcg_at_k,
    }
    means = {
        f"{name}@{k}": float(function(truth, predictions, k=k))
        for name, function in functions.items()
        for k in data["ks"]
    }
    return {"per_user": {}, "means": means}


def rectools(data: dict[str, Any]) -> Numbers:
    """RecTools metrics per user (users of the interactions table)."""
    import pandas as pd
    from rectools import Columns
    from rectools.metrics import MAP, MRR, NDCG, F1Beta, HitRate, Precision, Recall

    interactions = pd.DataFrame(data["interactions"]).rename(
        columns={"user_id": Columns.User, "item_id": Columns.Item}
    )[[Columns.User, Columns.Item]]
    # Rows that carry a rank keep it as it is (gaps and repeats included: RecTools reads the
    # Rank column literally); the others are ranked by score.
    given = data["recommendations"]
    rows = given if given and all("rank" in row for row in given) else ranked(given)
    reco = pd.DataFrame(rows).rename(
        columns={"user_id": Columns.User, "item_id": Columns.Item, "rank": Columns.Rank}
    )[[Columns.User, Columns.Item, Columns.Rank]]
    per_user: dict[str, dict[str, Any]] = {}
    for k in data["ks"]:
        metrics = {
            "precision": Precision(k=k),
            "recall": Recall(k=k),
            "f1": F1Beta(k=k, beta=1.0),
            "hit_rate": HitRate(k=k),
            "mrr": MRR(k=k),
            "map": MAP(k=k),
            "ndcg_achievable": NDCG(k=k, divide_by_achievable=True),
            "ndcg_default": NDCG(k=k),
        }
        for name, metric in metrics.items():
            values = metric.calc_per_user(reco, interactions)
            per_user[f"{name}@{k}"] = {str(u): float(v) for u, v in values.items()}
    return {"per_user": per_user, "means": {}}


def replay(data: dict[str, Any]) -> Numbers:
    """RePlay metrics per user (PerUser mode; users of the ground truth)."""
    import pandas as pd
    from replay.metrics import MAP, MRR, NDCG, HitRate, PerUser, Precision, Recall

    ground_truth = pd.DataFrame(data["interactions"]).rename(columns={"user_id": "query_id"})[
        ["query_id", "item_id"]
    ]
    recommendations = pd.DataFrame(data["recommendations"]).rename(
        columns={"user_id": "query_id", "score": "rating"}
    )
    classes = {
        "precision": Precision,
        "recall": Recall,
        "hit_rate": HitRate,
        "mrr": MRR,
        "map": MAP,
        "ndcg": NDCG,
    }
    per_user: dict[str, dict[str, Any]] = {}
    for name, metric_class in classes.items():
        values = metric_class(topk=data["ks"], mode=PerUser())(recommendations, ground_truth)
        for k in data["ks"]:
            by_user = values[f"{metric_class.__name__}-PerUser@{k}"]
            per_user[f"{name}@{k}"] = {str(u): float(v) for u, v in by_user.items()}
    return {"per_user": per_user, "means": {}}


def torchmetrics(data: dict[str, Any]) -> Numbers:
    """torchmetrics' functional retrieval metrics, one call per user with recommendations
    (preds = the user's scores, target = the relevance of each scored item)."""
    import torch
    from torchmetrics.functional import retrieval

    relevance = {(r["user_id"], r["item_id"]): r["relevance"] for r in data["interactions"]}
    by_user: dict[Any, list[dict[str, Any]]] = {}
    for row in data["recommendations"]:
        by_user.setdefault(row["user_id"], []).append(row)
    binary_functions = {
        "precision": retrieval.retrieval_precision,
        "recall": retrieval.retrieval_recall,
        "map": retrieval.retrieval_average_precision,
        "mrr": retrieval.retrieval_reciprocal_rank,
        "hit_rate": retrieval.retrieval_hit_rate,
    }
    per_user: dict[str, dict[str, Any]] = {}
    for user, rows in by_user.items():
        preds = torch.tensor([row["score"] for row in rows], dtype=torch.float64)
        grades = [relevance.get((user, row["item_id"]), 0) for row in rows]
        graded = torch.tensor(grades, dtype=torch.long)
        binary = graded > 0
        for k in [None, *data["ks"]]:
            suffix = "" if k is None else f"@{k}"
            for name, function in binary_functions.items():
                value = function(preds, binary, top_k=k)
                per_user.setdefault(f"{name}{suffix}", {})[str(user)] = float(value)
            value = retrieval.retrieval_precision(preds, binary, top_k=k, adaptive_k=True)
            per_user.setdefault(f"precision_listed{suffix}", {})[str(user)] = float(value)
            value = retrieval.retrieval_normalized_dcg(preds, graded, top_k=k)
            per_user.setdefault(f"ndcg{suffix}", {})[str(user)] = float(value)
        value = retrieval.retrieval_r_precision(preds, binary)
        per_user.setdefault("r_precision", {})[str(user)] = float(value)
    return {"per_user": per_user, "means": {}}


def lenskit(data: dict[str, Any]) -> Numbers:
    """LensKit's list metrics, one call per user of the test data (an empty list for a user
    without recommendations); NaN (Precision and AP of an empty list) comes out as null."""
    import math

    from lenskit.data import ItemList
    from lenskit.metrics.ranking import NDCG, AveragePrecision, Hit, Precision, Recall, RecipRank

    test: dict[Any, list[Any]] = {}
    for row in data["interactions"]:
        test.setdefault(row["user_id"], []).append(row["item_id"])
    lists: dict[Any, list[Any]] = {}
    for row in ranked(data["recommendations"]):
        lists.setdefault(row["user_id"], []).append(row["item_id"])
    classes = {
        "precision": Precision,
        "recall": Recall,
        "hit_rate": Hit,
        "mrr": RecipRank,
        "map": AveragePrecision,
        "ndcg": NDCG,
    }
    per_user: dict[str, dict[str, Any]] = {}
    for user, items in test.items():
        truth = ItemList(items)
        recs = ItemList(lists.get(user, []), ordered=True)
        for k in [None, *data["ks"]]:
            suffix = "" if k is None else f"@{k}"
            for name, metric_class in classes.items():
                metric = metric_class(k) if k is not None else metric_class()
                value = float(metric.measure_list(recs, truth))
                per_user.setdefault(f"{name}{suffix}", {})[str(user)] = (
                    None if math.isnan(value) else value
                )
    return {"per_user": per_user, "means": {}}


LIBRARIES: dict[str, Callable[[dict[str, Any]], Numbers]] = {
    "recommenders": recommenders,
    "rectools": rectools,
    "replay": replay,
    "torchmetrics": torchmetrics,
    "lenskit": lenskit,
}


def main() -> None:
    warnings.simplefilter("ignore")
    data = json.load(sys.stdin)
    numbers = LIBRARIES[sys.argv[1]](data)
    json.dump(numbers, sys.stdout)


if __name__ == "__main__":
    main()
