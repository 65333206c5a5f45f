"""TREC files read as trec_eval 10 reads them, every refusal naming the file and the line.

Why: a file trec_eval accepts must give trec_eval's numbers (whitespace anywhere, fields after
the tag, comments, a fractional rel read by atol), a file it refuses must be refused (a blank
or duplicate qrels line), and a file nobody can read must say what is wrong with which file
(not DuckDB's "CSV Error on Line: 1").
"""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path

import pytest

import sqlmetrics
from sqlmetrics.trec import read_qrels, read_run, trec_eval, trec_text


def as_dict(frame: object) -> dict[tuple[str, str], object]:
    return {(m, q): v for m, q, v in frame.itertuples(index=False)}  # type: ignore[attr-defined]


def test_a_fractional_rel_is_read_as_atol_reads_it_and_said(tmp_path: Path) -> None:
    """qrels a 0.5, b 1; run a 2.0, b 1.0. atol("0.5") is 0: one relevant document, b, at
    rank 2, so num_rel 1 and AP 1/2 (a cast rounding 0.5 to 1 would give num_rel 2, AP 1)."""
    (tmp_path / "run").write_text("1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n")
    (tmp_path / "qrels").write_text("1 0 a 0.5\n1 0 b 1\n1 0 c 0.0\n")
    frame = trec_eval(tmp_path / "run", tmp_path / "qrels", ["num_rel", "map"])
    got = as_dict(frame)
    assert got[("num_rel", "all")] == 1 and got[("map", "all")] == 0.5
    [note] = frame.attrs["notes"]
    assert "1 rel value(s) had a fraction (first at line 1: 0.5)" in note, note
    assert "0.5 -> 0" in note
    result = sqlmetrics.evaluate(
        read_run(tmp_path / "run"), read_qrels(tmp_path / "qrels"), ["map"], profile="trec_eval"
    )
    assert result["map"][0] == 0.5 and "had a fraction" in result.attrs["notes"][0]


@pytest.mark.parametrize(
    ("rel", "whole"), [("2.7", 2), ("-0.5", 0), (".5", 0), ("+3", 3), ("1.", 1), ("-1", -1)]
)
def test_rel_is_the_whole_part(tmp_path: Path, rel: str, whole: int) -> None:
    """num_rel counts the rels whose whole part is >= 1 (atol: 2.7 -> 2, .5 -> 0, 1. -> 1)."""
    (tmp_path / "run").write_text("1 Q0 a 1 2.0 t\n")
    (tmp_path / "qrels").write_text(f"1 0 a {rel}\n1 0 b 1\n")
    got = as_dict(trec_eval(tmp_path / "run", tmp_path / "qrels", ["num_rel"], complete=True))
    assert got[("num_rel", "all")] == 1 + (whole >= 1)


@pytest.mark.parametrize(
    ("qrels", "message"),
    [
        ("1 0 a 1\n1 0 b 0\n1 0 a 0\n", "lines 1 and 3 both judge document 'a' for query '1'"),
        ("1 0 a 1\n\n1 0 b 0\n", "line 2: a blank line, which trec_eval refuses in qrels"),
        ("1 0 a 1\n \t \n", "line 2: a blank line"),
        ("1 0 a 1\n1 0 b 1e3\n", "line 2: the rel is not a number"),
        ("1 0 a 1\n1 0 b 99999999999999999999\n", "line 2: the rel is out of range"),
        ("1 0 a 1 x\n", "line 1: 5 field(s) where `qid iter docno rel` has 4"),
        ("1 0 a 1\r\n1 0 b 1\n1 0 c x\r\n", "line 3: the rel is not a number"),
    ],
)
def test_qrels_trec_eval_refuses_are_refused_with_the_line(
    tmp_path: Path, qrels: str, message: str
) -> None:
    (tmp_path / "run").write_text("1 Q0 a 1 2.0 t\n")
    (tmp_path / "qrels").write_text(qrels)
    with pytest.raises(sqlmetrics.SqlmetricsError, match=r"TREC qrels file '.*qrels'") as error:
        trec_eval(tmp_path / "run", tmp_path / "qrels")
    assert message in str(error.value)


def test_runid_is_the_tag_of_the_last_line(tmp_path: Path) -> None:
    """trec_eval keeps the tag of the line it parsed last, not of the first (qid, docno)."""
    (tmp_path / "run").write_text("1 Q0 a 1 2.0 first\n2 Q0 b 1 1.0 middle\n1 Q0 c 2 1.0 last\n")
    (tmp_path / "qrels").write_text("1 0 a 1\n")
    assert (
        as_dict(trec_eval(tmp_path / "run", tmp_path / "qrels", ["runid"]))[("runid", "all")]
        == "last"
    )


def test_any_whitespace_separates_and_fields_after_the_tag_are_ignored(tmp_path: Path) -> None:
    """Tabs at either end, \\v and \\f between fields, a whitespace-only line holding a tab, \\r\\n
    line ends, a comment, fields after the tag: the same lines as the plain file."""
    plain = "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.5 t\n1 Q0 c 3 1.0 t\n2 Q0 a 1 1.0 t\n"
    odd = (
        "# a comment line\n"
        "\t1 Q0 a 1 2.0 t\t\n"
        "1\vQ0\fb 2 1.5 t extra fields 9\r\n"
        " \t \n"
        "  # an indented comment\n"
        "1 Q0 c 3 1.0 t\n2 Q0 a 1 1.0 t"
    )
    qrels_plain = "1 0 a 1\n1 0 c 2\n2 0 a 0\n"
    qrels_odd = "# judged by hand\n\t1 0 a 1\t\n1\v0 c 2\r\n2 0 a 0\n"
    for name, run, qrels in (("plain", plain, qrels_plain), ("odd", odd, qrels_odd)):
        (tmp_path / f"{name}.run").write_text(run)
        (tmp_path / f"{name}.qrels").write_text(qrels)
    texts = [
        trec_text(trec_eval(tmp_path / f"{n}.run", tmp_path / f"{n}.qrels", per_query=True))
        for n in ("plain", "odd")
    ]
    assert texts[0] == texts[1]
    assert "num_ret               \t1\t3\n" in texts[0]


PLAIN_RUN = "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.5 t\n1 Q0 c 3 1.0 t\n2 Q0 a 1 1.0 t\n"
PLAIN_QRELS = "1 0 a 1\n1 0 c 2\n2 0 a 0\n"


@pytest.mark.parametrize(
    ("run", "qrels"),
    [
        # each alone, in a file of single spaces otherwise: a line without a tab, \v, \f or
        # \r is split at its spaces without a regular expression, and must give the same fields
        (PLAIN_RUN.replace("b 2", "b  2"), PLAIN_QRELS),
        (" " + PLAIN_RUN, PLAIN_QRELS),
        (PLAIN_RUN.replace("\n", "\n\n", 1), PLAIN_QRELS),
        (PLAIN_RUN.replace(" 1.5", "\t1.5"), PLAIN_QRELS),
        ("# a comment  line\n" + PLAIN_RUN, PLAIN_QRELS),
        (PLAIN_RUN, PLAIN_QRELS.replace("c 2\n", "c 2 \n")),
        (PLAIN_RUN, PLAIN_QRELS.rstrip("\n") + " "),
        (PLAIN_RUN, "# a comment line\n" + PLAIN_QRELS),
    ],
    ids=[
        "two-spaces",
        "leading-space",
        "blank-run-line",
        "tab",
        "comment-with-two-spaces",
        "trailing-space",
        "trailing-space-at-the-end",
        "comment",
    ],
)
def test_spacing_other_than_single_spaces_reads_as_the_plain_file(
    tmp_path: Path, run: str, qrels: str
) -> None:
    (tmp_path / "plain.run").write_text(PLAIN_RUN)
    (tmp_path / "plain.qrels").write_text(PLAIN_QRELS)
    (tmp_path / "other.run").write_text(run)
    (tmp_path / "other.qrels").write_text(qrels)
    texts = [
        trec_text(trec_eval(tmp_path / f"{n}.run", tmp_path / f"{n}.qrels", per_query=True))
        for n in ("plain", "other")
    ]
    assert texts[0] == texts[1]


def test_a_document_listed_twice_for_a_query_is_refused_with_both_lines(tmp_path: Path) -> None:
    """trec_eval stops at a run listing a document twice for a query (form_res_rels.c),
    wherever the two lines are: the reader refuses it, naming both lines (1 and 4 here)."""
    run = "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.5 t\n2 Q0 a 1 1.0 t\n1 Q0 a 3 0.5 t\n"
    (tmp_path / "run").write_text(run)
    (tmp_path / "qrels").write_text(PLAIN_QRELS)
    with pytest.raises(sqlmetrics.SqlmetricsError) as error:
        trec_eval(tmp_path / "run", tmp_path / "qrels", ["P_1"])
    assert (
        f"TREC run file {str(tmp_path / 'run')!r}: lines 1 and 4 both list document 'a' for "
        "query '1'" in str(error.value)
    ), error.value


@pytest.mark.parametrize(
    ("qrels", "line"),
    [
        ("1 0 a 1\n  # indented\n1 0 b 0\n", 2),  # 10: Malformed line (or a query '#')
        ("# one\n# two\n1 0 a 1\n", 2),  # 10 skips one comment, then parses the next
        ("1 0 a 1\n# the end\n", 2),  # 10 reads past the end of its buffer (a crash)
    ],
)
def test_a_qrels_comment_trec_eval_10_does_not_skip_is_refused(
    tmp_path: Path, qrels: str, line: int
) -> None:
    """trec_eval 10's get_qrels.c skips a # line only in the first column, one at a time, and
    not as the last line; the run's reader skips any (indented too: the test above)."""
    (tmp_path / "run").write_text("1 Q0 a 1 2.0 t\n")
    (tmp_path / "qrels").write_text(qrels)
    with pytest.raises(sqlmetrics.SqlmetricsError, match=rf"line {line} starts with #, which"):
        trec_eval(tmp_path / "run", tmp_path / "qrels")
    (tmp_path / "fine").write_text("# one\n1 0 a 1\n# two\n1 0 b 0\n")
    assert as_dict(trec_eval(tmp_path / "run", tmp_path / "fine", ["map"]))[("map", "all")] == 1


@pytest.mark.parametrize("which", ["run", "qrels"])
def test_trec_eval_9_reads_no_comments(tmp_path: Path, which: str) -> None:
    """9.0.8 reads a # line as data of a query '#...' (or stops at it as malformed): under
    version 9 a comment is refused, naming the line, rather than skipped as 10 skips it."""
    (tmp_path / "run").write_text(
        "1 Q0 a 1 2.0 t\n" + ("# made by hand\n" if which == "run" else "")
    )
    (tmp_path / "qrels").write_text(
        "1 0 a 1\n" + ("# judged\n1 0 b 0\n" if which == "qrels" else "")
    )
    assert as_dict(trec_eval(tmp_path / "run", tmp_path / "qrels", ["map"]))[("map", "all")] == 1
    with pytest.raises(sqlmetrics.SqlmetricsError, match=rf"TREC {which} file .*: line 2 starts "
                       r"with #, but trec_eval 9\.0\.8 has no comments"):  # fmt: skip
        trec_eval(tmp_path / "run", tmp_path / "qrels", ["map"], version=9)


def test_a_gzip_file_is_read_whatever_its_name(tmp_path: Path) -> None:
    with gzip.open(tmp_path / "run.txt", "wt") as handle:
        handle.write("1 Q0 a 1 2.0 t\n")
    (tmp_path / "qrels").write_text("1 0 a 1\n")
    assert (
        as_dict(trec_eval(tmp_path / "run.txt", tmp_path / "qrels", ["map"]))[("map", "all")] == 1.0
    )


def _message(tmp_path: Path, run: Path) -> str:
    (tmp_path / "qrels").write_text("1 0 a 1\n")
    with pytest.raises(sqlmetrics.SqlmetricsError) as error:
        trec_eval(run, tmp_path / "qrels")
    return str(error.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"1 Q0 a 1 2.0 t\n1 Q0 caf\xe9 2 1.0 t\n", "line 2 is not UTF-8 text (byte 0xe9"),
        (b"1 Q0 a 1 2.0 t\n" + b"x" * (3 << 20) + b"\n", "line 2 is longer than 2,097,152 bytes"),
        (b"1 Q0 a 1 2.0 t\n" + b"f " * 1_100_000 + b"\n", "line 2 is longer than"),
        (b"1 Q0 a 1 2.0 t\n1 Q0 b 2 \x00 t\n", "line 2 holds a NUL byte"),
        (b"1 Q0 a 1 2.0 t\n1 Q0 b\x01 2 1.0 t\n", "line 2 holds the control character \\x01"),
        (b"1 Q0 a 1 2.0 t\r1 Q0 b 2 1.0 t\n", "line 1 holds a carriage return"),
        (b"1 Q0 a 1 2.0 t\n1 Q0 b 2 1_0 t\n", "line 2: the score is not a number"),
        (b"1 Q0 a 1 2.0 t\n1 Q0 b 2 1e999 t\n", "line 2: the score is not a finite number"),
        (b"\n# nothing\n", "has no lines but blank and comment ones"),
        (b"", "has no lines (it is empty)"),
    ],
)
def test_an_unreadable_run_says_what_and_where(
    tmp_path: Path, content: bytes, message: str
) -> None:
    (tmp_path / "run").write_bytes(content)
    text = _message(tmp_path, tmp_path / "run")
    assert f"TREC run file {str(tmp_path / 'run')!r}" in text and message in text, text


def test_a_sparse_file_is_refused_at_its_first_block(tmp_path: Path) -> None:
    path = tmp_path / "sparse"
    with open(path, "wb") as handle:
        handle.truncate(2 << 30)  # 2 GiB of NUL bytes, none of them on disk
    assert "line 1 holds a NUL byte: a binary or sparse file" in _message(tmp_path, path)


def test_what_is_not_a_regular_file_is_named(tmp_path: Path) -> None:
    assert "is a directory" in _message(tmp_path, tmp_path)
    assert "is a device, not a regular file" in _message(tmp_path, Path("/dev/zero"))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "is a FIFO (named pipe), not a regular file" in _message(tmp_path, fifo)
    assert "no such file" in _message(tmp_path, tmp_path / "absent")


def test_a_proc_file_is_read_for_what_it_holds(tmp_path: Path) -> None:
    """/proc says 0 bytes, which DuckDB believes: the message says so, not "no lines"."""
    text = _message(tmp_path, Path("/proc/self/status"))
    assert "TREC run file '/proc/self/status' reports a size of 0 bytes but has content" in text


# --- trec_eval 10 and 9 ------------------------------------------------------------------------


def test_complete_per_query_prints_the_queries_without_a_run_in_10_only(tmp_path: Path) -> None:
    """-c -q: trec_eval 10 prints query 2 (in the qrels, not the run: 0 everywhere, num_rel its
    one relevant document), 9 does not; the 'all' lines are the same (map (1 + 0) / 2). Both
    texts are what trec_eval 10.0 and 9.0.8 print on these files."""
    (tmp_path / "run").write_text("1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n")
    (tmp_path / "qrels").write_text("1 0 a 1\n2 0 x 1\n")
    measures = ["num_ret", "num_rel", "map", "P_5"]
    texts = {
        version: trec_text(
            trec_eval(
                tmp_path / "run", tmp_path / "qrels", measures, per_query=True, complete=True,
                version=version,
            )
        )
        for version in (10, 9)
    }  # fmt: skip
    query_1 = (
        "num_ret               \t1\t2\nnum_rel               \t1\t1\n"
        "map                   \t1\t1.0000\nP_5                   \t1\t0.2000\n"
    )
    query_2 = (
        "num_ret               \t2\t0\nnum_rel               \t2\t1\n"
        "map                   \t2\t0.0000\nP_5                   \t2\t0.0000\n"
    )
    summary = (
        "num_ret               \tall\t2\nnum_rel               \tall\t2\n"
        "map                   \tall\t0.5000\nP_5                   \tall\t0.1000\n"
    )
    assert texts[10] == query_1 + query_2 + summary
    assert texts[9] == query_1 + summary


def test_version_9_compares_scores_as_32_bit_floats(tmp_path: Path) -> None:
    """a 1.00000002 and b 1.00000001 are one float (1.0): trec_eval 9 ties them and puts b
    first (docno descending), so relevant a is at rank 2, AP 1/2; 10 reads doubles, a first,
    AP 1 (both programs print these)."""
    (tmp_path / "run").write_text("1 Q0 a 1 1.00000002 t\n1 Q0 b 2 1.00000001 t\n")
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 b 0\n")
    maps = {
        version: as_dict(trec_eval(tmp_path / "run", tmp_path / "qrels", ["map"], version=version))
        for version in (10, 9)
    }
    assert maps[10][("map", "all")] == 1.0 and maps[9][("map", "all")] == 0.5


@pytest.mark.parametrize(("version", "cut"), [(10, "0.5000"), (9, "0.0000")])
def test_the_recall_cutoffs_of_each_version(tmp_path: Path, version: int, cut: str) -> None:
    """The example of fixtures/iprec_at_recall_rounding.yaml through the report and the CLI:
    iprec_at_recall_0.80 is 2/4 under 10's lround(2.4) = 2, 0 under 9's floor(3.3) = 3."""
    from tests.test_trec import cli

    (tmp_path / "run").write_text(
        "1 Q0 x 1 1.0 t\n1 Q0 a 2 0.9 t\n1 Q0 y 3 0.8 t\n1 Q0 b 4 0.7 t\n"
    )
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 b 1\n1 0 c 1\n")
    code, out, err = cli(
        "evaluate", str(tmp_path / "run"), str(tmp_path / "qrels"), "--input-format", "trec",
        "--format", "trec", "-m", "iprec_at_recall_0.80", "--trec-version", str(version),
    )  # fmt: skip
    assert code == 0, err
    assert out == f"iprec_at_recall_0.80  \tall\t{cut}\n"


def test_version_is_10_or_9(tmp_path: Path) -> None:
    (tmp_path / "run").write_text("1 Q0 a 1 2.0 t\n")
    (tmp_path / "qrels").write_text("1 0 a 1\n")
    with pytest.raises(sqlmetrics.SqlmetricsError, match="version must be 10"):
        trec_eval(tmp_path / "run", tmp_path / "qrels", version=8)


def test_set_f_rounds_as_trec_eval_s_arithmetic(tmp_path: Path) -> None:
    """24 listed, 21 of them relevant, 40 relevant: set_F = 2 x 21 / 64 = 0.65625 exactly,
    but trec_eval's (1 + 1) P R / (P + R) with P = 21/24, R = 21/40 is 0.6562500000000001 in
    doubles, and prints 0.6563 (what trec_eval 10.0 and 9.0.8 print)."""
    (tmp_path / "run").write_text(
        "".join(f"1 Q0 d{i:02d} {i + 1} {100 - i} t\n" for i in range(24))
    )
    relevant = [f"d{i:02d}" for i in range(21)] + [f"x{i:02d}" for i in range(19)]
    (tmp_path / "qrels").write_text("".join(f"1 0 {doc} 1\n" for doc in relevant))
    text = trec_text(trec_eval(tmp_path / "run", tmp_path / "qrels", ["set_F"], per_query=True))
    assert text == "set_F                 \t1\t0.6563\nset_F                 \tall\t0.6563\n"


def test_measure_parameters_as_trec_eval_s_minus_m(tmp_path: Path) -> None:
    """Run a, b, c, d, e; relevant a, c, f; b judged 0 (|R| = 3, relevant listed at 1 and 3).
    P.3,1: P_1 1, P_3 2/3. ndcg_cut.2.7: the cutoff read by atol, 2: 1 / (1 + 1/log2 3) =
    0.6131. iprec_at_recall..5,0.0: x = 0 -> 1, x = .5 -> lround(1.5) = 2 -> 2/3.
    utility.2,-1,0,0: 2 x 2 - 1 x 3 = 1. 11pt_avg..5,1: (2/3 + 0) / 2 (x = 1 needs 3 listed).
    rbp.p=0.5: 0.5 (1 + 0.5^2) = 0.625. Every line but rbp's is what trec_eval 10.0 prints
    (its m_rbp.c reads uninitialised variables)."""
    (tmp_path / "run").write_text(
        "".join(f"1 Q0 {d} {i} {6 - i} t\n" for i, d in enumerate("abcde", 1))
    )
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 b 0\n1 0 c 1\n1 0 f 1\n")
    measures = [
        "P.3,1", "ndcg_cut.2.7", "iprec_at_recall..5,0.0", "utility.2,-1,0,0", "11pt_avg..5,1",
        "rbp.p=0.5",
    ]  # fmt: skip
    assert trec_text(trec_eval(tmp_path / "run", tmp_path / "qrels", measures)) == (
        "iprec_at_recall_0.00  \tall\t1.0000\niprec_at_recall_0.50  \tall\t0.6667\n"
        "P_1                   \tall\t1.0000\nP_3                   \tall\t0.6667\n"
        "utility_2,-1,0,0      \tall\t1.0000\n11pt_avg_.5,1         \tall\t0.3333\n"
        "ndcg_cut_2            \tall\t0.6131\nrbp_p=0.5             \tall\t0.6250\n"
    )


def test_measure_parameters_on_the_command_line_and_minus_n(tmp_path: Path) -> None:
    """The CLI's -m splits at a comma only before a name: P.3,1 and utility.2,-1,0,1 stay whole
    (they were read as P.3 and a metric '1'). --trec-num-docs is trec_eval -N: utility's fourth
    term counts the collection's non-relevant documents not retrieved. Run a..e, relevant a, c,
    f: P_1 1, P_3 2/3; utility.2,-1,0,1 with N = 100: 2 x 2 - 1 x 3 + 0 x 1 + 1 x (100 + 2 - 5
    - 3) = 95, as trec_eval 10.0 -N 100 prints it; without -N, 1 + (2 - 5 - 3) = -5."""
    from tests.test_trec import cli

    (tmp_path / "run").write_text(
        "".join(f"1 Q0 {d} {i} {6 - i} t\n" for i, d in enumerate("abcde", 1))
    )
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 b 0\n1 0 c 1\n1 0 f 1\n")
    files = [str(tmp_path / "run"), str(tmp_path / "qrels"), "--input-format", "trec"]
    asked = ["--format", "trec", "-m", "P.3,1,utility.2,-1,0,1"]
    code, out, err = cli("evaluate", *files, *asked, "--trec-num-docs", "100")
    assert (code, err) == (0, "")
    assert out == (
        "P_1                   \tall\t1.0000\nP_3                   \tall\t0.6667\n"
        "utility_2,-1,0,1      \tall\t95.0000\n"
    )
    assert cli("evaluate", *files, *asked)[1].endswith("utility_2,-1,0,1      \tall\t-5.0000\n")
    with pytest.raises(sqlmetrics.SqlmetricsError, match=r"num_docs must be a whole number"):
        trec_eval(tmp_path / "run", tmp_path / "qrels", ["utility"], num_docs=-1)
    code, _, err = cli("evaluate", *files, "-m", "map", "--trec-num-docs", "100")
    assert code == 2 and "--trec-num-docs applies to --format trec" in err


@pytest.mark.parametrize(
    ("measure", "message"),
    [
        ("ndcg_rel.1=3,1=4", "give rel level 1 twice"),
        ("G.-2=3", "-2 is not a rel level"),
        ("Rndcg.1=y", "must be rel=gain pairs"),
        ("ndcg.-1=3", "-1 is not a rel level (trec_eval would give its gain"),
        ("ndcg.1=3,1=4", "give rel level 1 twice"),
        ("ndcg.a=3", "must be rel=gain pairs"),
        ("ndcg.1=x", "must be rel=gain pairs"),
        ("P.0", "is not a cutoff of at least 1"),
        ("utility.1,2", "utility takes four coefficients"),
        ("rbp.p=1", "rbp takes p=x, 0 <= x < 1"),
        ("map.5", "map takes no parameter"),
    ],
)
def test_measure_parameters_refused_with_the_reason(
    tmp_path: Path, measure: str, message: str
) -> None:
    (tmp_path / "run").write_text("1 Q0 a 1 2.0 t\n")
    (tmp_path / "qrels").write_text("1 0 a 1\n")
    with pytest.raises(sqlmetrics.SqlmetricsError, match=re.escape(message)):
        trec_eval(tmp_path / "run", tmp_path / "qrels", [measure])


def _outcome(path: Path, kind: str) -> tuple[object, ...]:
    """What reading the file gives: its rows, runid, notes and lines per query, or the
    refusal."""
    from sqlmetrics.io.trec_reader import frame, load

    trec = read_run(path) if kind == "run" else read_qrels(path)
    try:
        parsed = load(trec)
    except sqlmetrics.SqlmetricsError as error:
        return ("refused", str(error))
    assert parsed.parsed is not None
    rows = sorted(frame(parsed).itertuples(index=False, name=None))
    found = parsed.parsed
    return ("read", rows, found.runid, found.notes(str(path)), dict(found.queries))


@pytest.mark.parametrize(
    ("kind", "text", "split"),
    [
        ("run", PLAIN_RUN, True),
        ("run", PLAIN_RUN.rstrip("\n"), True),  # no line end after the last line
        ("run", PLAIN_RUN.replace("1.5 t", "1.5 t more"), False),  # fields after the tag
        ("run", PLAIN_RUN.replace("Q0 b", " b"), False),  # 5 fields, an empty one between
        ("run", PLAIN_RUN.replace("1.5 t", "1.5 "), False),  # 5 fields and a trailing space
        ("run", "#c Q0 a 1 2.0 t\n" + PLAIN_RUN, False),  # a comment, 6 fields
        ("run", PLAIN_RUN.replace("1.5", "1_5"), False),
        ("run", PLAIN_RUN.replace("1.5", "nan"), False),
        ("run", PLAIN_RUN.replace("1.5", "1e999"), False),
        ("run", PLAIN_RUN + "1 Q0 a 9 0.1 t\n", False),  # a repeated document
        ("run", PLAIN_RUN.replace("\n", "\n\n", 1), False),  # a blank line
        ("run", PLAIN_RUN.replace(" t\n", " my_run\n"), True),  # a _, checked in scores
        ("run", PLAIN_RUN.replace("Q0 a", "Q0 a#1"), True),  # a # not starting a line
        ("run", PLAIN_RUN.replace("Q0 b", "Q0 b\x02"), True),  # a control byte in a docno
        ("run", PLAIN_RUN.replace("1 Q0 c", "01 Q0 c"), True),  # qids not all numbers
        ("qrels", PLAIN_QRELS, True),
        ("qrels", PLAIN_QRELS.replace("c 2", "c +2"), True),
        ("qrels", PLAIN_QRELS.replace("c 2", "c 0.5"), False),  # a fraction, noted
        ("qrels", PLAIN_QRELS.replace("c 2", "c 2.0"), False),
        ("qrels", PLAIN_QRELS.replace("c 2", "c 1_0"), False),
        ("qrels", PLAIN_QRELS.replace("0 c", " c"), False),  # 3 fields, an empty one
        ("qrels", PLAIN_QRELS + "1 0 a 0\n", False),  # a repeated judgement
        ("qrels", PLAIN_QRELS.replace("\n", "\n\n", 1), False),  # a blank line
    ],
)
def test_a_plain_file_split_at_its_spaces_reads_as_the_general_reader_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, text: str, split: bool
) -> None:
    """A file of single spaces is read by read_csv split at them (Prepass.plain); a line
    that is not a well-formed data line sends the file to the general reader, so the rows,
    the runid, the notes and every refusal are the general reader's."""
    from sqlmetrics.io import trec_reader

    path = tmp_path / kind
    path.write_text(text)
    plain = trec_reader._plain
    found: list[object] = []
    monkeypatch.setattr(
        trec_reader, "_plain", lambda *args: found.append(plain(*args)) or found[-1]
    )
    split_read = _outcome(path, kind)
    # the pass over the bytes sends a file with an empty field or a comment to the general
    # reader directly; a bad value, a blank line or a repeat is found by the split read
    assert any(parsed is not None for parsed in found) == split
    monkeypatch.setattr(trec_reader, "_plain", lambda *_: None)
    assert split_read == _outcome(path, kind)


def test_a_plain_gzip_file_is_split_at_its_spaces(tmp_path: Path) -> None:
    from sqlmetrics.io.trec_reader import load

    with gzip.open(tmp_path / "run.gz", "wt") as handle:
        handle.write(PLAIN_RUN)
    parsed = load(read_run(tmp_path / "run.gz")).parsed
    assert parsed is not None and parsed.every_line and parsed.runid == "t"


def _plain_by_definition(text: bytes) -> bool:
    """Prepass.plain as its docstring defines it, line by line: fields separated by single
    spaces (no other whitespace, no empty field, no blank line), no line starting with #."""
    if not text or any(byte in text for byte in (b"\t", b"\v", b"\f", b"\r")):
        return False
    lines = text.removesuffix(b"\n").split(b"\n")
    return all(line and b"" not in line.split(b" ") and line[:1] != b"#" for line in lines)


@pytest.mark.parametrize(
    "text",
    [
        PLAIN_RUN.encode(),
        PLAIN_RUN.encode().rstrip(b"\n"),
        PLAIN_RUN.encode() + b" ",
        b" " + PLAIN_RUN.encode(),
        PLAIN_RUN.encode().replace(b"b 2", b"b  2"),
        PLAIN_RUN.encode().replace(b" t\n", b" t \n", 1),
        PLAIN_RUN.encode().replace(b"\n", b"\n\n", 1),
        PLAIN_RUN.encode().replace(b"\n1 Q0 b", b"\n#1 Q0 b"),
        b"#" + PLAIN_RUN.encode(),
        PLAIN_RUN.encode().replace(b"Q0 a", b"Q0 a#"),
        PLAIN_RUN.encode().replace(b"Q0 b", b"Q0 b\x02"),
        PLAIN_RUN.encode().replace(b" 1.5", b"\t1.5"),
        PLAIN_RUN.encode().replace(b"\n", b"\r\n"),
    ],
)
@pytest.mark.parametrize("block", [1, 2, 3, 7, 1 << 24])
def test_the_pass_over_the_bytes_finds_a_plain_file_whatever_its_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: bytes, block: int
) -> None:
    """The pass reads the file in blocks and looks at pairs of bytes: a pair split between
    two blocks (two spaces, a line end and a #) counts as one inside a block."""
    from sqlmetrics.io import trec_bytes

    path = tmp_path / "run"
    path.write_bytes(text)
    monkeypatch.setattr(trec_bytes, "_BLOCK", block)
    read = trec_bytes.prepass(str(path), "run")
    assert read.plain == _plain_by_definition(text)
    if read.plain:
        assert read.lines == len(text.removesuffix(b"\n").split(b"\n"))
        assert read.last_line == text.removesuffix(b"\n").rsplit(b"\n", 1)[-1]


@pytest.mark.parametrize("block", [1, 2, 3, 1 << 24])
def test_a_carriage_return_is_judged_with_the_next_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    from sqlmetrics.io import trec_bytes

    path = tmp_path / "run"
    monkeypatch.setattr(trec_bytes, "_BLOCK", block)
    path.write_bytes(b"1 Q0 a 1 2.0 t\r\n1 Q0 b 2 1.0 t\r\n")
    assert trec_bytes.prepass(str(path), "run").crlf
    path.write_bytes(b"1 Q0 a 1 2.0 t\r1 Q0 b 2 1.0 t\n")
    with pytest.raises(sqlmetrics.SqlmetricsError, match="line 1 holds a carriage return"):
        trec_bytes.prepass(str(path), "run")
