"""DuckDB's means over users are exact sums (sqlmetrics/compose/sums.py): the same bits whatever the
row order and the threads, equal to the exact rational sum of the per-user values rounded
once and divided by the users (checked with fractions.Fraction, not with sqlmetrics' SQL), and
a plain SUM for a column with a value of 2^32 or more."""

from __future__ import annotations

from fractions import Fraction

import duckdb
import numpy as np
import pandas as pd

import sqlmetrics

METRICS = ["ndcg@10", "map@10", "recall@5", "precision@3", "mrr@10"]


def _inputs(users: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    items = 40
    recs = pd.DataFrame(
        {
            "user_id": np.repeat(np.arange(users), 12),
            "item_id": np.concatenate([rng.permutation(items)[:12] for _ in range(users)]),
            "score": rng.random(users * 12),
        }
    )
    truth = pd.DataFrame(
        {
            "user_id": np.repeat(np.arange(users), 4),
            "item_id": np.concatenate([rng.permutation(items)[:4] for _ in range(users)]),
            "relevance": rng.integers(1, 4, users * 4).astype(float),
        }
    )
    return recs, truth


def _exact_mean(values: pd.Series) -> float:
    """The exact sum of the doubles, rounded to a double once, then divided by their number:
    what sums.py computes when every value is 0 or at least 2^-11 (whole 2^-64ths)."""
    assert all(v == 0 or abs(v) >= 2**-11 for v in values)
    return float(sum(map(Fraction, values))) / len(values)


def test_means_are_the_exact_sums_whatever_the_order_and_threads() -> None:
    recs, truth = _inputs(20_000, seed=3)
    per_user = sqlmetrics.evaluate(recs, truth, METRICS, per_user=True)
    expected = {metric: _exact_mean(per_user[metric]) for metric in METRICS}
    shuffled = recs.sample(frac=1.0, random_state=7).reset_index(drop=True)
    for frame, threads in ((recs, 1), (shuffled, 4), (recs, 4)):
        connection = duckdb.connect(config={"threads": threads})
        summary = sqlmetrics.evaluate(frame, truth, METRICS, connection=connection)
        for metric in METRICS:
            got = float(summary[metric].iloc[0])
            assert got == expected[metric], (metric, threads, got, expected[metric])


def test_curve_plan_and_window_plan_share_the_exact_bits() -> None:
    recs, truth = _inputs(3_000, seed=5)
    curve = [f"ndcg@{k}" for k in range(1, 21)]  # 20 cutoffs: the curve plan (plan.py)
    together = sqlmetrics.evaluate(recs, truth, curve)
    per_user = sqlmetrics.evaluate(recs, truth, curve, per_user=True)
    for metric in curve:
        assert float(together[metric].iloc[0]) == _exact_mean(per_user[metric]), metric


def test_a_value_beyond_two_to_the_32_leaves_its_column_to_a_plain_sum() -> None:
    # dcg_exp's gain 2^relevance - 1: a relevance of 40 puts one user's dcg near 2^40.
    recs = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [1, 2, 1], "score": [0.9, 0.5, 0.3]})
    truth = pd.DataFrame({"user_id": [1, 2], "item_id": [1, 1], "relevance": [40.0, 1.0]})
    summary = sqlmetrics.evaluate(recs, truth, ["dcg_exp@10", "ndcg@10"])
    assert float(summary["dcg_exp@10"].iloc[0]) == 2.0**39  # (2^40 - 1 + 1) / 2
    assert float(summary["ndcg@10"].iloc[0]) == 1.0


def test_per_user_sums_are_exact_whatever_the_order_and_threads() -> None:
    # A user's fractional sums (AP's precisions, DCG's gains) are exact sums of their terms too
    # (per_user.stable_user_sums): the hit-rows plan adds a user's hits in whatever order its
    # joins deliver them, which changed the last bit of some users' ndcg from run to run.
    recs, truth = _inputs(20_000, seed=11)
    metrics = ["map@10", "ndcg@10", "map@12"]
    first = sqlmetrics.evaluate(recs, truth, metrics, per_user=True)
    # AP@10 of a user: the exact sum of hits_so_far / pos (each a correctly rounded double, as
    # in DuckDB) over its hits within 10, rounded once, over its relevant items
    ranked = recs.sort_values(["user_id", "score", "item_id"], ascending=[True, False, False])
    ranked["pos"] = ranked.groupby("user_id").cumcount() + 1
    relevant = truth[truth["relevance"] > 0]
    hits = ranked.merge(relevant, on=["user_id", "item_id"])
    hits = hits[hits["pos"] <= 10].sort_values(["user_id", "pos"])
    hits["so_far"] = hits.groupby("user_id").cumcount() + 1
    n_relevant = relevant.groupby("user_id").size()
    for user, part in hits.groupby("user_id"):
        exact = float(
            sum(Fraction(s / p) for s, p in zip(part["so_far"], part["pos"], strict=True))
        )
        got = float(first.loc[first["user_id"] == user, "map@10"].iloc[0])
        assert got == exact / n_relevant[user], user
    shuffled = recs.sample(frac=1.0, random_state=5).reset_index(drop=True)
    for frame, threads in ((recs, 1), (shuffled, 4), (shuffled, 1)):
        connection = duckdb.connect(config={"threads": threads})
        again = sqlmetrics.evaluate(frame, truth, metrics, per_user=True, connection=connection)
        for metric in metrics:
            assert again[metric].equals(first[metric]), (metric, threads)
