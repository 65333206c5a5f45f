"""Independent pure-Python oracle for the metrics over the top-k lists (coverage, novelty, arp,
entropy, gini, ild, personalization, the long tail's), straight from their textbook forms:
personalization by comparing every pair of lists, Gini over the sorted catalogue with its zeros,
entropy as -sum p log2 p, the short head by Elliot's running limit, pop_rsp and pop_reo as
numpy's population std over mean of the two groups' rates. It shares nothing with the SQL
(whose forms are closed ones). Popularity counts what users consumed: the history when one is
given (``history`` not None), else the interactions."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from sqlmetrics.catalog.metrics import metrics as catalogue
from tests.intent_oracle import INTENT_METRICS, intent_values
from tests.oracle import NoFormula

Row = Mapping[str, Any]
# The metrics over the lists this oracle has a formula for.
LIST_METRICS = frozenset(
    {
        "coverage",
        "novelty",
        "arp",
        "entropy",
        "gini",
        "ild",
        "personalization",
        "serendipity",
        "aplt",
        "aclt",
        "surprisal",
        "tail_coverage",
        "pop_rsp",
        "pop_reo",
    }
)
# One value per user with a list (averaged over them; aggregate: mean in the header); the others
# give one value for all lists.
PER_USER = LIST_METRICS & frozenset(
    name
    for name, metric in catalogue().items()
    if metric.reads == "lists" and not metric.group_level
)


def top_lists(recommendations: Iterable[Row], k: int) -> dict[Any, list[Any]]:
    """Each user's first k items: score descending, then item id descending (trec_eval)."""
    by_user: dict[Any, list[Row]] = {}
    for row in recommendations:
        by_user.setdefault(row["user_id"], []).append(row)
    return {
        user: [
            row["item_id"]
            for row in sorted(rows, key=lambda r: (-r["score"], _descending(r["item_id"])))[:k]
        ]
        for user, rows in by_user.items()
    }


def _descending(item: Any) -> Any:
    # Sort keys for "item id descending" that work for numbers and strings alike.
    return -item if isinstance(item, (int, float)) else (*(-ord(c) for c in item), 1)


def catalogue(
    recommendations: Iterable[Row], interactions: Iterable[Row], items: Sequence[Row] | None
) -> set[Any]:
    known = items if items is not None else interactions
    return {row["item_id"] for row in known} | {row["item_id"] for row in recommendations}


def interacting_users(interactions: Iterable[Row]) -> dict[Any, set[Any]]:
    users: dict[Any, set[Any]] = {}
    for row in interactions:
        users.setdefault(row["item_id"], set()).add(row["user_id"])
    return users


def long_tail(interactions: Iterable[Row], head_share: Fraction = Fraction(4, 5)) -> Any:
    """Whether an item is in the long tail: Elliot's Popularity.get_short_head walks the items
    from the most popular (distinct users; equal ones by item id here), taking each while the
    limit head_share * interactions has not been used up, subtracting its popularity (in exact
    fractions, where Elliot's float of 0.8 * interactions may round)."""
    users_of = interacting_users(interactions)
    limit = head_share * sum(len(users) for users in users_of.values())
    head = set()
    for item in sorted(users_of, key=lambda i: (-len(users_of[i]), i)):
        if limit <= 0:
            break
        head.add(item)
        limit -= len(users_of[item])
    return lambda item: item not in head


def _surprisal(users: int, everyone: int) -> float:
    if users == 0:
        return 1.0
    return math.log2(everyone / users) / math.log2(everyone) if everyone > 1 else 0.0


def per_user_values(
    metric: str,
    lists: Mapping[Any, list[Any]],
    interactions: Sequence[Row],
    items: Sequence[Row] | None,
    history: Sequence[Row] | None = None,
    threshold: float = 0.0,
    k: int = 0,
) -> dict[Any, float]:
    """novelty, surprisal (k: its divisor), arp, aplt, aclt, ild or serendipity of each user
    with a list (and a history for serendipity: MS Recommenders' user_item_serendipity with
    cosine similarity of one-hot categories, 1 for the same category, else 0)."""
    consumed = interactions if history is None else history
    users_of = interacting_users(consumed)
    everyone = len({row["user_id"] for row in consumed})
    category = {row["item_id"]: row["category"] for row in items or []}
    in_tail = long_tail(consumed)
    values: dict[Any, float] = {}
    for user, items_of_user in lists.items():
        if metric == "surprisal":
            # RePlay: log2(N / users(i)) / log2(N), 1 for an item nobody consumed; with one
            # user, 0 / 0 for a consumed item, taken as 0
            weights = [_surprisal(len(users_of.get(i, ())), everyone) for i in items_of_user]
            values[user] = sum(weights) / k
        elif metric == "novelty":
            surprisal = [
                -math.log2(max(len(users_of.get(i, ())), 1) / everyone) for i in items_of_user
            ]
            values[user] = sum(surprisal) / len(surprisal)
        elif metric in ("aplt", "aclt"):
            tail = sum(in_tail(i) for i in set(items_of_user))
            values[user] = tail / len(items_of_user) if metric == "aplt" else float(tail)
        elif metric == "arp":
            values[user] = sum(len(users_of.get(i, ())) for i in items_of_user) / len(items_of_user)
        elif metric == "serendipity":
            past = [row["item_id"] for row in history or () if row["user_id"] == user]
            if not past:
                continue
            relevant = {
                row["item_id"]
                for row in interactions
                if row["user_id"] == user and row.get("relevance", 1) > threshold
            }
            terms = [
                (1 - sum(category[i] == category[j] for j in past) / len(past))
                if i in relevant
                else 0.0
                for i in items_of_user
            ]
            values[user] = sum(terms) / len(terms)
        elif metric == "ild":
            pairs = list(itertools.combinations(items_of_user, 2))
            differ = [category[a] != category[b] for a, b in pairs]
            values[user] = sum(differ) / len(pairs) if pairs else 0.0
        else:
            raise ValueError(metric)
    return values


def list_metric(
    metric: str,
    k: int,
    recommendations: Sequence[Row],
    interactions: Sequence[Row],
    items: Sequence[Row] | None = None,
    all_recommendations: Sequence[Row] | None = None,
    history: Sequence[Row] | None = None,
    relevant_interactions: Sequence[Row] | None = None,
) -> float:
    """The value over one group's ``recommendations``. The catalogue and the popularity are
    global: from ``all_recommendations`` (default: these) and all ``interactions`` (the
    ``history`` when given, for the popularity); relevance (serendipity, pop_reo) comes from
    ``relevant_interactions`` (default: all), the group's."""
    if metric in INTENT_METRICS:  # over whole lists: ap_ia reads every position
        every = top_lists(recommendations, len(recommendations))
        values = intent_values(metric, k, every, relevant_interactions or interactions)
        return sum(values.values()) / len(values) if values else math.nan
    if metric not in LIST_METRICS:
        raise NoFormula(metric)
    lists = top_lists(recommendations, k)
    if metric in ("tail_coverage", "pop_rsp", "pop_reo"):
        every = catalogue(all_recommendations or recommendations, interactions, items)
        consumed = interactions if history is None else history
        in_tail = long_tail(consumed)
        head = {item for item in _items(consumed) if not in_tail(item)}
        relevant = relevant_interactions or interactions
        return _long_tail_metric(metric, lists, every, head, relevant, history)
    if metric == "serendipity":
        values = per_user_values(
            metric, lists, relevant_interactions or interactions, items, history
        )
        return sum(values.values()) / len(values) if values else math.nan
    if metric in PER_USER:
        values = per_user_values(metric, lists, interactions, items, history, k=k)
        return sum(values.values()) / len(values) if values else math.nan
    exposure = Counter(item for user_items in lists.values() for item in user_items)
    if metric == "coverage":
        every = catalogue(all_recommendations or recommendations, interactions, items)
        return len(exposure) / len(every)
    if metric == "entropy":
        total = sum(exposure.values())
        return -sum(n / total * math.log2(n / total) for n in exposure.values())
    if metric == "gini":
        every = catalogue(all_recommendations or recommendations, interactions, items)
        counts = sorted(exposure.get(item, 0) for item in every)
        n, total = len(counts), sum(counts)
        return sum((2 * j - n - 1) * c for j, c in enumerate(counts, start=1)) / (n * total)
    if metric == "personalization":
        pairs = list(itertools.combinations(lists.values(), 2))
        if not pairs:
            return math.nan
        overlap = [len(set(a) & set(b)) / k for a, b in pairs]
        return 1 - sum(overlap) / len(pairs)
    raise ValueError(metric)


def _items(rows: Iterable[Row] | None) -> list[Any]:
    return [row["item_id"] for row in rows or ()]


def _long_tail_metric(
    metric: str,
    lists: Mapping[Any, list[Any]],
    every: set[Any],
    head: set[Any],
    relevant_rows: Sequence[Row],
    history: Sequence[Row] | None,
) -> float:
    """tail_coverage (the tail: the catalogue outside the head), or Elliot's PopRSP and PopREO:
    each group's rate summed over the users (PopREO: those with a relevant item), less each
    user's history in the denominators, then numpy's population std over the mean of the two
    rates: NaN, as Elliot's nan, when a group has nothing to count or neither rate is above 0."""
    tail = every - head
    if metric == "tail_coverage":
        shown = {i for items in lists.values() for i in items} & tail
        return len(shown) / len(tail) if tail else 0.0
    relevant: dict[Any, set[Any]] = {}
    for row in relevant_rows:
        if row.get("relevance", 1) > 0:
            relevant.setdefault(row["user_id"], set()).add(row["item_id"])
    found, possible = [Fraction(0), Fraction(0)], [Fraction(0), Fraction(0)]
    for user, items in lists.items():
        seen = {row["item_id"] for row in history or () if row["user_id"] == user}
        if metric == "pop_rsp":
            pools = (set(items), head, tail)
        elif user in relevant:
            mine = relevant[user]
            pools = (set(items) & mine, head & mine, mine - head)
        else:
            continue
        shown, head_pool, tail_pool = pools
        found[0] += len(shown & head)
        found[1] += len(shown - head)
        possible[0] += len(head_pool - seen)
        possible[1] += len(tail_pool - seen)
    if not all(possible):
        return math.nan
    rates = [float(f / p) for f, p in zip(found, possible, strict=True)]
    mean = sum(rates) / 2
    std = math.sqrt(sum((rate - mean) ** 2 for rate in rates) / 2)
    return std / mean if mean else math.nan


# The overlap metrics, each model's lists against the baseline model's.
OVERLAP_METRICS = frozenset({"intersection", "rbo", "unexpectedness"})


def overlap_metric(
    metric: str,
    k: int,
    recommendations: Sequence[Row],
    baseline: Sequence[Row],
    p: float = 0.9,
) -> float:
    """The mean over the users of ``recommendations`` with a list of their overlap with the
    same user's list in ``baseline`` (both one group's rows), in the textbook forms: sets of
    the first k (intersection over |L|, unexpectedness over k) and rbo as the weighted sum of
    the agreement at each depth d = 1..k, divided by the weights' sum; a user without a
    baseline list scores 0 in each (the peers' rule)."""
    if metric not in OVERLAP_METRICS:
        raise NoFormula(metric)
    lists, based = top_lists(recommendations, k), top_lists(baseline, k)
    values = []
    for user, items in lists.items():
        base = based.get(user)
        if base is None:
            values.append(0.0)
        elif metric == "intersection":
            values.append(len(set(items) & set(base)) / len(items))
        elif metric == "unexpectedness":
            values.append(1 - len(set(items) & set(base)) / k)
        else:
            weights = [p ** (d - 1) for d in range(1, k + 1)]
            agreement = [len(set(items[:d]) & set(base[:d])) / d for d in range(1, k + 1)]
            values.append(
                sum(w * a for w, a in zip(weights, agreement, strict=True)) / sum(weights)
            )
    return sum(values) / len(values) if values else math.nan
