"""Group columns only the recommendations have (issue 23, cause 9): arms.complement_arms
sums each group's population as the users it lists plus every other user as one without a
list, instead of crossing every group with every interaction. The same numbers, to the bit."""

from __future__ import annotations

import math
import re

import duckdb
import numpy as np
import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics import api
from sqlmetrics.catalog.metrics import metrics as catalogue
from sqlmetrics.compose import plan
from sqlmetrics.engines import duckdb_passes

RANKING = [
    f"{name}@{k}"
    for name in ("ndcg", "map", "mrr", "precision", "recall", "hit_rate", "micro_hit_ratio")
    for k in (1, 3, 20)
]


def arms_data(seed: int, duplicates: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Three models listing overlapping users; users without a list in some model, users with
    a list and nothing relevant, graded relevance, tied and NULL scores."""
    rng = np.random.default_rng(seed)
    recs, truth = [], []
    for user in range(60):
        for model in ("a", "b", "c"):
            if rng.random() < 0.4:
                continue  # no list in this model
            for item in rng.choice(30, size=int(rng.integers(1, 12)), replace=False):
                score = None if rng.random() < 0.05 else float(rng.integers(0, 8)) / 7
                recs.append((model, user, int(item), score, float(rng.integers(1, 6))))
                if duplicates and rng.random() < 0.05:
                    recs.append((model, user, int(item), 0.01, 1.0))
        for item in rng.choice(30, size=int(rng.integers(0, 6)), replace=False):
            truth.append((user + 10 * (user % 7 == 0), int(item), int(rng.integers(0, 4))))
    return (
        pd.DataFrame(recs, columns=["model", "user_id", "item_id", "score", "rating"]),
        pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"]).assign(
            rating=lambda frame: frame.relevance + 1.0
        ),
    )


def both_plans(
    monkeypatch: pytest.MonkeyPatch, recs: pd.DataFrame, truth: pd.DataFrame, **options: object
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """evaluate's metrics and diagnostics, by complement_arms and by crossing the arms."""
    results = []
    for crossing in (False, True):
        duckdb_passes._query_sql.cache_clear()  # evaluate's SQL is cached by its arguments
        with monkeypatch.context() as patch:
            if crossing:
                patch.setattr(plan, "complements_arms", lambda *_: False)
            frame = sqlmetrics.evaluate(recs, truth, group_by="model", **options)
        duckdb_passes._query_sql.cache_clear()
        results.append((frame, sqlmetrics.read_diagnostics(frame)))
    (new, new_diagnostics), (old, old_diagnostics) = results
    pd.testing.assert_frame_equal(new, old, check_exact=True)
    if old_diagnostics is not None:
        pd.testing.assert_frame_equal(new_diagnostics, old_diagnostics, check_exact=True)
    return new, old_diagnostics


POPULATIONS = ("all", "common", "judged", "all_judged")
TIES = ("id", "optimistic", "average")


def crossing_cases() -> list[object]:
    """Every population under every tie policy on one data set each: a developer's run takes
    the 12 where the seed is (i + j) % 2 + 1, which still meets each population and each tie
    policy on both data sets; CI runs the 24 (full_matrix, tests/conftest.py)."""
    return [
        pytest.param(
            seed,
            population,
            ties,
            id=f"{ties}-{population}-{seed}",
            marks=() if seed == (i + j) % 2 + 1 else pytest.mark.full_matrix,
        )
        for i, ties in enumerate(TIES)
        for j, population in enumerate(POPULATIONS)
        for seed in (1, 2)
    ]


@pytest.mark.parametrize(("seed", "population", "ties"), crossing_cases())
def test_same_numbers_as_crossing(
    monkeypatch: pytest.MonkeyPatch, seed: int, population: str, ties: str
) -> None:
    recs, truth = arms_data(seed)
    wanted = [
        label
        for label in RANKING
        if ties != "average" or catalogue()[label.split("@")[0]].ties_average
    ]
    both_plans(monkeypatch, recs, truth, metrics=wanted, population=population, ties=ties)


def test_same_numbers_with_scores_ratings_and_own_populations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """per_user from several stages (in_population counts the users), duplicates kept first,
    a request with a population of its own, the rating metrics (a square root)."""
    recs, truth = arms_data(3, duplicates=True)
    both_plans(
        monkeypatch,
        recs,
        truth,
        metrics=["ndcg@5", "recall@10", "gauc", "auc", "rmse", "mae", "micro_mrr@5"],
        columns={"rating": "rating"},
        duplicates="first",
    )
    # MS Recommenders: ndcg@k over every user, the others over the users with a list
    recs, truth = arms_data(5)
    both_plans(
        monkeypatch, recs, truth, metrics=["ndcg@5", "precision@5", "map@5"], profile="recommenders"
    )


@pytest.mark.parametrize("metric", ["ndcg@5", "ndcg", "auc"])
def test_a_repeated_item_is_refused_as_when_crossing(
    monkeypatch: pytest.MonkeyPatch, metric: str
) -> None:
    """The arms' parts count the repeated items as the crossing plan does: their plans were
    chosen without the diagnostics, so repeats were counted nowhere (0) and evaluate went on
    with the repeated rows, a silent wrong number (model a's list 1, 2, 2)."""
    recs, truth = arms_data(4, duplicates=True)
    refusals = []
    for crossing in (False, True):
        duckdb_passes._query_sql.cache_clear()
        with monkeypatch.context() as patch:
            if crossing:
                patch.setattr(plan, "complements_arms", lambda *_: False)
            with pytest.raises(sqlmetrics.SqlmetricsError) as raised:
                sqlmetrics.evaluate(recs, truth, [metric], group_by="model")
        refusals.append(str(raised.value))
    duckdb_passes._query_sql.cache_clear()
    assert "repeat a (user_id, item_id) pair" in refusals[0]
    # the same count; the example pair is whichever row the engine meets first
    assert [refusal.split(", e.g.")[0] for refusal in refusals] == [
        refusals[1].split(", e.g.")[0]
    ] * 2


def test_rank_column_and_deep_cutoff(monkeypatch: pytest.MonkeyPatch) -> None:
    recs, truth = arms_data(4)
    ranked = recs.assign(
        rank=recs.sort_values("score", ascending=False, na_position="last")
        .groupby(["model", "user_id"])
        .cumcount()
        .add(1)
    ).drop(columns="score")
    given = {"rank": "rank", "score": None}
    both_plans(monkeypatch, ranked, truth, metrics=["ndcg@30", "precision@2"], columns=given)
    both_plans(monkeypatch, recs, truth, metrics=["ndcg@30", "r_precision", "map"])


def test_every_ranking_metric_scores_a_user_without_a_list_0() -> None:
    """complement_arms adds the users a group does not list as zeros (or NULL, outside a
    request's population): a metric that gave them another value would need its sums, not a
    count, and could change the last bits of a mean."""
    recs = pd.DataFrame({"user_id": [1, 1], "item_id": [10, 11], "score": [0.9, 0.5]})
    truth = pd.DataFrame(
        {"user_id": [1, 2, 2, 2, 3], "item_id": [10, 20, 21, 22, 30], "relevance": [1, 2, 1, 3, 0]}
    )
    checked = 0
    for name, metric in sorted(catalogue().items()):
        if metric.reads != "judged" or metric.summed or metric.exponential:
            continue  # complements_arms leaves the sums and geometric means to the crossed plan
        if not metric.reads_the_list:
            continue  # nor a value without the list (ideal_dcg): test_list_free_metrics_cross
        label = f"{name}@2" if metric.takes_cutoff else name
        frame = sqlmetrics.evaluate(recs, truth, [label], per_user=True)
        (value,) = frame.loc[frame.user_id == 2, label].tolist()
        assert value == 0 and not math.isnan(value), (label, value)
        # all_judged: user 3, judged with nothing relevant and no list, scores 0 too (a micro
        # metric has no per-user value there: 0 / 0, nothing in its sums)
        frame = sqlmetrics.evaluate(recs, truth, [label], per_user=True, population="all_judged")
        (value,) = frame.loc[frame.user_id == 3, label].tolist()
        assert math.isnan(value) if metric.micro else value == 0, (label, value)
        checked += 1
    assert checked >= 20


def test_list_free_metrics_cross_the_arms() -> None:
    """ideal_dcg does not read the list: a user a model does not list keeps the ideal DCG of
    its relevant items, so by a column only the recommendations have it is crossed, never
    complemented with zeros. Model a lists user 1 only; users 1 and 2 each have one item of
    relevance 1 (ideal DCG 1 / log2(2) = 1), so model a's mean is (1 + 1) / 2 = 1."""
    recs = pd.DataFrame({"model": ["a"], "user_id": [1], "item_id": [10], "score": [0.9]})
    truth = pd.DataFrame({"user_id": [1, 2], "item_id": [10, 20], "relevance": [1, 1]})
    result = sqlmetrics.evaluate(recs, truth, ["ideal_dcg", "ndcg@2"], group_by="model")
    assert result["ideal_dcg"].tolist() == [1.0]
    assert result["ndcg@2"].tolist() == [0.5]  # user 1 hits at 1 (1.0), user 2 has no list (0)


def test_tiny_case_by_hand() -> None:
    """Two models, four users; by hand (relevance 1, so ndcg@2 of one hit at position p is
    (1 / log2(p + 1)) / IDCG, IDCG@2 = 1 + 1/log2(3) for two relevant items, 1 for one):

    truth: u1 {i1, i2}, u2 {i3}, u3 {i4}; u4 has nothing relevant.
    model a lists u1 [i1, i9] (hit at 1), u4 [i1];  model b lists u2 [i8, i3] (hit at 2).

    population "all" (u1, u2, u3 in each model):
      a: ndcg@2 = (1 / (1 + 1/log2 3) + 0 + 0) / 3, recall@2 = (1/2 + 0 + 0) / 3
      b: ndcg@2 = (0 + (1/log2 3) / 1 + 0) / 3,     recall@2 = (0 + 1 + 0) / 3
    population "common" (users with a list and a relevant item):
      a: u1 only: ndcg@2 = 1 / (1 + 1/log2 3), recall@2 = 1/2
      b: u2 only: ndcg@2 = 1/log2 3, recall@2 = 1
    diagnostics: 4 users in the interactions (u4 has a row of relevance 0) in each model;
    population_without_recommendations a: u2, u3 (2); b: u1, u3 (2);
    recommended_without_relevant a: u4 (1), b: 0.
    """
    recs = pd.DataFrame(
        {
            "model": ["a", "a", "a", "b", "b"],
            "user_id": [1, 1, 4, 2, 2],
            "item_id": [1, 9, 1, 8, 3],
            "score": [0.9, 0.8, 0.5, 0.9, 0.8],
        }
    )
    truth = pd.DataFrame(
        {"user_id": [1, 1, 2, 3, 4], "item_id": [1, 2, 3, 4, 5], "relevance": [1, 1, 1, 1, 0]}
    )
    third = 1 / math.log2(3)
    expected = {
        "all": {"a": (3, 1 / (1 + third) / 3, 0.5 / 3), "b": (3, third / 3, 1 / 3)},
        "common": {"a": (1, 1 / (1 + third), 0.5), "b": (1, third, 1.0)},
    }
    for population, rows in expected.items():
        frame = sqlmetrics.evaluate(
            recs, truth, ["ndcg@2", "recall@2"], group_by="model", population=population
        )
        assert frame.model.tolist() == ["a", "b"]
        for _, row in frame.iterrows():
            users, ndcg, recall = rows[row.model]
            assert row.users == users
            assert row["ndcg@2"] == pytest.approx(ndcg, abs=1e-12)
            assert row["recall@2"] == pytest.approx(recall, abs=1e-12)
        diagnostics = sqlmetrics.read_diagnostics(frame).set_index("model")
        assert diagnostics.users_in_interactions.tolist() == [4, 4]
        assert diagnostics.users_with_recommendations.tolist() == [2, 1]
        assert diagnostics.population_without_recommendations.tolist() == [2, 2]
        assert diagnostics.recommended_without_relevant.tolist() == [1, 0]


@pytest.mark.parametrize("diagnostics", [False, True])
def test_cost_is_not_groups_times_interactions(diagnostics: bool) -> None:
    """No operator of the summary's plan handles groups x interaction rows: 100 models, 2,000
    recommendation rows, 1,000 interaction rows (crossing them: 100,000 rows, per_user's own
    plan, which returns groups x users rows by definition)."""
    connection = duckdb.connect()
    connection.execute(
        "CREATE TABLE recs AS SELECT i % 100 AS model, i % 40 AS user_id, i % 7 AS item_id, "
        "(i % 13) / 13 AS score FROM range(2000) AS r(i)"
    )
    connection.execute(
        "CREATE TABLE truth AS SELECT i % 45 AS user_id, i % 11 AS item_id, 1.0 AS relevance "
        "FROM range(1000) AS r(i)"
    )

    def largest_operator(per_user: bool) -> int:
        sql = sqlmetrics.to_sql(
            ["ndcg@10", "recall@10"],
            "recs",
            "truth",
            group_by=["model"],
            interactions_group_by=[],
            per_user=per_user,
            checks=diagnostics and not per_user,
        )
        plan = connection.execute("EXPLAIN ANALYZE " + sql).fetchall()[0][1]
        return max(int(rows.replace(",", "")) for rows in re.findall(r"([\d,]+) [Rr]ows", plan))

    assert largest_operator(per_user=True) >= 100 * 1000
    assert largest_operator(per_user=False) <= 2 * (2000 + 1000)


@pytest.mark.parametrize("population", ["all", "common"])
def test_null_users_as_crossing(monkeypatch: pytest.MonkeyPatch, population: str) -> None:
    """A NULL user in both tables (refused by evaluate, but to_sql's query runs anyway): no
    equality matches it, and crossing puts its list and its interactions in one per_user row
    (GROUP BY user_id); complement_arms joins it by a join of its own, to the same numbers and
    diagnostics."""
    recs = pd.DataFrame(
        {
            "model": ["a", "a", "a", "b", "b"],
            "user_id": [1, None, None, 1, 2],
            "item_id": [1, 2, 3, 1, 5],
            "score": [0.9, 0.8, 0.7, 0.5, 0.4],
        }
    )
    truth = pd.DataFrame({"user_id": [1, None, 2, None], "item_id": [1, 2, 5, 9]}).assign(
        relevance=1.0
    )
    connection = duckdb.connect()
    connection.register("recs", recs)
    connection.register("truth", truth)
    results = []
    for crossing in (False, True):
        with monkeypatch.context() as patch:
            if crossing:
                patch.setattr(plan, "complements_arms", lambda *_: False)
            for checks in (False, True):
                query = api.composed_query(
                    ["ndcg@2", "precision@2", "micro_hit_ratio@2"],
                    "recs",
                    "truth",
                    group_by=["model"],
                    interactions_group_by=[],
                    population=population,
                    checks=checks,
                )
                results.append(connection.execute(query.sql("duckdb")).df())
    for new, old in zip(results[:2], results[2:], strict=True):
        pd.testing.assert_frame_equal(new, old, check_exact=True)
    assert results[0].users.tolist() == ([3, 3] if population == "all" else [2, 2])


def test_sums_and_geometric_means_by_a_recommendations_only_group() -> None:
    """gm_map (its 1e-5 floor) and num_rel (every user's relevant items) do not score a user
    without a list 0: per model, they equal the model's own lists evaluated alone."""
    recs = pd.DataFrame(
        {
            "user_id": [1, 1, 2, 1, 3],
            "item_id": [10, 11, 20, 10, 30],
            "score": [0.9, 0.5, 0.7, 0.8, 0.6],
            "model": ["a", "a", "a", "b", "b"],
        }
    )
    truth = pd.DataFrame({"user_id": [1, 2, 3, 4], "item_id": [11, 21, 30, 40], "relevance": 1})
    metrics = ["gm_map", "num_rel", "num_ret", "map"]
    grouped = sqlmetrics.evaluate(recs, truth, metrics, group_by="model").set_index("model")
    for model in ("a", "b"):
        alone = sqlmetrics.evaluate(recs[recs.model == model].drop(columns="model"), truth, metrics)
        assert grouped.loc[model, metrics].tolist() == alone.loc[0, metrics].tolist()
