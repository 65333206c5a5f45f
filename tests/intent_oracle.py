"""Independent pure-Python oracle for the intent-aware metrics (alpha_ndcg, err_ia, nerr_ia,
p_ia, ap_ia, s_recall), written from ndeval.c's loops (TREC Web track, version 4.5): each
list walked item by item with a gain per intent that halves at each repeat, the ideal list
chosen greedily one position at a time (idealResult), ERR-IA over its "ideal ideal" list of k
items relevant to every intent. It shares nothing with the SQL (windows over judged rows, a
CTE per greedy step)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

Row = Mapping[str, Any]
ALPHA = 0.5
INTENT_METRICS = frozenset({"alpha_ndcg", "err_ia", "nerr_ia", "p_ia", "ap_ia", "s_recall"})


def judgements(interactions: Sequence[Row], threshold: float = 0.0) -> dict[Any, dict[Any, set]]:
    """user -> intent -> its relevant items; every user with a row that names an intent is
    there, an intent judged with nothing relevant as an empty set."""
    judged: dict[Any, dict[Any, set]] = {}
    for row in interactions:
        if row.get("intent") is None:
            continue
        items = judged.setdefault(row["user_id"], {}).setdefault(row["intent"], set())
        if row.get("relevance", 1) > threshold:
            items.add(row["item_id"])
    return judged


def _gains(ranking: Sequence[Any], intents: Mapping[Any, set]) -> list[float]:
    """ndeval's score at each position: the sum over the intents the item is relevant to of
    (1 - alpha) ** (the items relevant to that intent above it)."""
    seen = dict.fromkeys(intents, 0)
    gains = []
    for item in ranking:
        score = 0.0
        for intent, items in intents.items():
            if item in items:
                score += (1 - ALPHA) ** seen[intent]
                seen[intent] += 1
        gains.append(score)
    return gains


def greedy_ideal(intents: Mapping[Any, set], judged_items: set, depth: int) -> list[float]:
    """idealResult: at each position the unplaced judged item of the largest gain, equal
    gains by the greater item id; its gains to ``depth``."""
    weight = dict.fromkeys(intents, 1.0)
    left = set(judged_items)
    gains = []
    while left and len(gains) < depth:

        def gain(item: Any) -> float:
            return sum(weight[j] for j, items in intents.items() if item in items)

        best = max(left, key=lambda item: (gain(item), item))
        gains.append(gain(best))
        left.discard(best)
        for j, items in intents.items():
            if best in items:
                weight[j] *= 1 - ALPHA
    return gains


def intent_value(
    metric: str, k: int, ranking: Sequence[Any], intents: Mapping[Any, set], judged_items: set
) -> float:
    """One user's value; ``ranking`` the whole list, ``intents`` intent -> relevant items."""
    m = sum(1 for items in intents.values() if items)
    if m == 0:
        return 0.0
    top = list(ranking) if metric == "ap_ia" else list(ranking)[:k]
    if metric == "p_ia":
        pairs = sum(1 for item in top for items in intents.values() if item in items)
        return pairs / (k * m)
    if metric == "s_recall":
        return sum(1 for items in intents.values() if items & set(top)) / m
    if metric == "ap_ia":
        total = 0.0
        for items in intents.values():
            if not items:
                continue
            found, precisions = 0, 0.0
            for position, item in enumerate(top, start=1):
                if item in items:
                    found += 1
                    precisions += found / position
            total += precisions / len(items)
        return total / m
    gains = _gains(top, intents)
    if metric == "err_ia":
        ideal_ideal = sum(m * (1 - ALPHA) ** (i - 1) / i for i in range(1, k + 1))
        return sum(g / i for i, g in enumerate(gains, start=1)) / ideal_ideal
    ideal = greedy_ideal(intents, judged_items, k)
    if metric == "nerr_ia":
        run = sum(g / i for i, g in enumerate(gains, start=1))
        best = sum(g / i for i, g in enumerate(ideal, start=1))
    elif metric == "alpha_ndcg":
        run = sum(g / math.log2(i + 1) for i, g in enumerate(gains, start=1))
        best = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, start=1))
    else:
        raise ValueError(metric)
    return run / best if best else 0.0


def intent_values(
    metric: str,
    k: int,
    lists: Mapping[Any, list[Any]],
    interactions: Sequence[Row],
    threshold: float = 0.0,
) -> dict[Any, float]:
    """Each user's value, over the users with a list and a row naming an intent (ndeval's
    topics in both the run and the qrels)."""
    judged = judgements(interactions, threshold)
    items_judged: dict[Any, set] = {}
    for row in interactions:
        if row.get("intent") is not None:
            items_judged.setdefault(row["user_id"], set()).add(row["item_id"])
    return {
        user: intent_value(metric, k, ranking, judged[user], items_judged[user])
        for user, ranking in lists.items()
        if user in judged
    }
