"""The curve plan (sqlmetrics/compose/curves.py) gives the window plans' numbers, to the bit."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics.catalog.metrics import parse_requests
from sqlmetrics.compose import curves, duckdb_plan
from sqlmetrics.compose.inputs import Options
from sqlmetrics.compose.plan import choose_plan
from sqlmetrics.engines import duckdb_passes
from tests.test_plan_choice import inputs as plan_inputs
from tests.test_plans import tied_data

# Every ranking metric whose file the curve plan can take apart.
NAMES = (
    "hits",
    "hit_rate",
    "precision",
    "precision_listed",
    "recall",
    "recall_capped",
    "f1",
    "mrr",
    "map",
    "map_min",
    "map_hits",
    "map_listed",
    "cg",
    "dcg",
    "ndcg",
    "ndcg_clipped",
    "dcg_exp",
    "ndcg_exp",
    "micro_hit_ratio",
    "micro_mrr",
)
CURVES = [f"{name}@1:12" for name in NAMES]
# ties="average" has a closed form for these only (compose/refusals.py)
AVERAGED = [f"{name}@1:12" for name in ("hits", "precision", "recall", "f1", "dcg", "ndcg", "cg")]


# plan -> (curves.MIN_CUTOFFS, assemble.TOP_K_DIALECTS or None to leave it)
PLANS: dict[str, tuple[int, frozenset[str] | None]] = {
    "curves": (1, None),
    "duckdb": (10**6, None),
    "portable": (10**6, frozenset()),
    "portable curves": (1, frozenset()),
}


def _plans(
    monkeypatch: pytest.MonkeyPatch, *calls: Any, plans: Sequence[str] = tuple(PLANS)
) -> dict[str, list[pd.DataFrame]]:
    """Each call (evaluate's arguments) under each of the plans named: the curve plan, DuckDB's
    window plans, the portable window plan, the portable curve plan (curve_windows.py)."""
    results: dict[str, list[pd.DataFrame]] = {}
    queries: list[str] = []
    run_query = duckdb_passes.split_diagnostics

    def captured(connection: Any, query: str, *args: Any) -> Any:
        queries.append(query)
        return run_query(connection, query, *args)

    monkeypatch.setattr(duckdb_passes, "split_diagnostics", captured)
    for plan in plans:
        min_cutoffs, top_k = PLANS[plan]
        monkeypatch.setattr(curves, "MIN_CUTOFFS", min_cutoffs)
        if top_k is not None:
            monkeypatch.setattr("sqlmetrics.compose.plan.TOP_K_DIALECTS", top_k)
        queries.clear()
        results[plan] = [sqlmetrics.evaluate(*args, **kwargs) for args, kwargs in calls]
        # (evaluate with ci= runs the statistics query instead: its own check below)
        assert len(queries) == sum("ci" not in kwargs for _, kwargs in calls)
        assert all(("per_user_lists" in query) == (plan == "curves") for query in queries), plan
        assert all(("judged_kinds" in query) == (plan == "portable curves") for query in queries)
    return results


def _tied_calls(seed: int, ties: str) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    recs, truth = tied_data(seed)
    # a group column in both inputs (one in the recommendations only takes arms.py's plan)
    truth = truth.assign(segment=truth["user_id"].map(lambda user: "a" if user % 2 else "b"))
    metrics = AVERAGED if ties == "average" else CURVES
    repeated = pd.concat([recs, recs.iloc[::11].assign(score=lambda frame: frame["score"] / 2)])
    ranked = recs.dropna(subset=["score"]).assign(
        rank=lambda frame: frame.groupby("user_id")["score"].rank(method="first", ascending=False)
    )
    calls = [
        ((recs, truth, metrics), {"ties": ties, "group_by": "segment"}),
        ((recs, truth, metrics), {"ties": ties, "population": "common", "threshold": 1}),
        ((repeated, truth, metrics), {"ties": ties, "duplicates": "first"}),
    ]
    if ties == "id":
        calls.append(((ranked, truth, metrics), {"columns": {"rank": "rank", "score": None}}))
    return calls


@functools.cache
def _tied_results(seed: int, ties: str, plan: str) -> tuple[pd.DataFrame, ...]:
    """The calls of a case under one plan, computed once for the references it is compared with
    (each case's cells share an xdist_group, and so a worker)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        found = _plans(monkeypatch, *_tied_calls(seed, ties), plans=[plan])
    return tuple(found[plan])


# The portable window plan is also held to the golden values (tests/test_golden.py's plan
# fixture) and to DuckDB's window plan (tests/test_plans.py) in every run; CI compares it here too.
# A developer's run takes three of the five tie policies; under the other two (optimistic,
# pessimistic) the curve plan is held to the window plans by tests/engines/test_engines.py's
# curves too (extra_null_scores_optimistic, _pessimistic), and CI runs them here.
@pytest.mark.parametrize(
    "reference",
    ["duckdb", "portable curves", pytest.param("portable", marks=pytest.mark.full_matrix)],
)
@pytest.mark.parametrize(
    ("seed", "ties"),
    [
        pytest.param(
            seed,
            ties,
            marks=[pytest.mark.xdist_group(f"curves-{seed}")]
            + ([] if sampled else [pytest.mark.full_matrix]),
        )
        for seed, ties, sampled in [
            (1, "id", True),
            (2, "id_text", True),
            (3, "optimistic", False),
            (4, "pessimistic", False),
            (5, "average", True),
        ]
    ],
)
def test_curve_plan_equals_window_plans(seed: int, ties: str, reference: str) -> None:
    """Tied scores across every cutoff, NULL scores, graded relevance, users without a list or
    without a relevant item; groups, both populations, a threshold, repeated recommendations
    kept first, a rank column. Equal to DuckDB's window plans to the bit (the same terms added
    in the same order), to the portable plans within rounding (they add in another order)."""
    with_curves = _tied_results(seed, ties, "curves")
    for got, want in zip(with_curves, _tied_results(seed, ties, reference), strict=True):
        if reference == "duckdb":
            pd.testing.assert_frame_equal(got, want, check_exact=True)
        else:
            pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=0, atol=1e-12)
        assert got["users"].gt(0).all()


def test_the_hit_rows_curve_plan_equals_window_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    """Metrics that read hit rows only take judged_hits.sql, where every listed position is a
    hit: the curve plan lists their positions once and counts hits without a list of them
    (curves.split's ``hit_rows``). The same bits as DuckDB's window plans."""
    names = sorted(duckdb_plan.HIT_ROWS_METRICS - {"ndcg_ideal_k"})  # a constant of the cutoff
    metrics = [f"{name}@1:12" for name in names]
    monkeypatch.setattr(curves, "MIN_CUTOFFS", 1)
    chosen = choose_plan(parse_requests(metrics), plan_inputs(), Options(ties="id"))
    assert (chosen.judged, chosen.per_user) == ("judged_hits", "curves")
    recs, truth = tied_data(6)
    truth = truth.assign(segment=truth["user_id"].map(lambda user: "a" if user % 2 else "b"))
    repeated = pd.concat([recs, recs.iloc[::7].assign(score=lambda frame: frame["score"] / 3)])
    calls = [
        ((recs, truth, metrics), {"group_by": "segment"}),
        ((recs, truth, metrics), {"population": "common", "threshold": 1}),
        ((repeated, truth, metrics), {"duplicates": "first", "ties": "id_text"}),
    ]
    results = _plans(monkeypatch, *calls)
    for with_curves, duckdb, portable, portable_curves in zip(*results.values(), strict=True):
        pd.testing.assert_frame_equal(with_curves, duckdb, check_exact=True)
        pd.testing.assert_frame_equal(with_curves, portable, check_exact=False, rtol=0, atol=1e-12)
        pd.testing.assert_frame_equal(
            with_curves, portable_curves, check_exact=False, rtol=0, atol=1e-12
        )


def test_values_of_2_to_the_32_or_more_are_summed_plainly(monkeypatch: pytest.MonkeyPatch) -> None:
    """A per-user value of 2^32 or more (dcg_exp of relevance 40) leaves the sums over the users
    at that cutoff to a plain sum (sums.py): the steps count such users (curve_steps' ``b``),
    and at the cutoffs before they get there the sums are exact. The window plans add the
    plain sums in another order: equal within rounding; the exact ones to the bit."""
    recs, truth = tied_data(7)
    # relevance 40 for items listed from position 6 on (score descending, then item id)
    ranked = recs.sort_values(["user_id", "score", "item_id"], ascending=[True, False, False])
    position = ranked.groupby("user_id").cumcount() + 1
    deep = set(zip(ranked["user_id"][position > 5], ranked["item_id"][position > 5], strict=True))
    huge = truth.assign(
        relevance=[
            40 if (user, item) in deep and relevance > 0 else relevance
            for user, item, relevance in truth[["user_id", "item_id", "relevance"]].itertuples(
                index=False
            )
        ]
    )
    metrics = [f"{name}@1:12" for name in ("dcg_exp", "ndcg_exp", "cg")]
    per_user = sqlmetrics.evaluate(recs, huge, metrics, per_user=True)
    assert (per_user["dcg_exp@5"] < 2**32).all() and (per_user["dcg_exp@12"] >= 2**32).any()
    calls = [((recs, huge, metrics), {}), ((recs, huge, metrics), {"ci": 0.9})]
    results = _plans(monkeypatch, *calls, plans=["curves", "duckdb"])
    (with_curves, with_ci), (duckdb, duckdb_ci) = results["curves"], results["duckdb"]
    pd.testing.assert_frame_equal(with_curves, duckdb, check_exact=False, rtol=1e-12)
    exact = [f"dcg_exp@{k}" for k in range(1, 6)] + [f"ndcg_exp@{k}" for k in range(1, 13)]
    pd.testing.assert_frame_equal(with_curves[exact], duckdb[exact], check_exact=True)
    pd.testing.assert_frame_equal(with_ci, duckdb_ci, check_exact=False, rtol=1e-9)


def test_a_profile_with_a_population_per_metric(monkeypatch: pytest.MonkeyPatch) -> None:
    """MS Recommenders' profile averages ndcg over every user and its other metrics over the
    users with a list: two families of the same metric name would be wrong."""
    recs, truth = tied_data(3)
    metrics = [f"{name}@1:10" for name in ("ndcg", "precision", "recall", "map")]
    results = _plans(
        monkeypatch,
        ((recs, truth, metrics), {"profile": "recommenders"}),
        plans=["curves", "duckdb"],
    )
    pd.testing.assert_frame_equal(results["curves"][0], results["duckdb"][0], check_exact=True)


def test_no_relevant_interaction_gives_the_window_plans_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recs, truth = tied_data(4)
    nothing = truth.assign(relevance=0, segment="a")
    calls = [
        ((recs, nothing, ["ndcg@1:10"]), {}),
        ((recs, nothing, ["ndcg@1:10"]), {"group_by": "segment"}),
    ]
    results = _plans(monkeypatch, *calls, plans=["curves", "duckdb"])
    for with_curves, duckdb in zip(results["curves"], results["duckdb"], strict=True):
        pd.testing.assert_frame_equal(with_curves, duckdb, check_exact=True)
    assert results["curves"][0]["users"].tolist() == [0]


def test_the_plan_is_chosen_by_the_number_of_cutoffs() -> None:
    """From MIN_CUTOFFS distinct cutoffs, on DuckDB from lists and elsewhere from windows
    (curve_windows.py); never for a metric it cannot take apart ($ideal_dcg_of_k), per user or
    under a metric over the lists."""
    many = [f"ndcg@1:{curves.MIN_CUTOFFS}", "recall@10"]
    few = [f"ndcg@1:{curves.MIN_CUTOFFS - 1}"]
    assert "per_user_lists" in sqlmetrics.to_sql(many, dialect="duckdb")
    assert "judged_kinds" not in sqlmetrics.to_sql(many, dialect="duckdb")
    assert "per_user_lists" not in sqlmetrics.to_sql(few, dialect="duckdb")
    for dialect in ("postgres", "spark", "sqlite"):
        assert "judged_kinds" in sqlmetrics.to_sql(many, dialect=dialect)
        assert "judged_kinds" not in sqlmetrics.to_sql(few, dialect=dialect)
    assert "per_user_lists" not in sqlmetrics.to_sql([*many, "ndcg_ideal_k@5"], dialect="duckdb")
    assert "per_user_lists" not in sqlmetrics.to_sql(many, dialect="duckdb", per_user=True)
    assert "per_user_lists" not in sqlmetrics.to_sql([*many, "coverage@10"], dialect="duckdb")


@pytest.mark.parametrize("group_by", [(), ("segment",)])
def test_intervals_of_many_cutoffs_equal_the_per_user_querys(
    group_by: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """evaluate(..., ci=) of many cutoffs takes its moments from the curve plan's rows: the
    values have the same bits and the intervals the same numbers as from the per-user query."""
    recs, truth = tied_data(6)
    truth = truth.assign(segment=truth["user_id"].map(lambda user: "a" if user % 2 else "b"))
    metrics = [f"{name}@1:20" for name in ("ndcg", "map", "recall", "hit_rate")]
    results = _plans(
        monkeypatch,
        ((recs, truth, metrics), {"ci": 0.95, "group_by": list(group_by)}),
        plans=["curves", "duckdb"],
    )
    with_curves, per_user = results["curves"][0], results["duckdb"][0]
    labels = [column for column in per_user.columns if column.endswith(("_lo", "_hi"))]
    pd.testing.assert_frame_equal(
        with_curves.drop(columns=labels), per_user.drop(columns=labels), check_exact=True
    )
    pd.testing.assert_frame_equal(
        with_curves[labels], per_user[labels], check_exact=False, rtol=1e-12
    )
    assert with_curves[labels].notna().all().all()
    monkeypatch.setattr(curves, "MIN_CUTOFFS", 1)
    monkeypatch.setattr("sqlmetrics.compose.plan.TOP_K_DIALECTS", frozenset({"duckdb"}))
    assert "per_user_lists" in sqlmetrics.to_sql(metrics, ci=0.95, dialect="duckdb")
    assert "per_user_lists" not in sqlmetrics.to_sql(metrics, ci=0.95, ci_method="bootstrap")
