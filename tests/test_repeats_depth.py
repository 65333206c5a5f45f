"""Repeated recommendations are refused where they can change a number: among the first k
positions of the deepest cutoff (plan.repeats_depth), on every plan; anywhere under
checks="full", in to_sql's checks query, for metrics reading whole lists, under ties="average",
and on trec_eval's path.

The lists (user 1's and user 2's, by score): user 1 has item 10 at positions 1 and 4, user 2
item 20 at positions 1 and 3. At k = 2 neither repeat is read; at k = 3 user 2's is (1 row);
at k = 4 both are (2 rows)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics import SqlmetricsError

REPEATED = pd.DataFrame(
    {
        "user_id": [1, 1, 1, 1, 2, 2, 2],
        "item_id": [10, 11, 12, 10, 20, 21, 20],
        "score": [0.9, 0.8, 0.5, 0.1, 0.9, 0.8, 0.7],
    }
)
# The same lists without the later copy of each repeat.
DEDUPLICATED = REPEATED.drop(index=[3, 6]).reset_index(drop=True)
TRUTH = pd.DataFrame({"user_id": [1, 2, 2], "item_id": [11, 21, 20], "relevance": [1, 2, 1]})
METRICS = [
    "ndcg@2",
    "precision@2",
    "map@2",
    "recall@1",
    "ndcg_clipped@2",
    "precision_listed@2",
    "dcg_exp@2",
]

# plan.py's plans for these calls: DuckDB's top-k lists, its sorted lists past
# TOP_K_MAX_CUTOFF, the portable window plan (also what every other engine runs), a tie policy
# ordering ties by relevance, and a rank column.
PLANS = ["top_lists", "sorted_lists", "score_lists", "portable", "optimistic", "rank column"]
# score_lists.sql serves metrics that read hit rows only (duckdb_plan.HIT_ROWS_METRICS)
HIT_METRICS = ["ndcg@2", "precision@2", "map@2", "recall@1"]


def _call(plan: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    if plan == "portable":
        monkeypatch.setattr("sqlmetrics.compose.plan.TOP_K_DIALECTS", frozenset())
    if plan in ("sorted_lists", "score_lists"):
        monkeypatch.setattr("sqlmetrics.compose.plan.TOP_K_MAX_CUTOFF", 1)
    if plan == "optimistic":
        return {"ties": "optimistic"}
    if plan == "rank column":
        return {"columns": {"rank": "rank", "score": None}}
    return {}


def _ranked(frame: pd.DataFrame) -> pd.DataFrame:
    ordered = frame.sort_values(["user_id", "score"], ascending=[True, False])
    return ordered.assign(rank=ordered.groupby("user_id").cumcount() + 1).drop(columns="score")


def _inputs(plan: str, frame: pd.DataFrame) -> pd.DataFrame:
    return _ranked(frame) if plan == "rank column" else frame


@pytest.mark.parametrize("plan", PLANS)
def test_a_repeat_past_the_deepest_cutoff_gives_the_numbers_of_the_list_without_it(
    plan: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = _call(plan, monkeypatch)
    metrics = HIT_METRICS if plan == "score_lists" else METRICS
    kept = sqlmetrics.evaluate(_inputs(plan, REPEATED), TRUTH, metrics, **options)
    clean = sqlmetrics.evaluate(_inputs(plan, DEDUPLICATED), TRUTH, metrics, **options)
    pd.testing.assert_frame_equal(kept, clean)
    assert sqlmetrics.read_diagnostics(kept)["duplicate_recommendations"].tolist() == [0]


@pytest.mark.parametrize("plan", PLANS)
@pytest.mark.parametrize(("k", "rows"), [(3, 1), (4, 2)])
def test_a_repeat_within_the_deepest_cutoff_is_refused(
    plan: str, k: int, rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = _call(plan, monkeypatch)
    with pytest.raises(SqlmetricsError) as raised:
        sqlmetrics.evaluate(_inputs(plan, REPEATED), TRUTH, ["ndcg@2", f"hit_rate@{k}"], **options)
    # the example is a repeat the metrics read: user 2's at k = 3
    example = "(2, 20) appears 2 times" if k == 3 else "appears 2 times"
    assert f"pair in {rows} row(s) among the first {k} positions of their lists" in str(
        raised.value
    )
    assert example in str(raised.value)


@pytest.mark.parametrize("plan", PLANS)
def test_checks_full_refuses_a_repeat_anywhere(plan: str, monkeypatch: pytest.MonkeyPatch) -> None:
    options = _call(plan, monkeypatch)
    with pytest.raises(SqlmetricsError, match=r"pair in 2 row\(s\), e\.g\. \("):
        metrics = HIT_METRICS if plan == "score_lists" else METRICS
        sqlmetrics.evaluate(_inputs(plan, REPEATED), TRUTH, metrics, checks="full", **options)


def test_to_sql_checks_count_repeats_anywhere() -> None:
    """to_sql(checks=True) is the audit: every repeat, at any depth, is a refused row."""
    import duckdb

    connection = duckdb.connect()
    connection.register("recommendations", REPEATED)
    connection.register("interactions", TRUTH)
    counted = connection.sql(sqlmetrics.to_sql(METRICS, checks=True)).df()
    assert counted["duplicate_recommendations"].tolist() == [2]
    assert counted["refused_rows"].tolist() == [2]


@pytest.mark.parametrize("plan", ["top_lists", "portable"])
def test_to_sql_checks_read_count_what_evaluate_refuses(
    plan: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """checks="read": evaluate's own checks, the repeat within the first 3 alone (user 2's);
    tests/engines runs the portable query on every engine (case extra_repeats_read)."""
    import duckdb

    _call(plan, monkeypatch)
    connection = duckdb.connect()
    connection.register("recommendations", REPEATED)
    connection.register("interactions", TRUTH)
    counted = connection.sql(sqlmetrics.to_sql(["ndcg@2", "precision@3"], checks="read")).df()
    assert counted["duplicate_recommendations"].tolist() == [1]
    counted = connection.sql(sqlmetrics.to_sql(["ndcg@2", "precision@2"], checks="read")).df()
    assert counted["duplicate_recommendations"].tolist() == [0]


@pytest.mark.parametrize(
    ("metrics", "options"),
    [
        (["auc"], {}),  # reads each whole list
        (["ndcg@2", "map"], {}),  # map without a cutoff reads each whole list
        (["ndcg@2"], {"ties": "average"}),  # a gain averages its whole tie group
        (["precision@2"], {"profile": "trec_eval"}),  # trec_eval refuses a repeat anywhere
    ],
)
def test_repeats_are_refused_anywhere_where_a_whole_list_is_read(
    metrics: list[str], options: dict[str, object]
) -> None:
    with pytest.raises(SqlmetricsError, match=r"pair in 2 row\(s\), e\.g\."):
        sqlmetrics.evaluate(REPEATED, TRUTH, metrics, **options)


def test_trec_files_refuse_a_repeated_document_anywhere(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.write_text("1 Q0 a 1 3.0 tag\n1 Q0 b 2 2.0 tag\n1 Q0 c 3 1.0 tag\n1 Q0 a 4 0.5 tag\n")
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n")
    # the reader refuses it while parsing, so the query need not look for it again
    with pytest.raises(SqlmetricsError, match=r"lines 1 and 4 both list document 'a'"):
        sqlmetrics.evaluate(sqlmetrics.read_run(run), sqlmetrics.read_qrels(qrels), ["precision@2"])


def test_the_cli_takes_checks_full(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sqlmetrics.cli import main

    recs, truth = tmp_path / "recs.parquet", tmp_path / "truth.parquet"
    REPEATED.to_parquet(recs)
    TRUTH.to_parquet(truth)
    assert main(["evaluate", str(recs), str(truth), "-m", "ndcg@2", "-q"]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(recs), str(truth), "-m", "ndcg@2", "--checks", "full"]) != 0
    assert "pair in 2 row(s), e.g. (1, 10)" in capsys.readouterr().err
