"""trec_eval's own test files (tests/trec_eval_files, copied from its repository with NIST's
notice): each command of its `make quicktest` that sqlmetrics covers, run through
sqlmetrics.trec_eval(), must print trec_eval's output line for line, per-query lines included.

Why: the report promises trec_eval 10.0's lines in every mode (-q, -c, -M, -l, -m all_trec,
measure parameters) and 9.0.8's with version=9; these are the outputs trec_eval itself is
tested against, so a difference is a difference with trec_eval, not with a reading of its code.
Only the lines sqlmetrics refuses with a reason are left out of the comparison: relstring (a
string, not a number).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sqlmetrics.trec import expand_measures, trec_eval, trec_text

FILES = Path(__file__).parent / "trec_eval_files"

# -m all_trec (measures.c, trec_names) without relstring: 10.0's, and 9.0.8's (without unj,
# rbp and rbp_resid)
ALL_TREC = [
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "recall", "unj", "rbp", "rbp_resid", "infAP",
    "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
    "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P",
    "set_map", "set_F", "num_nonrel_judged_ret",
]  # fmt: skip
ALL_TREC_9 = [name for name in ALL_TREC if name not in ("unj", "rbp", "rbp_resid")]
# the Makefile's meas_params command
MEAS_PARAMS = [
    "iprec_at_recall..10,.20,.25,.75,.50", "P.5,7,3", "recall.20,2000",
    "Rprec_mult.5.0,0.2,0.35", "utility.2,-1,0,0", "11pt_avg..25,.5,.75",
    "ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23.4", "success.2,5,20",
]  # fmt: skip
REFUSED = ("relstring ", "relstring_")
# custom gains of ndcg_rel, Rndcg and G: a level-0 gain, negative gains, an unlisted level
# (trec_eval 10.0's outputs, README.md)
GAINS_QC = [f"{m}.0=1,1=3,3=-2,4=0,2=5" for m in ("ndcg_rel", "Rndcg", "G")]
GAINS_QL = [f"{m}.4=-1,3=7.5" for m in ("ndcg_rel", "Rndcg", "G")]
GAINS_NAN = [f"{m}.0=1,1=3,2=-1,3=0" for m in ("ndcg_rel", "Rndcg", "G")]

# (output, run, qrels, measures, trec_eval()'s options), as trec_eval's Makefile runs them
CASES: list[tuple[str, str, str, list[str] | None, dict[str, Any]]] = [
    ("out.test", "results.test", "qrels.test", None, {}),
    ("out.test", "results.test", "qrels.test.with-comments", None, {}),
    ("out.test.a", "results.test", "qrels.test", ALL_TREC, {}),
    ("out.test.aq", "results.test", "qrels.test", ALL_TREC, {"per_query": True}),
    (
        "out.test.aqc",
        "results.trunc",
        "qrels.test",
        ALL_TREC,
        {"per_query": True, "complete": True},
    ),
    (
        "out.test.aqcM",
        "results.trunc",
        "qrels.test",
        ALL_TREC,
        {"per_query": True, "complete": True, "max_per_query": 100},
    ),
    ("out.test.aql", "results.test", "qrels.rel_level", ALL_TREC, {"per_query": True, "level": 2}),
    ("out.test.meas_params", "results.test", "qrels.test", MEAS_PARAMS, {"per_query": True}),
    (
        "gains.out.qc",
        "results.trunc",
        "qrels.test",
        GAINS_QC,
        {"per_query": True, "complete": True},
    ),
    ("gains.out.ql", "results.test", "qrels.rel_level", GAINS_QL, {"per_query": True, "level": 2}),
    ("gains.out.nan", "results.gains", "qrels.gains", GAINS_NAN, {"per_query": True}),
    ("9.gains.out.nan", "results.gains", "qrels.gains", GAINS_NAN, {"per_query": True}),
    ("9.out.test.aq", "results.test", "qrels.test", ALL_TREC_9, {"per_query": True}),
    (
        "9.out.test.aqc",
        "results.trunc",
        "qrels.test",
        ALL_TREC_9,
        {"per_query": True, "complete": True},
    ),
    (
        "9.out.test.aqcM",
        "results.trunc",
        "qrels.test",
        ALL_TREC_9,
        {"per_query": True, "complete": True, "max_per_query": 100},
    ),
    (
        "9.out.test.aql",
        "results.test",
        "qrels.rel_level",
        ALL_TREC_9,
        {"per_query": True, "level": 2},
    ),
]


@pytest.mark.parametrize(
    ("output", "run", "qrels", "measures", "options"),
    CASES,
    ids=[f"{case[0]}-{case[2]}" for case in CASES],
)
def test_trec_eval_s_own_outputs_line_for_line(
    output: str, run: str, qrels: str, measures: list[str] | None, options: dict[str, Any]
) -> None:
    version = 9 if output.startswith("9.") else 10
    expected = [
        line
        for line in (FILES / output).read_text().splitlines(keepends=True)
        if not line.startswith(REFUSED)
    ]
    report = trec_eval(FILES / run, FILES / qrels, measures, version=version, **options)
    got = trec_text(report).splitlines(keepends=True)
    assert len(got) == len(expected)
    differing = [(want, have) for want, have in zip(expected, got, strict=True) if want != have]
    assert not differing, differing[:5]


# trec_eval()'s options as the command line spells them
FLAGS = {
    "per_query": ["--per-user"],
    "complete": ["--trec-complete"],
    "max_per_query": ["--trec-max"],
    "level": ["--trec-level"],
}


@pytest.mark.parametrize(
    ("output", "run", "qrels", "measures", "options"),
    CASES,
    ids=[f"{case[0]}-{case[2]}" for case in CASES],
)
def test_the_command_line_prints_trec_eval_s_own_outputs(
    output: str,
    run: str,
    qrels: str,
    measures: list[str] | None,
    options: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``sqlmetrics evaluate RUN QRELS --input-format trec --format trec`` with trec_eval's
    options: the same lines (the command line prints them without pandas)."""
    from sqlmetrics.cli import main

    expected = [
        line for line in (FILES / output).read_text().splitlines() if not line.startswith(REFUSED)
    ]
    args = ["evaluate", str(FILES / run), str(FILES / qrels), "--input-format", "trec"]
    args += ["--format", "trec", "-q", "--trec-version", "9" if output.startswith("9.") else "10"]
    for name, value in options.items():
        args += FLAGS[name] if value is True else [*FLAGS[name], str(value)]
    # -m all_trec as trec_eval's Makefile writes it; the meas_params command measure by measure
    for measure in ["all_trec"] if measures in (ALL_TREC, ALL_TREC_9) else measures or []:
        args += ["-m", measure]
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines() == expected


def test_trec_eval_s_nicknames_name_their_measures() -> None:
    """-m all_trec is trec_eval's list without relstring (and, under 9.0.8, without 10's
    unj, rbp and rbp_resid); official and set are its other nicknames (measures.c)."""
    assert expand_measures(["all_trec"]) == expand_measures(ALL_TREC)
    assert expand_measures(["all_trec"], version=9) == expand_measures(ALL_TREC_9, version=9)
    assert expand_measures(["official"]) == expand_measures(None)
    assert [label for _, label in expand_measures(["set"])] == [
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
        "set_relative_P", "set_recall", "set_map", "set_F",
    ]  # fmt: skip
    # a nickname and a measure's parameters: the parameters, as trec_eval
    assert [label for name, label in expand_measures(["all_trec", "P.5"]) if name == "P"] == ["P_5"]
