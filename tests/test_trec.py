"""TREC files in, trec_eval's report out (issue 22), against pytrec_eval on the same files.

Why: a trec_eval user compares sqlmetrics' lines with trec_eval's own. The random runs and
qrels here hold what trec_eval has conventions for: tied scores (broken by docno descending as
strcmp, "9" after "10"), unjudged documents, negative relevance, queries judged with nothing
relevant (0 in every mean), queries of the qrels without a run (-c) and of the run without
qrels (ignored), and graded relevance under -l. pytrec_eval (trec_eval 9) has no -c and no -M:
the -c mean is its per-query values summed over the qrels' queries, and -M is pytrec_eval on the
run truncated here in trec_eval's order.
"""

from __future__ import annotations

import gzip
import io
import math
import random
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

import sqlmetrics
from sqlmetrics.cli import main
from sqlmetrics.trec import expand_measures, read_qrels, read_run, trec_eval, trec_text

Run = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]

# pytrec_eval's measure parameters for the measures --format trec reports.
PYTREC = {
    "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "gm_bpref", "P.5,10,15,20,30,100,200,500,1000",
    "recall.5,10,30", "Rprec_mult", "11pt_avg", "ndcg", "ndcg_cut.5,10,30", "map_cut.5,10,30",
    "relative_P.5,10", "success.1,5,10", "set_P", "set_relative_P", "set_recall", "set_map",
    "set_F", "utility", "num_nonrel_judged_ret", "binG", "G", "ndcg_rel", "Rndcg", "infAP",
}  # fmt: skip
OURS = [
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "recall_5", "recall_10", "recall_30", "infAP",
    "gm_bpref",
    "Rprec_mult", "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg",
    "ndcg_cut.5", "ndcg_cut_10", "ndcg_cut_30", "map_cut_5", "map_cut_10", "map_cut_30",
    "relative_P_5", "relative_P_10", "success", "set_P", "set_relative_P", "set_recall",
    "set_map", "set_F", "num_nonrel_judged_ret",
]  # fmt: skip


def random_data(seed: int) -> tuple[Run, Qrels]:
    rng = random.Random(seed)
    docs = [str(n) for n in (1, 2, 9, 10, 11, 99, 100, 101)] + [f"d{n}" for n in range(12)]
    run: Run = {}
    qrels: Qrels = {}
    for q in range(14):
        qid = f"{q + 1:03d}" if q % 3 else str(q + 1)
        if q != 12:  # 13: in the qrels only (-c counts it as 0)
            picked = rng.sample(docs, rng.randint(1, len(docs)))
            run[qid] = {d: float(rng.choice([0.5, 1.0, 1.5, rng.random()])) for d in picked}
        if q != 13:  # 14: in the run only (ignored)
            judged = rng.sample(docs, rng.randint(1, 10))
            # query 5: judged, nothing relevant (0 in every mean)
            grades = [-1, 0] if q == 4 else [-1, 0, 0, 1, 2, 3]
            qrels[qid] = {d: rng.choice(grades) for d in judged}
    return run, qrels


def write_trec(tmp_path: Path, run: Run, qrels: Qrels, gz: bool = False) -> tuple[Path, Path]:
    run_lines = [
        # the rank column is ignored: written backwards on purpose; whitespace varies
        f"{qid} Q0\t{doc}  {len(docs) - i} {score!r} tagA\n"
        for qid, docs in run.items()
        for i, (doc, score) in enumerate(docs.items())
    ]
    qrels_lines = [
        f"{qid} 0 {doc} {rel}\n" for qid, docs in qrels.items() for doc, rel in docs.items()
    ]
    run_path = tmp_path / ("run.txt.gz" if gz else "run.txt")
    qrels_path = tmp_path / "qrels.txt"
    if gz:
        with gzip.open(run_path, "wt") as handle:
            handle.writelines(run_lines)
    else:
        run_path.write_text("".join(run_lines))
    qrels_path.write_text("".join(qrels_lines))
    return run_path, qrels_path


def pytrec(run: Run, qrels: Qrels, level: int = 1) -> dict[str, dict[str, float]]:
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(qrels, PYTREC, relevance_level=level)
    return evaluator.evaluate(run)  # type: ignore[no-any-return]


def truncated(run: Run, n: int) -> Run:
    """trec_eval -M n: the first n in trec_eval's order (score desc, docno desc as strcmp)."""
    out: Run = {}
    for qid, docs in run.items():
        ordered = sorted(docs.items(), key=lambda d: (d[1], d[0].encode()), reverse=True)
        out[qid] = dict(ordered[:n])
    return out


def compare(
    got: dict[tuple[str, str], object],
    want: dict[str, dict[str, float]],
    queries: set[str],
    qrels: Qrels | None = None,
) -> list[str]:
    """Per query and the 'all' line over ``queries``, to 1e-9: the mean, the sum for num_*,
    for gm_map and gm_bpref exp of the mean of pytrec_eval's per-query logs (log 1e-5 for a
    query without a run, as trec_eval -c); with ``qrels`` (-c) num_rel is every qrels line with
    rel > 0."""
    problems = []
    labels = {label for label, qid in got if qid == "all"} - {"runid", "num_q"}
    assert labels, "nothing compared"
    per_query = any(qid != "all" for _, qid in got)
    for label in sorted(labels):
        for qid in sorted(want) if per_query and not label.startswith("gm_") else []:
            value = got.get((label, qid))
            if value is None or abs(float(value) - want[qid][label]) > 1e-9:  # type: ignore[arg-type]
                problems.append(f"{label} {qid}: {value} vs {want[qid][label]}")
        if label.startswith("gm_"):
            logs = [want[q][label] if q in want else math.log(1e-5) for q in queries]
            expected = math.exp(math.fsum(logs) / len(queries))
        elif label == "num_rel" and qrels is not None:
            expected = sum(rel > 0 for docs in qrels.values() for rel in docs.values())
        else:
            total = math.fsum(want.get(qid, {}).get(label, 0.0) for qid in queries)
            expected = total if label.startswith("num_") else total / len(queries)
        if abs(float(got[(label, "all")]) - expected) > 1e-9:  # type: ignore[arg-type]
            problems.append(f"{label} all: {got[(label, 'all')]} vs {expected}")
    return problems


def as_dict(frame: object) -> dict[tuple[str, str], object]:
    return {(m, q): v for m, q, v in frame.itertuples(index=False)}  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("level", [1, 2])
def test_per_query_and_means_match_pytrec_eval(tmp_path: Path, seed: int, level: int) -> None:
    run, qrels = random_data(seed)
    run_path, qrels_path = write_trec(tmp_path, run, qrels, gz=seed == 1)
    want = pytrec(run, qrels, level)
    # query 005, judged with nothing relevant: 0, but for what reads no relevance
    nonzero = {"num_q", "num_ret", "gm_map", "gm_bpref", "utility", "num_nonrel_judged_ret"}
    assert all(v == 0 for k, v in want["005"].items() if k not in nonzero), "query 005"
    assert want["005"]["utility"] == -want["005"]["num_ret"]  # not 0: population "judged"
    assert want["005"]["num_ret"] > 0 and want["005"]["gm_map"] == pytest.approx(math.log(1e-5))
    assert want["005"]["gm_bpref"] == pytest.approx(math.log(1e-5))
    assert "13" not in want and "014" not in want  # qrels only, run only
    got = as_dict(trec_eval(run_path, qrels_path, OURS, per_query=True, level=level, version=9))
    assert not compare(got, want, set(want))
    assert got[("num_q", "all")] == len(want)
    assert got[("runid", "all")] == "tagA"
    # the data must hold a tie that docno as text orders unlike docno as a number (9 vs 10)
    assert any(
        docs.get(a) is not None and docs.get(a) == docs.get(b)
        for docs in run.values()
        for a, b in (("9", "10"), ("99", "100"), ("9", "100"), ("2", "10"), ("1", "10"))
    )


@pytest.mark.parametrize("seed", [0, 3])
def test_complete_averages_over_every_query_of_the_qrels(tmp_path: Path, seed: int) -> None:
    """trec_eval -c: a query of the qrels without a run counts 0, a run-only query not at all."""
    run, qrels = random_data(seed)
    run_path, qrels_path = write_trec(tmp_path, run, qrels)
    want = pytrec(run, qrels)
    got = as_dict(trec_eval(run_path, qrels_path, OURS, complete=True, version=9))
    assert not compare(got, want, set(qrels), qrels)
    assert got[("num_q", "all")] == len(qrels) == len(want) + 1


@pytest.mark.parametrize("n", [1, 3])
def test_max_per_query_is_trec_eval_minus_M(tmp_path: Path, n: int) -> None:
    run, qrels = random_data(4)
    run_path, qrels_path = write_trec(tmp_path, run, qrels)
    want = pytrec(truncated(run, n), qrels)
    got = as_dict(trec_eval(run_path, qrels_path, OURS, per_query=True, max_per_query=n, version=9))
    assert not compare(got, want, set(want))
    whole = pytrec(run, qrels)
    assert any(whole[q]["set_recall"] != want[q]["set_recall"] for q in want), "-M changed nothing"


def sampled_pool(seed: int) -> tuple[Run, Qrels]:
    """A judged sample of a pool (infAP's setting): most qrels lines unjudged (rel -1 or -2),
    many retrieved documents outside the qrels, tied scores; query 004 only unjudged lines,
    query 005 judged with nothing relevant."""
    rng = random.Random(seed)
    docs = [str(n) for n in (1, 2, 9, 10, 11, 99, 100, 101)] + [f"d{n}" for n in range(22)]
    run: Run = {}
    qrels: Qrels = {}
    for q in range(10):
        qid = f"{q + 1:03d}"
        picked = rng.sample(docs, rng.randint(1, 25))
        run[qid] = {d: float(rng.choice([0.5, 1.0, 1.5, rng.random()])) for d in picked}
        grades = [-2, -1, -1] if q == 3 else [-1, 0] if q == 4 else [-2, -1, -1, 0, 0, 1, 2]
        qrels[qid] = {d: rng.choice(grades) for d in rng.sample(docs, rng.randint(1, 20))}
    return run, qrels


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize(("level", "complete"), [(1, False), (2, False), (1, True)])
def test_infap_matches_pytrec_eval_on_a_sampled_pool(
    tmp_path: Path, seed: int, level: int, complete: bool
) -> None:
    """infAP per query and its mean to 1e-9, with bpref and map beside it (which read the
    unjudged lines as before), under -l 2 and -c too."""
    run, qrels = sampled_pool(seed)
    run_path, qrels_path = write_trec(tmp_path, run, qrels)
    want = pytrec(run, qrels, level)
    assert want["004"]["infAP"] == 0 and want["005"]["infAP"] == 0
    # the data must hold what infAP weighs: a relevant document below an unjudged one
    assert any(0 < want[q]["infAP"] != want[q]["map"] for q in want)
    measures = ["map", "bpref", "infAP", "P_10"]
    got = as_dict(
        trec_eval(run_path, qrels_path, measures, per_query=True, level=level, complete=complete)
    )
    assert not compare(got, want, set(qrels) if complete else set(want))


def test_infap_changes_no_other_measure(tmp_path: Path) -> None:
    """Asking infAP beside every other measure leaves each of their lines as it is without it
    (the qrels' negative lines are read by infAP alone)."""
    run, qrels = sampled_pool(5)
    run_path, qrels_path = write_trec(tmp_path, run, qrels)
    others = [name for name in OURS if name != "infAP"]
    alone = trec_text(trec_eval(run_path, qrels_path, others, per_query=True))
    beside = trec_eval(run_path, qrels_path, OURS, per_query=True)
    assert trec_text(beside[beside["measure"] != "infAP"]) == alone


def test_evaluate_reads_negative_relevance_only_for_infap() -> None:
    """A negative relevance is refused unless infap is asked; with infap every other metric
    gives what it gives on the interactions without those rows."""
    import pandas as pd

    run, qrels = sampled_pool(6)
    recs = pd.DataFrame(
        [(q, d, s) for q, docs in run.items() for d, s in docs.items()],
        columns=["user_id", "item_id", "score"],
    )
    inter = pd.DataFrame(
        [(q, d, r) for q, docs in qrels.items() for d, r in docs.items()],
        columns=["user_id", "item_id", "relevance"],
    )
    others = ["map", "bpref", "ndcg@5", "num_nonrel_judged_ret", "precision@3"]
    with pytest.raises(sqlmetrics.SqlmetricsError, match="negative only for infap"):
        sqlmetrics.evaluate(recs, inter, others, profile="trec_eval")
    for population in ("all", "judged", "all_judged"):
        options = {"profile": "trec_eval", "per_user": True, "population": population}
        beside = sqlmetrics.evaluate(recs, inter, [*others, "infAP"], **options)
        judged = inter[inter["relevance"] >= 0]
        alone = sqlmetrics.evaluate(recs, judged, others, **options)
        pd.testing.assert_frame_equal(beside.drop(columns=["infAP"]), alone)
        want = pytrec(run, qrels)
        for user, value in zip(beside["user_id"], beside["infAP"], strict=True):
            assert abs(value - want[user]["infAP"]) < 1e-9, (population, user)


def test_evaluate_reads_trec_files(tmp_path: Path) -> None:
    """The Python API: read_run / read_qrels as evaluate's inputs, qids and docnos as text
    ("010" is not 10), the profile giving trec_eval's values for the queries it scores."""
    run, qrels = random_data(6)
    run_path, qrels_path = write_trec(tmp_path, run, qrels)
    frame = sqlmetrics.evaluate(
        read_run(run_path), read_qrels(qrels_path), ["map", "P_5", "ndcg"], profile="trec_eval",
        per_user=True,
    )  # fmt: skip
    want = pytrec(run, qrels)
    assert set(frame["user_id"]) >= {"002", "003"}
    for user, ap, p5, ndcg in frame.itertuples(index=False):
        if user in want:
            assert abs(ap - want[user]["map"]) < 1e-9 and abs(p5 - want[user]["P_5"]) < 1e-9
            assert abs(ndcg - want[user]["ndcg"]) < 1e-9


def test_trec_files_are_refused_outside_duckdb(tmp_path: Path) -> None:
    import sqlite3

    run_path, qrels_path = write_trec(tmp_path, *random_data(7))
    with pytest.raises(sqlmetrics.SqlmetricsError, match="TREC files are read by DuckDB"):
        sqlmetrics.evaluate(
            read_run(run_path),
            read_qrels(qrels_path),
            ["map"],
            connection=sqlite3.connect(":memory:"),
            dialect="sqlite",
        )


def test_report_layout_is_trec_eval_s(tmp_path: Path) -> None:
    """``%-22s\\t%s\\t%6.4f``; integers as integers; per-query rows first, queries in strcmp
    order, measures in trec_eval's order whatever order they were asked in."""
    (tmp_path / "run").write_text("2 Q0 a 1 3 r1\n2 Q0 b 2 2 r1\n10 Q0 a 1 1 r1\n")
    (tmp_path / "qrels").write_text("2 0 b 1\n10 0 a 1\n10 0 c 1\n")
    frame = trec_eval(tmp_path / "run", tmp_path / "qrels", ["P_5", "num_q", "map"], per_query=True)
    assert trec_text(frame) == (
        "map                   \t10\t0.5000\n"
        "P_5                   \t10\t0.2000\n"
        "map                   \t2\t0.5000\n"
        "P_5                   \t2\t0.2000\n"
        "num_q                 \tall\t2\n"
        "map                   \tall\t0.5000\n"
        "P_5                   \tall\t0.2000\n"
    )  # 10: a at 1 of 2 relevant, AP 1/2; 2: b at 2, AP 1/2; P_5: 1/5 each


@pytest.mark.parametrize(
    ("level", "complete", "queries"), [(1, False, 1), (1, True, 1), (2, True, 3)]
)
def test_a_report_is_one_query_per_threshold(
    tmp_path: Path, level: int, complete: bool, queries: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Graded and other measures in one evaluate (one query) at -l 1, where both read rel > 0;
    at -l 2 the graded ones read rel > 0 apart, and -c's num_rel too (m_num_rel.c). The
    values: query 1 lists a (rel 2) then b (rel 1); at -l 1 both are relevant, map 1,
    num_rel 2; at -l 2 only a, map 1, num_rel 1 per query but 2 under -c; ndcg 1 (the
    ideal order) either way."""
    import sqlmetrics.run

    (tmp_path / "run").write_text("1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n")
    (tmp_path / "qrels").write_text("1 0 a 2\n1 0 b 1\n")
    calls = []
    bound_call = sqlmetrics.run.bound_call

    def counted(*arguments: object, **keywords: object) -> object:
        calls.append(arguments[2])
        return bound_call(*arguments, **keywords)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlmetrics.run, "bound_call", counted)
    run, qrels = tmp_path / "run", tmp_path / "qrels"
    report = as_dict(
        trec_eval(run, qrels, ["map", "ndcg", "num_rel"], level=level, complete=complete)
    )
    assert len(calls) == queries, calls
    assert report[("map", "all")] == 1.0 and report[("ndcg", "all")] == 1.0
    assert report[("num_rel", "all")] == 2


def test_measure_names_expand_as_trec_eval_s() -> None:
    assert [label for _, label in expand_measures(["success", "map"])] == [
        "map", "success_1", "success_5", "success_10",
    ]  # fmt: skip
    assert [label for _, label in expand_measures(["P.5", "P_5"])] == ["P_5"]
    assert [label for _, label in expand_measures(["gm_bpref", "infAP", "recall_5"])] == [
        "recall_5", "infAP", "gm_bpref",
    ]  # fmt: skip
    with pytest.raises(sqlmetrics.SqlmetricsError, match="relstring is not in sqlmetrics"):
        expand_measures(["relstring"])
    assert [label for _, label in expand_measures(["gm_bpref", "bpref", "map"])] == [
        "map", "bpref", "gm_bpref",
    ]  # fmt: skip
    with pytest.raises(sqlmetrics.SqlmetricsError, match="unknown metric 'set_P_5'"):
        expand_measures(["set_P_5"])


# --- malformed files -----------------------------------------------------------------------


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("1 Q0 d1 1 0.5\n", "5 field(s) where `qid Q0 docno rank score tag` has 6"),
        ("1 Q0 d1 1 high tag\n", "the score is not a number"),
    ],
)
def test_a_malformed_run_line_is_named(tmp_path: Path, line: str, why: str) -> None:
    (tmp_path / "run").write_text("1 Q0 d0 1 0.9 t\n\n" + line)
    (tmp_path / "qrels").write_text("1 0 d1 1\n")
    with pytest.raises(sqlmetrics.SqlmetricsError) as error:
        trec_eval(tmp_path / "run", tmp_path / "qrels")
    assert f"line 3: {why}" in str(error.value) and "Fix or remove the line" in str(error.value)
    code, _, err = cli(
        "evaluate", str(tmp_path / "run"), str(tmp_path / "qrels"), "--input-format", "trec",
        "-m", "map",
    )  # fmt: skip
    assert code == 2 and f"line 3: {why}" in err and err.count("\n") == 1, err


def test_a_malformed_qrels_line_and_swapped_files(tmp_path: Path) -> None:
    (tmp_path / "run").write_text("1 Q0 d0 1 0.9 t\n")
    (tmp_path / "qrels").write_text("1 0 d1 1\n1 0 d2 yes\n")
    with pytest.raises(sqlmetrics.SqlmetricsError, match="line 2: the rel is not a number"):
        trec_eval(tmp_path / "run", tmp_path / "qrels")
    with pytest.raises(sqlmetrics.SqlmetricsError, match=r"line 1: 4 field.*swapped"):
        trec_eval(tmp_path / "qrels", tmp_path / "run")


@pytest.mark.parametrize("level", [0, -1, 1.5, True])
def test_level_is_a_whole_number_of_at_least_1(tmp_path: Path, level: object) -> None:
    run_path, qrels_path = write_trec(tmp_path, *random_data(8))
    with pytest.raises(sqlmetrics.SqlmetricsError, match="at least 1"):
        trec_eval(run_path, qrels_path, level=level)  # type: ignore[arg-type]


def test_negative_relevance_is_judged_non_relevant(tmp_path: Path) -> None:
    """rel -1 reads as 0: not refused (as a negative relevance column is), not relevant, and
    no negative gain in ndcg (trec_eval's gains are the levels 0..max)."""
    (tmp_path / "run").write_text("1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n")
    (tmp_path / "qrels").write_text("1 0 a -1\n1 0 b 1\n")
    got = as_dict(trec_eval(tmp_path / "run", tmp_path / "qrels", ["map", "ndcg", "P_5"]))
    want = pytrec({"1": {"a": 3.0, "b": 2.0}}, {"1": {"a": -1, "b": 1}})
    assert not compare(got, want, {"1"})
    assert got[("map", "all")] == 0.5  # b at 2: 1/2


def test_bpref_reads_a_negative_rel_as_not_judged(tmp_path: Path) -> None:
    """bpref skips a document of rel < 0 (trec_eval: in the pool, not judged) as it skips one
    outside the qrels, and counts rel 0 as judged non-relevant: reading -1 as 0 would give
    another bpref, and the same everything else."""
    run = {"1": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    qrels = {"1": {"a": -1, "b": 1, "c": 0, "d": 1, "e": 0}}
    run_path, qrels_path = write_trec(tmp_path, run, qrels)
    measures = ["bpref", "gm_bpref", "map", "ndcg", "num_rel", "P_5"]
    got = as_dict(trec_eval(run_path, qrels_path, measures, per_query=True))
    want = pytrec(run, qrels)
    assert not compare(got, want, {"1"})
    # a skipped; b: 1; c judged non-relevant; d: 1 - min(1, 2) / min(2, 2); (1 + 1/2) / 2
    assert got[("bpref", "1")] == 0.75
    as_zero = pytrec(run, {"1": {**qrels["1"], "a": 0}})
    assert as_zero["1"]["bpref"] == 0.25  # a judged: b 1 - 1/2, d 1 - 2/2; 1/2 over 2
    assert all(as_zero["1"][m] == want["1"][m] for m in ("map", "ndcg", "num_rel", "P_5"))


def _bpref_cases(run: Run, qrels: Qrels) -> set[str]:
    """Which of bpref's branches the data reaches, walking each list in trec_eval's order:
    more judged non-relevant documents above a relevant one than R (min(n, R)), fewer judged
    non-relevant documents than R (min(N, R)), a rel < 0 document above a relevant one."""
    reached = set()
    for qid, docs in run.items():
        judged = qrels.get(qid, {})
        n_rel = sum(rel >= 1 for rel in judged.values())
        n_nonrel = sum(rel == 0 for rel in judged.values())
        seen, negative = 0, False
        for doc in sorted(docs, key=lambda d: (docs[d], d.encode()), reverse=True):
            rel = judged.get(doc)
            if rel is None or rel < 0:
                negative = negative or rel is not None
                continue
            if rel == 0:
                seen += 1
                continue
            reached |= {"n > R"} if seen > n_rel else set()
            reached |= {"N < R"} if seen > 0 and n_nonrel < n_rel else set()
            reached |= {"rel < 0 above"} if negative else set()
    return reached


def test_bpref_matches_pytrec_eval_on_every_branch(tmp_path: Path) -> None:
    run, qrels = random_data(3)
    assert _bpref_cases(run, qrels) == {"n > R", "N < R", "rel < 0 above"}
    run_path, qrels_path = write_trec(tmp_path, run, qrels)
    want = pytrec(run, qrels)
    got = as_dict(trec_eval(run_path, qrels_path, ["bpref", "gm_bpref"], per_query=True))
    assert not compare(got, want, set(want))
    assert len({value for (label, _), value in got.items() if label == "bpref"}) > 4


def test_cli_trec_format_prints_trec_eval_lines(tmp_path: Path) -> None:
    run, qrels = random_data(5)
    run_path, qrels_path = write_trec(tmp_path, run, qrels)
    code, out, err = cli(
        "evaluate", str(run_path), str(qrels_path), "--input-format", "trec", "--format", "trec",
        "--per-user", "--trec-level", "2", "--trec-complete", "--trec-max", "4", "-q",
        "--trec-version", "9",
    )  # fmt: skip
    assert code == 0, err
    frame = trec_eval(
        run_path, qrels_path, per_query=True, level=2, complete=True, max_per_query=4, version=9
    )
    assert out == trec_text(frame)
    assert out.splitlines()[-1].startswith("P_1000                \tall\t")
    # the values themselves: pytrec_eval on the truncated run, -l2, mean over the qrels' queries
    want = pytrec(truncated(run, 4), qrels, 2)
    got = {
        (m, q): float(v)
        for m, q, v in (line.split("\t") for line in out.splitlines())
        if m.strip() != "runid"
    }
    shown = ("runid", "num_q", "gm_map")  # gm_map has no per-query line in trec_eval
    labels = [label for _, label in expand_measures(None) if label not in shown]
    for label in labels:
        for qid in want:
            assert abs(got[(f"{label:<22}", qid)] - want[qid][label]) < 5e-5, (label, qid)


def test_cli_refuses_trec_options_without_trec_files(tmp_path: Path) -> None:
    code, _, err = cli("evaluate", "a.parquet", "b.parquet", "--format", "trec", "-q")
    assert code == 2 and "--input-format trec" in err, err
    code, _, err = cli("evaluate", "a.parquet", "b.parquet", "-m", "map", "--trec-complete", "-q")
    assert code == 2 and "--input-format trec" in err, err


# trec_eval names evaluate takes under the trec_eval profile, each pytrec_eval's key.
EVALUATED = {
    "num_ret": "num_ret", "num_rel": "num_rel", "num_rel_ret": "num_rel_ret", "map": "map",
    "gm_map": "gm_map", "Rprec": "Rprec", "bpref": "bpref", "recip_rank": "recip_rank",
    "iprec_at_recall_0.00": "iprec_at_recall_0.00", "iprec_at_recall_0.10": "iprec_at_recall_0.10",
    "P_5": "P_5", "P_30": "P_30", "recall_10": "recall_10", "gm_bpref": "gm_bpref",
    "Rprec_mult_0.20": "Rprec_mult_0.20", "Rprec_mult_2.00": "Rprec_mult_2.00",
    "11pt_avg": "11pt_avg", "ndcg_cut_10": "ndcg_cut_10", "map_cut_5": "map_cut_5",
    "relative_P_5": "relative_P_5", "success_1": "success_1", "set_P": "set_P",
    "set_relative_P": "set_relative_P", "set_recall": "set_recall", "set_F": "set_F",
    "num_nonrel_judged_ret": "num_nonrel_judged_ret", "set_map": "set_map", "utility": "utility",
}  # fmt: skip


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("population", ["judged", "all_judged"])
def test_evaluate_takes_trec_eval_s_populations(tmp_path: Path, seed: int, population: str) -> None:
    """evaluate itself, population="judged" (trec_eval's default) and "all_judged" (-c),
    against pytrec_eval per query and on the mean, to 1e-9: query 005 is judged with nothing
    relevant (0, num_ret its run length, the gm_ floor), query 13 has judgements and no run
    (all_judged only: 0, num_rel its relevant documents, the gm_ floor); the mean is over
    them too."""
    run, qrels = random_data(seed)
    run_path, qrels_path = write_trec(tmp_path, run, qrels)
    want = pytrec(run, qrels)
    assert max(qrels["005"].values()) <= 0 and "005" in want
    labels = list(EVALUATED)
    options = {"profile": "trec_eval_9", "population": population}
    per_user = sqlmetrics.evaluate(
        read_run(run_path), read_qrels(qrels_path), labels, per_user=True, **options
    )
    summary = sqlmetrics.evaluate(read_run(run_path), read_qrels(qrels_path), labels, **options)
    # A query judged only by lines of a negative rel (003 in seed 1) is no judged user:
    # read_qrels leaves those lines out (trec_eval() counts it, as trec_eval does).
    unjudged = {qid for qid, docs in qrels.items() if max(docs.values()) < 0}
    assert unjudged == ({"003"} if seed == 1 else set())
    queries = (set(qrels) if population == "all_judged" else set(want)) - unjudged
    assert set(per_user["user_id"]) == queries
    assert int(summary["users"][0]) == len(queries)
    floor = math.log(1e-5)
    for label, key in EVALUATED.items():
        expected = {}
        for qid in queries:
            if qid in want:
                expected[qid] = want[qid][key]
            elif label == "num_rel":  # no run (-c): its relevant documents all the same
                expected[qid] = sum(rel > 0 for rel in qrels[qid].values())
            else:
                expected[qid] = floor if label.startswith("gm_") else 0.0
        got = dict(zip(per_user["user_id"], per_user[label], strict=True))
        for qid in sorted(queries):
            value = math.log(got[qid]) if label.startswith("gm_") else got[qid]
            assert abs(value - expected[qid]) < 1e-9, (label, qid, got[qid], expected[qid])
        values = list(expected.values())
        if label.startswith("gm_"):
            mean = math.exp(math.fsum(values) / len(values))
        elif label.startswith("num_"):
            mean = math.fsum(values)
        else:
            mean = math.fsum(values) / len(values)
        assert abs(float(summary[label][0]) - mean) < 1e-9, (label, summary[label][0], mean)


@pytest.mark.parametrize(
    "name",
    [
        "trec_measures",
        "trec_levels",
        "trec_bpref",
        "trec_set_map_utility",
        "trec_bin_g",
        "trec_ideal_order",
        "trec_infap",
    ],
)
def test_trec_fixtures_match_pytrec_eval(name: str) -> None:
    """The fixtures' hand-derived means, from pytrec_eval's per-query values over the
    fixture's population (the users with a relevant interaction: 1, 2, 3, and 5 in
    trec_bpref) as trec_eval -c: user 3 has no run, so 0 (log 1e-5 for gm_map and gm_bpref),
    and num_rel counts its relevant item."""
    import yaml

    case = yaml.safe_load((Path(__file__).parent.parent / f"fixtures/{name}.yaml").read_text())
    run: Run = {}
    for row in case["given"]["recommendations"]:
        run.setdefault(str(row["user_id"]), {})[str(row["item_id"])] = row["score"]
    qrels: Qrels = {}
    for row in case["given"]["interactions"]:
        qrels.setdefault(str(row["user_id"]), {})[str(row["item_id"])] = row["relevance"]
    want = pytrec(run, qrels)
    population = sorted({user for user, docs in qrels.items() if max(docs.values()) > 0})
    assert population == (
        ["1", "2", "3", "5"] if name in ("trec_bpref", "trec_infap") else ["1", "2", "3"]
    )
    keys = {  # sqlmetrics' name -> pytrec_eval's
        "infap": "infAP",
        "iprec_11pt_avg_trec9": "11pt_avg",
        "bin_g": "binG",
        "normalized_gain": "G",
        "rndcg": "Rndcg",
    }
    for label, expected in case["expect"][0].items():
        # trec_eval 10's 11pt_avg and ideal_dcg: pytrec_eval computes 9.0.8's measures
        if label in ("users", "11pt_avg", "iprec_11pt_avg", "ideal_dcg"):
            continue
        values = [want.get(q, {}).get(keys.get(label, label)) for q in population]
        assert values[0] is not None, label
        if label.startswith("gm_"):
            logs = [math.log(1e-5) if v is None else v for v in values]
            got = math.exp(math.fsum(logs) / len(population))
        elif label == "num_rel":  # trec_eval -c (m_num_rel.c): every qrels line with rel > 0
            got = sum(rel > 0 for q in population for rel in qrels[q].values())
        else:
            total = math.fsum(0.0 if v is None else v for v in values)
            got = total if label.startswith("num_") else total / len(population)
        assert abs(got - expected) < 1e-12, (label, got, expected)


@pytest.mark.parametrize("name", ["population_judged", "population_all_judged"])
def test_population_fixtures_match_pytrec_eval(name: str) -> None:
    """The hand-derived means of the population fixtures, from pytrec_eval's per-query values:
    its own queries (run and qrels: users 1, 2) for judged; every query of the qrels for
    all_judged (-c), a query without a run 0 (log 1e-5 for gm_map), num_rel every qrels line
    with rel > 0."""
    import yaml

    case = yaml.safe_load((Path(__file__).parent.parent / f"fixtures/{name}.yaml").read_text())
    run: Run = {}
    for row in case["given"]["recommendations"]:
        run.setdefault(str(row["user_id"]), {})[str(row["item_id"])] = row["score"]
    qrels: Qrels = {}
    for row in case["given"]["interactions"]:
        qrels.setdefault(str(row["user_id"]), {})[str(row["item_id"])] = row["relevance"]
    want = pytrec(run, qrels)
    complete = case["options"]["population"] == "all_judged"
    queries = sorted(qrels) if complete else sorted(want)
    assert queries == (["1", "2", "4", "5"] if complete else ["1", "2"])
    keys = {
        "precision@2": "P_2", "recall@2": "recall_2", "ndcg@2": "ndcg_cut_2",
        "mrr": "recip_rank", "r_precision": "Rprec",
    }  # fmt: skip
    extra = pytrec_eval_cut_2(run, qrels)
    expect = case["expect"][0]
    assert expect["users"] == len(queries)
    for label, expected in expect.items():
        if label == "users":
            continue
        key = keys.get(label, label)
        values = [extra.get(q, {}).get(key, want.get(q, {}).get(key)) for q in queries]
        if label.startswith("gm_"):
            logs = [math.log(1e-5) if v is None else v for v in values]
            got = math.exp(math.fsum(logs) / len(queries))
        elif label == "num_rel" and complete:
            got = sum(rel > 0 for q in queries for rel in qrels[q].values())
        else:
            total = math.fsum(0.0 if v is None else v for v in values)
            got = total if label.startswith("num_") else total / len(queries)
        assert abs(got - expected) < 1e-12, (label, got, expected)


def pytrec_eval_cut_2(run: Run, qrels: Qrels) -> dict[str, dict[str, float]]:
    """pytrec_eval's P, recall and ndcg_cut at 2 (not among PYTREC's cutoffs)."""
    import pytrec_eval

    measures = {"P.2", "recall.2", "ndcg_cut.2"}
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)  # type: ignore[no-any-return]


# trec_eval 10.0's -m all_trec (measures.c, trec_names), as trec_eval lists it.
ALL_TREC = [
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid",
    "infAP", "gm_bpref", "utility",
    "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel",
    "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map", "set_F",
    "num_nonrel_judged_ret",
]  # fmt: skip


def test_the_trec_eval_table_covers_all_trec_and_tells_the_truth() -> None:
    """docs/profiles.md's table: every measure of all_trec; a computed one resolves to the
    metric it names under the profile, one not computed is refused with the reason (no
    'Did you mean' pointing at another quantity)."""
    from sqlmetrics.catalog.profiles import PROFILES, profile_requests
    from sqlmetrics.trec import TREC_TABLE

    assert [row[0] for row in TREC_TABLE[: len(ALL_TREC)]] == ALL_TREC
    for _, example, metric, _ in TREC_TABLE:
        if not example:
            continue
        if metric is None:
            with pytest.raises(sqlmetrics.SqlmetricsError, match="trec_eval's") as raised:
                profile_requests(PROFILES["trec_eval"], [example])
            assert "Did you mean" not in str(raised.value)
        else:
            [request] = profile_requests(PROFILES["trec_eval"], [example])
            assert request.metric.name == metric, example


def test_trec_files_without_the_option_get_a_hint_not_a_guess(tmp_path: Path) -> None:
    """Read as CSV they fail; the error says to add --input-format trec (never read as TREC
    silently)."""
    run_path, qrels_path = write_trec(tmp_path, *random_data(9))
    code, out, err = cli("evaluate", str(run_path), str(qrels_path), "-m", "map", "-q")
    assert code == 2 and not out, err
    assert "look like TREC files (run, qrels): add --input-format trec" in err
    assert err.count("\n") == 1 and ".. The inputs" not in err
