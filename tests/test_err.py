"""Expected reciprocal rank (err, nerr) and the parenthesised parameters (err(gmax=3)@10,
rbp(p=0.8)), issue 42.

Why: ERR's running product over the positions above each item is a window of judged.sql
(err_stop, ideal_err_stop), bound to one gmax per call; every plan that reads judged must give
the same numbers, a gmax must mean what the definition says, and a spelling the parser does not
understand must be refused in words rather than read as another metric. The values themselves
are hand-derived in fixtures/err_validation.yaml and gain_variants_validation.yaml.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics.catalog.metrics import parse_request
from tests.test_plans import tied_data

CASCADE = [f"{name}@{k}" for name in ("err", "nerr") for k in (1, 2, 5, 20)] + ["err", "nerr"]


@pytest.mark.parametrize("gmax", ["", "(gmax=query)", "(gmax=2.5)"])
@pytest.mark.parametrize("ties", ["id", "id_text"])
def test_every_plan_gives_the_window_plan_s_numbers(
    gmax: str, ties: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB's own plans (top-k lists; the curve plan's lists at 8 or more cutoffs) against
    the portable window plan, per user and group, on data full of ties and graded truth."""
    recs, truth = tied_data(21)
    labels = [label.replace("@", f"{gmax}@") if "@" in label else label + gmax for label in CASCADE]
    curve = [f"err{gmax}@{k}" for k in range(1, 11)]
    kwargs = {"group_by": ["segment"], "ties": ties}
    fast = sqlmetrics.evaluate(recs, truth, labels, per_user=True, **kwargs)
    fast_curve = sqlmetrics.evaluate(recs, truth, curve, **kwargs)
    monkeypatch.setattr("sqlmetrics.compose.plan.TOP_K_DIALECTS", frozenset())
    portable = sqlmetrics.evaluate(recs, truth, labels, per_user=True, **kwargs)
    pd.testing.assert_frame_equal(fast, portable, check_exact=False, rtol=0, atol=1e-12)
    windows = sqlmetrics.evaluate(recs, truth, curve, **kwargs)
    pd.testing.assert_frame_equal(fast_curve, windows, check_exact=False, rtol=0, atol=1e-12)
    assert (portable[labels[0]] > 0).any() and (portable[labels[0]] < 1).any()


def test_gmax_is_what_the_stop_probability_reaches_1_at() -> None:
    """One relevant item of grade 2 at position 1: R = (2^2 - 1) / 2^gmax, so err is 3/16 with
    gdeval's gmax 4, 3/4 with gmax 2 (or the user's largest relevance), and a grade above gmax
    counts as gmax: (2^1 - 1) / 2^1 = 1/2 with gmax 1. nerr is 1 whatever gmax: the list is
    ideal."""
    recs = pd.DataFrame({"user_id": [1, 1], "item_id": [1, 2], "score": [2.0, 1.0]})
    truth = pd.DataFrame({"user_id": [1], "item_id": [1], "relevance": [2]})
    expected = {
        "err@5": 3 / 16, "err(gmax=2)@5": 3 / 4, "ERR(gmax=query)@5": 3 / 4,
        "err(gmax=1)@5": 1 / 2, "nerr(gmax=1)@5": 1.0,
    }  # fmt: skip
    for label, value in expected.items():
        frame = sqlmetrics.evaluate(recs, truth, [label])
        assert frame[label].iloc[0] == pytest.approx(value, abs=1e-15), label


def test_two_gmax_in_one_call_are_refused() -> None:
    recs = pd.DataFrame({"user_id": [1], "item_id": [1], "score": [1.0]})
    truth = pd.DataFrame({"user_id": [1], "item_id": [1], "relevance": [2]})
    with pytest.raises(sqlmetrics.SqlmetricsError, match="ask for different gmax"):
        sqlmetrics.evaluate(recs, truth, ["err@5", "nerr(gmax=3)@5"])
    # the default written out is the same gmax
    sqlmetrics.evaluate(recs, truth, ["err@5", "nerr(gmax=4)@5"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("err(gmax=0)@10", r"gmax in 'err\(gmax=0\)@10' must be a number above 0"),
        ("err(gmax=max)@10", r"must be a number above 0 .* or 'query'"),
        ("err(k=3)@10", r"err has no parameter 'k' \(it takes gmax\)"),
        ("rbp(rel=1)", "what counts as relevant is the threshold option"),
        ("ndcg(gmax=3)@10", r"ndcg has no parameter 'gmax' \(it takes none\)"),
        ("rbp(p=0.8)@0.5", "gives rbp's p twice"),
        ("err(gmax=3, gmax=4)@10", "gives gmax twice"),
        ("err(gmax)@10", "each parameter is name=value"),
        ("err(gmax=3)(x=1)@10", "in one pair of parentheses"),
        ("rbp(p=1.5)", "from 0 to below 1"),
    ],
)
def test_a_parameter_that_means_nothing_is_refused(text: str, message: str) -> None:
    with pytest.raises(sqlmetrics.SqlmetricsError, match=message):
        parse_request(text)


def test_ir_measures_spellings_read_as_the_levels_they_name() -> None:
    """RBP(p=0.8) is rbp@0.8 (ir_measures' default persistence is 0.8, trec_eval's 0.9: the
    parenthesised form says which); SDCG is ndcg_ideal_k's alias; the label is kept."""
    spelled = parse_request("RBP(p=0.8)")
    read = (spelled.metric.name, spelled.score_threshold, spelled.label)
    assert read == ("rbp", 0.8, "RBP(p=0.8)")
    assert parse_request("rbp_resid(p=.5)").score_threshold == 0.5
    assert parse_request("rbp").score_threshold == 0.9
    assert parse_request("SDCG@10").metric.name == "ndcg_ideal_k"
    asked = parse_request("nERR(gmax=query)@10")
    assert (asked.metric.name, asked.k, asked.parameter("gmax")) == ("nerr", 10, "query")
    assert parse_request("err@10").parameter("gmax") == 4.0


@pytest.mark.parametrize("gmax", ["", "(gmax=query)"])
def test_err_and_nerr_match_ntcireval_per_user(gmax: str) -> None:
    """pyNTCIREVAL (the Python NTCIREVAL, Sakai's nERR) stops at a level with probability
    grade / (largest grade + 1); with grade 2^level - 1 for the levels 1..gmax that is
    Chapelle's (2^g - 1) / 2^gmax, so its ERR and nERR (the ideal cut at k too) are err and
    nerr, per user on random graded lists (distinct scores; levels up to 4)."""
    ntcireval = pytest.importorskip("pyNTCIREVAL.metrics")
    rng = np.random.default_rng(7)
    recs, truth = [], []
    for user in range(60):
        items = rng.choice(40, size=int(rng.integers(1, 15)), replace=False)
        scores = rng.permutation(len(items))
        recs += [(user, int(item), float(score)) for item, score in zip(items, scores, strict=True)]
        judged = rng.choice(40, size=int(rng.integers(1, 12)), replace=False)
        truth += [(user, int(item), int(rng.integers(0, 5))) for item in judged]
    recommendations = pd.DataFrame(recs, columns=["user_id", "item_id", "score"])
    interactions = pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"])
    labels = [f"{name}{gmax}@{k}" for name in ("err", "nerr") for k in (3, 10)]
    frame = sqlmetrics.evaluate(recommendations, interactions, labels, per_user=True)
    assert len(frame) > 40
    for _, row in frame.iterrows():
        rels = {item: rel for user, item, rel in truth if user == row["user_id"]}
        listed = sorted(((s, i) for u, i, s in recs if u == row["user_id"]), reverse=True)
        ranked = [(item, rels.get(item)) for _, item in listed]
        top = max(rels.values()) if gmax else 4
        grades = [2**level - 1 for level in range(1, top + 1)]
        levels = [sum(1 for rel in rels.values() if rel == level) for level in range(top + 1)]
        for k in (3, 10):
            err = ntcireval.ERR(levels, grades)
            err.cutoff = k
            nerr = ntcireval.nERR(levels, grades, k)
            assert row[f"err{gmax}@{k}"] == pytest.approx(err.compute(ranked), abs=1e-12)
            assert row[f"nerr{gmax}@{k}"] == pytest.approx(nerr.compute(ranked), abs=1e-12)
