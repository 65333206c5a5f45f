"""Property-based tests (hypothesis): sqlmetrics against the independent oracle, and invariants.

Why: test_crosscheck.py checks a few large random datasets; here hypothesis draws thousands of
small ones (1-8 users, lists of 0-12 items with frequent score ties and NULL scores, graded
relevance, repeated interaction rows, population users without a list, listed users without a
relevant interaction, integer or string ids, cutoffs from 1 to beyond the list) and shrinks any
failure to a minimal case.

- One property per metric family compares every metric of the family, at the drawn cutoffs and
  without one, per user with tests/oracle.py to 1e-9, for a drawn tie policy, population and
  threshold (one ``sqlmetrics.evaluate`` call per example).
- Invariants: normalised metrics lie in [0, 1]; a perfect ranking scores 1; permuting the input
  rows changes nothing; adding users with a list but nothing relevant changes no summary number.

Examples per property: ``SQLMETRICS_HYPOTHESIS_EXAMPLES`` (default 30, a quick run for
developers; .ci/run sets 1,000) for the family properties; the invariants take
``SQLMETRICS_HYPOTHESIS_INVARIANT_EXAMPLES`` (default 10, each example two or more calls;
.ci/run sets 200). Examples are derandomized, so every run draws the same ones.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sqlmetrics
from sqlmetrics.catalog.metrics import parse_request
from tests.oracle import AVERAGE_CAPABLE, POPULATIONS, TIE_POLICIES, oracle_evaluate

TOL = 1e-9
Rows = list[dict[str, Any]]

# ----------------------------------------------------------------------------------------------
# Settings
# ----------------------------------------------------------------------------------------------

FAMILY_EXAMPLES = int(os.environ.get("SQLMETRICS_HYPOTHESIS_EXAMPLES", "30"))
INVARIANT_EXAMPLES = int(os.environ.get("SQLMETRICS_HYPOTHESIS_INVARIANT_EXAMPLES", "10"))

settings.register_profile(
    "sqlmetrics",
    max_examples=FAMILY_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,  # CI draws the same examples on every run
    database=None,  # nothing written to .hypothesis/; derandomized runs replay anyway
    print_blob=False,
)
PROFILE = settings.get_profile("sqlmetrics")
FAMILY_SETTINGS = settings(PROFILE, max_examples=FAMILY_EXAMPLES)
INVARIANT_SETTINGS = settings(PROFILE, max_examples=INVARIANT_EXAMPLES)

# ----------------------------------------------------------------------------------------------
# Metrics
# ----------------------------------------------------------------------------------------------

FAMILIES: dict[str, tuple[str, ...]] = {
    "hits-based": (
        "hits",
        "hit_rate",
        "precision",
        "recall",
        "f1",
        "r_precision",
        "micro_hit_ratio",
    ),
    "rank-based": ("mrr", "micro_mrr", "map", "map_min", "map_hits"),
    "gain-based": (
        "cg",
        "dcg",
        "ndcg",
        "dcg_exp",
        "ndcg_exp",
        "ndcg_scored",
        "ndcg_exp_scored",
        "q_measure",
    ),
}
ALL = tuple(metric for family in FAMILIES.values() for metric in family)
NORMALISED = (
    "hit_rate",
    "precision",
    "recall",
    "f1",
    "r_precision",
    "mrr",
    "map",
    "map_min",
    "map_hits",
    "ndcg",
    "ndcg_exp",
    "ndcg_scored",
    "ndcg_exp_scored",
    "micro_hit_ratio",
    "micro_mrr",
    "q_measure",
)
# Equal to 1 at every cutoff for a perfect ranking holding every relevant item.
PERFECT_AT_EVERY_CUTOFF = (
    "ndcg",
    "ndcg_exp",
    "ndcg_scored",
    "ndcg_exp_scored",
    "map_min",
    "map_hits",
    "mrr",
    "hit_rate",
    "q_measure",
)
# Equal to 1 without a cutoff (the whole list) for such a ranking.
PERFECT_WITHOUT_CUTOFF = ("r_precision", "map", "recall")

MAX_LIST = 12
MAX_TIE_GROUP = 6  # the oracle brute-forces ties="average" over each group's orderings


def metric_specs(
    metrics: tuple[str, ...], ties: str, cutoffs: list[int]
) -> list[tuple[str, str, int | None]]:
    """(column, metric, k) for each metric valid under the tie policy, uncut and at each k."""
    specs = []
    for metric in metrics:
        if ties == "average" and metric not in AVERAGE_CAPABLE:
            continue
        for k in (None, *cutoffs):
            if metric == "r_precision" and k is not None:
                continue
            specs.append((metric if k is None else f"{metric}@{k}", metric, k))
    return specs


# ----------------------------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------------------------

TINY_SCORES = (0.1, 0.2, 0.5, 0.9)  # ties nearly everywhere
WIDE_SCORES = tuple(i / 16 for i in range(1, 17))  # ties now and then


def _ids(string_ids: bool) -> tuple[Any, Any]:
    if string_ids:  # unpadded, so "i9" > "i10": string order differs from numeric order
        return (lambda u: f"u{u}"), (lambda i: f"i{i}")
    return (lambda u: u), (lambda i: i)


def _draw_scores(
    draw: Callable[[st.SearchStrategy[Any]], Any], n: int, levels: tuple[float | None, ...]
) -> list[float | None]:
    """n scores from levels, no level (NULL included) used by more than MAX_TIE_GROUP items."""
    used: dict[float | None, int] = {}
    scores = []
    for _ in range(n):
        score = draw(st.sampled_from([s for s in levels if used.get(s, 0) < MAX_TIE_GROUP]))
        used[score] = used.get(score, 0) + 1
        scores.append(score)
    return scores


@st.composite
def datasets(draw: st.DrawFn) -> tuple[Rows, Rows]:
    """(recommendations, interactions) as oracle rows: 1-8 users, each listed and/or judged."""
    uid, iid = _ids(draw(st.booleans()))
    levels: tuple[float | None, ...] = draw(st.sampled_from((TINY_SCORES, WIDE_SCORES)))
    if draw(st.booleans()):
        levels = (*levels, None)
    pool = draw(st.integers(1, 16))  # small item pool: relevant items overlap the lists
    recs: Rows = []
    inter: Rows = []
    for u in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(("both", "both", "listed only", "judged only")))
        listed: list[int] = []
        if kind != "judged only":
            n = draw(st.integers(0, min(MAX_LIST, pool)))
            listed = list(draw(st.permutations(range(pool))))[:n]
            for item, score in zip(listed, _draw_scores(draw, n, levels), strict=True):
                recs.append({"user_id": uid(u), "item_id": iid(item), "score": score})
        if kind != "listed only":
            # Items on the list, in the pool, or beyond it; repeats are duplicate rows.
            item_strategy = st.integers(0, pool + 3)
            if listed:
                item_strategy = st.one_of(st.sampled_from(listed), item_strategy)
            for _ in range(draw(st.integers(0, 6))):
                item = draw(item_strategy)
                relevance = draw(st.integers(0, 3))
                inter.append({"user_id": uid(u), "item_id": iid(item), "relevance": relevance})
    # sqlmetrics refuses an empty input by design: keep one row in each.
    if not recs:
        recs.append({"user_id": uid(0), "item_id": iid(0), "score": levels[0]})
    if not inter:
        inter.append({"user_id": uid(0), "item_id": iid(0), "relevance": 1})
    return recs, inter


@st.composite
def perfect_rankings(draw: st.DrawFn) -> tuple[Rows, Rows]:
    """Each user's relevant items on top of the list, by relevance, with distinct scores; then
    items with relevance 0 or none, scored lower (ties and NULLs allowed among them)."""
    uid, iid = _ids(draw(st.booleans()))
    recs: Rows = []
    inter: Rows = []
    for u in range(draw(st.integers(1, 8))):
        at_least = 1 if u == 0 else 0  # the population is never empty
        relevances = sorted(draw(st.lists(st.integers(1, 3), min_size=at_least, max_size=8)))
        relevances.reverse()
        n_rel, n_other = len(relevances), draw(st.integers(0, 6))
        items = list(draw(st.permutations(range(n_rel + n_other + 3))))
        relevant, others = items[:n_rel], items[n_rel : n_rel + n_other]
        for j, (item, relevance) in enumerate(zip(relevant, relevances, strict=True)):
            recs.append({"user_id": uid(u), "item_id": iid(item), "score": float(10 - j)})
            inter.append({"user_id": uid(u), "item_id": iid(item), "relevance": relevance})
            if draw(st.booleans()):  # a repeated interaction row, never above the max
                lower = draw(st.integers(0, relevance))
                inter.append({"user_id": uid(u), "item_id": iid(item), "relevance": lower})
        scores = _draw_scores(draw, n_other, (*TINY_SCORES, None))
        for item, score in zip(others, scores, strict=True):
            recs.append({"user_id": uid(u), "item_id": iid(item), "score": score})
            if draw(st.booleans()):
                inter.append({"user_id": uid(u), "item_id": iid(item), "relevance": 0})
    return recs, inter


def cutoffs() -> st.SearchStrategy[list[int]]:
    """A few cutoffs from 1 to beyond the longest list."""
    return st.lists(st.integers(1, MAX_LIST + 3), min_size=1, max_size=2, unique=True)


def frames(recs: Rows, inter: Rows) -> tuple[pd.DataFrame, pd.DataFrame]:
    """pandas frames with explicit types: ids int64 or str, scores nullable Float64."""
    string_ids = isinstance(recs[0]["user_id"], str)
    id_type = object if string_ids else "int64"
    rec_df = pd.DataFrame(
        {
            "user_id": pd.Series([r["user_id"] for r in recs], dtype=id_type),
            "item_id": pd.Series([r["item_id"] for r in recs], dtype=id_type),
            "score": pd.array([r["score"] for r in recs], dtype="Float64"),
        }
    )
    truth_df = pd.DataFrame(
        {
            "user_id": pd.Series([r["user_id"] for r in inter], dtype=id_type),
            "item_id": pd.Series([r["item_id"] for r in inter], dtype=id_type),
            "relevance": pd.Series([r["relevance"] for r in inter], dtype="int64"),
        }
    )
    return rec_df, truth_df


def evaluate(recs: Rows, inter: Rows, names: list[str], **kw: Any) -> pd.DataFrame:
    rec_df, truth_df = frames(recs, inter)
    return sqlmetrics.evaluate(rec_df, truth_df, metrics=names, **kw)


def per_user_dict(frame: pd.DataFrame, column: str) -> dict[object, float]:
    """{user: value}; NULL becomes NaN so that it never passes for a number."""
    values = frame[column].to_numpy(dtype="float64", na_value=math.nan).tolist()
    return dict(zip(frame["user_id"].tolist(), values, strict=True))


def close(a: float, b: float) -> bool:
    """Within TOL; both NaN (no value: a micro metric's per-user 0 / 0 for a user judged with
    nothing relevant, population "judged") is a match, as in test_crosscheck."""
    return math.isclose(a, b, rel_tol=0.0, abs_tol=TOL) or (math.isnan(a) and math.isnan(b))


def fail_on(problems: list[str], frame: pd.DataFrame, limit: int = 20) -> None:
    if problems:
        shown = "\n".join(problems[:limit])
        pytest.fail(
            f"{len(problems)} problem(s):\n{shown}\nsqlmetrics per user:\n{frame.to_string()}",
            pytrace=False,
        )


# ----------------------------------------------------------------------------------------------
# Every metric family against the oracle
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", list(FAMILIES))
@FAMILY_SETTINGS
@given(
    data=datasets(),
    ties=st.sampled_from(TIE_POLICIES),
    population=st.sampled_from(POPULATIONS),
    threshold=st.sampled_from((0.0, 1.0)),
    ks=cutoffs(),
)
def test_family_matches_oracle(
    family: str,
    data: tuple[Rows, Rows],
    ties: str,
    population: str,
    threshold: float,
    ks: list[int],
) -> None:
    """Every metric of the family, per user, equals the oracle to 1e-9 (one evaluate call)."""
    recs, inter = data
    specs = metric_specs(FAMILIES[family], ties, ks)
    kw: dict[str, Any] = {"ties": ties, "population": population, "threshold": threshold}
    frame = evaluate(recs, inter, [name for name, _, _ in specs], per_user=True, **kw)
    expected = oracle_evaluate(recs, inter, [(metric, k) for _, metric, k in specs], **kw)
    problems = []
    for name, metric, k in specs:
        got, want = per_user_dict(frame, name), expected[(metric, k)].per_user
        if set(got) != set(want):
            problems.append(f"{name}: users {sorted(got, key=str)} want {sorted(want, key=str)}")
        problems += [
            f"{name}: user {user!r} got {got[user]!r} want {value!r}"
            for user, value in want.items()
            if user in got and not close(got[user], value)
        ]
    fail_on(problems, frame)


# ----------------------------------------------------------------------------------------------
# Invariants
# ----------------------------------------------------------------------------------------------


@INVARIANT_SETTINGS
@given(
    data=datasets(),
    ties=st.sampled_from(TIE_POLICIES),
    population=st.sampled_from(POPULATIONS),
    threshold=st.sampled_from((0.0, 1.0)),
    ks=cutoffs(),
)
def test_normalised_metrics_lie_in_unit_interval(
    data: tuple[Rows, Rows], ties: str, population: str, threshold: float, ks: list[int]
) -> None:
    """Every normalised metric of every population user lies in [0, 1] (exactly, no tolerance).
    A micro metric has no per-user value (NaN, its 0 / 0) for a user judged with nothing
    relevant, whom only trec_eval's populations ("judged", "all_judged") hold."""
    recs, inter = data
    names = [name for name, _, _ in metric_specs(NORMALISED, ties, ks)]
    kw: dict[str, Any] = {"ties": ties, "population": population, "threshold": threshold}
    frame = evaluate(recs, inter, names, per_user=True, **kw)
    no_value = population in ("judged", "all_judged")
    problems = [
        f"{name}: user {user!r} has {value!r}"
        for name in names
        for user, value in per_user_dict(frame, name).items()
        if not 0.0 <= value <= 1.0  # NaN fails too, but where a micro metric has no value
        and not (no_value and math.isnan(value) and parse_request(name).metric.micro)
    ]
    fail_on(problems, frame)


@INVARIANT_SETTINGS
@given(data=perfect_rankings(), ties=st.sampled_from(TIE_POLICIES), ks=cutoffs())
def test_perfect_ranking_scores_one(data: tuple[Rows, Rows], ties: str, ks: list[int]) -> None:
    """ndcg (every variant), map_min, map_hits, mrr, hit_rate and q_measure are 1 at every
    cutoff, and r_precision, map and recall without one, when every relevant item leads the
    list."""
    recs, inter = data
    specs = metric_specs(PERFECT_AT_EVERY_CUTOFF, ties, ks)
    specs += metric_specs(PERFECT_WITHOUT_CUTOFF, ties, [])
    names = [name for name, _, _ in specs]
    frame = evaluate(recs, inter, names, per_user=True, ties=ties)
    assert len(frame) >= 1  # user 0 always has a relevant item
    problems = [
        f"{name}: user {user!r} has {value!r}"
        for name in names
        for user, value in per_user_dict(frame, name).items()
        if not close(value, 1.0)
    ]
    fail_on(problems, frame)


@INVARIANT_SETTINGS
@given(
    data=datasets(),
    ties=st.sampled_from(TIE_POLICIES),
    population=st.sampled_from(POPULATIONS),
    ks=cutoffs(),
    shuffle=st.data(),
)
def test_permuting_rows_changes_nothing(
    data: tuple[Rows, Rows], ties: str, population: str, ks: list[int], shuffle: st.DataObject
) -> None:
    """The per-user frame is the same, to float rounding, for any order of the input rows."""
    recs, inter = data
    names = [name for name, _, _ in metric_specs(ALL, ties, ks)]
    kw: dict[str, Any] = {"per_user": True, "ties": ties, "population": population}
    before = evaluate(recs, inter, names, **kw)
    recs = shuffle.draw(st.permutations(recs), label="permuted recommendations")
    inter = shuffle.draw(st.permutations(inter), label="permuted interactions")
    after = evaluate(recs, inter, names, **kw)
    # Floats are added in row order within a user, so other rows may move the last bit of a
    # sum (CI saw dcg off by 1 ulp); anything beyond rounding would be a real dependence.
    pd.testing.assert_frame_equal(after, before, check_exact=False, rtol=1e-12, atol=1e-12)


@INVARIANT_SETTINGS
@given(
    data=datasets(),
    ties=st.sampled_from(TIE_POLICIES),
    # trec_eval's populations ("judged", "all_judged") count a user judged with nothing
    # relevant as 0 by definition: the invariant is the other populations'
    population=st.sampled_from(("all", "common")),
    threshold=st.sampled_from((0, 1)),
    ks=cutoffs(),
    extra=st.data(),
)
def test_users_without_relevant_items_change_nothing(
    data: tuple[Rows, Rows],
    ties: str,
    population: str,
    threshold: int,
    ks: list[int],
    extra: st.DataObject,
) -> None:
    """The summary (``users`` and every mean) ignores users whose interactions are all at or
    below the threshold, or who have none."""
    recs, inter = data
    names = [name for name, _, _ in metric_specs(ALL, ties, ks)]
    kw: dict[str, Any] = {"ties": ties, "population": population, "threshold": threshold}
    before = evaluate(recs, inter, names, **kw)

    uid, iid = _ids(isinstance(recs[0]["user_id"], str))
    added_recs, added_inter = list(recs), list(inter)
    for u in range(100, 100 + extra.draw(st.integers(1, 3), label="added users")):
        n = extra.draw(st.integers(1, MAX_LIST))
        items = list(extra.draw(st.permutations(range(16))))[:n]
        scores = _draw_scores(extra.draw, n, (*TINY_SCORES, None))
        for item, score in zip(items, scores, strict=True):
            added_recs.append({"user_id": uid(u), "item_id": iid(item), "score": score})
            if extra.draw(st.booleans()):  # judged, but not relevant
                relevance = extra.draw(st.integers(0, threshold))
                added_inter.append(
                    {"user_id": uid(u), "item_id": iid(item), "relevance": relevance}
                )
    after = evaluate(added_recs, added_inter, names, **kw)
    # Floats are added in row order within a user, so other rows may move the last bit of a
    # sum (CI saw dcg off by 1 ulp); anything beyond rounding would be a real dependence.
    pd.testing.assert_frame_equal(after, before, check_exact=False, rtol=1e-12, atol=1e-12)
