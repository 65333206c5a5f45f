"""Cross-checks: the SQL engine against the pure-Python oracle and against real libraries.

Why: golden fixtures cover hand-sized cases; these tests cover hundreds of random users with
ties, empty lists, missing users, duplicate interactions and graded relevance, and tie every
definition in METRICS.md to an independent implementation (oracle.py) and, where the definitions
coincide, to trec_eval (pytrec_eval), ranx and scikit-learn.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

import numpy as np
import pytest

from tests.oracle import (
    ALL_METRICS,
    AVERAGE_CAPABLE,
    CUTOFF_REQUIRED,
    MICRO_METRICS,
    WITHOUT_CUTOFF,
    oracle_evaluate,
    oracle_mean,
    oracle_per_user,
)

TOL = 1e-9
KS: tuple[int | None, ...] = (None, 1, 3, 10, 50)
LIB_KS = (1, 3, 10, 50)

Rows = list[dict[str, Any]]


# ----------------------------------------------------------------------------------------------
# Random data
# ----------------------------------------------------------------------------------------------

_TIE_GROUP_SIZES = (1, 1, 1, 2, 2, 3, 4, 5)


def _scores(rng: np.random.Generator, n: int, ties: bool) -> list[float]:
    """Distinct scores, or scores in tie groups of at most 5 items (exact binary fractions)."""
    if n == 0:
        return []
    if not ties:
        return [float(x) / 1024 for x in rng.choice(10**6, size=n, replace=False)]
    sizes: list[int] = []
    while sum(sizes) < n:
        sizes.append(int(rng.choice(_TIE_GROUP_SIZES)))
    sizes[-1] -= sum(sizes) - n
    levels = rng.choice(10_000, size=len(sizes), replace=False) / 8
    out = [float(level) for level, size in zip(levels, sizes, strict=True) for _ in range(size)]
    rng.shuffle(out)
    return out


@cache
def make_data(
    seed: int,
    *,
    ties: bool,
    string_ids: bool = False,
    n_users: int = 200,
    n_items: int = 300,
    null_scores: bool = False,
) -> tuple[Rows, Rows]:
    """Recommendations and interactions with every awkward case the population rules cover.

    Per user: 10% no recommendations, 10% no interactions, 10% only non-relevant interactions;
    the rest have graded relevance 0-3 on some recommended items, relevant items outside the
    list, and occasional duplicate interaction rows (max relevance must win).
    """
    rng = np.random.default_rng(seed)

    def uid(u: int) -> object:
        return f"u{u}" if string_ids else u

    def iid(i: int) -> object:
        return f"i{i}" if string_ids else i  # unpadded: "i9" > "i10" as strings

    recs: Rows = []
    inter: Rows = []
    for u in range(n_users):
        kind = rng.random()
        n_recs = 0 if kind < 0.1 else int(rng.integers(0, 31))
        listed = [int(x) for x in rng.choice(n_items, size=n_recs, replace=False)]
        for item, score in zip(listed, _scores(rng, n_recs, ties), strict=True):
            value: float | None = score
            if null_scores and rng.random() < 0.15:
                value = None
            recs.append({"user_id": uid(u), "item_id": iid(item), "score": value})
        if 0.1 <= kind < 0.2:
            continue  # no interactions at all
        only_zero = 0.2 <= kind < 0.3  # interactions, but none relevant
        truth: dict[int, int] = {}
        for item in listed:
            if rng.random() < 0.35:
                truth[item] = 0 if only_zero else int(rng.integers(0, 4))
        listed_set = set(listed)
        unlisted = [i for i in range(n_items) if i not in listed_set]
        for item in rng.choice(unlisted, size=int(rng.integers(0, 5)), replace=False):
            truth[int(item)] = 0 if only_zero else int(rng.integers(0, 4))
        for item, rel in truth.items():
            inter.append({"user_id": uid(u), "item_id": iid(item), "relevance": rel})
            if rng.random() < 0.05:  # duplicate row, lower or higher relevance
                dup = 0 if only_zero else int(rng.integers(0, 4))
                inter.append({"user_id": uid(u), "item_id": iid(item), "relevance": dup})
    return recs, inter


DATASETS: dict[str, Callable[[], tuple[Rows, Rows]]] = {
    "int-ties": lambda: make_data(11, ties=True),
    "str-ties": lambda: make_data(12, ties=True, string_ids=True),
    "int-noties": lambda: make_data(13, ties=False),
    "str-noties": lambda: make_data(14, ties=False, string_ids=True),
}


def to_frames(recs: Rows, inter: Rows) -> tuple[Any, Any]:
    """pandas frames for sqlmetrics; NULL scores as pandas NA (nullable Float64), not NaN."""
    import pandas as pd

    rec_df = pd.DataFrame(recs, columns=["user_id", "item_id", "score"])
    rec_df["score"] = pd.array(
        [pd.NA if r["score"] is None else r["score"] for r in recs], dtype="Float64"
    )
    truth_df = pd.DataFrame(inter, columns=["user_id", "item_id", "relevance"])
    return rec_df, truth_df


# ----------------------------------------------------------------------------------------------
# sqlmetrics helpers
# ----------------------------------------------------------------------------------------------


def metric_specs(ties: str) -> list[tuple[str, str, int | None]]:
    """(column name, metric, k) for every valid metric and cutoff under a tie policy."""
    specs = []
    for metric in sorted(ALL_METRICS):
        if ties == "average" and metric not in AVERAGE_CAPABLE:
            continue
        for k in KS:
            if (metric in WITHOUT_CUTOFF and k is not None) or (
                metric in CUTOFF_REQUIRED and k is None
            ):
                continue
            specs.append((metric if k is None else f"{metric}@{k}", metric, k))
    return specs


@pytest.fixture(scope="module")
def sqlmetrics() -> Any:
    import sqlmetrics as module

    return module


def _native(value: object) -> object:
    return value.item() if isinstance(value, np.generic) else value


def sql_per_user(module: Any, recs: Rows, inter: Rows, names: list[str], **kw: Any) -> Any:
    rec_df, truth_df = to_frames(recs, inter)
    return module.evaluate(rec_df, truth_df, metrics=names, per_user=True, **kw)


def sql_means(module: Any, recs: Rows, inter: Rows, names: list[str], **kw: Any) -> Any:
    rec_df, truth_df = to_frames(recs, inter)
    return module.evaluate(rec_df, truth_df, metrics=names, per_user=False, **kw)


def per_user_dict(frame: Any, column: str) -> dict[object, float]:
    """{user: value} from a per-user result frame; NULL becomes NaN so it never passes as 0."""
    out = {}
    for user, value in zip(frame["user_id"].tolist(), frame[column].tolist(), strict=True):
        out[_native(user)] = math.nan if value is None else float(value)
    return out


def close(a: float, b: float) -> bool:
    """Within TOL; both NaN (no value, as a micro metric's per-user 0 / 0) is a match."""
    return math.isclose(a, b, rel_tol=0.0, abs_tol=TOL) or (math.isnan(a) and math.isnan(b))


def diff_users(
    got: dict[object, float], want: dict[object, float], label: str, limit: int = 5
) -> list[str]:
    """Human-readable mismatches between two per-user dicts (missing users included)."""
    problems = []
    if set(got) != set(want):
        extra = sorted(map(str, set(got) - set(want)))[:limit]
        missing = sorted(map(str, set(want) - set(got)))[:limit]
        problems.append(f"{label}: user sets differ; extra={extra} missing={missing}")
    bad = [u for u in want if u in got and not close(got[u], want[u])]
    for u in bad[:limit]:
        problems.append(f"{label}: user {u!r} got {got[u]!r} want {want[u]!r}")
    if len(bad) > limit:
        problems.append(f"{label}: ... {len(bad)} users differ")
    return problems


def report(problems: list[str], limit: int = 40) -> None:
    if problems:
        shown = "\n".join(problems[:limit])
        pytest.fail(f"{len(problems)} mismatches:\n{shown}", pytrace=False)


# ----------------------------------------------------------------------------------------------
# Oracle self-tests: the worked examples of METRICS.md
# ----------------------------------------------------------------------------------------------


def _list_user(user: object, items: Iterable[object]) -> Rows:
    """A recommendation list in the given order (scores descending)."""
    items = list(items)
    return [
        {"user_id": user, "item_id": item, "score": float(len(items) - i)}
        for i, item in enumerate(items)
    ]


def _graded_list(rels: list[int]) -> tuple[Rows, Rows]:
    """One user whose list has these relevances in order (items 0..n-1)."""
    recs = _list_user(1, range(len(rels)))
    inter = [{"user_id": 1, "item_id": i, "relevance": r} for i, r in enumerate(rels)]
    return recs, inter


def test_oracle_seed_000_ap() -> None:
    recs = _list_user(1, [1, 2, 3, 4, 5, 6])
    inter = [{"user_id": 1, "item_id": i} for i in (1, 4, 5, 6)]
    assert math.isclose(oracle_mean(recs, inter, "map", None), 0.691667, abs_tol=1e-6)


def test_oracle_seed_000_micro_hit_ratio() -> None:
    recs: Rows = []
    inter: Rows = []
    for user, (n_hits, n_rel) in enumerate([(2, 6), (3, 8), (4, 10)]):
        relevant = [f"r{j}" for j in range(n_rel)]
        listed = relevant[:n_hits] + [f"x{j}" for j in range(5 - n_hits)]
        recs += _list_user(user, listed)
        inter += [{"user_id": user, "item_id": item} for item in relevant]
    assert math.isclose(oracle_mean(recs, inter, "micro_hit_ratio", 5), 0.375, abs_tol=1e-12)
    # The per-user mean differs (that is why the micro variant exists).
    assert not math.isclose(oracle_mean(recs, inter, "recall", 5), 0.375, abs_tol=1e-6)


def test_oracle_seed_001_ap() -> None:
    recs = _list_user(1, range(1, 11))
    inter = [{"user_id": 1, "item_id": i} for i in (1, 4, 5, 8)]
    assert math.isclose(oracle_mean(recs, inter, "map", None), 0.65, abs_tol=1e-12)
    assert math.isclose(oracle_mean(recs, inter, "map_hits", None), 0.65, abs_tol=1e-12)


def test_oracle_seed_002() -> None:
    lists = {
        "A": [3, 10, 15, 12, 17],
        "B": [20, 15, 18, 14, 30],
        "C": [2, 5, 7, 8, 15],
        "D": [56, 14, 25, 12, 19],
        "E": [21, 24, 36, 54, 45],
    }
    truth = {"A": 12, "B": 3, "C": 5, "D": 14, "E": 20}
    recs = [row for user, items in lists.items() for row in _list_user(user, items)]
    inter = [{"user_id": u, "item_id": i, "relevance": 1} for u, i in truth.items()]
    assert math.isclose(oracle_mean(recs, inter, "hit_rate", 5), 0.6, abs_tol=1e-12)
    assert math.isclose(oracle_mean(recs, inter, "mrr", 5), 0.25, abs_tol=1e-12)
    assert math.isclose(oracle_mean(recs, inter, "ndcg", 5), 0.338507, abs_tol=1e-6)


@pytest.mark.parametrize(
    ("rels", "metric", "k", "expected"),
    [
        ([3, 4, 1, 0, 3, 2], "ndcg_scored", 6, 0.913864),
        ([2, 1, 2, 0, 1], "ndcg_scored", 5, 0.958318),
        ([7, 2, 5, 10, 1], "ndcg_scored", 5, 0.850852),
        ([7, 2, 5, 10, 1], "ndcg_exp_scored", 5, 0.522501),
    ],
)
def test_oracle_seed_ndcg_scored(rels: list[int], metric: str, k: int, expected: float) -> None:
    recs, inter = _graded_list(rels)
    assert math.isclose(oracle_mean(recs, inter, metric, k), expected, abs_tol=1e-6)


def test_oracle_seed_000_dcg_and_cg() -> None:
    recs, inter = _graded_list([3, 4, 1, 0, 3, 2])
    assert oracle_mean(recs, inter, "cg", 6) == 13
    assert math.isclose(oracle_mean(recs, inter, "dcg", 6), 7.8967, abs_tol=1e-4)


def test_oracle_tie_policies_small() -> None:
    """Three tied items, one relevant: positions 1 / 3 / id order / uniform over 1..3."""
    recs = [{"user_id": 1, "item_id": i, "score": 1.0} for i in (1, 2, 3)]
    inter = [{"user_id": 1, "item_id": 2}]
    want = {
        "optimistic": 1.0,
        "pessimistic": 0.5,
        "id": 1 / math.log2(3),  # item_id DESC: 3, 2, 1
        "average": (1 + 1 / math.log2(3) + 0.5) / 3,  # sklearn's 0.7103 in anchors.md 2.2
    }
    for ties, value in want.items():
        assert math.isclose(oracle_mean(recs, inter, "ndcg", None, ties=ties), value)
    assert math.isclose(oracle_mean(recs, inter, "hits", 1, ties="average"), 1 / 3)
    with pytest.raises(ValueError):
        oracle_mean(recs, inter, "mrr", 1, ties="average")
    with pytest.raises(ValueError):
        oracle_mean(recs, inter, "r_precision", 3)


def test_oracle_threshold_and_population() -> None:
    """threshold=1 makes relevance-1 items non-relevant (gain 0); common drops empty lists."""
    recs = _list_user(1, ["a", "b"])
    inter = [
        {"user_id": 1, "item_id": "a", "relevance": 1},
        {"user_id": 1, "item_id": "b", "relevance": 2},
        {"user_id": 1, "item_id": "b", "relevance": 0},  # duplicate: max wins
        {"user_id": 2, "item_id": "a", "relevance": 3},  # no recommendations
        {"user_id": 3, "item_id": "a", "relevance": 1},  # relevant only when threshold=0
    ]
    assert oracle_per_user(recs, inter, "cg", None, threshold=1) == {1: 2.0, 2: 0.0}
    assert oracle_per_user(recs, inter, "cg", None) == {1: 3.0, 2: 0.0, 3: 0.0}
    assert oracle_per_user(recs, inter, "cg", None, population="common") == {1: 3.0}
    assert oracle_per_user(recs, inter, "dcg", 1, threshold=1) == {1: 0.0, 2: 0.0}


def test_oracle_rank_column_and_nulls() -> None:
    ranked = [
        {"user_id": 1, "item_id": "a", "rank": 2},
        {"user_id": 1, "item_id": "b", "rank": 1},
    ]
    inter = [{"user_id": 1, "item_id": "a"}]
    assert oracle_mean(ranked, inter, "mrr", None, rank_column=True) == 0.5
    scored = [
        {"user_id": 1, "item_id": "a", "score": None},
        {"user_id": 1, "item_id": "b", "score": -5.0},
    ]
    assert oracle_mean(scored, inter, "mrr", None) == 0.5


def test_oracle_average_against_permutation_closed_form() -> None:
    """E[hits@k] = sum over tie groups of relevant * (group positions within k) / size."""
    recs, inter = make_data(21, ties=True, n_users=60)
    per_user = oracle_per_user(recs, inter, "hits", 3, ties="average")
    truth = {(r["user_id"], r["item_id"]) for r in inter if r.get("relevance", 1) > 0}
    problems = []
    for user, got in per_user.items():
        rows = sorted((r for r in recs if r["user_id"] == user), key=lambda r: -float(r["score"]))
        expected = 0.0
        start = 0
        while start < len(rows):
            end = start
            while end < len(rows) and rows[end]["score"] == rows[start]["score"]:
                end += 1
            size = end - start
            n_rel = sum((user, r["item_id"]) in truth for r in rows[start:end])
            inside = max(0, min(end, 3) - start)
            expected += n_rel * inside / size
            start = end
        if not close(got, expected):
            problems.append(f"user {user}: {got} vs {expected}")
    report(problems)


def test_oracle_average_decomposition_equals_full_enumeration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The group-by-group shortcut for many tie groups equals enumerating every joint order."""
    from tests import oracle

    recs, inter = make_data(22, ties=True, n_users=15)
    specs = [(m, k) for _, m, k in metric_specs("average")]
    monkeypatch.setattr(oracle, "_MAX_JOINT_ORDERINGS", 0)
    by_group = oracle_evaluate(recs, inter, specs, ties="average")
    monkeypatch.setattr(oracle, "_MAX_JOINT_ORDERINGS", 10**9)
    joint = oracle_evaluate(recs, inter, specs, ties="average")
    problems = []
    for spec in specs:
        problems += diff_users(by_group[spec].per_user, joint[spec].per_user, str(spec))
    report(problems)


# ----------------------------------------------------------------------------------------------
# SQL against the oracle
# ----------------------------------------------------------------------------------------------

POPULATIONS = ("all", "common", "judged", "all_judged")
TIES = ("id", "optimistic", "pessimistic", "average")
THRESHOLDS = (0.0, 1.0)


def _pairwise(data: str, ties: str, population: str, threshold: float) -> bool:
    """The developer's sample of the cases: on the tied data sets, every pair of values of any
    two of the four options (data set, ties, population, threshold) in 16 of the 64; CI runs
    every one (full_matrix), and the tie-free data sets' 16, which a developer's run holds to
    trec_eval and ranx instead (test_sql_matches_trec_eval, test_sql_matches_ranx)."""
    if data.endswith("noties"):
        return False
    i, j = TIES.index(ties), POPULATIONS.index(population)
    sets = ("int-ties", "str-ties")
    return (sets.index(data), THRESHOLDS.index(threshold)) == ((i + j) % 2, (i // 2 + j) % 2)


def _oracle_case(data: str, ties: str, population: str, threshold: float) -> Any:
    # One xdist group per data set and tie policy: its tests run on one worker, where the
    # oracle's tie enumeration for a user (tests/oracle.py, remembered) serves every population.
    marks = [pytest.mark.xdist_group(f"oracle-{data}-{ties}")]
    if not _pairwise(data, ties, population, threshold):
        marks.append(pytest.mark.full_matrix)
    return pytest.param(
        data,
        ties,
        population,
        threshold,
        id=f"{data}-{ties}-{population}-t{threshold}",
        marks=marks,
    )


ORACLE_CASES = [
    _oracle_case(data, ties, population, threshold)
    for data in ("int-ties", "str-ties")
    for ties in TIES
    for population in POPULATIONS
    for threshold in THRESHOLDS
] + [
    _oracle_case(data, "id", population, threshold)
    for data in ("int-noties", "str-noties")
    for population in POPULATIONS
    for threshold in THRESHOLDS
]


@pytest.mark.parametrize(("data", "ties", "population", "threshold"), ORACLE_CASES)
def test_sql_matches_oracle(
    sqlmetrics: Any, data: str, ties: str, population: str, threshold: float
) -> None:
    recs, inter = DATASETS[data]()
    specs = metric_specs(ties)
    names = [name for name, _, _ in specs]
    kw: dict[str, Any] = {"ties": ties, "threshold": threshold, "population": population}
    per_user = sql_per_user(sqlmetrics, recs, inter, names, **kw)
    means = sql_means(sqlmetrics, recs, inter, names, **kw)

    expected = oracle_evaluate(recs, inter, [(m, k) for _, m, k in specs], **kw)
    problems = []
    for name, metric, k in specs:
        want = expected[(metric, k)]
        problems += diff_users(per_user_dict(per_user, name), want.per_user, name)
        got_mean = float(means[name].iloc[0])
        if not close(got_mean, want.mean):
            problems.append(f"{name}: mean got {got_mean!r} want {want.mean!r}")
    population_size = len(next(iter(expected.values())).per_user)
    if int(means["users"].iloc[0]) != population_size:
        problems.append(f"users: got {means['users'].iloc[0]} want {population_size}")
    report(problems)


@pytest.mark.parametrize("ties", ["id", "optimistic", "pessimistic", "average"])
def test_sql_null_scores_rank_last(sqlmetrics: Any, ties: str) -> None:
    """NULL scores rank after every scored item (and form one tie group among themselves)."""
    recs, inter = make_data(31, ties=True, null_scores=True, n_users=120)
    specs = metric_specs(ties)
    names = [name for name, _, _ in specs]
    per_user = sql_per_user(sqlmetrics, recs, inter, names, ties=ties)
    expected = oracle_evaluate(recs, inter, [(m, k) for _, m, k in specs], ties=ties)
    problems = []
    for name, metric, k in specs:
        want = expected[(metric, k)].per_user
        problems += diff_users(per_user_dict(per_user, name), want, name)
    report(problems)


def test_sql_micro_means_are_ratios_of_sums(sqlmetrics: Any) -> None:
    """Guards the aggregation rule itself: micro means differ from the mean of per-user values."""
    recs, inter = DATASETS["int-noties"]()
    means = sql_means(sqlmetrics, recs, inter, [f"{m}@10" for m in sorted(MICRO_METRICS)])
    for metric in sorted(MICRO_METRICS):
        per_user = oracle_per_user(recs, inter, metric, 10)
        plain_mean = sum(per_user.values()) / len(per_user)
        got = float(means[f"{metric}@10"].iloc[0])
        assert close(got, oracle_mean(recs, inter, metric, 10))
        assert not close(got, plain_mean)


def _with_ranks(recs: Rows, *, gaps: bool, seed: int) -> Rows:
    """Replace scores by a rank column in the ranking-rule order (1..n, or increasing with gaps)."""
    rng = np.random.default_rng(seed)
    by_user: dict[object, Rows] = {}
    for r in recs:
        by_user.setdefault(r["user_id"], []).append(r)
    out: Rows = []
    for user, rows in by_user.items():
        rows = sorted(rows, key=lambda r: (r["score"], r["item_id"]), reverse=True)
        if gaps:
            ranks = sorted(int(x) for x in rng.choice(np.arange(1, 61), len(rows), replace=False))
        else:
            ranks = list(range(1, len(rows) + 1))
        out += [
            {"user_id": user, "item_id": r["item_id"], "rank": rank}
            for r, rank in zip(rows, ranks, strict=True)
        ]
    return out


def test_oracle_rank_column_equals_scores() -> None:
    recs, inter = DATASETS["int-noties"]()
    ranked = _with_ranks(recs, gaps=False, seed=0)
    specs = [(m, k) for _, m, k in metric_specs("id")]
    by_score = oracle_evaluate(recs, inter, specs)
    by_rank = oracle_evaluate(ranked, inter, specs, rank_column=True)
    problems = []
    for spec in specs:
        problems += diff_users(by_rank[spec].per_user, by_score[spec].per_user, str(spec))
    report(problems)


@pytest.mark.parametrize("gaps", [False, True], ids=["contiguous", "gaps"])
def test_sql_rank_column(sqlmetrics: Any, gaps: bool) -> None:
    """A rank column orders the list and is used as is (position = rank); ranks with gaps are
    refused (issue 7: renumber them or rank by score)."""
    import pandas as pd

    recs, inter = DATASETS["str-noties"]()
    ranked = _with_ranks(recs, gaps=gaps, seed=5)
    specs = metric_specs("id")
    arguments = {
        "metrics": [name for name, _, _ in specs],
        "per_user": True,
        "columns": {"rank": "rank"},
    }
    recs_frame = pd.DataFrame(ranked, columns=["user_id", "item_id", "rank"])
    truth_frame = pd.DataFrame(inter, columns=["user_id", "item_id", "relevance"])
    if gaps:
        with pytest.raises(
            sqlmetrics.SqlmetricsError, match=re.escape("are not 1, 2, 3, ... (a gap or a repeat)")
        ):
            sqlmetrics.evaluate(recs_frame, truth_frame, **arguments)
        return
    frame = sqlmetrics.evaluate(recs_frame, truth_frame, **arguments)
    expected = oracle_evaluate(ranked, inter, [(m, k) for _, m, k in specs], rank_column=True)
    problems = []
    for name, metric, k in specs:
        problems += diff_users(per_user_dict(frame, name), expected[(metric, k)].per_user, name)
    report(problems)


def _repeated_ranks(recs: Rows, seed: int) -> Rows:
    """A rank column in the ranking-rule order with gaps and repeats: the first rank 1-3, each
    next one 0-3 above the one before (0 repeats it)."""
    rng = np.random.default_rng(seed)
    by_user: dict[object, Rows] = {}
    for r in recs:
        by_user.setdefault(r["user_id"], []).append(r)
    out: Rows = []
    for user, rows in by_user.items():
        rows = sorted(rows, key=lambda r: (r["score"], r["item_id"]), reverse=True)
        rank = int(rng.integers(1, 4))
        for i, r in enumerate(rows):
            rank += int(rng.choice([0, 1, 1, 2, 3])) if i else 0
            out.append({"user_id": user, "item_id": r["item_id"], "rank": rank})
    return out


@pytest.mark.parametrize("data", ["int-ties", "str-noties"])
def test_sql_literal_ranks_match_the_oracle(sqlmetrics: Any, data: str) -> None:
    """ranks="literal": ranks with gaps and repeats are the positions, for every metric the
    oracle reads positions for (its trec_eval measures walk the list by index, and bpref is
    refused), per user and on the mean, graded relevance, threshold 1."""
    import pandas as pd

    from tests.oracle import TREC_METRICS

    recs, inter = DATASETS[data]()
    ranked = _repeated_ranks(recs, seed=7)
    from sqlmetrics.catalog.metrics import metrics

    # the metrics that walk the list item by item are refused under literal ranks (bad_input)
    specs = [
        spec
        for spec in metric_specs("id")
        if spec[1] not in TREC_METRICS and not metrics()[spec[1]].walks_positions
    ]
    names = [name for name, _, _ in specs]
    recs_frame = pd.DataFrame(ranked, columns=["user_id", "item_id", "rank"])
    truth_frame = pd.DataFrame(inter, columns=["user_id", "item_id", "relevance"])
    kw: dict[str, Any] = {"threshold": 1.0, "ranks": "literal"}
    frame = sqlmetrics.evaluate(recs_frame, truth_frame, names, per_user=True, **kw)
    means = sqlmetrics.evaluate(recs_frame, truth_frame, names, **kw)
    expected = oracle_evaluate(
        ranked, inter, [(m, k) for _, m, k in specs], threshold=1.0, rank_column=True,
        ranks="literal",
    )  # fmt: skip
    problems = []
    for name, metric, k in specs:
        want = expected[(metric, k)]
        problems += diff_users(per_user_dict(frame, name), want.per_user, name)
        if not close(float(means[name].iloc[0]), want.mean):
            problems.append(f"{name}: mean {means[name].iloc[0]!r} vs {want.mean!r}")
    repeats = {(r["user_id"], r["rank"]) for r in ranked}
    assert len(repeats) < len(ranked)
    assert any(name.startswith("map@") for name in names)
    report(problems)


def test_sql_without_relevance_column(sqlmetrics: Any) -> None:
    """No relevance column: every interaction row has relevance 1 (binary gains)."""
    import pandas as pd

    recs, inter = DATASETS["int-ties"]()
    binary = [{"user_id": r["user_id"], "item_id": r["item_id"]} for r in inter]
    specs = metric_specs("id")
    rec_df, _ = to_frames(recs, inter)
    frame = sqlmetrics.evaluate(
        rec_df,
        pd.DataFrame(binary, columns=["user_id", "item_id"]),
        metrics=[name for name, _, _ in specs],
        per_user=True,
    )
    expected = oracle_evaluate(recs, binary, [(m, k) for _, m, k in specs])
    problems = []
    for name, metric, k in specs:
        problems += diff_users(per_user_dict(frame, name), expected[(metric, k)].per_user, name)
    report(problems)


# ----------------------------------------------------------------------------------------------
# Real libraries (tie-free data only: their tie handling is unspecified or differs)
# ----------------------------------------------------------------------------------------------


def _population(inter: Rows, threshold: float) -> set[object]:
    return {r["user_id"] for r in inter if r.get("relevance", 1) > threshold}


def _max_relevance(inter: Rows) -> dict[tuple[object, object], int]:
    best: dict[tuple[object, object], int] = {}
    for r in inter:
        key = (r["user_id"], r["item_id"])
        best[key] = max(best.get(key, 0), int(r.get("relevance", 1)))
    return best


def _top_k_run(recs: Rows, k: int | None) -> dict[str, dict[str, float]]:
    """run[user][item] = score, cut to each user's top k by the ranking rule."""
    by_user: dict[object, Rows] = {}
    for r in recs:
        by_user.setdefault(r["user_id"], []).append(r)
    run: dict[str, dict[str, float]] = {}
    for user, rows in by_user.items():
        rows = sorted(rows, key=lambda r: (r["score"], r["item_id"]), reverse=True)
        run[str(user)] = {str(r["item_id"]): float(r["score"]) for r in rows[:k]}
    return run


# Map (sqlmetrics name, trec_eval name); cut measures are expanded over LIB_KS.
TREC_CUT = [
    ("precision", "P"),
    ("recall", "recall"),
    ("ndcg", "ndcg_cut"),
    ("map", "map_cut"),
    ("hit_rate", "success"),
    ("recall_capped", "relative_P"),
]
TREC_NOCUT = [
    ("r_precision", "Rprec"),
    ("ndcg", "ndcg"),
    ("map", "map"),
    ("mrr", "recip_rank"),
    # The set measures read the whole retrieved list: the metric without a cutoff.
    ("precision", "set_P"),
    ("recall", "set_recall"),
    ("f1", "set_F"),
    ("recall_capped", "set_relative_P"),
    ("hits", "num_rel_ret"),
    ("bpref", "bpref"),  # every interaction is judged: those at or below the threshold as 0
    ("set_map", "set_map"),
    ("utility", "utility"),
    ("bin_g", "binG"),
    ("normalized_gain", "G"),
    ("ndcg_rel", "ndcg_rel"),
    ("rndcg", "Rndcg"),
    ("infap", "infAP"),  # no negative relevance here: every document judged or outside the pool
]
# Not compared with trec_eval: success has no uncut form there; recip_rank has no
# cutoff, so mrr@k is compared on a run cut to the top k (below); cg/dcg/exp gains, map_min,
# map_hits, micro and scored-ideal variants do not exist there. trec's ndcg ignores the
# relevance level, so the threshold is applied by zeroing grades <= threshold in the qrels.


def _trec_expected(recs: Rows, inter: Rows, threshold: float) -> dict[str, dict[str, float]]:
    """{sqlmetrics column: {str user: value}} from pytrec_eval, 0 for users without a list."""
    import pytrec_eval

    population = {str(u) for u in _population(inter, threshold)}
    qrels: dict[str, dict[str, int]] = {}
    for (user, item), rel in _max_relevance(inter).items():
        qrels.setdefault(str(user), {})[str(item)] = rel if rel > threshold else 0
    cuts = ",".join(map(str, LIB_KS))
    measures = {f"{trec}.{cuts}" for _, trec in TREC_CUT} | {t for _, t in TREC_NOCUT}
    run = _top_k_run(recs, None)
    results = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)

    out: dict[str, dict[str, float]] = {}
    for ours, trec in TREC_CUT:
        for k in LIB_KS:
            out[f"{ours}@{k}"] = {u: results.get(u, {}).get(f"{trec}_{k}", 0.0) for u in population}
    for ours, trec in TREC_NOCUT:
        out[ours] = {u: results.get(u, {}).get(trec, 0.0) for u in population}
    for k in LIB_KS:
        # trec_eval's recip_rank has no cutoff: feed it each user's top-k list only.
        cut = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(_top_k_run(recs, k))
        out[f"mrr@{k}"] = {u: cut.get(u, {}).get("recip_rank", 0.0) for u in population}
    return out


def _ranx_expected(recs: Rows, inter: Rows, threshold: float) -> dict[str, dict[str, float]]:
    """{sqlmetrics column: {str user: value}} from ranx (make_comparable: missing users 0)."""
    from ranx import Qrels, Run, evaluate

    qrels_dict: dict[str, dict[str, int]] = {}
    for (user, item), rel in _max_relevance(inter).items():
        if rel > threshold:
            qrels_dict.setdefault(str(user), {})[str(item)] = rel
    run_dict = {u: items for u, items in _top_k_run(recs, None).items() if items}
    names = {
        "hits": "hits",
        "hit_rate": "hit_rate",
        "precision": "precision",
        "recall": "recall",
        "f1": "f1",
        "mrr": "mrr",
        "map": "map",
        "dcg": "dcg",
        "dcg_exp": "dcg_burges",
        "ndcg": "ndcg",
        "ndcg_exp": "ndcg_burges",
    }
    wanted = {f"{ranx}@{k}": f"{ours}@{k}" for ours, ranx in names.items() for k in LIB_KS}
    wanted.update({ranx: ours for ours, ranx in names.items()})  # no cutoff = whole list
    wanted["r-precision"] = "r_precision"
    wanted["rbp.9"] = "rbp_graded"  # ranx's rbp.9: p = 0.9, the grade as the gain
    # Not compared: ranx has no cg, no map_min/map_hits denominators, no micro aggregates and
    # no scored-items ideal (ndcg_scored); its ties are broken arbitrarily (tie-free data only).
    run = Run(run_dict)
    evaluate(Qrels(qrels_dict), run, list(wanted), make_comparable=True)
    return {
        ours: {u: float(v) for u, v in run.scores[ranx].items()} for ranx, ours in wanted.items()
    }


def _compare_library(
    expected: dict[str, dict[str, float]],
    got_per_user: Callable[[str], dict[str, float]],
    label: str,
) -> list[str]:
    problems = []
    for column, want in expected.items():
        got = got_per_user(column)
        problems += diff_users(got, want, f"{label} {column}")
        if want and got:
            got_mean = sum(got.values()) / len(got)
            want_mean = sum(want.values()) / len(want)
            if not close(got_mean, want_mean):
                problems.append(f"{label} {column}: mean {got_mean!r} vs {want_mean!r}")
    return problems


def _oracle_lookup(recs: Rows, inter: Rows, threshold: float) -> Callable[[str], dict[str, float]]:
    def lookup(column: str) -> dict[str, float]:
        metric, _, cut = column.partition("@")
        values = oracle_per_user(
            recs, inter, metric, int(cut) if cut else None, threshold=threshold
        )
        return {str(u): v for u, v in values.items()}

    return lookup


def _sql_lookup(
    module: Any, recs: Rows, inter: Rows, columns: list[str], threshold: float
) -> Callable[[str], dict[str, float]]:
    frame = sql_per_user(module, recs, inter, columns, threshold=threshold)

    def lookup(column: str) -> dict[str, float]:
        return {str(u): v for u, v in per_user_dict(frame, column).items()}

    return lookup


LIB_CASES = [
    pytest.param(data, threshold, id=f"{data}-t{threshold}")
    for data in ("int-noties", "str-noties")
    for threshold in (0.0, 1.0)
]


@pytest.mark.parametrize(("data", "threshold"), LIB_CASES)
def test_oracle_matches_trec_eval(data: str, threshold: float) -> None:
    recs, inter = DATASETS[data]()
    expected = _trec_expected(recs, inter, threshold)
    report(_compare_library(expected, _oracle_lookup(recs, inter, threshold), "oracle/trec"))


@pytest.mark.parametrize(("data", "threshold"), LIB_CASES)
def test_sql_matches_trec_eval(sqlmetrics: Any, data: str, threshold: float) -> None:
    recs, inter = DATASETS[data]()
    expected = _trec_expected(recs, inter, threshold)
    lookup = _sql_lookup(sqlmetrics, recs, inter, list(expected), threshold)
    report(_compare_library(expected, lookup, "sql/trec"))


@pytest.mark.parametrize(("data", "threshold"), LIB_CASES)
def test_oracle_matches_ranx(data: str, threshold: float) -> None:
    recs, inter = DATASETS[data]()
    expected = _ranx_expected(recs, inter, threshold)
    report(_compare_library(expected, _oracle_lookup(recs, inter, threshold), "oracle/ranx"))


@pytest.mark.parametrize(("data", "threshold"), LIB_CASES)
def test_sql_matches_ranx(sqlmetrics: Any, data: str, threshold: float) -> None:
    recs, inter = DATASETS[data]()
    expected = _ranx_expected(recs, inter, threshold)
    lookup = _sql_lookup(sqlmetrics, recs, inter, list(expected), threshold)
    report(_compare_library(expected, lookup, "sql/ranx"))


def _sklearn_expected(
    recs: Rows, inter: Rows, *, ties: bool, threshold: float = 0.0
) -> dict[str, dict[str, float]]:
    """scikit-learn per user over the user's recommended items (users with >= 2 items).

    ndcg_score with y_true = gain of each listed item is NDCG with the ideal from the scored
    items (our ndcg_scored; gains 2^rel - 1 give ndcg_exp_scored). On tied data, dcg_score's
    tie-averaged DCG is the expected DCG over tie orderings (our dcg with ties="average").
    Not compared: our ndcg (ideal from all relevant interactions, incl. unrecommended ones) is
    not sklearn's ndcg_score, whose ideal only sees the scored items.
    """
    from sklearn.metrics import dcg_score, ndcg_score

    population = _population(inter, threshold)
    rel = {key: (r if r > threshold else 0) for key, r in _max_relevance(inter).items()}
    by_user: dict[object, Rows] = {}
    for r in recs:
        by_user.setdefault(r["user_id"], []).append(r)
    out: dict[str, dict[str, float]] = {}
    for user, rows in by_user.items():
        if user not in population or len(rows) < 2:
            continue
        linear = np.array([[rel.get((user, r["item_id"]), 0) for r in rows]], dtype=float)
        exp = 2.0**linear - 1.0
        score = np.array([[r["score"] for r in rows]], dtype=float)
        for k in KS:
            suffix = "" if k is None else f"@{k}"
            if ties:
                out.setdefault(f"dcg{suffix}", {})[user] = dcg_score(linear, score, k=k)
                out.setdefault(f"dcg_exp{suffix}", {})[user] = dcg_score(exp, score, k=k)
            else:
                out.setdefault(f"ndcg_scored{suffix}", {})[user] = ndcg_score(linear, score, k=k)
                out.setdefault(f"ndcg_exp_scored{suffix}", {})[user] = ndcg_score(exp, score, k=k)
    return out


def _restrict(lookup: Callable[[str], dict[Any, float]], users: set[object]) -> Any:
    def restricted(column: str) -> dict[Any, float]:
        return {u: v for u, v in lookup(column).items() if u in users}

    return restricted


SKLEARN_CASES = [
    pytest.param("int-noties", False, id="ndcg_scored-int"),
    pytest.param("str-noties", False, id="ndcg_scored-str"),
    pytest.param("int-ties", True, id="dcg-average-int"),
    pytest.param("str-ties", True, id="dcg-average-str"),
]


@pytest.mark.parametrize(("data", "ties"), SKLEARN_CASES)
def test_oracle_matches_sklearn(data: str, ties: bool) -> None:
    recs, inter = DATASETS[data]()
    expected = _sklearn_expected(recs, inter, ties=ties)
    policy = "average" if ties else "id"
    users = set(next(iter(expected.values())))

    def lookup(column: str) -> dict[object, float]:
        metric, _, cut = column.partition("@")
        return oracle_per_user(recs, inter, metric, int(cut) if cut else None, ties=policy)

    report(_compare_library(expected, _restrict(lookup, users), "oracle/sklearn"))


@pytest.mark.parametrize(("data", "ties"), SKLEARN_CASES)
def test_sql_matches_sklearn(sqlmetrics: Any, data: str, ties: bool) -> None:
    recs, inter = DATASETS[data]()
    expected = _sklearn_expected(recs, inter, ties=ties)
    users = set(next(iter(expected.values())))
    frame = sql_per_user(sqlmetrics, recs, inter, list(expected), ties="average" if ties else "id")

    def lookup(column: str) -> dict[object, float]:
        return per_user_dict(frame, column)

    report(_compare_library(expected, _restrict(lookup, users), "sql/sklearn"))
