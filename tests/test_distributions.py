"""evaluate's ``distributions``: the spread of the per-user values per group (issue 20's page).

On DuckDB with ``ci`` they come from the statistics query (QUANTILE_DISC over the per-user or
the curve plan's per-(user, cutoff) rows); otherwise from a per-user query and numpy. Both are
checked against a hand-derived case and against quantiles taken here from evaluate's per-user
rows by the definition itself (the smallest value with at least the level's share at or below).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics.compose.distributions import QUANTILE_LEVELS
from sqlmetrics.errors import SqlmetricsError

REPO = Path(__file__).resolve().parent.parent
RECS = str(REPO / "examples" / "recommendations.parquet")
TRUTH = str(REPO / "examples" / "interactions.parquet")
# Both ways of computing them: in the statistics query (DuckDB, ci) and from per-user rows.
WAYS = [pytest.param({"ci": 0.95}, id="query"), pytest.param({}, id="per-user")]


def by_definition(values: list[float]) -> list[float]:
    """The value at level i / 100: the smallest v with at least ceil(i * n / 100) users at or
    below it, i.e. the sorted values' element ceil(i * n / 100) (1-based; the first at 0)."""
    ordered = sorted(values)
    n = len(ordered)
    steps = QUANTILE_LEVELS - 1
    return [ordered[max(-(-i * n // steps), 1) - 1] for i in range(QUANTILE_LEVELS)]


def hand_data() -> tuple[pd.DataFrame, pd.DataFrame]:
    # Four users, two items each; the relevant items:
    #   user 1: a (position 1)        precision@2 = 1/2, hit_rate@1 = 1
    #   user 2: d (position 2)        precision@2 = 1/2, hit_rate@1 = 0
    #   user 3: e and f (both)        precision@2 = 1,   hit_rate@1 = 1
    #   user 4: nothing listed (z)    precision@2 = 0,   hit_rate@1 = 0
    recs = pd.DataFrame(
        {
            "user_id": [1, 1, 2, 2, 3, 3, 4, 4],
            "item_id": ["a", "b", "c", "d", "e", "f", "g", "h"],
            "score": [0.9, 0.8, 0.9, 0.8, 0.9, 0.8, 0.9, 0.8],
        }
    )
    truth = pd.DataFrame({"user_id": [1, 2, 3, 3, 4], "item_id": ["a", "d", "e", "f", "z"]})
    return recs, truth


@pytest.mark.parametrize("way", WAYS)
def test_hand_derived_quantiles(way: dict[str, float]) -> None:
    recs, truth = hand_data()
    wanted = ["precision@2", "hit_rate@1"]
    result = sqlmetrics.evaluate(recs, truth, wanted, distributions=wanted, **way)
    spread = sqlmetrics.read_distributions(result).set_index("metric")
    # precision@2 sorted: 0, 1/2, 1/2, 1. At level i/100 the value with at least 4i/100 users
    # at or below: 0 up to 25 % (one user of four), 1/2 up to 75 %, 1 above.
    expected = [0.0] * 26 + [0.5] * 50 + [1.0] * 25
    assert spread.loc["precision@2", "quantiles"] == expected
    assert (spread.loc["precision@2", "users"], spread.loc["precision@2", "users_at_0"]) == (4, 1)
    # hit_rate@1: 0, 0, 1, 1: 0 up to 50 %, 1 above
    assert spread.loc["hit_rate@1", "quantiles"] == [0.0] * 51 + [1.0] * 50
    assert (spread.loc["hit_rate@1", "users"], spread.loc["hit_rate@1", "users_at_0"]) == (4, 2)


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize(
    "metrics",
    [
        pytest.param(["ndcg@10", "recall@20", "mrr@10", "precision@5"], id="window-plan"),
        # 20 distinct cutoffs: the curve plan's rows per (user, cutoff)
        pytest.param([f"{m}@{k}" for m in ("ndcg", "recall") for k in range(1, 21)], id="curves"),
    ],
)
def test_quantiles_of_the_per_user_values(way: dict[str, float], metrics: list[str]) -> None:
    wanted = ["ndcg@10", "recall@20"]
    result = sqlmetrics.evaluate(
        RECS, TRUTH, metrics, group_by="model", distributions=wanted, **way
    )
    per_user = sqlmetrics.evaluate(RECS, TRUTH, wanted, group_by="model", per_user=True)
    spread = sqlmetrics.read_distributions(result)
    assert len(spread) == 2 * len(wanted)
    assert list(spread.columns) == ["model", "metric", "users", "users_at_0", "quantiles"]
    for _, row in spread.iterrows():
        values = per_user.loc[per_user["model"] == row["model"], row["metric"]].dropna()
        assert row["users"] == len(values) > 0
        assert row["users_at_0"] == int((values == 0).sum()) > 0
        # the same bits: a user's value is the same in every plan and run (exact sums)
        assert row["quantiles"] == by_definition(values.tolist())
        # and numpy's inverted CDF, the same definition
        levels = np.linspace(0, 1, QUANTILE_LEVELS)
        assert row["quantiles"] == np.quantile(values, levels, method="inverted_cdf").tolist()


def test_a_model_without_lists_has_every_user_at_zero() -> None:
    recs, truth = hand_data()
    recs["model"] = "a"
    # model b lists one item to a user with nothing relevant: its population (the users with
    # a relevant item) has no list there, and scores 0 (population="all")
    extra = pd.DataFrame({"user_id": [9], "item_id": ["q"], "score": [0.5], "model": ["b"]})
    result = sqlmetrics.evaluate(
        pd.concat([recs, extra]),
        truth,
        ["ndcg@2"],
        group_by="model",
        ci=0.95,
        distributions=["ndcg@2"],
    )
    spread = sqlmetrics.read_distributions(result).set_index("model")
    assert (spread.loc["a", "users"], spread.loc["a", "users_at_0"]) == (4, 1)
    assert (spread.loc["b", "users"], spread.loc["b", "users_at_0"]) == (4, 4)
    assert spread.loc["b", "quantiles"] == [0.0] * QUANTILE_LEVELS


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"distributions": ["ndcg@5"]}, "not one of the metrics asked for"),
        ({"distributions": ["coverage@10"]}, "not a mean over users"),
        ({"distributions": ["ndcg@10"], "per_user": True}, "drop one of the two"),
    ],
)
def test_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(SqlmetricsError, match=message):
        sqlmetrics.evaluate(RECS, TRUTH, ["ndcg@10", "coverage@10"], **options)  # type: ignore[arg-type]
