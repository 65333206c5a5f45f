"""The shape of the TREC path's query: what it stores and what it reads again.

Why: a parsed TREC file is a table in sqlmetrics' own memory, so a query reading it twice
(the ranking and the list lengths) costs less scanning it again than storing a copy of it,
which on a 5M-line run is 200 MB of the report's peak (docs/benchmark.md, TREC files). -M
ranks each query in the relation itself: that window is stored, not computed twice.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlmetrics
from sqlmetrics.engines import duckdb_passes
from sqlmetrics.trec import read_qrels, read_run

RUN = "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.5 t\n1 Q0 c 3 1.0 t\n2 Q0 a 1 1.0 t\n"
QRELS = "1 0 a 1\n1 0 c 2\n2 0 a 0\n"


def _query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **run_options: int) -> str:
    (tmp_path / "run").write_text(RUN)
    (tmp_path / "qrels").write_text(QRELS)
    queries: list[str] = []
    split = duckdb_passes.split_diagnostics

    def recorded(connection: object, query: str, *args: object) -> object:
        queries.append(query)
        return split(connection, query, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(duckdb_passes, "split_diagnostics", recorded)
    sqlmetrics.evaluate(
        read_run(tmp_path / "run", **run_options),
        read_qrels(tmp_path / "qrels"),
        ["map", "P@10", "bpref"],
        profile="trec_eval",
    )
    [query] = queries
    return query


def test_a_parsed_file_is_read_again_not_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = _query(tmp_path, monkeypatch)
    assert "input_recommendations AS NOT MATERIALIZED (" in query
    assert "input_interactions AS NOT MATERIALIZED (" in query


def test_a_run_cut_by_max_per_query_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = _query(tmp_path, monkeypatch, max_per_query=2)
    assert "input_recommendations AS (" in query
    assert "input_interactions AS NOT MATERIALIZED (" in query


def test_numeric_qids_are_joined_as_numbers_only_when_both_files_write_them_so(
    tmp_path: Path,
) -> None:
    """trec_eval compares qids as text: qrels' "01" is not the run's "1". The run's qids are
    numbers (held as BIGINT), the qrels' are not, so both are compared as text: query 1 has
    b relevant (at rank 2: AP 1/2), not a and b (AP 1, had 01 been read as 1)."""
    from sqlmetrics.io.trec_reader import load
    from sqlmetrics.trec import trec_eval

    (tmp_path / "run").write_text("1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n")
    (tmp_path / "qrels").write_text("01 0 a 1\n1 0 b 1\n")
    (tmp_path / "numbers").write_text("1 0 a 1\n1 0 b 1\n")
    run, qrels = load(read_run(tmp_path / "run")), load(read_qrels(tmp_path / "qrels"))
    assert run.parsed is not None and run.parsed.numeric_qids
    assert qrels.parsed is not None and not qrels.parsed.numeric_qids
    report = trec_eval(tmp_path / "run", tmp_path / "qrels", ["map", "num_q"])
    assert dict(zip(report["measure"], report["value"], strict=True)) == {"map": 0.5, "num_q": 1}
    # both numeric: a and b relevant, AP (1/1 + 2/2) / 2 = 1
    report = trec_eval(tmp_path / "run", tmp_path / "numbers", ["map", "num_q"])
    assert dict(zip(report["measure"], report["value"], strict=True)) == {"map": 1.0, "num_q": 1}


def test_evaluate_gives_a_numeric_qid_back_as_text(tmp_path: Path) -> None:
    (tmp_path / "run").write_text(RUN)
    (tmp_path / "qrels").write_text(QRELS)
    result = sqlmetrics.evaluate(
        read_run(tmp_path / "run"),
        read_qrels(tmp_path / "qrels"),
        ["map"],
        profile="trec_eval",
        per_user=True,
    )
    assert result["user_id"].tolist() == ["1"]  # query 2 has nothing relevant


def test_the_report_runs_the_query_without_the_diagnostics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """trec_eval's report prints no diagnostics and its reader checked every row: its query
    leaves them out (140 MB of the 5M-line report's peak buffer)."""
    from sqlmetrics.trec import trec_eval

    (tmp_path / "run").write_text(RUN)
    (tmp_path / "qrels").write_text(QRELS)
    calls: list[str] = []
    for name in ("split_diagnostics", "metrics_only"):
        original = getattr(duckdb_passes, name)

        def recorded(*args: object, name: str = name, original: object = original) -> object:
            calls.append(name)
            return original(*args)  # type: ignore[operator]

        monkeypatch.setattr(duckdb_passes, name, recorded)
    report = trec_eval(tmp_path / "run", tmp_path / "qrels", ["map", "num_q"])
    assert calls == ["metrics_only"]
    # query 1: a (rel 1) at 1, c (rel 2) at 3: AP (1/1 + 2/3) / 2 = 5/6; query 2 has
    # nothing relevant: 0. The mean: 5/12
    assert dict(zip(report["measure"], report["value"], strict=True)) == {
        "num_q": 2,
        "map": pytest.approx(5 / 12),
    }


def test_qrels_of_negative_rels_only_are_refused(tmp_path: Path) -> None:
    """trec_eval stops ("Can't calculate measure"): nothing is judged."""
    from sqlmetrics.trec import trec_eval

    (tmp_path / "run").write_text(RUN)
    (tmp_path / "qrels").write_text("1 0 a -1\n1 0 b -2\n")
    with pytest.raises(sqlmetrics.SqlmetricsError, match="interactions: no rows to evaluate"):
        trec_eval(tmp_path / "run", tmp_path / "qrels")


def test_out_of_memory_the_report_takes_evaluate_s_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where DuckDB runs out of memory in the report's one query (metrics_only gives None),
    evaluate's query, which splits the users into passes, gives the same values."""
    from sqlmetrics.trec import trec_eval, trec_text

    (tmp_path / "run").write_text(RUN)
    (tmp_path / "qrels").write_text(QRELS)
    expected = trec_text(trec_eval(tmp_path / "run", tmp_path / "qrels", per_query=True))
    queries: list[str] = []
    split = duckdb_passes.split_diagnostics

    def recorded(connection: object, query: str, *args: object) -> object:
        queries.append(query)
        return split(connection, query, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(duckdb_passes, "metrics_only", lambda *_: None)
    monkeypatch.setattr(duckdb_passes, "split_diagnostics", recorded)
    got = trec_text(trec_eval(tmp_path / "run", tmp_path / "qrels", per_query=True))
    assert len(queries) == 1 and got == expected


def test_bpref_joins_each_judged_pair_to_the_ranking_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bpref's judged pairs: the interactions grouped per pair before the join with ranked,
    not the join's rows (a row per recommended item of the judged pairs) grouped after it; on
    the 5M-line report that grouping was a tenth of the query's time."""
    from sqlglot import exp, parse_one

    query = parse_one(_query(tmp_path, monkeypatch), read="duckdb")
    [pairs] = [cte.this for cte in query.find_all(exp.CTE) if cte.alias == "judgements"]
    for select in pairs.find_all(exp.Select):
        joins = [join.this for join in select.args.get("joins") or []]
        joined = [table.name for table in joins if isinstance(table, exp.Table)]
        if "ranked" in joined:
            assert select.args.get("group") is None, select.sql("duckdb")
            source = select.args["from_"].this
            assert isinstance(source, exp.Subquery) and source.this.args.get("group")


def test_the_command_line_report_imports_no_pandas(tmp_path: Path) -> None:
    """The command line prints the report from the query's rows: importing pandas (and
    pyarrow, which it imports where installed) costs the command line a third of a second of
    CPU. A process of its own: this session has imported pandas already."""
    import subprocess
    import sys

    (tmp_path / "run").write_text(RUN)
    (tmp_path / "qrels").write_text(QRELS)
    script = (
        "import sys\n"
        "from sqlmetrics.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "print('pandas' in sys.modules, code, file=sys.stderr)\n"
    )
    arguments = ["evaluate", str(tmp_path / "run"), str(tmp_path / "qrels")]
    arguments += ["--input-format", "trec", "--format", "trec", "-q", "-m", "map"]
    done = subprocess.run(
        [sys.executable, "-c", script, *arguments], capture_output=True, text=True, check=False
    )
    # query 1: AP 5/6 (see above); query 2: 0
    assert done.stdout == "map                   \tall\t0.4167\n"
    assert done.stderr.splitlines()[-1] == "False 0"


def _report_query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: str, qrels: str) -> str:
    """The report's text, after recording its query (metrics_only's)."""
    from sqlmetrics.trec import trec_report

    (tmp_path / "run").write_text(run)
    (tmp_path / "qrels").write_text(qrels)
    queries: list[str] = []
    composed = duckdb_passes._query_sql

    def recorded(*args: object) -> str:
        queries.append(composed(*args))  # type: ignore[arg-type]
        return queries[-1]

    monkeypatch.setattr(duckdb_passes, "_query_sql", recorded)
    text = trec_report(tmp_path / "run", tmp_path / "qrels", per_query=True).text()
    assert len(queries) == 1
    return text + "\n-- query --\n" + queries[0]


def test_the_report_places_the_judged_documents_by_their_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """trec_eval's default measures read a position only at judged documents: the report's
    query ranks those alone (ranked_judged.sql), not every line with its docno (on the
    5M-line report that sort was two fifths of the query), and bpref's window sorts the
    recommended judged pairs only. Query 1's ties at 1.0 go by docno
    as text, descending: x (2.0) at 1, then 9, 100, 10 at 2, 3, 4; 100 and 10 are relevant: AP
    (1/3 + 2/4) / 2 = 5/12, P_5 2/5, num_ret 4. Query 2 has no judged document in its list:
    num_ret 1 still."""
    run = "1 Q0 10 1 1.0 t\n1 Q0 x 2 2.0 t\n1 Q0 100 3 1.0 t\n1 Q0 9 4 1.0 t\n2 Q0 y 1 1 t\n"
    qrels = "1 0 10 1\n1 0 100 1\n1 0 9 0\n2 0 z 1\n"
    text, query = _report_query(tmp_path, monkeypatch, run, qrels).split("\n-- query --\n")
    assert "ranked AS (SELECT user_id, item_id, pos, list_length FROM (WITH judged_items" in query
    assert "ROW_NUMBER()" not in query
    # bpref's judged pairs: the window over the recommended ones only (judged_pairs_ranked.sql)
    assert ") AS recommended ON counts.user_id = recommended.user_id" in query
    values = {tuple(line.split()[:2]): line.split()[2] for line in text.splitlines()}
    assert values[("map", "1")] == "0.4167"
    assert values[("P_5", "1")] == "0.4000"
    assert values[("num_ret", "1")] == "4"
    assert values[("num_ret", "2")] == "1"
    assert values[("map", "2")] == "0.0000"


def test_placed_positions_equal_the_window_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lists full of ties (scores of one decimal, 0 and -0 among them, docnos that sort
    differently as text and as numbers), judged documents in and out of the lists, a query
    whose list has none: every per-query line equals the window plan's."""
    import random

    from sqlmetrics.compose import duckdb_plan

    rng = random.Random(7)
    run_lines, qrels_lines = [], []
    for qid in range(1, 9):
        docs = rng.sample(range(1, 400), 60)
        for rank, doc in enumerate(docs, 1):
            score = rng.choice(["0", "-0", "0.5", "1.0", "1.5", "2", str(rng.randint(0, 30) / 10)])
            run_lines.append(f"{qid} Q0 {doc} {rank} {score} t")
        judged = rng.sample(range(1, 400), 120) if qid != 8 else [1000, 1001]
        qrels_lines += [f"{qid} 0 {doc} {rng.choice([0, 0, 1, 2])}" for doc in judged]
    run, qrels = "\n".join(run_lines) + "\n", "\n".join(qrels_lines) + "\n"
    placed = _report_query(tmp_path, monkeypatch, run, qrels).split("\n-- query --\n")
    monkeypatch.setattr(duckdb_plan, "PLACED_RANKING", False)
    window = _report_query(tmp_path, monkeypatch, run, qrels).split("\n-- query --\n")
    assert "judged_items" in placed[1] and "judged_items" not in window[1]
    assert placed[0] == window[0]


def _report_and_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **report: object
) -> tuple[str, str]:
    """trec_report's per-query text and its query, on the files already in tmp_path."""
    from sqlmetrics.trec import trec_report

    queries: list[str] = []
    composed = duckdb_passes._query_sql

    def recorded(*args: object) -> str:
        queries.append(composed(*args))  # type: ignore[arg-type]
        return queries[-1]

    monkeypatch.setattr(duckdb_passes, "_query_sql", recorded)
    text = trec_report(tmp_path / "run", tmp_path / "qrels", per_query=True, **report).text()  # type: ignore[arg-type]
    return text, queries[-1]


@pytest.mark.parametrize(
    "report",
    [
        {},
        {"complete": True},
        {"level": 2},
        {"measures": ["P.5,10", "recall.5", "Rprec", "num_rel", "recip_rank", "iprec_at_recall"]},
    ],
    ids=["default", "complete", "level2", "cutoffs"],
)
def test_the_hits_are_numbered_among_the_recommended_relevant_documents_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, report: dict[str, object]
) -> None:
    """Under ranked_judged.sql, judged's rows are the recommended relevant documents, each
    list's row and a count per query (judged_ranked_hits.sql): no FULL OUTER JOIN with every
    relevant document to number the hits. Every per-query line equals the window plan's: a
    query whose list holds nothing relevant, one judged but absent from the run (-c counts
    its num_rel), one judged non-relevant only, ties, and relevance levels 1 and 2."""
    import random

    from sqlmetrics.compose import duckdb_plan

    rng = random.Random(11)
    run_lines, qrels_lines = [], []
    for qid in range(1, 9):
        docs = rng.sample(range(1, 300), 50)
        if qid != 7:  # judged, never retrieved
            for rank, doc in enumerate(docs, 1):
                score = rng.choice(["0", "0.5", "1", str(rng.randint(0, 20) / 10)])
                run_lines.append(f"{qid} Q0 {doc} {rank} {score} t")
        judged = rng.sample(range(1, 300), 90) if qid != 5 else [1000, 1001]
        levels = [0] if qid == 6 else [0, 0, 1, 2]
        qrels_lines += [f"{qid} 0 {doc} {rng.choice(levels)}" for doc in judged]
    (tmp_path / "run").write_text("\n".join(run_lines) + "\n")
    (tmp_path / "qrels").write_text("\n".join(qrels_lines) + "\n")
    placed, placed_query = _report_and_query(tmp_path, monkeypatch, **report)
    monkeypatch.setattr(duckdb_plan, "PLACED_RANKING", False)
    window, window_query = _report_and_query(tmp_path, monkeypatch, **report)
    assert "relevant_counts" in placed_query and "FULL OUTER JOIN" not in placed_query
    assert "FULL OUTER JOIN" in window_query
    assert placed == window


def test_ndcg_keeps_the_relevant_documents_never_recommended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ndcg reads the ideal positions of every relevant document, recommended or not: its
    judged keeps joined.sql's rows. Query 1's ideal list is b (2), then a and c (1): IDCG = 2 +
    1/log2(3) + 1/2 = 3.1309; the run lists a then x, DCG = 1, ndcg 1 / 3.1309 = 0.3194."""
    (tmp_path / "run").write_text("1 Q0 a 1 2.0 t\n1 Q0 x 2 1.0 t\n")
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 b 2\n1 0 c 1\n")
    text, query = _report_and_query(tmp_path, monkeypatch, measures=["ndcg", "map"])
    assert "relevant_counts" not in query and "joined AS" in query
    assert "ndcg                  \t1\t0.3194" in text
