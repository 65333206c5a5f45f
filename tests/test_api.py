"""The Python API: every input form, column names, options, and the one-scan promise."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa
import pytest
import sqlglot

import sqlmetrics
from sqlmetrics import SqlmetricsError
from sqlmetrics.attrs import Table
from tests.conftest import EXAMPLES

# small(): u1 list 10,11,12 with 11 relevant of {11, 13}; u2 list 20,21 with 20 (rel 2) of {20};
# u3 relevant {30} and no list.  precision@2 = (1/2 + 1/2 + 0) / 3; recall@3 = (1/2 + 1 + 0) / 3
PRECISION_2 = (0.5 + 0.5 + 0) / 3
RECALL_3 = (0.5 + 1 + 0) / 3


def test_summary_row_names_columns_as_requested(small: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    recs, truth = small
    result = sqlmetrics.evaluate(recs, truth, ["P@2", "recall@3"])
    assert list(result.columns) == ["users", "P@2", "recall@3"]
    assert result["users"].tolist() == [3]
    assert math.isclose(result["P@2"][0], PRECISION_2, abs_tol=1e-12)
    assert math.isclose(result["recall@3"][0], RECALL_3, abs_tol=1e-12)


def test_per_user_rows_average_to_the_summary(small: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    recs, truth = small
    metrics = ["ndcg@3", "map@2", "mrr", "micro_hit_ratio@3"]
    per_user = sqlmetrics.evaluate(recs, truth, metrics, per_user=True)
    summary = sqlmetrics.evaluate(recs, truth, metrics)
    assert per_user["user_id"].tolist() == [1, 2, 3]
    for metric in ["ndcg@3", "map@2", "mrr"]:
        assert math.isclose(per_user[metric].mean(), summary[metric][0], abs_tol=1e-12)
    # micro: 2 hits over 4 relevant interactions, not the mean of per-user ratios
    assert math.isclose(summary["micro_hit_ratio@3"][0], 2 / 4, abs_tol=1e-12)


@pytest.mark.parametrize("form", ["parquet", "glob", "folder", "csv", "arrow", "table"])
def test_every_input_form_gives_the_same_numbers(
    form: str, small: tuple[pd.DataFrame, pd.DataFrame], tmp_path: Path
) -> None:
    recs, truth = small
    connection = None
    if form in ("parquet", "glob", "folder"):
        (tmp_path / "recs").mkdir()
        recs.iloc[:3].to_parquet(tmp_path / "recs" / "part-0.parquet")
        recs.iloc[3:].to_parquet(tmp_path / "recs" / "part-1.parquet")
        truth.to_parquet(tmp_path / "truth.parquet")
        recs_in: object = {
            "parquet": str(tmp_path / "recs" / "part-0.parquet"),
            "glob": str(tmp_path / "recs" / "*.parquet"),
            "folder": str(tmp_path / "recs"),
        }[form]
        truth_in: object = tmp_path / "truth.parquet"
        if form == "parquet":  # one file holds only user 1's list
            recs.to_parquet(tmp_path / "all.parquet")
            recs_in = str(tmp_path / "all.parquet")
    elif form == "csv":
        recs.to_csv(tmp_path / "recs.csv", index=False)
        truth.to_csv(tmp_path / "truth.csv", index=False)
        recs_in, truth_in = str(tmp_path / "recs.csv"), str(tmp_path / "truth.csv")
    elif form == "arrow":
        recs_in, truth_in = pa.Table.from_pandas(recs), pa.Table.from_pandas(truth)
    else:
        connection = duckdb.connect()
        connection.register("recs_frame", recs)
        connection.register("truth_frame", truth)
        connection.execute("CREATE TABLE main.recs AS SELECT * FROM recs_frame")
        connection.execute("CREATE TABLE main.truth AS SELECT * FROM truth_frame")
        recs_in, truth_in = "main.recs", "truth"
    result = sqlmetrics.evaluate(recs_in, truth_in, ["precision@2"], connection=connection)
    assert math.isclose(result["precision@2"][0], PRECISION_2, abs_tol=1e-12)


def test_custom_column_names_and_no_relevance_column() -> None:
    recs = pd.DataFrame({"customer": ["a", "a"], "sku": ["x", "y"], "pred": [0.2, 0.9]})
    truth = pd.DataFrame({"customer": ["a"], "sku": ["x"]})
    result = sqlmetrics.evaluate(
        recs,
        truth,
        ["mrr@2", "dcg@2"],
        columns={"user": "customer", "item": "sku", "score": "pred"},
    )
    assert result["mrr@2"][0] == 0.5  # y is first, x second
    assert math.isclose(result["dcg@2"][0], 1 / math.log2(3), abs_tol=1e-12)  # relevance 1
    per_user = sqlmetrics.evaluate(
        recs,
        truth,
        ["mrr@2"],
        per_user=True,
        columns={"user": "customer", "item": "sku", "score": "pred"},
    )
    assert list(per_user.columns) == ["customer", "mrr@2"]


def test_rank_column_is_used_as_given() -> None:
    recs = pd.DataFrame({"user_id": [1, 1, 1], "item_id": [1, 2, 3], "rank": [3, 1, 2]})
    truth = pd.DataFrame({"user_id": [1], "item_id": [1], "relevance": [1]})
    result = sqlmetrics.evaluate(recs, truth, ["mrr", "hits@2"])
    assert math.isclose(result["mrr"][0], 1 / 3, abs_tol=1e-12)
    assert result["hits@2"][0] == 0


def test_tie_averaged_sums_are_exact_and_repeatable() -> None:
    # Scores 0.5, 0.2, then items 0, 1, 3 tied at 0.1 with one of them relevant (1/3 each).
    # Adding 1 + 1 + 1/3 + 1/3 + 1/3 in floating point gives 3.0000000000000004; the closed
    # form gives 3 and, at k = 4, 2 + 2 * 1/3 = 8/3 rounded once.
    recs = pd.DataFrame(
        {"user_id": [1] * 5, "item_id": [0, 1, 2, 3, 4], "score": [0.1, 0.1, 0.5, 0.1, 0.2]}
    )
    truth = pd.DataFrame({"user_id": [1, 1, 1], "item_id": [0, 2, 4]})
    metrics = ["hits", "recall", "micro_hit_ratio", "hits@4", "precision@4", "micro_mrr", "dcg"]
    runs = [sqlmetrics.evaluate(recs, truth, metrics, ties="average") for _ in range(20)]
    first = runs[0].iloc[0]
    assert (first["hits"], first["recall"], first["micro_hit_ratio"]) == (3.0, 1.0, 1.0)
    assert first["hits@4"] == 8 / 3 and first["precision@4"] == (8 / 3) / 4
    for run in runs[1:]:  # the fractional sums are exact sums: the same bits every run
        pd.testing.assert_frame_equal(run, runs[0], check_exact=True)


def test_diagnostics_sit_beside_the_numbers(small: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    recs, truth = small
    recs = pd.concat(
        [
            recs,
            pd.DataFrame({"user_id": [4, 4, 4], "item_id": [1, 2, 3], "score": [0.5, 0.5, None]}),
        ]
    )
    result = sqlmetrics.evaluate(recs, truth, ["ndcg@3"])
    diagnostics = sqlmetrics.read_diagnostics(result).iloc[0].to_dict()
    assert diagnostics == {
        "users_in_interactions": 3,
        "users_with_recommendations": 3,
        "population_without_recommendations": 1,  # user 3
        "recommended_without_relevant": 1,  # user 4
        "lists_shorter_than_k": 1,  # user 2 has 2 items
        "duplicate_recommendations": 0,
        "duplicate_interactions": 0,
        "null_scores": 1,
        "tied_score_groups": 0,  # user 4's two 0.5 scores sit wholly inside the top 3
        "single_class_users": 0,  # counted only when a metric reads scored (auc, gauc, ...)
    }
    # at positions 1 and 2 they straddle the cutoff 1: a tie group counted once for both cutoffs
    straddled = sqlmetrics.evaluate(recs, truth, ["ndcg@1", "recall@1", "ndcg@3"])
    assert sqlmetrics.read_diagnostics(straddled)["tied_score_groups"].tolist() == [1]


def _two_models(small: tuple[pd.DataFrame, pd.DataFrame]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Model a recommends items 10, 11 to user 1 and 20 to user 2; model b 12 and 21."""
    recs, truth = small
    return recs.assign(model=["a", "a", "b", "a", "b"]), truth


def test_results_concatenate_merge_and_apply_like_any_frame(
    small: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    """pandas compares the parts' attrs when it joins frames (and keeps them only when all are
    equal): results of two calls join without their diagnostics, each keeps its own, and the
    parts of one result join with them."""
    recs, truth = _two_models(small)
    at_2 = sqlmetrics.evaluate(recs, truth, ["ndcg@2"], group_by="model")
    at_1 = sqlmetrics.evaluate(recs, truth, ["recall@1"], group_by="model")
    # lists shorter than k: at 2, model a's user 2 (one item) and both of b's users; at 1, none
    assert sqlmetrics.read_diagnostics(at_2)["lists_shorter_than_k"].tolist() == [1, 2]
    assert sqlmetrics.read_diagnostics(at_1)["lists_shorter_than_k"].tolist() == [0, 0]

    stacked = pd.concat([at_2, at_1], ignore_index=True)
    assert stacked["ndcg@2"].iloc[:2].tolist() == at_2["ndcg@2"].tolist()
    assert stacked["recall@1"].iloc[2:].tolist() == at_1["recall@1"].tolist()
    merged = at_2.merge(at_1, on=["model", "users"])
    assert (
        merged[["ndcg@2", "recall@1"]].values.tolist()
        == pd.concat([at_2["ndcg@2"], at_1["recall@1"]], axis=1).values.tolist()
    )
    for joined in (stacked, merged):  # two calls' diagnostics differ: neither is the whole's
        assert joined.attrs == {}
        with pytest.raises(SqlmetricsError, match="joins the results of different calls"):
            sqlmetrics.read_diagnostics(joined)

    doubled = at_2.groupby("model").apply(lambda part: part.assign(twice=2 * part["ndcg@2"]))
    rejoined = pd.concat([at_2.iloc[1:], at_2.iloc[:1]])
    for same in (doubled, rejoined):
        pd.testing.assert_frame_equal(
            sqlmetrics.read_diagnostics(same), sqlmetrics.read_diagnostics(at_2)
        )
    assert doubled["twice"].tolist() == [2 * value for value in at_2["ndcg@2"]]


def test_results_with_intervals_and_distributions_join_too(
    small: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    recs, truth = _two_models(small)
    spread = sqlmetrics.evaluate(
        recs, truth, ["ndcg@2"], group_by="model", ci=0.9, distributions=["ndcg@2"]
    )
    plain = sqlmetrics.evaluate(recs, truth, ["ndcg@2"], group_by="model")
    assert pd.concat([spread, plain]).attrs == {}
    distributions = sqlmetrics.read_distributions(spread)
    # model b's ndcg@2 is 0 for its three users (user 1's item 12 and user 2's 21 are not
    # relevant; user 3 has no list): every quantile is 0
    b = distributions.set_index("model").loc["b"]
    assert (b["users"], b["users_at_0"], set(b["quantiles"])) == (3, 3, {0.0})
    assert len(b["quantiles"]) == 101
    split = pd.concat([part for _, part in spread.groupby("model")])
    pd.testing.assert_frame_equal(sqlmetrics.read_distributions(split), distributions)
    pd.testing.assert_frame_equal(
        sqlmetrics.read_diagnostics(split), sqlmetrics.read_diagnostics(spread)
    )


def test_an_attrs_table_gives_its_frame_back_and_compares_as_a_value() -> None:
    frame = pd.DataFrame(
        {
            "model": pd.Series(["a", None], dtype="str"),
            "day": pd.to_datetime(["2026-01-01", None]),
            "segment": pd.Categorical(["x", "y"], categories=["y", "x", "z"]),
            "users": [3, 0],
            "share": [0.25, math.nan],
            "quantiles": [[0.0, 0.5, math.nan], math.nan],
        }
    )
    table = Table.of(frame)
    pd.testing.assert_frame_equal(table.frame(), frame)
    again = Table.of(frame.copy())  # another table of the same values, NaN included
    assert again == table and hash(again) == hash(table)
    assert Table.of(frame.assign(users=[3, 1])) != table


@pytest.mark.parametrize("dialect", ["duckdb", "postgres"])
def test_many_metrics_and_cutoffs_scan_each_input_once(dialect: str) -> None:
    """Each input is read a fixed number of times, never more with more metrics. The model is
    a column of the recommendations only: arms.complement_arms runs the stages over the
    interactions twice (joined to the users each model lists, and whole for the users without
    a list; its empty read of the recommendations is optimized away), so the portable plan
    reads the interactions twice. On DuckDB the inputs are also read again where a second read
    is cheaper than storing them (the recommendations: the top-k plan's few users tied at the
    cutoff, the (model, user) pairs joined to the interactions; the interactions: the hit-rows
    plan's per-user counts, the few users that may repeat an item and its relevant items)."""
    connection = duckdb.connect()
    connection.execute(
        "CREATE TABLE recs AS SELECT * FROM read_parquet(?)",
        [str(EXAMPLES / "recommendations.parquet")],
    )
    connection.execute(
        "CREATE TABLE truth AS SELECT * FROM read_parquet(?)",
        [str(EXAMPLES / "interactions.parquet")],
    )

    def scans(metrics: list[str]) -> list[str]:
        sql = sqlmetrics.to_sql(
            metrics, "recs", "truth", group_by=["model"], interactions_group_by=[], dialect=dialect
        )
        if dialect != "duckdb":
            sql = sqlglot.transpile(sql, read=dialect, write="duckdb")[0]
        plan = connection.execute("EXPLAIN " + sql).fetchall()[0][1]
        return sorted(name.split(".")[-1] for name in re.findall(r"Table: ([\w.]+)", plan))

    many = scans(
        [
            f"{name}@{k}"
            for name in ("ndcg", "map", "mrr", "precision", "recall", "hit_rate")
            for k in (1, 5, 10, 20)
        ]
    )
    assert many == scans(["ndcg@10"])
    duckdb_scans = ["recs"] * 3 + ["truth"] * 6
    assert many == (duckdb_scans if dialect == "duckdb" else ["recs", "truth", "truth"])


def test_to_sql_of_one_metric_runs_as_pasted() -> None:
    sql = sqlmetrics.to_sql(
        "ndcg@10", "recs", "truth", group_by=["model"], interactions_group_by=[]
    )
    assert sql.count("ndcg@10") == 1 and "sqlmetrics" not in sql
    connection = duckdb.connect()
    connection.execute(
        "CREATE TABLE recs AS SELECT * FROM read_parquet(?)",
        [str(EXAMPLES / "recommendations.parquet")],
    )
    connection.execute(
        "CREATE TABLE truth AS SELECT * FROM read_parquet(?)",
        [str(EXAMPLES / "interactions.parquet")],
    )
    pasted = connection.execute(sql).fetchall()
    evaluated = sqlmetrics.evaluate(
        "recs", "truth", ["ndcg@10"], group_by="model", connection=connection
    )
    assert pasted == list(evaluated.itertuples(index=False, name=None))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"metrics": ["ndgc@10"]}, "unknown metric 'ndgc@10'. Did you mean 'ndcg'?"),
        ({"metrics": ["ndcg@0"]}, "cutoff in 'ndcg@0' must be a whole number of at least 1"),
        ({"metrics": ["ndcg@-3"]}, "cutoff in 'ndcg@-3' must be a whole number of at least 1"),
        ({"metrics": ["r_precision@5"]}, "metric 'r_precision' takes no cutoff"),
        ({"metrics": ["ndcg@5:1"]}, "the cutoff range in 'ndcg@5:1' must go up from at least 1"),
        ({"metrics": ["ndcg@0:3"]}, "the cutoff range in 'ndcg@0:3' must go up from at least 1"),
        ({"metrics": ["ndcg@1:k"]}, "the cutoff range in 'ndcg@1:k' must be two whole numbers"),
        ({"metrics": ["ndcg@1:1001"]}, "'ndcg@1:1001' has more than 1,000 cutoffs"),
        ({"metrics": ["r_precision@1:3"]}, "metric 'r_precision' takes no cutoff"),
        ({"metrics": []}, "no metrics requested"),
        (
            {"columns": {"user": "usr_id"}},
            "recommendations has no column 'usr_id' (the user column). Did you mean 'user_id'?",
        ),
        ({"columns": {"colour": "x"}}, "unknown column role(s) colour"),
        ({"group_by": ["modle"]}, "group_by column 'modle' is not in recommendations."),
        ({"ties": "random"}, "ties must be one of id, id_text, optimistic, pessimistic, average"),
        ({"threshold": -1}, "threshold must be a number >= 0"),
        ({"population": "everyone"}, "population must be one of all, common"),
        ({"metrics": ["map@10"], "ties": "average"}, "ties='average' has no exact closed form for"),
    ],
)
def test_bad_arguments_get_one_clear_message(
    kwargs: dict[str, object], message: str, small: tuple[pd.DataFrame, pd.DataFrame]
) -> None:
    recs, truth = small
    arguments: dict[str, object] = {"metrics": ["ndcg@10"], **kwargs}
    with pytest.raises(SqlmetricsError) as raised:
        sqlmetrics.evaluate(recs, truth, **arguments)  # type: ignore[arg-type]
    assert message in str(raised.value)


def test_a_cutoff_range_is_every_cutoff_in_it(small: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    """ndcg@2:4 is ndcg@2, ndcg@3, ndcg@4 (both ends included), beside the other labels."""
    recs, truth = small
    ranged = sqlmetrics.evaluate(recs, truth, ["ndcg@2:4", "map@3"])
    named = sqlmetrics.evaluate(recs, truth, ["ndcg@2", "ndcg@3", "ndcg@4", "map@3"])
    assert list(ranged.columns) == ["users", "ndcg@2", "ndcg@3", "ndcg@4", "map@3"]
    pd.testing.assert_frame_equal(ranged, named)
    assert sqlmetrics.to_sql(["recall@1:2"], "r", "i") == sqlmetrics.to_sql(
        ["recall@1", "recall@2"], "r", "i"
    )


def test_missing_files_and_wrong_formats(tmp_path: Path) -> None:
    truth = tmp_path / "truth.parquet"
    pd.DataFrame({"user_id": [1], "item_id": [1]}).to_parquet(truth)
    with pytest.raises(SqlmetricsError, match="recommendations: no such file"):
        sqlmetrics.evaluate(str(tmp_path / "nope.parquet"), truth, ["ndcg@3"])
    with pytest.raises(SqlmetricsError, match="no file matches"):
        sqlmetrics.evaluate(str(tmp_path / "*.csv"), truth, ["ndcg@3"])
    (tmp_path / "recs.json").write_text("{}")
    with pytest.raises(SqlmetricsError, match="is neither Parquet"):
        sqlmetrics.evaluate(str(tmp_path / "recs.json"), truth, ["ndcg@3"])


def test_duplicate_recommendations_are_an_error_unless_first_is_asked() -> None:
    recs = pd.DataFrame({"user_id": [1, 1, 1], "item_id": [5, 6, 5], "score": [0.9, 0.8, 0.1]})
    truth = pd.DataFrame({"user_id": [1], "item_id": [6], "relevance": [1]})
    with pytest.raises(SqlmetricsError, match=re.escape("(1, 5) appears 2 times")):
        sqlmetrics.evaluate(recs, truth, ["mrr@3"])
    kept = sqlmetrics.evaluate(recs, truth, ["mrr@3"], duplicates="first")
    assert kept["mrr@3"][0] == 0.5  # item 5 keeps its 0.9 row, item 6 is second


def test_ids_of_different_types_are_refused() -> None:
    recs = pd.DataFrame({"user_id": [1], "item_id": [5], "score": [0.9]})
    truth = pd.DataFrame({"user_id": ["1"], "item_id": [5]})
    with pytest.raises(SqlmetricsError, match="user_id is BIGINT in recommendations but VARCHAR"):
        sqlmetrics.evaluate(recs, truth, ["mrr@3"])


def test_string_scores_are_refused() -> None:
    recs = pd.DataFrame({"user_id": [1], "item_id": [5], "score": ["high"]})
    truth = pd.DataFrame({"user_id": [1], "item_id": [5]})
    with pytest.raises(
        SqlmetricsError, match=re.escape("recommendations.score (the score column) is VARCHAR")
    ):
        sqlmetrics.evaluate(recs, truth, ["mrr@3"])


def test_a_cutoff_constant_is_computed_for_bounded_cutoffs_only() -> None:
    """ndcg_ideal_k's divisor is a sum over k terms computed in Python: a huge k is refused
    rather than hanging the composer."""
    assert "ndcg_ideal_k" in sqlmetrics.to_sql(["ndcg_ideal_k@999999"])
    with pytest.raises(sqlmetrics.SqlmetricsError, match="above the largest supported, 999,999"):
        sqlmetrics.to_sql(["ndcg_ideal_k@1000000000000"])


def _run_sql(sql: str, tables: dict[str, pd.DataFrame]) -> dict[str, float]:
    with duckdb.connect() as connection:
        for name, frame in tables.items():
            connection.register(name, frame)
        row = connection.execute(sql).df().iloc[0]
    return {str(column): float(value) for column, value in row.items()}


def test_cached_sql_keeps_each_calls_names_and_numbers(
    small: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    """to_sql and evaluate cache the composed SQL: calls that differ only in a table name, a
    column name or a threshold get SQL of their own, and each its own numbers, in any order."""
    recs, truth = small
    reversed_scores = recs.assign(score=-recs["score"], other=recs["score"])
    tables = {"recs_a": recs, "recs_b": reversed_scores, "truth": truth}
    metrics = ["P@1", "ndcg@2", "recall@3"]
    want_a = sqlmetrics.evaluate(recs, truth, metrics).iloc[0]
    want_b = sqlmetrics.evaluate(reversed_scores, truth, metrics).iloc[0]
    assert want_a["P@1"] != want_b["P@1"]
    for _ in range(2):  # the second round is served from the caches
        sql_a = sqlmetrics.to_sql(metrics, "recs_a", "truth")
        sql_b = sqlmetrics.to_sql(metrics, "recs_b", "truth")
        sql_other = sqlmetrics.to_sql(metrics, "recs_b", "truth", columns={"score": "other"})
        assert len({sql_a, sql_b, sql_other}) == 3
        assert "recs_a" in sql_a and "recs_a" not in sql_b
        assert '"other"' in sql_other or " other" in sql_other
        for sql, want in ((sql_a, want_a), (sql_b, want_b), (sql_other, want_a)):
            got = _run_sql(sql, tables)
            for metric in metrics:
                assert math.isclose(got[metric], want[metric], abs_tol=1e-12)

    # graded truth: relevance 2 only for user 2's item 20, so a threshold of 1 keeps only it
    at_0 = sqlmetrics.to_sql(["recall@3"], "recs_a", "truth", threshold=0)
    at_1 = sqlmetrics.to_sql(["recall@3"], "recs_a", "truth", threshold=1)
    at_1_float = sqlmetrics.to_sql(["recall@3"], "recs_a", "truth", threshold=1.0)
    assert at_0 != at_1 and at_1 != sqlmetrics.to_sql(["recall@3"], "recs_a", "truth")
    assert math.isclose(_run_sql(at_0, tables)["recall@3"], RECALL_3, abs_tol=1e-12)
    assert math.isclose(_run_sql(at_1, tables)["recall@3"], 1.0, abs_tol=1e-12)
    assert math.isclose(_run_sql(at_1_float, tables)["recall@3"], 1.0, abs_tol=1e-12)
    for threshold, want in ((0, RECALL_3), (1, 1.0), (0, RECALL_3), (1.0, 1.0)):
        got = sqlmetrics.evaluate(recs, truth, ["recall@3"], threshold=threshold)
        assert math.isclose(got["recall@3"][0], want, abs_tol=1e-12)
    # evaluate's own cache: a renamed column is read under its new name
    renamed = recs.rename(columns={"score": "pred"})
    got = sqlmetrics.evaluate(renamed, truth, metrics, columns={"score": "pred"}).iloc[0]
    for metric in metrics:
        assert math.isclose(got[metric], want_a[metric], abs_tol=1e-12)


def test_to_sql_cache_does_not_hand_out_mutable_state() -> None:
    """The cache holds strings; a list argument changed after the call changes the next SQL."""
    metrics = ["ndcg@10"]
    first = sqlmetrics.to_sql(metrics, dialect="postgres")
    metrics.append("map@5")
    second = sqlmetrics.to_sql(metrics, dialect="postgres")
    assert first != second and "map@5" in second and "map@5" not in first
    assert sqlmetrics.to_sql(["ndcg@10"], dialect="postgres") == first
    assert sqlmetrics.to_sql(["ndcg@10"], dialect="mysql") != first


def test_to_sql_cache_follows_the_plans_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    """compose.TOP_K_DIALECTS (which tests switch) is part of the cache key."""
    top_k = sqlmetrics.to_sql(["ndcg@10"])
    monkeypatch.setattr("sqlmetrics.compose.plan.TOP_K_DIALECTS", frozenset())
    window = sqlmetrics.to_sql(["ndcg@10"])
    assert window != top_k
    monkeypatch.undo()
    assert sqlmetrics.to_sql(["ndcg@10"]) == top_k


def test_evaluate_leaves_your_duckdb_connection_as_it_was(
    small: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    """What evaluate registers on a connection of yours goes when it returns, also when it
    fails; the progress-bar setting comes back (issue 23, cause 8)."""
    import duckdb

    recs, truth = small
    connection = duckdb.connect()
    connection.execute("SET enable_progress_bar = true")

    def state() -> tuple[object, ...]:
        views = connection.execute("SELECT count(*) FROM duckdb_views() WHERE NOT internal")
        setting = connection.execute("SELECT current_setting('enable_progress_bar')")
        return views.fetchone(), setting.fetchone()

    before = state()
    for _ in range(3):
        sqlmetrics.evaluate(recs, truth, ["ndcg@2"], connection=connection)
        with pytest.raises(sqlmetrics.SqlmetricsError, match="item_id"):
            sqlmetrics.evaluate(
                recs, truth.drop(columns="item_id"), ["ndcg@2"], connection=connection
            )
    assert state() == before


def test_a_second_call_on_your_connection_reuses_the_composed_query(
    small: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    """DataFrames registered on a connection of yours get the names of the call before once it
    has returned (the SQL is then the same, composed once); two calls open at once get names of
    their own."""
    import duckdb

    from sqlmetrics.engines import duckdb as duckdb_engine
    from sqlmetrics.engines import duckdb_passes

    recs, truth = small
    connection = duckdb.connect()
    sqlmetrics.evaluate(recs, truth, ["ndcg@3"], connection=connection)
    hits = duckdb_passes._query_sql.cache_info().hits
    sqlmetrics.evaluate(recs, truth, ["ndcg@3"], connection=connection)
    assert duckdb_passes._query_sql.cache_info().hits == hits + 1
    first, second = (duckdb_engine.DuckDBEngine(connection) for _ in range(2))
    try:
        names = {first.bind(recs, "recommendations").relation.sql()}
        names.add(second.bind(recs, "recommendations").relation.sql())
        assert len(names) == 2
    finally:
        first.close()
        second.close()


# to_sql composes a request once for every dialect that takes the portable plan (api.py,
# _shared_composition): that is right only while compose reads the dialect to choose a plan and
# for nothing else, which this checks on each kind of query compose builds.
SHARED_REQUESTS: dict[str, dict[str, Any]] = {
    "metrics": {"group_by": ["model"]},
    "per_user": {"per_user": True, "ties": "optimistic"},
    "checks": {"checks": True, "duplicates": "first"},
    "ci": {"ci": 0.9, "ci_method": "bootstrap", "replicates": 20},
    "compare": {"group_by": ["model"], "baseline": "pop"},
    "profile": {"profile": "rectools"},
}


@pytest.mark.parametrize("request_name", list(SHARED_REQUESTS))
def test_every_portable_dialect_composes_the_same_tree(request_name: str) -> None:
    from sqlmetrics.api import composed_query
    from sqlmetrics.compose.plan import TOP_K_DIALECTS
    from sqlmetrics.render.dialects import CANONICAL, DIALECTS

    metrics = ["ndcg@10", "map@5", "mrr", "recall@20", "auc", "coverage@10", "novelty@10"]
    if request_name == "profile":
        metrics = ["ndcg@10", "map@5", "recall@20"]
    portable = [d for d in DIALECTS if d != CANONICAL and d not in TOP_K_DIALECTS]
    trees = {
        dialect: composed_query(
            metrics, "r", "i", dialect=dialect, items="c", **SHARED_REQUESTS[request_name]
        ).sql("duckdb")
        for dialect in portable
    }
    assert len(set(trees.values())) == 1, sorted(trees)


def test_a_shared_composition_keeps_each_dialects_names() -> None:
    """Dialects share a composed tree only where they read the names alike: a name quoted in
    one dialect's way is a request of its own."""

    def sql(user: str, dialect: str) -> str:
        return sqlmetrics.to_sql(["ndcg@10"], "a.recs", columns={"user": user}, dialect=dialect)

    quoted = sql('"UserId"', "trino")
    plain = sql("UserId", "oracle")
    ticked = sql("`UserId`", "spark")
    assert '"UserId" AS user_id' in quoted
    assert "UserId AS user_id" in plain and '"UserId"' not in plain
    assert "`UserId` AS user_id" in ticked


def test_a_shared_composition_is_not_changed_by_its_users() -> None:
    """Each dialect renders its own copy of the shared tree: rendering one dialect (which
    rewrites its tree in place) leaves the next dialect's SQL as it is when composed alone."""
    from sqlmetrics.api import _cached_to_sql, _seen_once, _shared_trees

    metrics = ["ndcg@10", "precision@5", "gini@10"]
    first = {
        d: sqlmetrics.to_sql(metrics, "x", "y", dialect=d) for d in ("mysql", "tsql", "oracle")
    }
    for order in (("tsql", "mysql", "oracle"), ("oracle", "mysql", "tsql")):
        _shared_trees.clear()
        _seen_once.clear()
        _cached_to_sql.cache_clear()
        for dialect in order:  # composed alone, then kept, then a copy of the kept tree
            assert sqlmetrics.to_sql(metrics, "x", "y", dialect=dialect) == first[dialect]
