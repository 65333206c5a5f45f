"""trec_eval 10's new measures (rbp, rbp_resid, unj, dcg, ideal_dcg) and ir_measures' Judged
(judged_share), issue 42.

Why: these are the measures IR users ask for most after trec_eval 9's; the report must print
what trec_eval 10.0 prints, and rbp must agree with ranx where both define it (binary gain).
The values below are trec_eval 10.0's own output on issue 42's validation files
(fixtures/rbp_validation.yaml and gain_variants_validation.yaml derive each by hand); rbp's
from a build with m_rbp.c's two uninitialised variables set, as trec_eval's own test output
(out.test.aql) has it on graded qrels: the grades over the query's largest.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import sqlmetrics
from sqlmetrics.trec import trec_eval, trec_text

RUNS = {"q1": "d3 d9 d1 d2 d5 d4 d10 d7 d6 d11", "q2": "d4 d5 d1 d6 d2", "q3": "e2 e3 e1"}
QRELS = (
    "q1 0 d1 3\nq1 0 d2 0\nq1 0 d3 1\nq1 0 d4 2\nq1 0 d5 -1\nq1 0 d6 1\nq1 0 d7 0\nq1 0 d8 2\n"
    "q2 0 d1 1\nq2 0 d2 1\nq2 0 d3 0\nq3 0 e1 2\nq3 0 e2 0\nq3 0 e3 0\n"
)


def write(tmp_path: Path) -> tuple[Path, Path]:
    lines = [
        f"{qid} Q0 {doc} {i + 1} {len(docs.split()) - i} run\n"
        for qid, docs in RUNS.items()
        for i, doc in enumerate(docs.split())
    ]
    (tmp_path / "run").write_text("".join(lines))
    (tmp_path / "qrels").write_text(QRELS)
    return tmp_path / "run", tmp_path / "qrels"


def test_the_report_prints_trec_eval_10_s_lines(tmp_path: Path) -> None:
    """rbp: grades over the query's largest (3, 1, 2): 0.1 (1 + 3 x .9^2 + 2 x .9^5 + .9^8) / 3,
    0.1 (.9^2 + .9^4), 0.1 x 2 x .9^2 / 2;
    rbp_resid: .9^10 + 0.1 (.9 + .9^4 + .9^6 + .9^9) over q1's unjudged d9, d5 (rel -1),
    d10, d11; unj_5: q1 d9, d5 of 5; dcg and ideal_dcg: gain = rel over log2(i + 1)."""
    run, qrels = write(tmp_path)
    text = trec_text(
        trec_eval(run, qrels, ["rbp", "rbp_resid", "unj", "dcg", "ideal_dcg"], per_query=True)
    )
    assert text == (
        "dcg                   \tq1\t3.5134\nideal_dcg             \tq1\t6.0794\n"
        "rbp                   \tq1\t0.1680\nrbp_resid             \tq1\t0.5962\n"
        "unj_5                 \tq1\t0.4000\nunj_10                \tq1\t0.4000\n"
        "unj_20                \tq1\t0.2000\n"
        "dcg                   \tq2\t0.8869\nideal_dcg             \tq2\t1.6309\n"
        "rbp                   \tq2\t0.1466\nrbp_resid             \tq2\t0.8534\n"
        "unj_5                 \tq2\t0.6000\nunj_10                \tq2\t0.3000\n"
        "unj_20                \tq2\t0.1500\n"
        "dcg                   \tq3\t1.0000\nideal_dcg             \tq3\t2.0000\n"
        "rbp                   \tq3\t0.0810\nrbp_resid             \tq3\t0.0000\n"
        "unj_5                 \tq3\t0.0000\nunj_10                \tq3\t0.0000\n"
        "unj_20                \tq3\t0.0000\n"
        "dcg                   \tall\t1.8001\nideal_dcg             \tall\t3.2368\n"
        "rbp                   \tall\t0.1319\nrbp_resid             \tall\t0.4832\n"
        "unj_5                 \tall\t0.3333\nunj_10                \tall\t0.2333\n"
        "unj_20                \tall\t0.1167\n"
    )


def test_judged_at_k_counts_any_judgement(tmp_path: Path) -> None:
    """ir_measures' Judged@5 on the same files: 0.8 (d3, d1, d2, d5 at rel -1), 0.4, 1.0."""
    run, qrels = write(tmp_path)
    frame = sqlmetrics.evaluate(
        sqlmetrics.read_run(run), sqlmetrics.read_qrels(qrels), ["Judged@5"], per_user=True
    )
    assert dict(zip(frame["user_id"], frame["Judged@5"], strict=True)) == {
        "q1": 0.8, "q2": 0.4, "q3": 1.0,
    }  # fmt: skip


def test_trec_eval_9_has_none_of_them(tmp_path: Path) -> None:
    run, qrels = write(tmp_path)
    with pytest.raises(sqlmetrics.SqlmetricsError, match=r"measure of trec_eval 10\.0, not of 9"):
        trec_eval(run, qrels, ["rbp"], version=9)
    with pytest.raises(sqlmetrics.SqlmetricsError, match=r"trec_eval 10\.0, not 9\.0\.8"):
        sqlmetrics.evaluate(
            sqlmetrics.read_run(run), sqlmetrics.read_qrels(qrels), ["unj@5"],
            profile="trec_eval_9",
        )  # fmt: skip


@pytest.mark.parametrize("text", ["rbp@1", "rbp@1.5", "rbp_resid@2"])
def test_persistence_is_below_1(text: str) -> None:
    from sqlmetrics.catalog.metrics import parse_request

    with pytest.raises(sqlmetrics.SqlmetricsError, match="from 0 to below 1"):
        parse_request(text)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("graded", [False, True])
def test_rbp_matches_ranx(seed: int, graded: bool) -> None:
    """ranx multiplies p^(i - 1) by the grade: on 0/1 relevance it is rbp, on grades 1..3
    rbp_graded, and rbp_scaled is that over the user's largest grade (trec_eval 10's
    normalisation); per user to 1e-9, tie-free scores (ranx orders ties arbitrarily)."""
    import pandas as pd
    from ranx import Qrels, Run, evaluate

    rng = random.Random(seed)
    recs, inter = [], []
    for user in range(20):
        items = rng.sample(range(40), rng.randint(1, 25))
        scores = rng.sample(range(1000), len(items))
        recs += [(f"u{user}", f"i{item}", float(s)) for item, s in zip(items, scores, strict=True)]
        inter += [
            (f"u{user}", f"i{item}", rng.randint(1, 3) if graded else 1)
            for item in rng.sample(range(40), rng.randint(1, 8))
        ]
    name = "rbp_graded" if graded else "rbp"
    ours = [f"{name}@0.8", name, *(["rbp_scaled(p=0.8)"] if graded else [])]
    frame = sqlmetrics.evaluate(
        pd.DataFrame(recs, columns=["user_id", "item_id", "score"]),
        pd.DataFrame(inter, columns=["user_id", "item_id", "relevance"]),
        ours,
        per_user=True,
    )
    qrels = Qrels.from_dict(
        {u: {i: r for v, i, r in inter if v == u} for u in {row[0] for row in inter}}
    )
    run = Run.from_dict({u: {i: s for v, i, s in recs if v == u} for u in {row[0] for row in recs}})
    theirs = evaluate(qrels, run, ["rbp.8", "rbp.9"], return_mean=False, make_comparable=True)
    largest = {u: max(r for v, _, r in inter if v == u) for u in qrels.get_query_ids()}
    for label, key in zip(ours, ("rbp.8", "rbp.9", "rbp.8"), strict=False):
        got = dict(zip(frame["user_id"], frame[label], strict=True))
        want = dict(zip(qrels.get_query_ids(), theirs[key], strict=True))
        if label.startswith("rbp_scaled"):
            want = {u: value / largest[u] for u, value in want.items()}
        assert got.keys() == want.keys()
        assert all(abs(got[u] - want[u]) < 1e-9 for u in got), label
