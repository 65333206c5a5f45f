"""Time against the number of groups of a column only the recommendations have (issue 23).

    python bench/groups.py [--groups 10 1000 10000 100000] [--rounds 3] [--crossing 10000]

A ``model`` column of the recommendations, absent from the interactions: each model is
evaluated against the whole population of the interactions (every user with a relevant
item), as in an offline comparison of many models or experiment arms. The shape of the issue:
~100,000 recommendation rows (lists of 10, or of 100,000 / groups rows past 10,000 groups) and
20,000 interaction rows of 5,000 users over 200 items, generated with numpy's PCG64 (seed 0),
so every run times the same rows.

Per number of groups, rounds alternate

* ``sqlmetrics``: ``sqlmetrics.evaluate(recs, truth, METRICS, group_by="model")`` on DuckDB,
  diagnostics included (what a user runs), and
* ``pandas``: the same four metrics computed independently with pandas group-bys, near-linear
  (each model's sum over the users it lists, divided by the population's size, the users it
  does not list scoring 0),

checks that every number agrees within 1e-9, and prints each one's median wall time and median
CPU time (process time, all threads). ``--crossing G...``: also time, for those group counts,
the plan before issue 23 (compose.cross_arms: every model crossed with every interaction),
one round, for the "before" figures. It is a measurement, not a test; run it by hand.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd

import sqlmetrics
from sqlmetrics.engines import duckdb_passes

K = 10
METRICS = [f"{name}@{K}" for name in ("ndcg", "recall", "precision", "hit_rate")]
RECOMMENDATION_ROWS = 100_000
INTERACTION_ROWS = 20_000
USERS = 5_000
ITEMS = 200


def frames(groups: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(0)
    pairs = rng.choice(USERS * ITEMS, INTERACTION_ROWS, replace=False)  # distinct (user, item)
    truth = pd.DataFrame(
        {
            "user_id": pairs // ITEMS,
            "item_id": pairs % ITEMS,
            "relevance": rng.choice([1, 2, 3], INTERACTION_ROWS, p=[0.6, 0.3, 0.1]),
        }
    )
    length = max(1, min(K, RECOMMENDATION_ROWS // groups))
    lists = RECOMMENDATION_ROWS // length
    first = rng.integers(0, ITEMS, lists)
    recs = pd.DataFrame(
        {
            "model": np.repeat(np.arange(lists) % groups, length),
            "user_id": np.repeat(rng.integers(0, USERS, lists), length),
            # 17 is prime to 200: the items of one list are distinct
            "item_id": (np.repeat(first, length) + 17 * np.tile(np.arange(length), lists)) % ITEMS,
            "score": np.round(rng.random(lists * length), 4),
        }
    )
    # a user listed twice by one model keeps the first list's rows of an item
    recs = recs.drop_duplicates(["model", "user_id", "item_id"], ignore_index=True)
    return recs, truth


def with_sqlmetrics(recs: pd.DataFrame, truth: pd.DataFrame) -> pd.DataFrame:
    return sqlmetrics.evaluate(recs, truth, METRICS, group_by="model")


def crossing(recs: pd.DataFrame, truth: pd.DataFrame) -> pd.DataFrame:
    """The plan before issue 23: complement_arms switched off."""
    duckdb_passes._query_sql.cache_clear()
    try:  # plan.py chooses the plan, from its own import of complements_arms
        with mock.patch("sqlmetrics.compose.plan.complements_arms", lambda *_: False):
            return with_sqlmetrics(recs, truth)
    finally:
        duckdb_passes._query_sql.cache_clear()


def with_pandas(recs: pd.DataFrame, truth: pd.DataFrame) -> pd.DataFrame:
    """ties="id": score descending, equal scores by item id descending; population "all"."""
    relevant = truth[truth.relevance > 0]
    population = relevant.user_id.nunique()
    ranked = recs.sort_values(
        ["model", "user_id", "score", "item_id"], ascending=[True, True, False, False]
    )
    ranked = ranked.assign(pos=ranked.groupby(["model", "user_id"]).cumcount() + 1)
    top = ranked[ranked.pos <= K].merge(relevant, on=["user_id", "item_id"], how="left")
    top["relevance"] = top.relevance.fillna(0)
    top["hit"] = (top.relevance > 0).astype(float)
    top["dcg"] = top.relevance / np.log2(top.pos + 1)
    per_list = top.groupby(["model", "user_id"]).agg(hits=("hit", "sum"), dcg=("dcg", "sum"))
    ideal = relevant.sort_values(["user_id", "relevance"], ascending=[True, False])
    ideal = ideal.assign(pos=ideal.groupby("user_id").cumcount() + 1)
    ideal = ideal[ideal.pos <= K]
    per_user = pd.DataFrame(
        {
            "idcg": (ideal.relevance / np.log2(ideal.pos + 1)).groupby(ideal.user_id).sum(),
            "n_relevant": relevant.groupby("user_id").size(),
        }
    )
    # only the users of the population: the others are outside every mean
    per_list = per_list.join(per_user, on="user_id", how="inner")
    values = pd.DataFrame(
        {
            "ndcg@10": per_list.dcg / per_list.idcg,
            "recall@10": per_list.hits / per_list.n_relevant,
            "precision@10": per_list.hits / K,
            "hit_rate@10": (per_list.hits > 0).astype(float),
        }
    )
    models = np.sort(recs.model.unique())
    # the users a model does not list score 0: its sums over the users it lists, / population
    summary = values.groupby(level="model").sum().reindex(models, fill_value=0.0) / population
    summary.insert(0, "users", population)
    return summary.rename_axis("model").reset_index()


def agree(ours: pd.DataFrame, theirs: pd.DataFrame) -> None:
    ours = ours.sort_values("model", ignore_index=True)
    assert ours.model.tolist() == theirs.model.tolist(), "different models"
    assert (ours.users == theirs.users).all(), "different population sizes"
    for label in METRICS:
        gap = float(np.max(np.abs(ours[label].to_numpy(float) - theirs[label].to_numpy(float))))
        assert gap <= 1e-9, f"{label} differs by {gap}"


def timed(call: Callable[[], Any]) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = call()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", type=int, nargs="+", default=[10, 1_000, 10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--crossing", type=int, nargs="*", default=[])
    arguments = parser.parse_args()
    if arguments.rounds < 1:
        parser.error("--rounds must be at least 1")
    print(f"{'groups':>7} {'rows':>7} | {'tool':<20} {'wall s':>8} {'cpu s':>8}")
    for groups in arguments.groups:
        recs, truth = frames(groups)
        tools: dict[str, Callable[[], Any]] = {
            "sqlmetrics": functools.partial(with_sqlmetrics, recs, truth),
            "pandas": functools.partial(with_pandas, recs, truth),
        }
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in tools}
        with_sqlmetrics(recs, truth)  # the query's composition is cached, as a user's second call
        for _ in range(arguments.rounds):
            results = {}
            for name, call in tools.items():
                wall, cpu, results[name] = timed(call)
                times[name].append((wall, cpu))
            agree(results["sqlmetrics"], results["pandas"])
        if groups in arguments.crossing:
            wall, cpu, before = timed(functools.partial(crossing, recs, truth))
            agree(before, results["pandas"])
            times["sqlmetrics, crossing"] = [(wall, cpu)]
        for name, measured in times.items():
            wall = statistics.median(w for w, _ in measured)
            cpu = statistics.median(c for _, c in measured)
            print(f"{groups:>7} {len(recs):>7} | {name:<20} {wall:>8.3f} {cpu:>8.3f}")


if __name__ == "__main__":
    main()
