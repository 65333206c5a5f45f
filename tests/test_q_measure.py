"""Sakai's Q-measure (q_measure, beta 1) against pyNTCIREVAL, and in every plan.

Why: Q reads, at each relevant item, the ideal list's cumulative gain at its position
(judged.sql's ideal_gain_at_pos, from ranked_ideal.sql): a stage the other metrics with a cutoff
do not compose, so every plan that reads judged must give the window plan's numbers, and the
definition must be NTCIREVAL's. The values themselves are hand-derived in
fixtures/q_measure_validation.yaml.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import sqlmetrics
from tests.test_plans import tied_data

LABELS = [f"q_measure@{k}" for k in (1, 2, 5, 20)] + ["q_measure", "ndcg@5"]


@pytest.mark.parametrize("ties", ["id", "id_text"])
def test_every_plan_gives_the_window_plan_s_numbers(
    ties: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB's own plans (top-k lists; the curve plan at 8 or more cutoffs) against the
    portable window plan, per user and group, on data full of ties and graded truth."""
    recs, truth = tied_data(23)
    curve = [f"q_measure@{k}" for k in range(1, 11)]
    kwargs = {"group_by": ["segment"], "ties": ties}
    fast = sqlmetrics.evaluate(recs, truth, LABELS, per_user=True, **kwargs)
    fast_curve = sqlmetrics.evaluate(recs, truth, curve, **kwargs)
    monkeypatch.setattr("sqlmetrics.compose.plan.TOP_K_DIALECTS", frozenset())
    portable = sqlmetrics.evaluate(recs, truth, LABELS, per_user=True, **kwargs)
    pd.testing.assert_frame_equal(fast, portable, check_exact=False, rtol=0, atol=1e-12)
    windows = sqlmetrics.evaluate(recs, truth, curve, **kwargs)
    pd.testing.assert_frame_equal(fast_curve, windows, check_exact=False, rtol=0, atol=1e-12)
    assert (portable["q_measure@5"] > 0).any() and (portable["q_measure@5"] < 1).any()


@pytest.mark.parametrize("k", [None, 3, 10])
def test_q_measure_matches_ntcireval_per_user(k: int | None) -> None:
    """pyNTCIREVAL's QMeasure (beta 1, grade = level, so gain = relevance) per user on random
    graded lists (distinct scores; levels 0..4, a level-0 judgement not relevant): its Q@k
    divides by min(|R_u|, k), its ideal list holds every relevant item."""
    ntcireval = pytest.importorskip("pyNTCIREVAL.metrics")
    rng = np.random.default_rng(11)
    recs, truth = [], []
    for user in range(60):
        items = rng.choice(40, size=int(rng.integers(1, 15)), replace=False)
        scores = rng.permutation(len(items))
        recs += [(user, int(item), float(score)) for item, score in zip(items, scores, strict=True)]
        judged = rng.choice(40, size=int(rng.integers(1, 12)), replace=False)
        truth += [(user, int(item), int(rng.integers(0, 5))) for item in judged]
    recommendations = pd.DataFrame(recs, columns=["user_id", "item_id", "score"])
    interactions = pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"])
    label = "q_measure" if k is None else f"q_measure@{k}"
    frame = sqlmetrics.evaluate(recommendations, interactions, [label], per_user=True)
    assert len(frame) > 40 and (frame[label] > 0).sum() > 20
    for _, row in frame.iterrows():
        rels = {item: rel for user, item, rel in truth if user == row["user_id"]}
        listed = sorted(((s, i) for u, i, s in recs if u == row["user_id"]), reverse=True)
        ranked = [(item, rels.get(item)) for _, item in listed]
        levels = [sum(1 for rel in rels.values() if rel == level) for level in range(5)]
        q = ntcireval.QMeasure(levels, [1, 2, 3, 4], 1.0, k)
        assert row[label] == pytest.approx(q.compute(ranked), abs=1e-12), row["user_id"]
