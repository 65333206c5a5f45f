"""Each bad input gets one clear message naming the table, column, rows and what to do."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sqlmetrics
from sqlmetrics import SqlmetricsError
from tests.cli_runner import cli

NAN = math.nan


def recs(**changes: list[object]) -> pd.DataFrame:
    frame = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [10, 11, 20], "score": [0.9, 0.5, 0.7]})
    for column, values in changes.items():
        frame[column] = pd.Series(values, dtype=object if None in values else None)
    return frame


def truth(**changes: list[object]) -> pd.DataFrame:
    frame = pd.DataFrame({"user_id": [1, 2], "item_id": [11, 20], "relevance": [1, 2]})
    for column, values in changes.items():
        frame[column] = pd.Series(values, dtype=object if None in values else None)
    return frame


def with_nan_scores() -> pa.Table:
    """A real NaN (pandas' NaN means "missing" and reaches DuckDB as NULL, ranked last)."""
    return pa.table(
        {
            "user_id": [1, 1, 2],
            "item_id": [10, 11, 20],
            "score": pa.array([0.9, NAN, 0.7], from_pandas=False),
        }
    )


CASES: dict[str, tuple[object, object, str]] = {
    "nan score": (
        with_nan_scores(),
        truth(),
        "recommendations.score (the score column) is NaN in 1 row(s), e.g. user_id=1, "
        "item_id=11, score=nan; NaN has no place in an order: use NULL (ranked last) or a number",
    ),
    "null user in recommendations": (
        recs(user_id=[1, None, 2]),
        truth(),
        "recommendations: 1 row(s) have a NULL user_id, e.g. user_id=None, item_id=11, "
        "score=0.5; drop them or fill in the user",
    ),
    "null item in recommendations": (
        recs(item_id=[10, None, 20]),
        truth(),
        "recommendations: 1 row(s) have a NULL item_id, e.g. user_id=1, item_id=None, "
        "score=0.5; drop them",
    ),
    "null user in interactions": (
        recs(),
        truth(user_id=[1, None]),
        "interactions: 1 row(s) have a NULL user_id, e.g. user_id=None, item_id=20, "
        "relevance=2; drop them or fill in the user",
    ),
    "null item in interactions": (
        recs(),
        truth(item_id=[None, 20]),
        "interactions: 1 row(s) have a NULL item_id, e.g. user_id=1, item_id=None, "
        "relevance=1; drop them",
    ),
    "negative relevance": (
        recs(),
        truth(relevance=[1, -2]),
        "interactions.relevance (the relevance column) is NULL, negative, NaN or infinite in 1 "
        "row(s), e.g. user_id=2, item_id=20, relevance=-2; relevance must be a finite number "
        ">= 0 (0 = not relevant), or negative only for infap (trec_eval's infAP reads it as a "
        "document of the pool left unjudged; with infap asked every other metric leaves such "
        "rows out)",
    ),
    "null relevance": (
        recs(),
        truth(relevance=[None, 2]),
        "interactions.relevance (the relevance column) is NULL, negative, NaN or infinite in 1 "
        "row(s), e.g. user_id=1, item_id=11, relevance=None; relevance must be a finite number "
        ">= 0 (0 = not relevant), or negative only for infap (trec_eval's infAP reads it as a "
        "document of the pool left unjudged; with infap asked every other metric leaves such "
        "rows out)",
    ),
    "repeated ranks": (
        pd.DataFrame({"user_id": [1, 1, 2], "item_id": [10, 11, 20], "rank": [1, 1, 1]}),
        truth(),
        "recommendations.rank (the rank column): the ranks of 1 user(s) are not 1, 2, 3, ... "
        '(a gap or a repeat); renumber them, read them as positions with ranks="literal" (CLI: '
        "--ranks literal), or leave the rank column out to rank by score",
    ),
    "empty recommendations": (
        recs().iloc[:0],
        truth(),
        "recommendations: no rows to evaluate; check the file or filter",
    ),
    "empty interactions": (
        recs(),
        truth().iloc[:0],
        "interactions: no rows to evaluate; check the file or filter",
    ),
    "float user ids": (
        recs(user_id=[1.0, 1.0, 2.0]),
        truth(user_id=[1.0, 2.0]),
        "recommendations.user_id (the user column) is DOUBLE; ids must be integers or strings "
        "(a fraction is no id): cast it",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_message(case: str) -> None:
    recommendations, interactions, message = CASES[case]
    with pytest.raises(SqlmetricsError) as raised:
        sqlmetrics.evaluate(recommendations, interactions, ["ndcg@3", "precision@2"])
    assert str(raised.value) == message


def test_infap_reads_a_negative_relevance_but_not_an_infinite_one() -> None:
    """With infap asked a negative relevance is a document of the pool left unjudged;
    -infinity is no such thing, and is refused as without infap."""
    recommendations, interactions, message = CASES["negative relevance"]
    got = sqlmetrics.evaluate(recommendations, interactions, ["infap", "ndcg@3"])
    assert list(got["users"]) == [1]
    infinite = interactions.assign(relevance=[1.0, float("-inf")])
    with pytest.raises(SqlmetricsError) as raised:
        sqlmetrics.evaluate(recommendations, infinite, ["infap", "ndcg@3"])
    assert str(raised.value) == message.replace("relevance=-2", "relevance=-inf")


@pytest.mark.parametrize("case", ["nan score", "negative relevance", "repeated ranks"])
def test_cli_refuses_bad_files_and_writes_nothing(case: str, tmp_path: Path) -> None:
    recommendations, interactions, message = CASES[case]
    for frame, name in ((recommendations, "recs"), (interactions, "truth")):
        table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame)
        pq.write_table(table, tmp_path / f"{name}.parquet")
    output = tmp_path / "out.csv"
    run = cli(
        "evaluate",
        str(tmp_path / "recs.parquet"),
        str(tmp_path / "truth.parquet"),
        "-m",
        "ndcg@3",
        "--output",
        str(output),
    )
    assert run.returncode == 2
    assert run.stderr == f"sqlmetrics: error: {message}\n"
    assert not output.exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["recs.parquet", "truth.parquet"]


def test_relevance_too_large_for_exponential_gain() -> None:
    huge = truth(relevance=[1, 1001])
    with pytest.raises(SqlmetricsError) as raised:
        sqlmetrics.evaluate(recs(), huge, ["ndcg@3", "ndcg_exp@3"])
    assert str(raised.value) == (
        "interactions.relevance (the relevance column) is above 1000 in 1 row(s), e.g. "
        "user_id=2, item_id=20, relevance=1001; ndcg_exp@3 use the gain 2^relevance - 1, which a "
        "double cannot hold that far: rescale the grades or use the linear-gain metrics"
    )
    linear = sqlmetrics.evaluate(recs(), huge, ["ndcg@3"])  # linear gains are fine
    assert math.isclose(linear["ndcg@3"][0], (1 / math.log2(3) + 1) / 2, abs_tol=1e-12)


def test_duplicate_interactions_count_once_and_are_reported() -> None:
    duplicated = pd.concat([truth(), truth().assign(relevance=[3, 0])])
    result = sqlmetrics.evaluate(recs(), duplicated, ["cg@3"])
    assert result["cg@3"][0] == (3 + 2) / 2  # user 1: item 11 once, relevance max(1, 3)
    assert sqlmetrics.read_diagnostics(result)["duplicate_interactions"][0] == 2


def run_checks(recommendations: object, interactions: object, **options: object) -> pd.DataFrame:
    """``to_sql(checks=True)`` run as printed, on DuckDB tables holding the two inputs."""
    import duckdb

    connection = duckdb.connect()
    connection.register("recommendations", recommendations)
    connection.register("interactions", interactions)
    return connection.sql(sqlmetrics.to_sql(["ndcg@3", "precision@2"], **options, checks=True)).df()


ROW_CHECKS = [case for case in CASES if "empty" not in case and "float" not in case]


@pytest.mark.parametrize("case", ROW_CHECKS)
def test_checks_sql_counts_the_rows_evaluate_refuses(case: str) -> None:
    recommendations, interactions, message = CASES[case]
    options = {"columns": {"rank": "rank"}} if case == "repeated ranks" else {}
    counted = run_checks(recommendations, interactions, **options)
    refused = int(re.search(r"(\d+) (?:row|user)\(s\)", message).group(1))
    assert counted["refused_rows"].tolist() == [refused]


def test_checks_sql_of_fit_inputs_refuses_nothing_and_counts_as_evaluate() -> None:
    duplicated = pd.concat([truth(), truth().assign(relevance=[3, 0])])
    counted = run_checks(recs(), duplicated)
    assert counted["refused_rows"].tolist() == [0]
    evaluated = sqlmetrics.read_diagnostics(
        sqlmetrics.evaluate(recs(), duplicated, ["ndcg@3", "precision@2"])
    )
    shared = [name for name in evaluated.columns if name in counted.columns]
    assert len(shared) >= 9
    assert counted[shared].to_dict("records") == evaluated[shared].to_dict("records")
    # A duplicated recommendation is refused unless duplicates="first" keeps the best placed.
    repeated = pd.concat([recs(), recs().iloc[:1]])
    assert run_checks(repeated, truth())["refused_rows"].tolist() == [1]
    assert run_checks(repeated, truth(), duplicates="first")["refused_rows"].tolist() == [0]


def test_logloss_refuses_scores_outside_0_1() -> None:
    with pytest.raises(SqlmetricsError) as raised:
        sqlmetrics.evaluate(recs(score=[0.9, 1.5, 0.7]), truth(), ["auc", "logloss"])
    assert str(raised.value) == (
        "recommendations.score (the score column) is outside [0, 1] in 1 row(s), e.g. "
        "user_id=1, item_id=11, score=1.5; logloss reads scores as probabilities: calibrate "
        "them (e.g. a sigmoid) or leave logloss out"
    )
    with pytest.raises(
        SqlmetricsError, match="; logloss, ne, calibration read scores as probabilities"
    ):
        sqlmetrics.evaluate(recs(score=[0.9, 1.5, 0.7]), truth(), ["logloss", "ne", "calibration"])
    # auc reads any scores: positives 1.5 and 0.7 against the negative 0.9
    assert sqlmetrics.evaluate(recs(score=[0.9, 1.5, 0.7]), truth(), ["auc"])["auc"][0] == 0.5
    # calibration adds the scores up as expected positives: within [0, 1] they are
    calibration = sqlmetrics.evaluate(recs(score=[0.9, 1.0, 0.7]), truth(), ["calibration"])
    assert calibration["calibration"][0] == pytest.approx(2.6 / 2)  # 2 relevant rows


def test_rating_metrics_need_a_rating_column() -> None:
    with pytest.raises(SqlmetricsError) as raised:
        sqlmetrics.evaluate(recs(), truth(), ["rmse"])
    assert str(raised.value).startswith(
        "interactions has no column 'rating' (the rating column). Its columns: user_id, "
        "item_id, relevance. Name yours with columns={'rating': ...} (CLI: --rating-column)."
    )
    with pytest.raises(SqlmetricsError, match="compare the score with a rating"):
        sqlmetrics.evaluate(recs(), truth(), ["mae"], columns={"rating": None})
    with pytest.raises(SqlmetricsError, match="is VARCHAR, not a number"):
        sqlmetrics.evaluate(recs(), truth(stars=["a", "b"]), ["mae"], columns={"rating": "stars"})
    rated = sqlmetrics.evaluate(recs(), truth(stars=[4, 1]), ["mae"], columns={"rating": "stars"})
    assert math.isclose(rated["mae"][0], (3.5 + 0.3) / 2, abs_tol=1e-12)


def test_score_metrics_refuse_a_rank_column() -> None:
    ranked = pd.DataFrame({"user_id": [1, 1], "item_id": [10, 11], "rank": [1, 2]})
    with pytest.raises(SqlmetricsError, match="auc, accuracy read the scores, not positions"):
        sqlmetrics.evaluate(ranked, truth(), ["auc", "accuracy", "ndcg@2"])


@pytest.mark.parametrize("label", ["accuracy@abc", "accuracy@", "accuracy@1e999", "auc@3"])
def test_score_threshold_must_be_a_number(label: str) -> None:
    with pytest.raises(SqlmetricsError, match=r"score threshold|takes no cutoff"):
        sqlmetrics.evaluate(recs(), truth(), [label])


def test_a_trec_eval_spelling_is_no_score_threshold() -> None:
    with pytest.raises(SqlmetricsError, match="unknown metric 'accuracy_5'"):
        sqlmetrics.evaluate(recs(), truth(), ["accuracy_5"])


def test_metrics_over_scores_refuse_repeated_recommendations_anywhere() -> None:
    """They read whole lists, so a repeat at any position is refused (no positions to cut)."""
    repeated = pd.concat([recs(), recs().iloc[[0]].assign(score=[0.1])])
    for metric in ("auc", "rmse"):
        with pytest.raises(SqlmetricsError, match=r"repeat a \(user_id, item_id\) pair in 1 row"):
            sqlmetrics.evaluate(repeated, truth(rating=[1, 2]), [metric])
    first = sqlmetrics.evaluate(repeated, truth(), ["auc"], duplicates="first")
    assert first["auc"][0] == sqlmetrics.evaluate(recs(), truth(), ["auc"])["auc"][0]


def test_nan_ratings_are_refused() -> None:
    rated = pa.table(
        {"user_id": [1, 2], "item_id": [11, 20], "relevance": [1, 2], "rating": [4.0, NAN]}
    )
    with pytest.raises(SqlmetricsError) as raised:
        sqlmetrics.evaluate(recs(), rated, ["rmse"])
    assert str(raised.value) == (
        "interactions.rating (the rating column) is NaN or infinite in 1 row(s), e.g. "
        "user_id=2, item_id=20, rating=nan; use NULL for a missing rating (such rows are left "
        "out) or a finite number"
    )


def test_a_header_only_csv_has_no_rows_to_evaluate(tmp_path: Path) -> None:
    """DuckDB reads a CSV file without rows as text columns: the message is that it is empty,
    not that its score is not a number (issue 23, cause 12)."""
    (tmp_path / "recs.csv").write_text("user_id,item_id,score\n")
    truth().to_csv(tmp_path / "truth.csv", index=False)
    with pytest.raises(SqlmetricsError) as raised:
        sqlmetrics.evaluate(tmp_path / "recs.csv", tmp_path / "truth.csv", ["ndcg@3"])
    assert str(raised.value) == "recommendations: no rows to evaluate; check the file or filter"


def test_a_folder_is_read_whole_or_refused(tmp_path: Path) -> None:
    """A folder of Parquet or of CSV files is read whole; one holding both is refused with
    both counts, never read in part (issue 23, cause 12)."""
    folder = tmp_path / "recs"
    (folder / "day=1").mkdir(parents=True)
    recs().iloc[:2].to_csv(folder / "a.csv", index=False)
    recs().iloc[2:].to_csv(folder / "day=1" / "b.csv", index=False)
    truth().to_parquet(tmp_path / "truth.parquet")
    whole = sqlmetrics.evaluate(recs(), tmp_path / "truth.parquet", ["ndcg@3"])
    from_folder = sqlmetrics.evaluate(folder, tmp_path / "truth.parquet", ["ndcg@3"])
    pd.testing.assert_frame_equal(from_folder, whole)
    recs().to_parquet(folder / "c.parquet")
    with pytest.raises(SqlmetricsError, match=r"holds both Parquet \(1\) and CSV \(2\) files"):
        sqlmetrics.evaluate(folder, tmp_path / "truth.parquet", ["ndcg@3"])


def test_literal_ranks_refuse_the_metrics_that_walk_positions_in_order() -> None:
    """A repeated literal rank leaves the order of its items open, so every metric whose file
    walks the list item by item (walks_positions: bpref over judgements, trec_eval's binG, G,
    ndcg_rel, Rndcg) is refused by name; the others run."""
    from sqlmetrics.catalog.metrics import metrics

    # (the intent-aware ones need an intent column first: tests/test_intents.py)
    walking = sorted(
        name
        for name, metric in metrics().items()
        if metric.walks_positions and not metric.needs_intent
    )
    assert {"bpref", "bin_g", "ndcg_rel", "normalized_gain", "rndcg"} <= set(walking)
    ranked = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [10, 11, 20], "rank": [1, 1, 3]})
    columns = {"score": None, "rank": "rank"}
    # rbo and unexpectedness (over the lists) need a cutoff
    labels = [f"{name}@3" if metrics()[name].requires_cutoff else name for name in walking]
    with pytest.raises(SqlmetricsError) as refused:
        sqlmetrics.evaluate(ranked, truth(), [*labels, "ndcg"], columns=columns, ranks="literal")
    message = str(refused.value)
    assert message.startswith(f'ranks="literal" cannot serve {", ".join(labels)}:')
    refused_names = message.split(":")[0].removeprefix('ranks="literal" cannot serve ')
    assert "ndcg" not in refused_names.split(", ")
    served = sqlmetrics.evaluate(ranked, truth(), ["ndcg", "map"], columns=columns, ranks="literal")
    assert served["users"][0] == 2


@pytest.mark.parametrize(
    "timeout", [math.inf, NAN, "1", True, 0, -1, 1e300], ids=lambda value: repr(value)
)
def test_a_timeout_is_a_finite_number_of_seconds(
    timeout: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """inf printed an OverflowError traceback from the timer thread (and ran on), "1" gave a
    raw TypeError, True was taken for 1 s: each is refused, the engine never started."""
    with pytest.raises(SqlmetricsError, match=r"^timeout must be a number of seconds"):
        sqlmetrics.evaluate(recs(), truth(), ["ndcg@2"], timeout=timeout)  # type: ignore[arg-type]
    assert capsys.readouterr().err == ""
    # a number of NumPy's is a number
    import numpy as np

    assert sqlmetrics.evaluate(recs(), truth(), ["ndcg@2"], timeout=np.float64(30))["users"][0] == 2


@pytest.mark.parametrize(
    ("expression", "kind"),
    [
        ("[user_id]", "INTEGER[]"),
        ("[user_id]::INTEGER[1]", "INTEGER[1]"),
        ("{'u': user_id}", "STRUCT(U INTEGER)"),
        ("MAP([user_id], [1])", "MAP(INTEGER, INTEGER)"),
        ("union_value(u := user_id)", "UNION(U INTEGER)"),
    ],
)
def test_a_list_struct_or_map_is_no_id(expression: str, kind: str) -> None:
    """DuckDB matched nested user ids like any other value (Spark refuses them): a list,
    struct or map is refused as an id, on both inputs alike."""
    import duckdb

    connection = duckdb.connect()
    values = "(VALUES (1, 10, 0.5), (2, 11, 0.4)) AS t(user_id, item_id, score)"
    connection.execute(
        f"CREATE TABLE recs AS SELECT {expression} AS user_id, item_id, score FROM {values}"
    )
    connection.execute(
        f"CREATE TABLE truth AS SELECT {expression} AS user_id, item_id FROM {values}"
    )
    message = (
        f"recommendations.user_id (the user column) is {kind}; ids must be integers or "
        "strings (a list, struct or map is no id): take the field that is the id, or cast it"
    )
    with pytest.raises(SqlmetricsError, match=f"^{re.escape(message)}$"):
        sqlmetrics.evaluate("recs", "truth", ["ndcg@10"], connection=connection)


def test_to_sql_refuses_an_input_that_is_no_table_name() -> None:
    """A Query given to to_sql raised a TypeError from sqlglot's tokenizer."""
    query = sqlmetrics.Query("SELECT * FROM recs")
    with pytest.raises(
        SqlmetricsError, match=r"^recommendations: a table name is a string, not a Query"
    ):
        sqlmetrics.to_sql(["ndcg@10"], dialect="postgres", recommendations=query)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("weights", "shown"),
    [
        ([1.0, None, 2.0], "w=None"),
        ([1.0, -0.5, 2.0], "w=-0.5"),
        ([1.0, float("inf"), 2.0], "w=inf"),
    ],
    ids=["null", "negative", "infinite"],
)
def test_bad_weights_are_refused(weights: list[object], shown: str) -> None:
    with pytest.raises(SqlmetricsError) as raised:
        sqlmetrics.evaluate(recs(w=weights), truth(), ["auc", "ndcg@3"], columns={"weight": "w"})
    assert str(raised.value) == (
        "recommendations.w (the weight column) is NULL, negative, NaN or infinite in 1 scored "
        f"row(s), e.g. user_id=1, item_id=11, score=0.5, {shown}; a weight must be a finite "
        "number >= 0 (0 leaves the row out): fill in or drop those rows"
    )


def test_nan_weights_are_refused() -> None:
    table = pa.table(
        {
            "user_id": [1, 1, 2],
            "item_id": [10, 11, 20],
            "score": [0.9, 0.5, 0.7],
            "w": [1.0, float("nan"), 2.0],
        }
    )
    with pytest.raises(SqlmetricsError, match="is NULL, negative, NaN or infinite in 1 scored"):
        sqlmetrics.evaluate(table, truth(), ["logloss"], columns={"weight": "w"})
    import duckdb

    connection = duckdb.connect()
    connection.register("recommendations", table)
    connection.register("interactions", truth())
    query = sqlmetrics.to_sql(["logloss"], columns={"weight": "w"}, checks=True)
    counts = connection.sql(query).df()
    assert counts["bad_weights"].tolist() == [1]
    assert counts["refused_rows"].tolist() == [1]


def test_weights_unread_or_unfit_are_refused() -> None:
    # a row without a score is left out, its weight unread
    fine = sqlmetrics.evaluate(
        recs(score=[0.9, None, 0.7], w=[1, None, 2]), truth(), ["auc"], columns={"weight": "w"}
    )
    assert fine["auc"][0] == 0.0  # the positive 0.7 (user 2) below the negative 0.9
    with pytest.raises(SqlmetricsError) as raised:
        sqlmetrics.evaluate(recs(w=[1, 1, 1]), truth(), ["ndcg@3"], columns={"weight": "w"})
    assert str(raised.value).startswith(
        "the weight column (w) weighs the scored rows of auc, gauc, user_auc, logloss, ne, "
    )
    assert "ndcg@3 read no weight" in str(raised.value)
    with pytest.raises(SqlmetricsError, match=r"has no column 'w' \(the weight column\)"):
        sqlmetrics.evaluate(recs(), truth(), ["auc"], columns={"weight": "w"})
    with pytest.raises(SqlmetricsError, match=r"\(the weight column\) is VARCHAR, not a number"):
        sqlmetrics.evaluate(recs(w=["a", "b", "c"]), truth(), ["auc"], columns={"weight": "w"})
