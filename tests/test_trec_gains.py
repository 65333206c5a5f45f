"""Custom gains of the relevance levels: trec_eval's ``-m ndcg.1=3,2=9,4=4.5`` (and dcg,
ideal_dcg) and ir_measures' ``nDCG(gains={1:3,2:9})@10``.

Why: trec_eval's own test (out.test.meas_params) asks for ndcg with custom gains, and the
report promises its lines. ir_measures computes nDCG(gains=...) by rewriting the qrels' rel
through the gains for pytrec_eval; for gains of at least 0 that is trec_eval's definition, so
pytrec_eval on rewritten qrels is an independent peer on random data. trec_eval's own outputs
are in tests/test_trec_eval_files.py; the hand-derived values in
fixtures/ndcg_gains_validation.yaml.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import sqlmetrics
from sqlmetrics.catalog.metrics import parse_request
from sqlmetrics.cli import main
from sqlmetrics.trec import expand_measures, read_qrels, read_run, trec_eval
from tests.test_trec import Qrels, random_data, write_trec

FILES = Path(__file__).parent / "trec_eval_files"


def _rewritten(qrels: Qrels, gains: dict[int, int]) -> Qrels:
    """ir_measures' route: each judged rel replaced by its gain (a rel < 0 stays unjudged)."""
    return {
        qid: {doc: gains.get(rel, rel) if rel >= 0 else rel for doc, rel in docs.items()}
        for qid, docs in qrels.items()
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_custom_gains_match_pytrec_eval_on_rewritten_qrels(tmp_path: Path, seed: int) -> None:
    import pytrec_eval

    run, qrels = random_data(seed)
    rng = random.Random(seed)
    # gains of at least 0 for the levels 0..3, one level left at its own value
    gains = {level: rng.randint(0, 9) for level in rng.sample(range(4), 3)}
    run_path, qrels_path = write_trec(tmp_path, run, qrels)
    pairs = ",".join(f"{level}={gain}" for level, gain in gains.items())
    report = trec_eval(run_path, qrels_path, [f"ndcg.{pairs}"], per_query=True, version=9)
    got = {qid: value for _, qid, value in report.itertuples(index=False)}
    evaluator = pytrec_eval.RelevanceEvaluator(_rewritten(qrels, gains), {"ndcg", "ndcg_cut.5"})
    want = evaluator.evaluate(run)
    judged = {qid for qid in run if qid in qrels}
    assert {qid for qid in got if qid != "all"} == judged
    assert all(abs(got[qid] - want[qid]["ndcg"]) < 1e-9 for qid in judged)
    # the ir_measures spelling, at a cutoff, through evaluate over the same files
    spelled = "nDCG(gains={" + ",".join(f"{lv}:{g}" for lv, g in gains.items()) + "})@5"
    frame = sqlmetrics.evaluate(
        read_run(run_path, single_precision=True),
        read_qrels(qrels_path),
        [spelled],
        profile="trec_eval_9",
        population="judged",
        per_user=True,
    )
    values = dict(zip(frame["user_id"].astype(str), frame[spelled], strict=True))
    # a query whose qrels lines all have a negative rel has no judgement evaluate can see
    # (trec_eval() prints its 0): pytrec_eval's 0 too
    assert all(abs(values.get(qid, 0.0) - want[qid]["ndcg_cut_5"]) < 1e-9 for qid in judged)


def test_the_first_parameters_of_a_measure_are_the_ones_read() -> None:
    """trec_eval reads a measure's first -m with parameters (-m P.5 -m P.10 prints P_5 alone;
    -m ndcg -m ndcg.1=3 prints ndcg_1=3 alone); a printed name adds its line."""
    labels = [label for _, label in expand_measures(["P.5", "P.10", "ndcg", "ndcg.1=3,2=9"])]
    assert labels == ["P_5", "ndcg_1=3,2=9"]
    assert [label for _, label in expand_measures(["P", "P.5"])] == ["P_5"]
    assert [label for _, label in expand_measures(["P_5", "P_10"])] == ["P_5", "P_10"]
    assert [label for _, label in expand_measures(["dcg.1=3", "ideal_dcg.1=3"])] == [
        "dcg_1=3",
        "ideal_dcg_1=3",
    ]


def test_the_cli_prints_trec_eval_s_gains_line(capsys: pytest.CaptureFixture[str]) -> None:
    """-m ndcg.1=3,2=9,4=4.5 kept whole by the CLI, printed as trec_eval's meas_params test."""
    want = [
        line
        for line in (FILES / "out.test.meas_params").read_text().splitlines()
        if line.startswith("ndcg_1=3,2=9,4=4.5 ")
    ]
    args = ["evaluate", str(FILES / "results.test"), str(FILES / "qrels.test")]
    args += ["--input-format", "trec", "--format", "trec", "--per-user", "-q"]
    assert main([*args, "-m", "ndcg.1=3,2=9,4=4.5"]) == 0
    assert capsys.readouterr().out.splitlines() == want


def test_two_gains_in_one_call_are_refused_and_separate_reports_differ() -> None:
    """One evaluate computes one ideal order; the report runs one per mapping."""
    run, qrels = FILES / "results.test", FILES / "qrels.rel_level"
    with pytest.raises(sqlmetrics.SqlmetricsError, match="ask for different gains"):
        sqlmetrics.evaluate(
            read_run(run), read_qrels(qrels), ["ndcg(gains={1:3})", "ndcg(gains={1:2})@10"]
        )
    report = trec_eval(run, qrels, ["ndcg.1=3,2=9,4=4.5", "dcg.4=1"])
    assert list(report["measure"]) == ["dcg_4=1", "ndcg_1=3,2=9,4=4.5"]
    # trec_eval 10 prints ndcg_1=3,2=9,4=4.5 0.3906 and dcg_4=1 16.0470 on these files (apart:
    # asked together its shared parameters are freed twice and it aborts)
    assert [f"{value:6.4f}" for value in report["value"]] == ["16.0470", "0.3906"]


@pytest.mark.parametrize(
    ("label", "message"),
    [
        ("ndcg(gains={1:3,1:4})", "give rel level 1 twice"),
        ("ndcg(gains={-1:3})", "-1 is not a rel level"),
        ("ndcg(gains=1:3)", "must be rel=gain pairs in braces"),
        ("ndcg(gains={1:inf})", "must be rel=gain pairs in braces"),
        ("map(gains={1:3})", "map has no parameter 'gains'"),
    ],
)
def test_malformed_gains_are_refused_with_the_reason(label: str, message: str) -> None:
    with pytest.raises(sqlmetrics.SqlmetricsError, match=message):
        parse_request(label)


def test_a_gain_for_level_0_counts_in_a_query_without_a_relevant_document(
    tmp_path: Path,
) -> None:
    """-c -m ndcg.0=1: query 2 is judged with rel 0 only; trec_eval 10 prints 1.0000, 0.6934
    and 0.8467. q1: list b (rel 0, gain 1), a (rel 1, gain 1): dcg 1 + 1/log2(3), the same as
    its ideal: 1. q2: x (not judged, 0), d, c (rel 0, gain 1 each): dcg 1/log2(3) + 1/2 =
    1.1309297536, ideal 1 + 1/log2(3) = 1.6309297536, 0.6934264036; mean 0.8467132018."""
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 b 0\n2 0 c 0\n2 0 d 0\n")
    (tmp_path / "run").write_text(
        "1 Q0 b 1 3 t\n1 Q0 a 2 2 t\n2 Q0 x 1 3 t\n2 Q0 d 2 2 t\n2 Q0 c 3 1 t\n"
    )
    report = trec_eval(
        tmp_path / "run", tmp_path / "qrels", ["ndcg.0=1"], per_query=True, complete=True
    )
    assert [f"{value:6.4f}" for value in report["value"]] == ["1.0000", "0.6934", "0.8467"]


@pytest.mark.parametrize("seed", [3, 4])
def test_ideal_walking_gains_match_pytrec_eval_on_rewritten_qrels(
    tmp_path: Path, seed: int
) -> None:
    """ndcg_rel, Rndcg and G with rel=gain pairs walk the list beside the ideal ordered by
    gain: pytrec_eval (9.0.8's code) on qrels rewritten through the gains computes the same
    where the gains are whole numbers, level 0 keeps 0 and every other level gains at least 1
    (so rel >= 1 still means a positive gain, which Rndcg's num_rel reads)."""
    import pytrec_eval

    run, qrels = random_data(seed)
    rng = random.Random(seed)
    gains = {level: rng.randint(1, 9) for level in rng.sample(range(1, 4), 2)}
    run_path, qrels_path = write_trec(tmp_path, run, qrels)
    pairs = ",".join(f"{level}={gain}" for level, gain in gains.items())
    names = {"ndcg_rel": "ndcg_rel", "Rndcg": "Rndcg", "G": "G"}
    asked = [f"{name}.{pairs}" for name in names]
    report = trec_eval(run_path, qrels_path, asked, per_query=True, version=9)
    evaluator = pytrec_eval.RelevanceEvaluator(_rewritten(qrels, gains), set(names))
    want = evaluator.evaluate(run)
    judged = {qid for qid in run if qid in qrels}
    got: dict[tuple[str, str], float] = {
        (label.split("_", 1)[0] if not label.startswith("ndcg_rel") else "ndcg_rel", qid): value
        for label, qid, value in report.itertuples(index=False)
        if qid != "all"
    }
    assert {qid for _, qid in got} == judged
    differing = [
        (name, qid, got[name, qid], want[qid][name])
        for name in names
        for qid in judged
        if abs(got[name, qid] - want[qid][name]) > 1e-9
    ]
    assert not differing, differing[:5]
