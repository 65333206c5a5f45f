"""Under a tight DuckDB memory limit evaluate splits the users into passes: same numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pytest

import sqlmetrics

# One worker under pytest -n: the module's 800k-row fixture is built once, and two workers'
# DuckDB memory limits are not tested against each other.
pytestmark = pytest.mark.xdist_group("memory")

METRICS = ["ndcg@10", "map@10", "mrr@10", "precision@5", "recall@20", "micro_hit_ratio@10"]


@pytest.fixture(scope="module")
def many_users(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """800k recommendation rows for 40k users, with a model column and some ties."""
    rng = np.random.default_rng(7)
    users, length = 40_000, 20
    user = np.repeat(np.arange(users), length)
    item = (user * 7919 + np.tile(np.arange(length), users) * 104729) % 50_000
    recs = pd.DataFrame(
        {"user_id": user, "item_id": item, "score": np.round(rng.random(users * length), 2)}
    )
    truth = recs.sample(frac=0.08, random_state=1)[["user_id", "item_id"]]
    # relevance 0: judged non-relevant (bpref reads them; every other metric as not relevant)
    truth["relevance"] = rng.integers(0, 4, len(truth))
    folder: Path = tmp_path_factory.mktemp("many_users")
    recs.to_parquet(folder / "recs.parquet")
    truth.to_parquet(folder / "truth.parquet")
    return str(folder / "recs.parquet"), str(folder / "truth.parquet")


def test_passes_sum_and_exp_as_one_query(many_users: tuple[str, str]) -> None:
    """aggregate: sum and finish: exp (num_ret, gm_map) combine across passes as the single
    query aggregates: a sum stays a sum, a geometric mean exp of the mean log."""
    recs, truth = many_users
    metrics = ["num_ret", "num_rel_ret", "gm_map", "iprec_at_recall@0.3", "map", "bpref"]
    metrics.append("gm_bpref")  # over sql/stages/judgements.sql, split into passes too
    free = sqlmetrics.evaluate(recs, truth, metrics)
    tight = duckdb.connect(config={"memory_limit": "64MB", "threads": 2})
    limited = sqlmetrics.evaluate(recs, truth, metrics, connection=tight)
    assert free.attrs["passes"] == 1 and limited.attrs["passes"] > 1
    pd.testing.assert_frame_equal(limited, free, check_exact=False, rtol=0, atol=1e-12)
    assert free["num_ret"][0] == 20 * free["users"][0]  # a sum: 20 items per user


def test_passes_over_judged_users_as_one_query(many_users: tuple[str, str]) -> None:
    """population="judged" (trec_eval's): the users judged with nothing relevant (relevance 0
    only) count in every pass as in the single query, sums and geometric means included."""
    recs, truth = many_users
    metrics = ["ndcg@10", "num_ret", "num_nonrel_judged_ret", "gm_map", "bpref", "map"]
    free = sqlmetrics.evaluate(recs, truth, metrics, population="judged")
    tight = duckdb.connect(config={"memory_limit": "64MB", "threads": 2})
    limited = sqlmetrics.evaluate(recs, truth, metrics, connection=tight, population="judged")
    assert free.attrs["passes"] == 1 and limited.attrs["passes"] > 1
    pd.testing.assert_frame_equal(limited, free, check_exact=False, rtol=0, atol=1e-12)
    judged = pd.read_parquet(truth).groupby("user_id")["relevance"].max()
    assert free["users"][0] == len(judged) > (judged > 0).sum()


@pytest.mark.parametrize("per_user", [False, True])
def test_passes_under_a_memory_limit_give_the_same_numbers(
    many_users: tuple[str, str], per_user: bool
) -> None:
    recs, truth = many_users
    free = sqlmetrics.evaluate(recs, truth, METRICS, per_user=per_user)
    tight = duckdb.connect(config={"memory_limit": "64MB", "threads": 2})
    limited = sqlmetrics.evaluate(recs, truth, METRICS, per_user=per_user, connection=tight)
    assert free.attrs["passes"] == 1 and limited.attrs["passes"] > 1
    pd.testing.assert_frame_equal(limited, free, check_exact=False, rtol=0, atol=1e-12)
    pd.testing.assert_frame_equal(
        sqlmetrics.read_diagnostics(limited), sqlmetrics.read_diagnostics(free)
    )


def test_the_curve_plan_in_passes_gives_the_one_query_numbers(
    many_users: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many cutoffs (the curve plan, sqlmetrics/compose/curves.py) under a memory limit: each pass's
    curve plan gives partial sums (a mean, a micro ratio's parts), and their total is the one
    query's, which is the window plan's."""
    from sqlmetrics.engines import duckdb_passes

    recs, truth = many_users
    metrics = ["ndcg@1:20", "recall@1:20", "micro_hit_ratio@1:20"]
    ran: list[str] = []
    single_pass = duckdb_passes.split_diagnostics

    def recorded(connection: Any, query: str, *args: Any) -> Any:
        ran.append(query)
        return single_pass(connection, query, *args)

    monkeypatch.setattr(duckdb_passes, "split_diagnostics", recorded)
    free = sqlmetrics.evaluate(recs, truth, metrics)
    tight = duckdb.connect(config={"memory_limit": "64MB", "threads": 2})
    limited = sqlmetrics.evaluate(recs, truth, metrics, connection=tight)
    assert free.attrs["passes"] == 1 and limited.attrs["passes"] > 1
    assert len(ran) == 1 + limited.attrs["passes"]
    assert all("per_user_lists" in query for query in ran)  # the curve plan, every time
    pd.testing.assert_frame_equal(limited, free, check_exact=False, rtol=0, atol=1e-12)
    pd.testing.assert_frame_equal(
        sqlmetrics.read_diagnostics(limited), sqlmetrics.read_diagnostics(free)
    )


# CI's (full_matrix, tests/conftest.py): the curve plan in passes is the test above's, here under
# a population per metric; the window plan in passes is test_passes_under_a_memory_limit's.
@pytest.mark.full_matrix
def test_the_curve_plan_in_passes_with_a_population_per_metric(
    many_users: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """MS Recommenders' profile: each mean counts its own users, in every pass, by the curve
    plan and by the window plan."""
    from sqlmetrics.compose import curves
    from sqlmetrics.engines import duckdb_passes

    recs, truth = many_users
    ran: list[str] = []
    single_pass = duckdb_passes.split_diagnostics

    def recorded(connection: Any, query: str, *args: Any) -> Any:
        ran.append(query)
        return single_pass(connection, query, *args)

    monkeypatch.setattr(duckdb_passes, "split_diagnostics", recorded)
    tight = duckdb.connect(config={"memory_limit": "64MB", "threads": 2})
    profiled = [f"{name}@1:16" for name in ("ndcg", "precision", "map")]
    free = sqlmetrics.evaluate(recs, truth, profiled, profile="recommenders")
    limited = sqlmetrics.evaluate(recs, truth, profiled, profile="recommenders", connection=tight)
    assert limited.attrs["passes"] > 1 and "per_user_lists" in ran[-1]
    pd.testing.assert_frame_equal(limited, free, check_exact=False, rtol=0, atol=1e-12)
    monkeypatch.setattr(curves, "MIN_CUTOFFS", 1000)  # the window plan, in passes too
    window = sqlmetrics.evaluate(recs, truth, profiled, profile="recommenders", connection=tight)
    assert "per_user_lists" not in ran[-1]
    pd.testing.assert_frame_equal(window, free, check_exact=False, rtol=0, atol=1e-12)


def test_per_user_auc_in_passes_and_global_auc_refused(
    many_users: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """gauc and user_auc add up per user, so passes give the same numbers; auc compares rows
    across users, so running out of memory is an error that says what to do. (DuckDB spills
    these plans rather than fail, so the first, single-pass query is made to fail here.)"""
    from sqlmetrics.engines import duckdb_passes

    recs, truth = many_users
    per_user_metrics = ["gauc", "user_auc", "accuracy@0.5", "ndcg@10"]
    free = sqlmetrics.evaluate(recs, truth, per_user_metrics)
    single_pass = duckdb_passes.split_diagnostics
    calls: list[int] = []

    def first_runs_out_of_memory(*args: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise duckdb.OutOfMemoryException("out of memory")
        return single_pass(*args)

    monkeypatch.setattr(duckdb_passes, "split_diagnostics", first_runs_out_of_memory)
    limited = sqlmetrics.evaluate(recs, truth, per_user_metrics)
    assert free.attrs["passes"] == 1 and limited.attrs["passes"] > 1
    pd.testing.assert_frame_equal(limited, free, check_exact=False, rtol=0, atol=1e-12)
    pd.testing.assert_frame_equal(
        sqlmetrics.read_diagnostics(limited), sqlmetrics.read_diagnostics(free)
    )
    calls.clear()
    with pytest.raises(sqlmetrics.SqlmetricsError, match="auc, r2 compare rows across all users"):
        sqlmetrics.evaluate(recs, truth, ["auc", "gauc", "r2"], columns={"rating": "relevance"})


def test_passes_by_hash_for_user_ids_without_quantiles(many_users: tuple[str, str]) -> None:
    """Text user ids have no APPROX_QUANTILE: the passes go by hash, with the same numbers."""
    recs, truth = (pd.read_parquet(path).astype({"user_id": "str"}) for path in many_users)
    free = sqlmetrics.evaluate(recs, truth, METRICS)
    tight = duckdb.connect(config={"memory_limit": "64MB", "threads": 2})
    limited = sqlmetrics.evaluate(recs, truth, METRICS, connection=tight)
    assert limited.attrs["passes"] > 1
    pd.testing.assert_frame_equal(limited, free, check_exact=False, rtol=0, atol=1e-12)


@pytest.mark.parametrize("limit", ["-1", "20GB", "1TB"])
def test_no_passes_planned_under_a_large_or_no_limit(limit: str) -> None:
    """memory_limit='-1' reads '16383.9 PiB': a unit misread as bytes planned a pass per few
    users on every call."""
    users = np.arange(200)
    recs = pd.DataFrame({"user_id": users, "item_id": users % 7, "score": users / 200})
    truth = pd.DataFrame({"user_id": users, "item_id": users % 5})
    connection = duckdb.connect()
    connection.execute(f"SET memory_limit = '{limit}'")
    result = sqlmetrics.evaluate(recs, truth, ["ndcg@2"], connection=connection)
    assert result.attrs["passes"] == 1


def test_range_passes_take_every_user_once() -> None:
    from sqlglot import exp

    from sqlmetrics.engines.duckdb_passes import user_passes

    quantiles = [float(q // 40) for q in range(255)]  # repeated cut points
    passes = user_passes(9, quantiles)
    connection = duckdb.connect()
    values = "(VALUES (NULL), (-1), (0), (0.5), (1), (3), (6), (6.5), (7), (100)) AS t(u)"
    taken = []
    for user_pass in passes:
        condition = user_pass.condition(exp.column("u")).sql("duckdb")
        taken += connection.execute(f"SELECT u FROM {values} WHERE {condition}").fetchall()
    assert sorted(taken, key=str) == sorted(
        connection.execute(f"FROM {values}").fetchall(), key=str
    )


def test_large_inputs_on_a_plan_sorting_every_row_go_in_passes_of_their_own_size(
    many_users: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above WINDOW_PASSES_FROM_ROWS recommendation rows (here lowered to the fixture's 800k),
    a plan that sorts every row (sorted_lists.sql beyond the top-k plan's k, gauc) goes in
    passes of WINDOW_PASS_BYTES whatever the limit, with the same numbers; the top-k plan does
    not."""
    from sqlmetrics.engines import duckdb_passes

    recs, truth = many_users
    window = ["ndcg@30", "map@50", "gauc"]
    free = sqlmetrics.evaluate(recs, truth, window)
    monkeypatch.setattr(duckdb_passes, "WINDOW_PASSES_FROM_ROWS", 800_000)
    monkeypatch.setattr(duckdb_passes, "WINDOW_PASS_BYTES", 64 * 2**20)
    split = sqlmetrics.evaluate(recs, truth, window)
    assert free.attrs["passes"] == 1 and split.attrs["passes"] == 4  # 40k users x 6 KB / 64 MiB
    pd.testing.assert_frame_equal(split, free, check_exact=False, rtol=0, atol=1e-12)
    assert sqlmetrics.evaluate(recs, truth, METRICS).attrs["passes"] == 1  # the top-k plan
    monkeypatch.setattr(duckdb_passes, "WINDOW_PASSES_FROM_ROWS", 800_001)
    assert sqlmetrics.evaluate(recs, truth, window).attrs["passes"] == 1
