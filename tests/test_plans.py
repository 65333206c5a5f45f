"""The DuckDB top-k plan and the portable window plan give the same numbers, ties included."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from sqlglot import exp

import sqlmetrics
from sqlmetrics.catalog.metrics import metrics, parse_requests
from sqlmetrics.compose import duckdb_plan
from sqlmetrics.compose import plan as plan_module
from sqlmetrics.compose.duckdb_plan import (
    HIT_ROWS_METRICS,
    SCORED_SUM_METRICS,
    bind_repeats,
    bind_score_floor,
)
from sqlmetrics.compose.inputs import Options
from sqlmetrics.compose.plan import choose_plan
from sqlmetrics.compose.stages import bind_placeholders, stage, with_ctes
from sqlmetrics.engines import duckdb_passes
from sqlmetrics.engines.duckdb import DuckDBEngine, known_rows
from tests.test_plan_choice import inputs as plan_inputs

NAMES = (
    "hits",
    "hit_rate",
    "precision",
    "recall",
    "f1",
    "mrr",
    "map",
    "map_min",
    "map_hits",
    "cg",
    "dcg",
    "ndcg",
    "dcg_exp",
    "ndcg_exp",
    "micro_hit_ratio",
    "micro_mrr",
    "ndcg_ideal_k",
)
METRICS = [f"{name}@{k}" for name in NAMES for k in (1, 2, 5, 20)]
# Deeper than TOP_K_MAX_CUTOFF: score_lists.sql (the scores' top-k aggregate, each hit placed by
# its score: placed_hits.sql) under the same hit-rows plan; with a metric that reads more than
# hit rows (precision_listed: every list's length), sorted_lists.sql (each whole list sorted).
DEEP_METRICS = [f"{name}@{k}" for name in NAMES for k in (3, 21)]  # lists up to 24 long
DEEP_SORTED_METRICS = [*DEEP_METRICS, "precision_listed@21"]


def tied_data(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Scores on a coarse grid (many ties, some across every cutoff), NULL scores, graded truth."""
    rng = np.random.default_rng(seed)
    recs, truth = [], []
    for user in range(300):
        length = int(rng.integers(0, 25))
        items = rng.choice(60, size=length, replace=False)
        for item in items:
            score = None if rng.random() < 0.03 else float(rng.integers(0, 6)) / 5
            recs.append((user, int(item), score, "a" if user % 2 else "b"))
        for item in rng.choice(60, size=int(rng.integers(0, 8)), replace=False):
            truth.append((user, int(item), int(rng.integers(0, 4))))
    return (
        pd.DataFrame(recs, columns=["user_id", "item_id", "score", "segment"]),
        pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"]),
    )


@pytest.mark.parametrize(
    ("seed", "metrics", "ties", "floor"),
    [
        (1, METRICS, "id", None),
        (2, METRICS, "id", None),
        (3, DEEP_METRICS, "id", None),
        (4, METRICS, "id_text", None),
        (9, DEEP_METRICS, "id_text", None),
        (12, DEEP_SORTED_METRICS, "id", None),
        (13, DEEP_SORTED_METRICS, "id_text", None),
        # a score floor (duckdb_passes.score_floor) on a tied score, between two, above every score
        (5, METRICS, "id", 0.6),
        (6, METRICS, "id_text", 0.3),
        (7, METRICS, "id", 2.0),
    ],
)
def test_top_k_plan_equals_window_plan(
    seed: int,
    metrics: list[str],
    ties: str,
    floor: float | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ties="id_text" too: item ids 0-59 order differently as text (9 before 10). The score
    floor sends to the window every list with fewer than cutoff + 3 scores at or above it."""
    recs, truth = tied_data(seed)
    again = truth.iloc[::7]  # repeated interactions, in every group of the recommendations
    truth = pd.concat([truth, again.assign(relevance=(again["relevance"] + 1) % 4)])
    kwargs = {"per_user": True, "group_by": ["segment"], "ties": ties}
    monkeypatch.setattr(duckdb_passes, "score_floor", lambda *arguments: floor)
    fast = sqlmetrics.evaluate(recs, truth, metrics, **kwargs)
    monkeypatch.setattr("sqlmetrics.compose.plan.TOP_K_DIALECTS", frozenset())
    portable = sqlmetrics.evaluate(recs, truth, metrics, **kwargs)
    pd.testing.assert_frame_equal(fast, portable, check_exact=False, rtol=0, atol=1e-12)
    fast_diagnostics = sqlmetrics.read_diagnostics(fast)
    pd.testing.assert_frame_equal(fast_diagnostics, sqlmetrics.read_diagnostics(portable))
    assert fast_diagnostics["tied_score_groups"].sum() > 0
    assert fast_diagnostics["null_scores"].sum() > 0


def test_duckdb_sql_uses_the_top_k_plan_and_others_do_not() -> None:
    assert "ARG_MAX" in sqlmetrics.to_sql("ndcg@10")
    assert "ARG_MAX" not in sqlmetrics.to_sql("ndcg")  # no cutoff: the whole list is read
    assert "ARG_MAX" not in sqlmetrics.to_sql("ndcg@10", dialect="postgres")
    deep = sqlmetrics.to_sql(["ndcg@10", "ndcg@100"])  # deep: the scores' top-k, hits placed
    assert "ARG_MAX" not in deep and "ARRAY_REVERSE_SORT(" not in deep
    assert "MAX(score, 100)" in deep and "LIST_POSITION(" in deep
    sorted_deep = sqlmetrics.to_sql(["ndcg@10", "ndcg_clipped@100"])  # each whole list sorted
    assert "ARRAY_REVERSE_SORT(" in sorted_deep  # sqlglot's spelling of LIST_SORT(..., 'DESC')
    assert "SORT(" not in sqlmetrics.to_sql(["ndcg@10", "ndcg@100"], dialect="postgres")
    assert "ARG_MAX" in sqlmetrics.to_sql("ndcg@10", ties="id_text")


def test_every_metric_read_on_hit_rows_only_is_compared_above() -> None:
    assert set(NAMES) >= HIT_ROWS_METRICS
    # so that reads_hit_rows_only also means that every request reads judged alone
    assert {metrics()[name].reads for name in HIT_ROWS_METRICS} == {"judged"}
    assert set(SCORED_NAMES) >= SCORED_SUM_METRICS


# Spelled out: a metric added to WHOLE_LIST_HIT_ROWS_METRICS fails the test below until added.
WHOLE_LIST_NAMES = (
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "gm_map",
    "r_precision",
    "iprec_at_recall",
    "iprec_at_recall_trec9",
)


@pytest.mark.parametrize(
    ("seed", "ties", "population", "threshold"),
    [(21, "id", "all", 0.0), (22, "id_text", "judged", 1.0), (23, "id_text", "all_judged", 0.0)],
)
def test_whole_list_metrics_on_hit_rows_equal_every_row(
    seed: int, ties: str, population: str, threshold: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window plan keeping hit rows only (joined_hits) gives what the plan keeping every
    row gives for the metrics without a cutoff that read hit rows only, beside bpref (which
    reads judgements, not judged) and map: tied and NULL scores, graded truth, trec_eval's
    populations, per user and by group, the diagnostics too."""
    assert set(WHOLE_LIST_NAMES) == duckdb_plan.WHOLE_LIST_HIT_ROWS_METRICS
    recs, truth = tied_data(seed)
    levels = [f"{name}@{level}" for name in WHOLE_LIST_NAMES[-2:] for level in (0.0, 0.3, 1.0)]
    metrics = [*WHOLE_LIST_NAMES[:-2], *levels, "bpref", "map", "precision@5"]
    kwargs = {
        "per_user": True,
        "group_by": ["segment"],
        "ties": ties,
        "population": population,
        "threshold": threshold,
    }
    requests = parse_requests(metrics)
    assert choose_plan(requests, plan_inputs(), Options(ties=ties)).judged == "joined_hits"
    hits = sqlmetrics.evaluate(recs, truth, metrics, **kwargs)
    monkeypatch.setattr(duckdb_plan, "WHOLE_LIST_HIT_ROWS_METRICS", frozenset())
    assert choose_plan(requests, plan_inputs(), Options(ties=ties)).judged == "joined"
    every = sqlmetrics.evaluate(recs, truth, metrics, **kwargs)
    pd.testing.assert_frame_equal(hits, every, check_exact=False, rtol=0, atol=1e-12)
    pd.testing.assert_frame_equal(
        sqlmetrics.read_diagnostics(hits), sqlmetrics.read_diagnostics(every)
    )
    assert len(hits) > 100 and hits["num_rel_ret"].sum() > 0


JUDGED_PAIRS_NAMES = ("bpref", "gm_bpref", "num_nonrel_judged_ret")  # spelled out, as above


@pytest.mark.parametrize(
    ("seed", "ties", "population", "threshold", "group_by"),
    [
        (31, "id", "all", 0.0, ["segment"]),
        (32, "id_text", "judged", 1.0, []),
        (33, "id_text", "all_judged", 0.0, ["segment"]),
    ],
)
def test_judged_pairs_equal_judgements(
    seed: int,
    ties: str,
    population: str,
    threshold: float,
    group_by: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """judged_pairs.sql (the judged pairs only, list_length from ranked) gives what
    judgements.sql (every recommended item too) gives to bpref, gm_bpref and
    num_nonrel_judged_ret: tied and NULL scores, judged items outside the lists, repeated
    interactions, relevance at and below the threshold, trec_eval's populations, per user."""
    assert set(JUDGED_PAIRS_NAMES) == plan_module.JUDGED_PAIRS_METRICS
    recs, truth = tied_data(seed)
    again = truth.iloc[::5]  # a pair judged twice: its largest relevance counts
    truth = pd.concat([truth, again.assign(relevance=(again["relevance"] + 2) % 4)])
    metrics = [*JUDGED_PAIRS_NAMES, "map"]
    kwargs = {
        "per_user": True,
        "group_by": group_by,
        "ties": ties,
        "population": population,
        "threshold": threshold,
    }
    requests = parse_requests(metrics)
    assert choose_plan(requests, plan_inputs(), Options(ties=ties)).judgements == "judged_pairs"
    pairs = sqlmetrics.evaluate(recs, truth, metrics, **kwargs)
    monkeypatch.setattr(plan_module, "JUDGED_PAIRS_METRICS", frozenset())
    assert choose_plan(requests, plan_inputs(), Options(ties=ties)).judgements == "judgements"
    every = sqlmetrics.evaluate(recs, truth, metrics, **kwargs)
    pd.testing.assert_frame_equal(pairs, every, check_exact=False, rtol=0, atol=1e-12)
    assert len(pairs) > 100 and pairs["bpref"].between(0, 1).all()
    assert pairs["num_nonrel_judged_ret"].sum() > 0 and 0 < pairs["bpref"].mean() < 1


SCORED_NAMES = (
    "gauc",
    "gauc_positives",
    "user_auc",
)  # spelled out: a metric added to SCORED_SUM_METRICS fails above


@pytest.mark.parametrize("group_by", [[], ["segment"]])
def test_scored_positives_plan_equals_scored_plan(
    group_by: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """gauc and user_auc from scored_positives.sql (DuckDB) and from scored.sql, on lists full
    of tied scores and NULL scores, some crowded with positives, the same user in both groups,
    per user and summarised, with a ranking metric beside them and with a threshold; the
    diagnostics (single_class_users) too."""
    recs, truth = tied_data(8)
    # crowded lists: more than 32 positive scores take scored.sql's window in scored_positives
    rng = np.random.default_rng(9)
    crowded = pd.DataFrame(
        [
            (user, item, float(rng.integers(0, 200)) / 100, "a" if item % 3 else "b")
            for user in range(1000, 1004)
            for item in range(160)
        ],
        columns=recs.columns,
    )
    recs = pd.concat([recs, crowded], ignore_index=True)
    relevant = crowded[crowded["item_id"] % 2 == 0][["user_id", "item_id"]]
    truth = pd.concat([truth, relevant.assign(relevance=1)], ignore_index=True)
    positive_scores = recs.merge(relevant).groupby(["user_id", "segment"])["score"].nunique()
    assert positive_scores.max() > 32  # so both ways of scored_positives.sql are compared
    recs = recs if group_by else recs.drop(columns="segment")
    truth = pd.concat([truth, truth.iloc[::7]])  # repeated interactions
    metrics = [*SCORED_NAMES, "ndcg@5"]
    results = {}
    for plan in ("fast", "portable"):
        if plan == "portable":
            monkeypatch.setattr("sqlmetrics.compose.plan.TOP_K_DIALECTS", frozenset())
        results[plan] = [
            sqlmetrics.evaluate(recs, truth, metrics, group_by=group_by, per_user=True),
            sqlmetrics.evaluate(recs, truth, list(SCORED_NAMES), group_by=group_by, threshold=1),
            sqlmetrics.evaluate(  # first_recommendations.sql's window, kept materialized
                pd.concat([recs, recs.iloc[::11]]),
                truth,
                list(SCORED_NAMES),
                group_by=group_by,
                duplicates="first",
            ),
        ]
    for index, (fast, portable) in enumerate(
        zip(results["fast"], results["portable"], strict=True)
    ):
        pd.testing.assert_frame_equal(fast, portable, check_exact=False, rtol=0, atol=1e-12)
        diagnostics = sqlmetrics.read_diagnostics(fast)
        pd.testing.assert_frame_equal(diagnostics, sqlmetrics.read_diagnostics(portable))
        assert diagnostics["single_class_users"].sum() > 0
        # tie groups count across a cutoff: only the first call has one (ndcg@5)
        assert (diagnostics["tied_score_groups"].sum() > 0) == (index == 0)


def test_duckdb_sql_takes_scored_positives_only_for_per_user_sums() -> None:
    assert "positive_scores" in sqlmetrics.to_sql(["gauc", "user_auc", "ndcg@10"])
    assert "positive_scores" not in sqlmetrics.to_sql(["gauc", "auc"])  # auc spans the group
    assert "positive_scores" not in sqlmetrics.to_sql("gauc", dialect="postgres")
    # scored_positives counts rows: a weight column takes scored.sql
    assert "positive_scores" not in sqlmetrics.to_sql("gauc", columns={"weight": "w"})


def test_other_metrics_keep_every_recommended_row() -> None:
    assert "ranked.pos = 1" in sqlmetrics.to_sql(["ndcg@10", "map"])  # no cutoff: a window
    assert "ranked.pos = 1" not in sqlmetrics.to_sql(["ndcg@100", "ndcg_scored@100"])
    assert "ranked.pos = 1" not in sqlmetrics.to_sql(["ndcg@10", "ndcg_rel"], dialect="postgres")
    # r_precision reads hit rows only (WHOLE_LIST_HIT_ROWS_METRICS), bpref reads judgements
    assert "ranked.pos = 1" in sqlmetrics.to_sql(["r_precision", "bpref"], dialect="postgres")
    # the portable plan keeps hit rows too
    assert "ranked.pos = 1" in sqlmetrics.to_sql("ndcg@10", dialect="postgres")


def test_hit_rows_plan_only_for_hit_rows_metrics_on_duckdb() -> None:
    assert "truth_lists" in sqlmetrics.to_sql(["ndcg@10", "map@10"])
    assert "truth_lists" not in sqlmetrics.to_sql(["ndcg@10", "ndcg_scored@10"])
    assert "truth_lists" in sqlmetrics.to_sql(["ndcg@10", "map@100"])  # score_lists.sql
    assert "truth_lists" not in sqlmetrics.to_sql(["ndcg@10", "map"])
    assert "truth_lists" not in sqlmetrics.to_sql("ndcg@10", dialect="postgres")


# A second seed of each gives the same queries other data: CI's (full_matrix, tests/conftest.py).
@pytest.mark.parametrize(
    ("seed", "metrics"),
    [
        (4, METRICS),
        pytest.param(5, METRICS, marks=pytest.mark.full_matrix),
        (10, DEEP_METRICS),
        pytest.param(11, DEEP_METRICS, marks=pytest.mark.full_matrix),
    ],
)
def test_hit_rows_plan_equals_window_plan_without_groups(
    seed: int, metrics: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hit-rows plan (duckdb_plan.reads_hit_rows_only) with a threshold, the common
    population, per user and summarised, and with repeated recommendations under
    duplicates="first", against the portable plan."""
    recs, truth = tied_data(seed)
    recs = recs.drop(columns="segment")
    # repeated interactions, some with another relevance: the largest counts
    again = truth.iloc[::7]
    truth = pd.concat([truth, again, again.assign(relevance=(again["relevance"] + 1) % 4)])
    repeated = pd.concat([recs, recs.iloc[::11].assign(score=lambda frame: frame["score"] / 2)])
    results = {}
    for plan in ("fast", "portable"):
        if plan == "portable":
            monkeypatch.setattr("sqlmetrics.compose.plan.TOP_K_DIALECTS", frozenset())
        results[plan] = [
            sqlmetrics.evaluate(recs, truth, metrics, threshold=1, population="common"),
            sqlmetrics.evaluate(recs, truth, metrics, per_user=True),
            sqlmetrics.evaluate(repeated, truth, metrics, duplicates="first"),
            # trec_eval's populations: users judged with nothing relevant (threshold 1 makes
            # many), and under all_judged those without a list too
            sqlmetrics.evaluate(recs, truth, metrics, threshold=1, population="judged"),
            sqlmetrics.evaluate(
                recs, truth, metrics, threshold=1, population="all_judged", per_user=True
            ),
        ]
    for fast, portable in zip(results["fast"], results["portable"], strict=True):
        pd.testing.assert_frame_equal(fast, portable, check_exact=False, rtol=0, atol=1e-12)
        diagnostics = sqlmetrics.read_diagnostics(fast)
        pd.testing.assert_frame_equal(diagnostics, sqlmetrics.read_diagnostics(portable))
        assert diagnostics["duplicate_interactions"].sum() > 0


@pytest.mark.parametrize("population", ["judged", "all_judged"])
def test_top_k_plan_equals_window_plan_over_judged_users(
    population: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hit-rows plan's row per judged user (per_user.with_judged_users over
    judged_hits.sql), with groups in both tables, against the portable plan."""
    recs, truth = tied_data(12)
    truth = truth.assign(segment=np.where(truth["user_id"] % 3 == 0, "a", "b"))
    kwargs = {"group_by": ["segment"], "threshold": 1, "population": population}
    fast = sqlmetrics.evaluate(recs, truth, METRICS, per_user=True, **kwargs)
    summary = sqlmetrics.evaluate(recs, truth, METRICS, **kwargs)
    monkeypatch.setattr("sqlmetrics.compose.plan.TOP_K_DIALECTS", frozenset())
    portable = sqlmetrics.evaluate(recs, truth, METRICS, per_user=True, **kwargs)
    pd.testing.assert_frame_equal(fast, portable, check_exact=False, rtol=0, atol=1e-12)
    pd.testing.assert_frame_equal(
        summary,
        sqlmetrics.evaluate(recs, truth, METRICS, **kwargs),
        check_exact=False,
        rtol=0,
        atol=1e-12,
    )
    judged = truth.groupby(["segment", "user_id"])["relevance"].max()
    nothing_relevant = judged[judged <= 1]
    assert len(nothing_relevant) > 0
    listed = set(zip(recs["segment"], recs["user_id"], strict=True))
    expected = {pair for pair in judged.index if population == "all_judged" or pair in listed}
    assert set(zip(fast["segment"], fast["user_id"], strict=True)) == expected


def test_top_k_stage_ranks_again_only_the_users_it_must() -> None:
    """The fast path of top_lists.sql serves every user it can: the plans would agree even
    if every user were ranked again by the window, so this is checked on its own."""
    recs = pd.DataFrame(
        [
            *[(1, item, item / 10) for item in range(1, 6)],  # distinct scores
            *[(2, item, 0.5) for item in range(1, 6)],  # ties inside the top 2 and across it
            *[(3, item, [0.9, 0.8, 0.8][item - 1]) for item in range(1, 4)],  # tie at 2/3, kept
            *[(7, item, [0.9, 0.8, 0.8, 0.8, 0.1][item - 1]) for item in range(1, 6)],  # 2/3/4
            *[(8, item, [0.9, 0.8, 0.8, 0.8, 0.8, 0.1][item - 1]) for item in range(1, 7)],
            *[(4, item, [0.9, 0.9, 0.1][item - 1]) for item in range(1, 4)],  # tie inside only
            (5, 1, 0.3),  # shorter than the cutoff
            (6, 1, None),  # a NULL score
            (6, 2, 0.2),
        ],
        columns=["user_id", "item_id", "score"],
    )
    two = exp.Literal.number(2)
    connection = duckdb.connect()
    connection.register("recs", recs)

    def exact_lists(floor: float | None) -> dict[int, bool]:
        top_lists = bind_placeholders(stage("top_lists"), cutoff=two, rows=two)
        bind_repeats(top_lists, 2)
        bind_score_floor(top_lists, floor)
        ctes = {cte.alias: cte.this for cte in top_lists.find_all(exp.CTE)}
        query = exp.select("user_id", "exact").from_("checked_lists").order_by("user_id")
        query = with_ctes(
            query, [("input_recommendations", exp.select("*").from_("recs")), *ctes.items()]
        )
        return dict(connection.execute(query.sql("duckdb")).fetchall())

    # user 8: the tie runs past the 2 + 3 kept
    exact = {1: True, 2: False, 3: True, 4: True, 5: True, 6: False, 7: True, 8: False}
    assert exact_lists(None) == exact
    # At 0.3 user 1 keeps 3 of its 5 scores (0.3, 0.4, 0.5: fewer than 2 + 3), 4, 7 and 8 lose
    # their 0.1, and user 6 its 0.2 (a NULL score never passes). User 5's only score passes.
    assert exact_lists(0.3) == {**exact, 1: False, 4: False, 7: False}
    assert exact_lists(-1.0) == exact  # every score passes: as without a floor
    assert exact_lists(float("nan")) == exact_lists(float("inf")) == exact  # no FILTER then
    top_lists = bind_placeholders(stage("top_lists"), cutoff=two, rows=two)
    bind_repeats(top_lists, 2)
    bind_score_floor(top_lists, 0.3)
    rows = connection.execute(
        with_ctes(
            exp.select("user_id", "item_id", "pos").from_("top_k").order_by("user_id", "pos"),
            [
                ("input_recommendations", exp.select("*").from_("recs")),
                ("top_lists", top_lists),
                ("top_k", stage("ranked_top_k")),
            ],
        ).sql("duckdb")
    ).fetchall()
    assert rows == [
        (1, 5, 1),
        (1, 4, 2),
        (2, 5, 1),
        (2, 4, 2),
        (3, 1, 1),
        (3, 3, 2),
        (4, 2, 1),
        (4, 1, 2),
        (5, 1, 1),
        (6, 2, 1),
        (6, 1, 2),
        (7, 1, 1),
        (7, 4, 2),
        (8, 1, 1),
        (8, 5, 2),
    ]


def test_truth_stage_groups_by_item_only_the_users_it_must() -> None:
    """truth_lists.sql counts a user's rows directly when its item bits show no repeat, and
    groups by (user, item) the users that may repeat an item; both give the pair counts."""
    connection = duckdb.connect()
    # two items whose hashes set the same one of the 2,048 bits
    shared = connection.execute(
        "SELECT MIN(item) FROM RANGE(2, 100000) AS items(item)"
        " WHERE HASH(item) % 2048 = HASH(1) % 2048"
    ).fetchall()[0][0]
    truth = pd.DataFrame(
        [
            (1, 1, 3.0),
            (1, 2, 1.0),
            (1, 3, 0.0),  # different items: counted from the rows
            (2, 1, 1.0),
            (2, 1, 3.0),
            (2, 2, 2.0),  # item 1 twice: its largest relevance, once
            (3, 1, 2.0),
            (3, shared, 1.0),  # a shared bit, no repeat: grouped, the same numbers
            (4, None, 1.0),
            (4, 1, 1.0),  # one NULL item: counted from the rows
            (5, None, 1.0),
            (5, None, 2.0),  # two NULL items: one pair
            (None, 1, 1.0),
            (None, 1, 2.0),  # the NULL user: grouped
        ],
        columns=["user_id", "item_id", "relevance"],
    ).astype({"user_id": "Int64", "item_id": "Int64"})
    connection.register("truth", truth)
    truth_lists = bind_placeholders(
        stage("truth_lists"), threshold=exp.convert(0.0), cutoff=exp.convert(2)
    )
    inputs = [("input_interactions", exp.select("*").from_("truth"))]
    ctes = {cte.alias: cte.this for cte in truth_lists.find_all(exp.CTE)}
    flags = with_ctes(
        exp.select("user_id", "distinct_items").from_("user_counts"), [*inputs, *ctes.items()]
    )
    assert dict(connection.execute(flags.sql("duckdb")).fetchall()) == {
        1: True,
        2: False,
        3: False,
        4: True,
        5: False,
        None: False,
    }
    counts = "n_relevant, top_relevances, interaction_rows, duplicate_interactions, null_items"
    query = with_ctes(
        exp.select("user_id", *counts.split(", ")).from_("truth_lists"),
        [*inputs, ("truth_lists", truth_lists)],
    )
    rows = connection.execute(query.sql("duckdb")).fetchall()
    assert sorted(rows, key=lambda row: (row[0] is None, row[0])) == [
        (1, 2, [3.0, 1.0], 3, 0, 0),
        (2, 2, [3.0, 2.0], 3, 1, 0),
        (3, 2, [2.0, 1.0], 2, 0, 0),
        (4, 2, [1.0, 1.0], 2, 0, 1),
        (5, 1, [2.0], 2, 0, 2),
        (None, 1, [2.0], 2, 1, 0),
    ]


@pytest.mark.parametrize(
    ("metrics", "unused"),
    [
        # no scored metric, no rank column
        (
            ["ndcg@5", "map@10", "dcg_exp@3"],
            {"single_class_users", "bad_rank_lists", "bad_weights"},
        ),
        # deep: score_lists.sql
        (
            ["ndcg@5", "map@30", "mrr@100"],
            {"single_class_users", "bad_rank_lists", "bad_weights"},
        ),
        # scored_positives.sql; no cutoff, so no list is shorter than one and no tie group
        # straddles one
        (
            ["gauc", "user_auc"],
            {"bad_rank_lists", "lists_shorter_than_k", "tied_score_groups", "bad_weights"},
        ),
    ],
)
def test_hit_rows_plan_counts_bad_rows_as_the_window_plan(
    metrics: list[str], unused: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every count of to_sql(checks=True), bad rows included (NaN, out of [0, 1], repeats,
    NULL ids), from DuckDB's plans (per-list diagnostics, scored from the positives) and from
    the portable plan."""
    recs, truth = tied_data(6)
    recs = recs.drop(columns="segment").astype({"user_id": "float", "item_id": "float"})
    recs.loc[5::40, "score"] = -0.5
    recs.loc[7::40, "score"] = 1.5
    recs.loc[9::60, "item_id"] = None
    recs.loc[11::90, "user_id"] = None
    recs = pd.concat([recs, recs.iloc[::13]])  # repeated recommendations
    truth = pd.concat([truth, truth.iloc[::5]]).astype({"relevance": "float", "item_id": "float"})
    truth.loc[::17, "relevance"] = None
    truth.loc[3::23, "relevance"] = 2000
    truth.loc[4::31, "item_id"] = None
    truth.loc[6::37, "user_id"] = None
    connection = duckdb.connect()
    connection.register("recs", recs)
    connection.register("truth", truth)
    nan = "CASE WHEN item_id % 9 = 0 THEN 'nan'::DOUBLE ELSE score END"  # pandas NaN is NULL
    connection.execute(
        f"CREATE TABLE recommendations AS SELECT * REPLACE ({nan} AS score) FROM recs"
    )
    connection.execute("CREATE TABLE interactions AS SELECT * FROM truth")
    counts = {}
    for plan in ("fast", "portable"):
        if plan == "portable":
            monkeypatch.setattr("sqlmetrics.compose.plan.TOP_K_DIALECTS", frozenset())
        query = sqlmetrics.to_sql(metrics, checks=True)
        result = connection.execute(query)
        names = [column[0] for column in result.description]
        counts[plan] = dict(zip(names, result.fetchall()[0], strict=True))
    assert counts["fast"] == counts["portable"]
    assert {name for name, count in counts["fast"].items() if not count} == unused


def test_score_floor_is_guessed_from_the_first_lists_of_a_large_input(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """duckdb_passes.score_floor: about the 1% quantile of the 13th best score of the lists in
    the first FLOOR_SAMPLED_ROWS rows (k = 10); none for an input below FLOOR_MIN_ROWS (here
    300k) or not grouped by list. The numbers do not depend on it."""
    monkeypatch.setattr(duckdb_passes, "FLOOR_MIN_ROWS", 300_000)
    rng = np.random.default_rng(3)
    # 600k rows; shuffled, the first 100k hold ~3 rows of each list, fewer than the 13 needed
    users, length = 30_000, 20
    recs = pd.DataFrame(
        {
            "user_id": np.repeat(np.arange(users), length),
            "item_id": np.tile(np.arange(length), users),
            "score": rng.random(users * length).round(3),  # ties too
        }
    )
    truth = recs.sample(frac=0.05, random_state=1).drop(columns="score").assign(relevance=1)
    floors: list[float | None] = []
    guess = duckdb_passes.score_floor

    def recorded(*arguments: object) -> float | None:
        floors.append(guess(*arguments))  # type: ignore[arg-type]
        return floors[-1]

    monkeypatch.setattr(duckdb_passes, "score_floor", recorded)
    metrics = ["ndcg@10", "map@10", "precision@5"]
    with_floor = sqlmetrics.evaluate(recs, truth, metrics)
    sampled = recs.iloc[: duckdb_passes.FLOOR_SAMPLED_ROWS].groupby("user_id")["score"]
    needs = sampled.apply(lambda scores: np.sort(scores.to_numpy())[-13])
    floor = floors[-1]
    assert floor is not None
    assert np.quantile(needs, 0.005) <= floor <= np.quantile(needs, 0.02)
    sqlmetrics.evaluate(recs.sample(frac=1, random_state=2), truth, metrics)  # shuffled
    sqlmetrics.evaluate(recs.iloc[: duckdb_passes.FLOOR_MIN_ROWS - 1], truth, metrics)  # small
    assert floors[1:] == [None, None]
    monkeypatch.setattr(duckdb_passes, "score_floor", lambda *arguments: None)
    pd.testing.assert_frame_equal(with_floor, sqlmetrics.evaluate(recs, truth, metrics))


def test_rows_are_known_from_a_dataframe_and_parquet_footers_only(tmp_path: Path) -> None:
    frame = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [1, 2, 1], "score": [0.3, 0.2, 0.1]})
    connection = duckdb.connect()
    frame.to_parquet(tmp_path / "recs.parquet")
    frame.to_csv(tmp_path / "recs.csv", index=False)
    (tmp_path / "folder").mkdir()
    frame.to_parquet(tmp_path / "folder" / "part.parquet")
    relation = connection.sql("SELECT * FROM frame")
    values = (
        frame,
        tmp_path / "recs.parquet",
        tmp_path / "folder",
        tmp_path / "recs.csv",
        relation,
    )
    engine = DuckDBEngine(connection)
    sources = [engine.bind(value, "recommendations") for value in values]
    rows = [
        known_rows(value, source.relation, connection)
        for value, source in zip(values, sources, strict=True)
    ]
    assert rows == [3, 3, 3, None, None]  # a CSV file or a relation would have to be read


def oracle_repeats_and_ties(recs: pd.DataFrame, cutoffs: list[int], ties: str) -> tuple[int, int]:
    """The two redefined diagnostics, counted in pandas from their definitions (docs/METRICS.md,
    "Results"): rows repeating an item anywhere in their list; tie groups (equal non-NULL scores
    in one list) holding the positions k and k + 1 of a requested cutoff k, each group once."""
    repeats = sum(
        int(items.notna().sum() - items.nunique())
        for _, items in recs.groupby("user_id")["item_id"]
    )
    tie_groups = 0
    for _, rows in recs.groupby("user_id"):
        order = rows.assign(
            known=rows["score"].notna(),
            key=rows["item_id"].astype(str) if ties == "id_text" else rows["item_id"],
        ).sort_values(["known", "score", "key"], ascending=False)
        scores = order["score"].tolist()
        straddled = {
            scores[k - 1]
            for k in cutoffs
            if k < len(scores) and pd.notna(scores[k - 1]) and scores[k - 1] == scores[k]
        }
        tie_groups += len(straddled)
    return repeats, tie_groups


@pytest.mark.parametrize(
    ("seed", "cutoffs", "ties"),
    [
        (11, [1, 3, 5], "id"),
        (12, [2, 30], "id"),
        (13, [1, 2, 3, 4, 5], "id_text"),
        (14, [4], "id"),
        # ranges of cutoffs: from a k above 1, and deeper than top_lists.sql's
        (15, list(range(3, 9)), "id"),
        (16, list(range(1, 31)), "id_text"),
    ],
)
def test_repeats_and_ties_across_cutoffs_match_their_definitions(
    seed: int, cutoffs: list[int], ties: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """duplicate_recommendations over whole lists and tied_score_groups across the requested
    cutoffs, from DuckDB's plans (top_lists.sql up to 20, score_lists.sql deeper) and from the
    portable window plan, equal the pandas oracle on tie-heavy lists with repeats deep down."""
    recs, truth = tied_data(seed)
    recs = recs.drop(columns="segment")
    deep = recs[recs.groupby("user_id").cumcount() >= 10]
    recs = pd.concat([recs, deep.iloc[::9]])  # repeats, most of them beyond the top 10
    connection = duckdb.connect()
    connection.register("recommendations", recs)
    connection.register("interactions", truth)
    metrics = [f"ndcg@{k}" for k in cutoffs]
    expected = oracle_repeats_and_ties(recs, cutoffs, ties)
    assert expected[0] > 0 and expected[1] > 0  # so both counts are compared
    for plan in ("fast", "portable"):
        if plan == "portable":
            monkeypatch.setattr("sqlmetrics.compose.plan.TOP_K_DIALECTS", frozenset())
        result = connection.execute(sqlmetrics.to_sql(metrics, checks=True, ties=ties))
        names = [column[0] for column in result.description]
        counts = dict(zip(names, result.fetchall()[0], strict=True))
        found = (counts["duplicate_recommendations"], counts["tied_score_groups"])
        assert found == expected, plan


def test_many_cutoffs_over_judged_users_take_the_window_plan() -> None:
    """The curve plan (sqlmetrics/compose/curves.py, 16+ cutoffs) has no row per judged user: under
    population="judged" compose keeps the window plan, whose values are each cutoff's own."""
    recs, truth = tied_data(13)
    labels = [f"ndcg@{k}" for k in range(1, 21)]
    curve = sqlmetrics.evaluate(recs, truth, labels, threshold=1, population="judged")
    for k in (1, 7, 20):
        alone = sqlmetrics.evaluate(recs, truth, [f"ndcg@{k}"], threshold=1, population="judged")
        assert curve["users"][0] == alone["users"][0]
        assert abs(curve[f"ndcg@{k}"][0] - alone[f"ndcg@{k}"][0]) < 1e-12
    assert "per_user_lists" not in sqlmetrics.to_sql(labels, population="judged")
    assert "per_user_lists" in sqlmetrics.to_sql(labels)


def test_the_ideal_order_stage_carries_the_chained_diagnostics_flags(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ndcg_rel, normalized_gain and rndcg read ranked_ideal.sql in ranked's place; beside a
    metric with a cutoff the portable plan's chained diagnostics read ranked's tie flag through
    it, so it must carry that flag: the same numbers and counts as DuckDB's own plan."""
    recs, truth = tied_data(5)
    labels = ["ndcg_rel", "normalized_gain", "rndcg", "ndcg@5"]
    fast = sqlmetrics.evaluate(recs, truth, labels)
    monkeypatch.setattr(plan_module, "TOP_K_DIALECTS", frozenset())
    portable = sqlmetrics.evaluate(recs, truth, labels)
    pd.testing.assert_frame_equal(fast, portable, check_exact=False, rtol=0, atol=1e-12)
    diagnostics = sqlmetrics.read_diagnostics(portable)
    pd.testing.assert_frame_equal(sqlmetrics.read_diagnostics(fast), diagnostics)
    assert diagnostics["tied_score_groups"].sum() > 0


def test_the_ideal_order_computes_only_the_windows_read() -> None:
    """ranked_ideal.sql's windows over the ideal order (its DCG, its excess cost, the R levels'
    weights) are each computed only for a metric that reads them, in every nested select."""
    ndcg_rel = sqlmetrics.to_sql("ndcg_rel", dialect="postgres")
    assert "ideal_dcg_through" in ndcg_rel
    assert "ideal_excess_through" not in ndcg_rel and "level_end" not in ndcg_rel
    normalized_gain = sqlmetrics.to_sql("normalized_gain", dialect="postgres")
    assert "ideal_excess_through" in normalized_gain and "ideal_dcg_through" not in normalized_gain
    assert "level_end" in sqlmetrics.to_sql("rndcg", dialect="postgres")
