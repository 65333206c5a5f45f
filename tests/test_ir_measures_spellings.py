"""ir_measures' spellings compute what ir_measures computes: ``IPrec@x`` is interpolated
precision with trec_eval 9.0.8's recall cutoffs (floor(x |R| + 0.9)), because ir_measures
computes IPrec through pytrec_eval (trec_eval 9.0.8's code), not trec_eval 10.0's rounding.

Why: a user moving from ir_measures reads IPrec@0.8 and expects ir_measures' number. On issue
42's example ir_measures 0.4.3 gives IPrec@0.8 = 0 where trec_eval 10 gives 0.5; sqlmetrics'
trec_eval 10 definition stays iprec_at_recall (trec_eval's own spelling).
"""

from __future__ import annotations

import random

import pandas as pd
import pytest

import sqlmetrics


def _frames(
    run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    recommendations = pd.DataFrame(
        [(q, d, s) for q, docs in run.items() for d, s in docs.items()],
        columns=["user_id", "item_id", "score"],
    )
    interactions = pd.DataFrame(
        [(q, d, r) for q, docs in qrels.items() for d, r in docs.items()],
        columns=["user_id", "item_id", "relevance"],
    )
    return recommendations, interactions


def test_iprec_is_ir_measures_on_issue_42_s_example() -> None:
    """Relevant a, b, c; the list x, a, y, b. At x = 0.8: 9.0.8's cutoff floor(0.8 x 3 + 0.9)
    = 3 relevant items, only 2 are listed: 0 (ir_measures 0.4.3 prints 0.0). trec_eval 10's
    lround(2.4) = 2: the best precision from the 2nd relevant item on, b at 4, 2/4 = 0.5."""
    recs, inter = _frames(
        {"1": {"x": 1.0, "a": 0.9, "y": 0.8, "b": 0.7}}, {"1": dict.fromkeys("abc", 1)}
    )
    frame = sqlmetrics.evaluate(recs, inter, ["IPrec@0.8", "iprec_at_recall@0.8"])
    assert frame.loc[0, "IPrec@0.8"] == 0.0
    assert frame.loc[0, "iprec_at_recall@0.8"] == 0.5
    under_profile = sqlmetrics.evaluate(recs, inter, ["IPrec@0.8"], profile="trec_eval")
    assert under_profile.loc[0, "IPrec@0.8"] == 0.0


@pytest.mark.parametrize("seed", [0, 1])
def test_iprec_matches_pytrec_eval_per_user(seed: int) -> None:
    """ir_measures' IPrec@x is pytrec_eval's iprec_at_recall_x: the same per user on random
    lists (distinct scores, graded qrels, relevant meaning rel >= 1)."""
    import pytrec_eval

    rng = random.Random(seed)
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    docs = [f"d{n}" for n in range(15)]
    for q in range(12):
        scores = rng.sample(range(1000), 10)
        run[str(q)] = {d: s / 1000 for d, s in zip(rng.sample(docs, 10), scores, strict=True)}
        qrels[str(q)] = {d: rng.choice([0, 1, 1, 2]) for d in rng.sample(docs, rng.randint(2, 9))}
        qrels[str(q)][docs[q]] = 1  # each query has something relevant
    levels = ("0.10", "0.30", "0.50", "0.70", "0.80", "0.90")
    want = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall"}).evaluate(run)
    recs, inter = _frames(run, qrels)
    asked = [f"IPrec@{level}" for level in levels]
    frame = sqlmetrics.evaluate(recs, inter, asked, per_user=True)
    for _, row in frame.iterrows():
        for level, label in zip(levels, asked, strict=True):
            assert abs(row[label] - want[row["user_id"]][f"iprec_at_recall_{level}"]) < 1e-12
