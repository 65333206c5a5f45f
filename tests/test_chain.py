"""evaluate's diagnostics in the metrics' own chain (plan.py's diagnostics "chained",
compose/chain.py): the same numbers and counts as diagnostics.sql's own readers of the stages
(plan.CHAIN_DIAGNOSTICS off), on the portable plan every engine but DuckDB runs.

The lists (k = 3 and 5, so repeats count among the first 5 positions):
- user 1: scores 0.9 0.8 0.5 0.5 0.5 0.5 0.1: one tie group (positions 3 to 6) straddles both
  cutoffs, 3 (positions 3 and 4) and 5 (5 and 6): counted once.
- user 2: 0.9 0.7 0.6 0.4 0.3 0.3: positions 5 and 6 tie across 5: one group.
- user 3: 0.9 0.8 0.8 0.8 0.2 0.2: 2 to 4 across 3, and 5 and 6 across 5: two groups.
- user 4: items x y x z y w x by distinct scores: x again at 3, y again at 5 (2 repeated rows
  within 5; x at 7 is past it).
- user 5: a scored item and two without a score (never a tie);
- user 6: a list and interactions, none relevant; user 7: relevant items and no list.
So tied_score_groups = 1 + 1 + 2 = 4 and duplicate_recommendations = 2.
"""

from __future__ import annotations

import functools
from typing import cast

import duckdb
import pandas as pd
import pyarrow as pa
import pytest
from sqlglot import exp

from sqlmetrics import api
from sqlmetrics.catalog.metrics import parse_requests
from sqlmetrics.compose import plan
from sqlmetrics.compose.diagnostics import CHECKS, DIAGNOSTICS
from sqlmetrics.compose.inputs import Options
from sqlmetrics.options import QueryOptions, filled
from sqlmetrics.render.dialects import render
from tests.test_plan_choice import inputs as plan_inputs

_LISTS: dict[int, list[tuple[str, float | None]]] = {
    1: [("a", 0.9), ("b", 0.8), ("c", 0.5), ("d", 0.5), ("e", 0.5), ("f", 0.5), ("g", 0.1)],
    2: [("a", 0.9), ("b", 0.7), ("c", 0.6), ("d", 0.4), ("e", 0.3), ("f", 0.3)],
    3: [("a", 0.9), ("b", 0.8), ("c", 0.8), ("d", 0.8), ("e", 0.2), ("f", 0.2)],
    4: [("x", 0.9), ("y", 0.8), ("x", 0.7), ("z", 0.6), ("y", 0.5), ("w", 0.4), ("x", 0.3)],
    5: [("a", 0.9), ("b", None), ("c", None)],
    6: [("a", 0.9), ("b", 0.8)],
}
RECOMMENDATIONS = pd.DataFrame(
    [(user, item, score) for user, items in _LISTS.items() for item, score in items],
    columns=["user_id", "item_id", "score"],
)
INTERACTIONS = pd.DataFrame(
    [
        (1, "c", 1),
        (1, "f", 2),
        (2, "a", 1),
        (2, "f", 1),
        (3, "d", 1),
        (4, "y", 1),
        (4, "w", 3),
        (5, "c", 1),
        (6, "a", 0),
        (7, "a", 1),
        (7, "b", 2),
    ],
    columns=["user_id", "item_id", "relevance"],
)
HIT_ROWS = ["ndcg@5", "precision@3", "recall@5", "map@5", "mrr@3", "hit_rate@3", "f1@5"]
OTHERS = ["ndcg@3", "dcg_exp@5", "r_precision", "precision_listed@5", "err@5"]


# Bad rows of every kind the recommendations' checks count: a row without a user, one without
# an item, a NaN score, a score above 1 (and user 5's two NULL scores above). An Arrow table
# built from Python values: pandas' NaN would reach DuckDB as NULL.
_BAD = [(None, "q", 0.5), (1, None, 0.05), (2, "n", float("nan")), (3, "o", 1.5)]
_ROWS = [(user, item, score) for user, items in _LISTS.items() for item, score in items] + _BAD
BAD_RECOMMENDATIONS = pa.table(
    {
        name: pa.array([row[i] for row in _ROWS])
        for i, name in enumerate(["user_id", "item_id", "score"])
    }
)
# The lists with their positions as a rank column (scores descending, ties by item id).
RANKED_RECOMMENDATIONS = RECOMMENDATIONS.assign(
    rank=RECOMMENDATIONS.sort_values(["score", "item_id"], ascending=False, na_position="last")
    .groupby("user_id")
    .cumcount()
    + 1
).drop(columns="score")


def _rows(
    chained: bool,
    metrics: list[str],
    monkeypatch: pytest.MonkeyPatch,
    recommendations: pd.DataFrame | pa.Table = RECOMMENDATIONS,
    **options: object,
) -> pd.DataFrame:
    """evaluate's query (metrics and diagnostics) on the portable plan, run on DuckDB."""
    monkeypatch.setattr(plan, "TOP_K_DIALECTS", frozenset())
    monkeypatch.setattr(plan, "CHAIN_DIAGNOSTICS", chained)
    given = filled(QueryOptions, {"dialect": "duckdb", **options}, "test")
    _, composing = api._prepared(metrics, "recommendations", "interactions", given)
    build = cast("functools.partial[exp.Query]", composing)  # compose with its arguments
    query = build.func(*build.args, **{**build.keywords, "diagnostics": True})
    sql = render(query, "duckdb")
    assert ("AS kinds" in sql) == chained, sql  # the chain's two-row table
    connection = duckdb.connect()
    connection.register("recommendations", recommendations)
    connection.register("interactions", INTERACTIONS)
    frame = connection.execute(sql).df().sort_values("sqlmetrics_row").reset_index(drop=True)
    # the counts' types differ by form (a BIGINT or DuckDB's HUGEINT sum); evaluate reads
    # them all as int64 (engines.base.diagnostics_frame)
    counts = [name for name in (*DIAGNOSTICS, *CHECKS) if name in frame]
    return frame.astype(dict.fromkeys(counts, "float64"))


@pytest.mark.parametrize("metrics", [HIT_ROWS, HIT_ROWS + OTHERS], ids=["hit rows", "every row"])
@pytest.mark.parametrize("ties", ["id", "id_text", "optimistic", "pessimistic"])
@pytest.mark.parametrize("population", ["all", "common"])
def test_chained_diagnostics_equal_the_diagnostics_apart(
    metrics: list[str], ties: str, population: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    chained = _rows(True, metrics, monkeypatch, ties=ties, population=population)
    apart = _rows(False, metrics, monkeypatch, ties=ties, population=population)
    pd.testing.assert_frame_equal(chained, apart, check_exact=False, rtol=1e-12)


@pytest.mark.parametrize("metrics", [["r_precision", "map"], ["ndcg@4", "r_precision"]])
@pytest.mark.parametrize("population", ["all", "common"])
def test_chained_diagnostics_equal_the_diagnostics_apart_without_every_cutoff(
    metrics: list[str], population: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A metric without a cutoff reads whole lists: list_counts counts the repeats, and the
    chain carries the tie groups alone (or, without any cutoff, no flag at all)."""
    chained = _rows(True, metrics, monkeypatch, population=population)
    apart = _rows(False, metrics, monkeypatch, population=population)
    pd.testing.assert_frame_equal(chained, apart, check_exact=False, rtol=1e-12)


def test_chained_diagnostics_equal_the_diagnostics_apart_under_average_ties(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    metrics = ["ndcg@5", "precision@3", "recall@5", "dcg_exp@5"]  # those average ties serve
    chained = _rows(True, metrics, monkeypatch, ties="average")
    apart = _rows(False, metrics, monkeypatch, ties="average")
    pd.testing.assert_frame_equal(chained, apart, check_exact=False, rtol=1e-12)


def test_chained_diagnostics_count_bad_rows_over_every_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The row checks (list_checks.sql) count what list_counts.sql counted per list."""
    chained = _rows(True, HIT_ROWS, monkeypatch, BAD_RECOMMENDATIONS)
    apart = _rows(False, HIT_ROWS, monkeypatch, BAD_RECOMMENDATIONS)
    pd.testing.assert_frame_equal(chained, apart, check_exact=False, rtol=1e-12)
    diagnostics = chained[chained["sqlmetrics_row"] == "diagnostics"].iloc[0]
    assert diagnostics["bad_recommendation_user_ids"] == 1
    assert diagnostics["bad_recommendation_item_ids"] == 1
    assert diagnostics["bad_scores"] == 1  # the NaN
    assert diagnostics["scores_outside_0_1"] == 2  # 1.5 and the NaN (DuckDB orders it above 1)
    assert diagnostics["null_scores"] == 2  # user 5's


@pytest.mark.parametrize(
    ("recommendations", "options"),
    [
        (RANKED_RECOMMENDATIONS, {"columns": {"rank": "rank"}}),
        (RECOMMENDATIONS, {"duplicates": "first"}),
    ],
    ids=["rank column", "duplicates first"],
)
def test_chained_diagnostics_reading_whole_lists_equal_the_diagnostics_apart(
    recommendations: pd.DataFrame, options: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """chained_lists: a rank column's broken ranks and repeats anywhere need list_counts."""
    chained = _rows(True, HIT_ROWS, monkeypatch, recommendations, **options)
    apart = _rows(False, HIT_ROWS, monkeypatch, recommendations, **options)
    pd.testing.assert_frame_equal(chained, apart, check_exact=False, rtol=1e-12)


def test_chained_counts_tie_groups_once_and_repeats_within_the_deepest_cutoff(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = _rows(True, HIT_ROWS, monkeypatch)
    diagnostics = rows[rows["sqlmetrics_row"] == "diagnostics"].iloc[0]
    assert diagnostics["tied_score_groups"] == 4  # users 1, 2 and 3 (2): see the docstring
    assert diagnostics["duplicate_recommendations"] == 2  # user 4's x at 3 and y at 5
    assert diagnostics["users_in_interactions"] == 7
    assert diagnostics["users_with_recommendations"] == 6
    assert diagnostics["population_without_recommendations"] == 1  # user 7
    assert diagnostics["recommended_without_relevant"] == 1  # user 6
    metrics = rows[rows["sqlmetrics_row"] == "metrics"].iloc[0]
    assert metrics["users"] == 6  # users with a relevant item: 1-5 and 7
    # hit_rate@3: users 1 (c at 3), 2 (a at 1), 3 (d at 2 under ties "id": d > c > b), 4 (y
    # at 2) and 5 (c at 2: the unscored last, c before b) of the 6; user 7 has no list
    assert metrics["hit_rate@3"] == pytest.approx(5 / 6)


@pytest.mark.parametrize(
    ("call", "why"),
    [
        ({}, None),
        ({"group_by": "model"}, "groups"),
        ({"per_user": True}, "per-user rows or the curve plan"),
        ({"metrics": ["ndcg@5", "auc"]}, "metrics over scores, lists or judgements too"),
        ({"dialect": "duckdb"}, "DuckDB's own plans or passes"),
    ],
)
def test_the_plan_says_when_the_diagnostics_are_chained(
    call: dict[str, object], why: str | None
) -> None:
    requests = parse_requests(call.get("metrics", ["ndcg@5", "recall@3"]))  # type: ignore[arg-type]
    inputs = plan_inputs(groups=("model",) if "group_by" in call else ())
    chosen = plan.choose_plan(
        requests,
        inputs,
        Options(ties="id"),
        str(call.get("dialect", "spark")),
        per_user=bool(call.get("per_user")),
        diagnostics=True,
    )
    assert chosen.diagnostics == ("chained" if why is None else "apart")
    expected = "diagnostics: chained" if why is None else f"diagnostics: apart ({why})"
    assert expected in chosen.describe()


@pytest.mark.parametrize(
    ("metrics", "options", "rank", "why"),
    [
        (["ndcg@5"], {}, True, "a rank column: each list's ranks checked"),
        (["ndcg@5"], {"checks": "full"}, False, "repeats counted anywhere in a list"),
        (["ndcg@5", "r_precision"], {}, False, "repeats counted anywhere in a list"),
    ],
)
def test_the_plan_says_when_the_chained_diagnostics_count_whole_lists(
    metrics: list[str], options: dict[str, str], rank: bool, why: str
) -> None:
    chosen = plan.choose_plan(
        parse_requests(metrics),
        plan_inputs(rank=rank),
        Options(ties="id", **options),  # type: ignore[arg-type]
        "spark",
        per_user=False,
        diagnostics=True,
    )
    assert chosen.diagnostics == "chained_lists"
    assert f"diagnostics: chained_lists ({why})" in chosen.describe()
