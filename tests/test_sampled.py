"""evaluate's sampled=: the hand-derived fixture (fixtures/sampled/), the histogram on DuckDB and
through connection= (SQLite), the corrections against independent formulas, m = n - 1 exact,
the refusals and the CLI flags. Small catalogues only: the whole file runs in a few seconds."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics import Sampled, SqlmetricsError, evaluate, read_diagnostics, read_sampled
from sqlmetrics.compose.inputs import Group, Inputs, Options
from sqlmetrics.compose.sampled import sampled_query
from sqlmetrics.render.dialects import render
from sqlmetrics.stats.sampled import (
    ESTIMATORS,
    at_rank,
    estimates,
    estimator_weights,
    law_block,
)
from tests.cli_runner import cli
from tests.engines.cases import read_yaml
from tests.oracle import oracle_evaluate

FIXTURE = Path(__file__).parent.parent / "fixtures" / "sampled" / "two_models.yaml"
METRICS = ["hit_rate@2", "mrr", "ndcg@2"]


def _fixture() -> dict[str, Any]:
    case: dict[str, Any] = read_yaml(FIXTURE)
    return case


def _frames(case: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame]:
    given = case["given"]
    return pd.DataFrame(given["recommendations"]), pd.DataFrame(given["interactions"])


def _sampled(case: dict[str, Any]) -> Sampled:
    return Sampled(**case["sampled"])


def _naive(result: pd.DataFrame) -> dict[tuple[str, str], float]:
    table = read_sampled(result)
    naive = table[table["estimator"] == "naive_sampled"]
    return {(row.model, row.metric): row.value for row in naive.itertuples()}


def test_fixture_metrics_histogram_and_naive_estimates_on_duckdb() -> None:
    case = _fixture()
    recs, truth = _frames(case)
    result = evaluate(recs, truth, METRICS, group_by="model", sampled=_sampled(case))
    for expected, row in zip(case["expect"]["metrics"], result.to_dict("records"), strict=True):
        assert row == pytest.approx(expected)
    for row in case["expect"]["naive_sampled"]:
        for metric in METRICS:
            assert _naive(result)[(row["model"], metric)] == pytest.approx(row[metric])
    diagnostics = read_diagnostics(result)
    assert diagnostics["sampling_rate"].tolist() == [3 / 9, 3 / 9]
    assert diagnostics["sampled_positives"].tolist() == [4, 4]
    assert any("not the full-catalogue ones" in note for note in result.attrs["notes"])


def test_fixture_metrics_agree_with_the_oracle() -> None:
    case = _fixture()
    for model in ("a", "b"):
        recs = [r for r in case["given"]["recommendations"] if r["model"] == model]
        found = oracle_evaluate(
            recs, case["given"]["interactions"], [("hit_rate", 2), ("mrr", None), ("ndcg", 2)]
        )
        expected = next(row for row in case["expect"]["metrics"] if row["model"] == model)
        for (metric, k), value in found.items():
            label = metric if k is None else f"{metric}@{k}"
            assert value.mean == pytest.approx(expected[label])


def _histogram_in_python(case: dict[str, Any]) -> dict[str, list[int]]:
    """Each positive's sampled rank counted from the rows: the list sorted by score (then item
    id) descending, 1 + the negatives before it."""
    positives = {(row["user_id"], row["item_id"]) for row in case["given"]["interactions"]}
    lists: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in case["given"]["recommendations"]:
        lists.setdefault((row["model"], row["user_id"]), []).append(row)
    found: dict[str, list[int]] = {}
    m = case["sampled"]["negatives"]
    for (model, user), rows in lists.items():
        counts = found.setdefault(model, [0] * (m + 1))
        above = 0
        for row in sorted(rows, key=lambda r: (r["score"], r["item_id"]), reverse=True):
            if (user, row["item_id"]) in positives:
                counts[above] += 1
            else:
                above += 1
    return found


def _inputs(grouped: bool = True) -> Inputs:
    from sqlglot import exp

    groups = (Group("model", exp.to_identifier("model"), False),) if grouped else ()
    return Inputs(
        recommendations=exp.to_table("recs"),
        interactions=exp.to_table("truth"),
        user=exp.to_identifier("user_id"),
        item=exp.to_identifier("item_id"),
        score=exp.to_identifier("score"),
        groups=groups,
    )


def _histograms(rows: list[tuple[Any, ...]], m: int) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for kind, model, value, count in rows:
        if kind == "histogram":
            found.setdefault(model, [0] * (m + 1))[int(value) - 1] += int(count)
    return found


@pytest.mark.parametrize("dialect", ["duckdb", "sqlite"])
def test_fixture_histogram_in_sql(dialect: str) -> None:
    import duckdb

    case = _fixture()
    recs, truth = _frames(case)
    expected = case["expect"]["histogram"]
    assert _histogram_in_python(case) == expected
    sql = render(sampled_query(_inputs(), Options()), dialect)
    if dialect == "duckdb":
        rows = duckdb.sql(sql).fetchall()
    else:
        connection = sqlite3.connect(":memory:")
        recs.to_sql("recs", connection, index=False)
        truth.to_sql("truth", connection, index=False)
        rows = connection.execute(sql).fetchall()
    assert _histograms(rows, case["sampled"]["negatives"]) == expected
    assert sorted((r[0], r[1], r[2], r[3]) for r in rows if r[0] != "histogram") == [
        ("negatives", "a", 3, 3),
        ("negatives", "b", 3, 3),
    ]


def test_evaluate_through_a_sqlite_connection() -> None:
    case = _fixture()
    recs, truth = _frames(case)
    connection = sqlite3.connect(":memory:")
    recs.to_sql("recs", connection, index=False)
    truth.to_sql("truth", connection, index=False)
    on_sqlite = evaluate(
        "recs", "truth", METRICS, group_by="model", sampled=_sampled(case),
        connection=connection, dialect="sqlite",
    )  # fmt: skip
    on_duckdb = evaluate(recs, truth, METRICS, group_by="model", sampled=_sampled(case))
    pd.testing.assert_frame_equal(read_sampled(on_sqlite), read_sampled(on_duckdb))
    assert on_sqlite.attrs["dialect"] == "sqlite"


@pytest.mark.parametrize(
    ("ties", "ranks"), [("optimistic", [1, 1]), ("pessimistic", [2, 2]), ("id", [1, 2])]
)
def test_tied_scores_follow_the_tie_policy(ties: str, ranks: list[int]) -> None:
    # two users, each positive (item 2) tied with one negative (item 1 or 3) under another
    recs = pd.DataFrame(
        {
            "user_id": [1, 1, 1, 2, 2, 2],
            "item_id": [1, 2, 4, 3, 2, 4],
            "score": [0.5, 0.5, 0.1, 0.5, 0.5, 0.1],
        }
    )
    truth = pd.DataFrame({"user_id": [1, 2], "item_id": [2, 2]})
    result = evaluate(recs, truth, ["mrr"], sampled=Sampled(5, 2), ties=ties)
    naive = read_sampled(result).set_index("estimator")["value"]["naive_sampled"]
    # ties="id" (item id descending): user 1's positive (2) before item 1, user 2's after item 3
    assert naive == pytest.approx(sum(1 / r for r in ranks) / 2)


def _full_catalogue(n: int, users: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every user's list is the whole catalogue (m = n - 1), the positive at a random place."""
    generator = np.random.default_rng(seed)
    rows = []
    for user in range(users):
        for item, score in enumerate(generator.permutation(n)):
            rows.append((user, item, float(score)))
    recs = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    positive = generator.integers(0, n, size=users)
    return recs, pd.DataFrame({"user_id": range(users), "item_id": positive})


def test_every_other_item_sampled_gives_the_exact_metric() -> None:
    n = 12
    recs, truth = _full_catalogue(n, 30, 7)
    metrics = ["hit_rate@3", "recall@3", "ndcg@5", "precision@4", "mrr", "map@6"]
    result = evaluate(recs, truth, metrics, sampled=Sampled(n, n - 1))
    table = read_sampled(result)
    assert sorted(set(table["estimator"])) == sorted(ESTIMATORS)
    for metric in metrics:
        values = table.loc[table["metric"] == metric, "value"]
        assert values.to_numpy() == pytest.approx(result[metric].iloc[0], abs=1e-9)


def test_weights_are_the_identity_at_m_n_minus_1() -> None:
    n = 15
    targets = [("ndcg", 10), ("hit_rate", 5), ("mrr", None), ("precision", 3), ("map", 4)]
    weights = estimator_weights(Sampled(n, n - 1), targets)
    ranks = np.arange(1, n + 1, dtype=float)
    for i, (family, k) in enumerate(targets):
        for e in range(len(ESTIMATORS)):
            assert weights[i, e] == pytest.approx(at_rank(family, k, ranks), abs=1e-9)


def _law(n: int, m: int, law: str = "hypergeometric") -> np.ndarray:
    factorials = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1)))))
    return law_block(np.arange(1, n + 1, dtype=float), n, m, law, factorials)


def test_the_law_is_the_hypergeometric_one_and_near_the_binomial() -> None:
    n, m = 9, 3
    law = _law(n, m)
    for r in range(1, n + 1):
        for j in range(m + 1):  # j = r' - 1 of the r - 1 negatives above among the m drawn
            expected = math.comb(r - 1, j) * math.comb(n - r, m - j) / math.comb(n - 1, m)
            assert law[r - 1, j] == pytest.approx(expected, abs=1e-12)
    binomial = _law(n, m, "binomial")
    assert binomial[4, 2] == pytest.approx(math.comb(3, 2) * 0.5**2 * 0.5)  # r = 5: q = 4/8
    assert np.abs(_law(3000, 10) - _law(3000, 10, "binomial")).max() < 0.01


def test_bias_variance_at_gamma_1_is_the_posterior_mean() -> None:
    n, m, k = 40, 6, 5
    law = _law(n, m)
    ranks = np.arange(1, n + 1, dtype=float)
    metric = at_rank("ndcg", k, ranks)
    posterior = law.T @ metric / law.sum(axis=0)  # sum_r p(r | r') M(r), uniform prior
    weights = estimator_weights(Sampled(n, m, gamma=1.0), [("ndcg", k)])
    assert weights[0, 3] == pytest.approx(posterior, rel=1e-9)


def test_least_squares_is_the_fit_to_the_sampling_matrix() -> None:
    n, m = 25, 8  # small enough for the system to be well conditioned
    law = _law(n, m)
    metric = at_rank("hit_rate", 3, np.arange(1, n + 1, dtype=float))
    fitted = np.linalg.lstsq(law, metric, rcond=None)[0]
    weights = estimator_weights(Sampled(n, m, gamma=0.0), [("hit_rate", 3)])
    assert weights[0, 2] == pytest.approx(fitted, rel=1e-6, abs=1e-9)
    assert weights[0, 3] == pytest.approx(fitted, rel=1e-6, abs=1e-9)  # gamma 0: CLS
    # the rescaled rank: r' = 2 is the full rank 1 + (n - 1) / m = 4, beyond 3
    assert weights[0, 1].tolist()[:2] == [1.0, 0.0]


def test_intervals_come_from_the_bootstrap_of_the_positives() -> None:
    case = _fixture()
    recs, truth = _frames(case)
    result = evaluate(
        recs,
        truth,
        METRICS,
        group_by="model",
        sampled=_sampled(case),
        ci=0.9,
        replicates=200,
        seed=3,
    )
    table = read_sampled(result)
    assert list(table.columns) == ["model", "metric", "estimator", "value", "lo", "hi", "positives"]
    assert (table["lo"] <= table["value"] + 1e-12).all() and (
        table["value"] <= table["hi"] + 1e-12
    ).all()
    # the same seed, the same draws
    weights = estimator_weights(_sampled(case), [("mrr", None)])
    histogram = np.array(case["expect"]["histogram"]["b"], dtype=float)
    first, second = (estimates(histogram, weights, 0.9, 200, 3)[1] for _ in range(2))
    assert first is not None and second is not None and (first == second).all()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"n_items": 10, "negatives": 10}, "between 1 and n_items - 1 = 9"),
        ({"n_items": 1, "negatives": 1}, "at least 2"),
        ({"n_items": 10.0, "negatives": 3}, "whole number"),
        ({"n_items": 10, "negatives": 3, "gamma": 2}, "gamma"),
    ],
)
def test_the_form_refuses_what_cannot_be_sampled(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(SqlmetricsError, match=message):
        Sampled(**arguments)


def test_lists_that_do_not_fit_the_form_are_refused() -> None:
    case = _fixture()
    recs, truth = _frames(case)
    with pytest.raises(SqlmetricsError, match=r"6 list\(s\) hold another number, e.g. 3"):
        evaluate(recs, truth, METRICS, group_by="model", sampled=Sampled(10, 4))
    with pytest.raises(SqlmetricsError, match=r"2 held-out positive\(s\) are not in their"):
        evaluate(
            recs,
            pd.concat([truth, pd.DataFrame({"user_id": [1], "item_id": [99]})]),
            METRICS,
            group_by="model",
            sampled=_sampled(case),
        )
    with pytest.raises(SqlmetricsError, match="per_user does not apply"):
        evaluate(recs, truth, METRICS, per_user=True, sampled=_sampled(case))
    with pytest.raises(SqlmetricsError, match="ties='average'"):
        evaluate(recs, truth, METRICS, group_by="model", ties="average", sampled=_sampled(case))
    with pytest.raises(SqlmetricsError, match=r"sqlmetrics\.Sampled"):
        evaluate(recs, truth, METRICS, sampled=(10, 3))  # type: ignore[typeddict-item]


def test_a_list_repeating_its_positive_below_the_cutoff_is_refused() -> None:
    # evaluate counts repeats only as deep as the metrics read (here 2); the histogram reads the
    # whole list, where model a's user 2 repeats its positive (item 11, placed 4th): counted
    # twice, it made 5 positives where there are 4 (naive hit_rate@2 0.4 instead of 0.5)
    case = _fixture()
    recs, truth = _frames(case)
    repeated = pd.concat([recs, recs[(recs["model"] == "a") & (recs["item_id"] == 11)]])
    with pytest.raises(SqlmetricsError, match=r"repeat.*\(2, 11\).*duplicates='first'"):
        evaluate(repeated, truth, ["hit_rate@2"], group_by="model", sampled=_sampled(case))
    first = evaluate(
        repeated,
        truth,
        ["hit_rate@2"],
        group_by="model",
        sampled=_sampled(case),
        duplicates="first",
    )
    assert read_diagnostics(first)["sampled_positives"].tolist() == [4, 4]
    assert _naive(first) == pytest.approx(
        _naive(evaluate(recs, truth, ["hit_rate@2"], group_by="model", sampled=_sampled(case)))
    )


def test_metrics_without_an_estimate_are_named() -> None:
    case = _fixture()
    recs, truth = _frames(case)
    result = evaluate(
        recs, truth, ["precision", "auc", "ndcg@2"], group_by="model", sampled=_sampled(case)
    )
    assert set(read_sampled(result)["metric"]) == {"ndcg@2"}
    assert any("no corrected estimate for precision, auc" in note for note in result.attrs["notes"])


def test_the_cli_flags(tmp_path: Path) -> None:
    case = _fixture()
    recs, truth = _frames(case)
    recs.to_csv(tmp_path / "recs.csv", index=False)
    truth.to_csv(tmp_path / "truth.csv", index=False)
    common = [
        "evaluate",
        str(tmp_path / "recs.csv"),
        str(tmp_path / "truth.csv"),
        "-m",
        "mrr",
        "--group-by",
        "model",
    ]
    run = cli(*common, "--sampled-items", "10", "--sampled-negatives", "3")
    assert run.returncode == 0, run.stderr
    assert "sampled metrics, full-catalogue estimates:" in run.stdout
    assert "corrected_bias_variance" in run.stdout and "sampling_rate" in run.stderr
    assert "not the full-catalogue ones" in run.stderr
    one = cli(*common, "--sampled-items", "10")
    assert one.returncode == 2 and "both --sampled-items N" in one.stderr


def test_the_cli_refuses_the_sampled_flags_with_the_trec_report(tmp_path: Path) -> None:
    # --format trec prints trec_eval's measures, not evaluate's table: the flags were ignored
    (tmp_path / "run").write_text("1 Q0 a 1 0.9 r\n1 Q0 b 2 0.8 r\n")
    (tmp_path / "qrels").write_text("1 0 a 1\n")
    trec = ["evaluate", str(tmp_path / "run"), str(tmp_path / "qrels"), "--input-format", "trec"]
    assert cli(*trec, "--format", "trec", "-q").returncode == 0
    run = cli(*trec, "--format", "trec", "--sampled-items", "10", "--sampled-negatives", "1")
    assert run.returncode == 2 and "--format trec" in run.stderr and "sampled" in run.stderr


def test_the_names_are_exported() -> None:
    assert sqlmetrics.Sampled is Sampled and sqlmetrics.read_sampled is read_sampled


def test_ranks_summed_in_bins_beyond_the_exact_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlmetrics.stats.sampled as module

    targets = [("ndcg", 10), ("mrr", None), ("hit_rate", 5)]
    every = estimator_weights(Sampled(3000, 20), targets)
    monkeypatch.setattr(module, "EXACT_RANKS", 500)  # ranks beyond 500 in 500 bins of 5
    binned = estimator_weights(Sampled(3000, 20), targets)
    assert binned[:, [0, 1, 3]] == pytest.approx(every[:, [0, 1, 3]], abs=1e-4)


def test_several_positives_in_a_list_are_noted() -> None:
    """Each positive is a case of its own: with two in a list the estimates average over the
    positives, not the users, and a note says so; with one per list there is none."""
    recs, truth = _full_catalogue(6, 4, 3)
    several = "more than one positive"
    result = evaluate(recs, truth, ["hit_rate@2"], sampled=Sampled(6, 5))
    assert not any(several in note for note in result.attrs["notes"])
    second = truth.assign(item_id=(truth["item_id"] + 1) % 6)
    result = evaluate(recs, pd.concat([truth, second]), ["hit_rate@2"], sampled=Sampled(6, 4))
    assert any(several in note for note in result.attrs["notes"])
