"""Cross-checks of the metrics over scored and rated rows (auc, gauc, user_auc, classification
at a score threshold, rating metrics): the SQL against the pairwise-counting oracle
(tests/oracle.py) per user and per group, and against scikit-learn on random data with tie
groups, NULL scores, string ids, users with one class, groups, and mixed with ranking metrics.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pandas as pd
import pytest

import sqlmetrics
from tests.oracle import RATED_METRICS, SCORED_METRICS, oracle_mean, oracle_scored
from tests.test_crosscheck import Rows, close, diff_users, make_data, per_user_dict, report

SCORED = ["auc", "gauc", "user_auc", "logloss"]
# after the metrics at a threshold, so that SCORED[4:-len(CLICKS)] are those
CLICKS = [
    "gauc_positives",
    "average_precision",
    "user_average_precision",
    "pr_auc",
    "ne",
    "calibration",
]
SCORED = (
    SCORED
    + [
        f"{name}{at}"
        for name in ("accuracy", "score_precision", "score_recall", "score_f1")
        for at in ("", "@0.3", "@0.75")
    ]
    + CLICKS
)
RATED = sorted(RATED_METRICS)


@cache
def scored_data(
    seed: int, *, string_ids: bool = False, null_scores: bool = False
) -> tuple[Rows, Rows]:
    """make_data's lists with scores squeezed into [0, 1] (tie groups kept: the scores are
    multiples of 1/8 below 1250, so dividing by 1250 keeps equal scores equal and distinct ones
    distinct), and interactions with a rating 1-5 (NULL for some rows)."""
    recs, inter = make_data(seed, ties=True, string_ids=string_ids, null_scores=null_scores)
    rng = np.random.default_rng(seed + 1000)
    squeezed = [
        {**row, "score": None if row["score"] is None else row["score"] / 1250} for row in recs
    ]
    rated = [
        {**row, "rating": None if rng.random() < 0.1 else float(rng.integers(1, 6))}
        for row in inter
    ]
    return squeezed, rated


def frames(recs: Rows, inter: Rows, group: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    columns = ["user_id", "item_id", "score"] + ([group] if group else [])
    rec_df = pd.DataFrame(recs, columns=columns)
    rec_df["score"] = pd.array([r["score"] for r in recs], dtype="Float64")
    truth_df = pd.DataFrame(inter, columns=["user_id", "item_id", "relevance", "rating"])
    truth_df["rating"] = pd.array([r["rating"] for r in inter], dtype="Float64")
    return rec_df, truth_df


def _label_name(label: str) -> tuple[str, float]:
    name, _, at = label.partition("@")
    return name, float(at) if at else 0.5


DATA = {
    "int": lambda: scored_data(21),
    "str-nulls": lambda: scored_data(22, string_ids=True, null_scores=True),
}


@pytest.mark.parametrize("threshold", [0.0, 1.0])
@pytest.mark.parametrize("data", sorted(DATA))
def test_sql_matches_oracle_per_user_and_overall(data: str, threshold: float) -> None:
    recs, inter = DATA[data]()
    labels = SCORED + RATED
    rec_df, truth_df = frames(recs, inter)
    means = sqlmetrics.evaluate(rec_df, truth_df, labels, threshold=threshold)
    per_user = sqlmetrics.evaluate(rec_df, truth_df, labels, threshold=threshold, per_user=True)
    problems: list[str] = []
    for label in labels:
        name, at = _label_name(label)
        want = oracle_scored(recs, inter, name, threshold=threshold, score_threshold=at)
        got = float(means[label].iloc[0])
        if not close(got, want.mean):
            problems.append(f"{label}: got {got!r} want {want.mean!r}")
        # NaN per-user values (a user without the rows a ratio needs) must be NaN in both.
        got_users = per_user_dict(per_user, label)
        mismatched = {
            u
            for u in want.per_user
            if math.isnan(want.per_user[u]) != math.isnan(got_users.get(u, 0.0))
        }
        problems += [f"{label}: user {u!r} NaN in one only" for u in sorted(map(str, mismatched))]
        known = {u: v for u, v in want.per_user.items() if not math.isnan(v)}
        present = {u: got_users[u] for u in known if u in got_users}
        problems += diff_users(present, known, label)
    users = {row["user_id"] for row in recs if row["score"] is not None}
    rated = {user for user, _, _ in _rated(recs, inter)}
    if int(means["users"].iloc[0]) != len(users | rated):
        problems.append(f"users: got {means['users'].iloc[0]} want {len(users | rated)}")
    report(problems)


def _rated(recs: Rows, inter: Rows) -> list[tuple[object, float, float]]:
    from tests.oracle import rated_rows

    return rated_rows(recs, inter)


@pytest.mark.parametrize("data", sorted(DATA))
def test_sql_matches_scikit_learn(data: str) -> None:
    from sklearn import metrics as sk

    recs, inter = DATA[data]()
    relevant = {(r["user_id"], r["item_id"]) for r in inter if r["relevance"] > 0}
    rows = [r for r in recs if r["score"] is not None]
    labels = np.array([int((r["user_id"], r["item_id"]) in relevant) for r in rows])
    scores = np.array([r["score"] for r in rows])
    rec_df, truth_df = frames(recs, inter)
    got = sqlmetrics.evaluate(rec_df, truth_df, SCORED + RATED).iloc[0]

    problems: list[str] = []

    def check(label: str, want: float) -> None:
        if not close(float(got[label]), float(want)):
            problems.append(f"{label}: got {got[label]!r} scikit-learn {want!r}")

    check("auc", sk.roc_auc_score(labels, scores))
    # scikit-learn >= 1.6 clips at the float64 epsilon, we at 1e-15: equal when no score is
    # that close to 0 or 1 (true of this data, checked here).
    assert ((scores > 1e-15) & (scores < 1 - 1e-15)).all()
    check("logloss", sk.log_loss(labels, scores))
    check("average_precision", sk.average_precision_score(labels, scores))
    precision, recall, _ = sk.precision_recall_curve(labels, scores)
    check("pr_auc", sk.auc(recall, precision))
    base = labels.mean()
    entropy = -(base * math.log(base) + (1 - base) * math.log(1 - base))
    check("ne", sk.log_loss(labels, scores) / entropy)
    check("calibration", scores.sum() / labels.sum())
    for label in SCORED[4 : -len(CLICKS)]:
        name, at = _label_name(label)
        predicted = (scores >= at).astype(int)
        function = {
            "accuracy": sk.accuracy_score,
            "score_precision": sk.precision_score,
            "score_recall": sk.recall_score,
            "score_f1": sk.f1_score,
        }[name]
        check(label, function(labels, predicted))
    # Per user AUC: roc_auc_score on each user's rows with both classes.
    per_user: dict[object, tuple[float, int]] = {}
    positives: dict[object, int] = {}
    for user in {r["user_id"] for r in rows}:
        own = [i for i, r in enumerate(rows) if r["user_id"] == user]
        if 0 < labels[own].sum() < len(own):
            per_user[user] = (sk.roc_auc_score(labels[own], scores[own]), len(own))
            positives[user] = int(labels[own].sum())
    assert 20 < len(per_user) < len({r["user_id"] for r in rows})  # some skipped, most not
    check("gauc", sum(a * n for a, n in per_user.values()) / sum(n for _, n in per_user.values()))
    check("user_auc", sum(a for a, _ in per_user.values()) / len(per_user))
    # RecBole's GAUC: weighted by the user's positives
    weighted = sum(a * positives[user] for user, (a, _) in per_user.items())
    check("gauc_positives", weighted / sum(positives.values()))
    # Per user AP: average_precision_score on each user's rows with a relevant one.
    precisions = [
        sk.average_precision_score(labels[own], scores[own])
        for user in {r["user_id"] for r in rows}
        if labels[own := [i for i, r in enumerate(rows) if r["user_id"] == user]].sum() > 0
    ]
    check("user_average_precision", sum(precisions) / len(precisions))
    # Rating metrics over the recommended (user, item) rows with a rating (largest when repeated).
    best: dict[tuple[object, object], float] = {}
    for r in inter:
        if r["rating"] is not None:
            key = (r["user_id"], r["item_id"])
            best[key] = max(best.get(key, -math.inf), r["rating"])
    pairs = [
        (best[(r["user_id"], r["item_id"])], r["score"])
        for r in rows
        if (r["user_id"], r["item_id"]) in best
    ]
    truth, predicted_ratings = np.array(pairs).T
    check("mse", sk.mean_squared_error(truth, predicted_ratings))
    check("rmse", sk.root_mean_squared_error(truth, predicted_ratings))
    check("mae", sk.mean_absolute_error(truth, predicted_ratings))
    check("r2", sk.r2_score(truth, predicted_ratings))
    report(problems)


@pytest.mark.parametrize("shared", [False, True], ids=["model", "day"])
def test_group_by_mixed_with_ranking_metrics(shared: bool) -> None:
    """One call: ranking metrics, auc-type and rating metrics, a group column, per user. A
    column only the recommendations have (model) evaluates each value against every
    interaction; one both have (day) splits both. Each group equals the oracle on its rows."""
    recs_a, inter = scored_data(23)
    recs_b, _ = scored_data(24)
    group = "day" if shared else "model"
    recs = [{**r, group: "a"} for r in recs_a] + [{**r, group: "b"} for r in recs_b]
    if shared:
        inter = [{**r, "day": "ab"[i % 2]} for i, r in enumerate(inter)]
    labels = ["ndcg@5", "map@10", *SCORED, *RATED]
    rec_df, truth_df = frames(recs, inter, group=group)
    if shared:
        truth_df["day"] = [r["day"] for r in inter]
    means = sqlmetrics.evaluate(rec_df, truth_df, labels, group_by=group)
    per_user = sqlmetrics.evaluate(rec_df, truth_df, labels, group_by=group, per_user=True)
    problems: list[str] = []
    for value, own in (("a", recs_a), ("b", recs_b)):
        truth = [r for r in inter if r.get("day", value) == value]
        row = means[means[group] == value].iloc[0]
        users = per_user[per_user[group] == value]
        population = {r["user_id"] for r in truth if r["relevance"] > 0}
        if int(row["users"]) != len(population):
            problems.append(f"{value} users: got {row['users']} want {len(population)}")
        for label in labels:
            name, at = _label_name(label)
            if name in SCORED_METRICS | RATED_METRICS:
                want = oracle_scored(own, truth, name, score_threshold=at).mean
            else:
                metric, _, k = label.partition("@")
                want = oracle_mean(own, truth, metric, int(k))
            if not close(float(row[label]), want):
                problems.append(f"{value} {label}: got {row[label]!r} want {want!r}")
            if name in SCORED_METRICS | RATED_METRICS:
                expected = oracle_scored(own, truth, name, score_threshold=at).per_user
                got_users = per_user_dict(users, label)
                known = {u: v for u, v in expected.items() if not math.isnan(v)}
                problems += diff_users({u: got_users[u] for u in known}, known, f"{value} {label}")
        # Per user: the ranking values of users outside the population are NaN.
        outside = users[~users["user_id"].isin(population)]
        if not outside["ndcg@5"].isna().all() or outside.empty:
            problems.append(f"{value}: users outside the population need NaN ranking values")
    report(problems)


def test_auc_differs_from_the_user_means() -> None:
    """Guards the aggregation rules: global auc, the weighted and the plain per-user means are
    three different numbers on this data."""
    recs, inter = DATA["int"]()
    got = sqlmetrics.evaluate(*frames(recs, inter), ["auc", "gauc", "user_auc"]).iloc[0]
    values = [float(got["auc"]), float(got["gauc"]), float(got["user_auc"])]
    assert len({round(value, 6) for value in values}) == 3, values


def test_duplicates_first_reads_each_pair_once() -> None:
    recs, inter = DATA["int"]()
    doubled = recs + [
        {**r, "score": None if r["score"] is None else r["score"] / 2} for r in recs[::3]
    ]
    got = sqlmetrics.evaluate(*frames(doubled, inter), ["auc", "rmse"], duplicates="first").iloc[0]
    assert close(float(got["auc"]), oracle_scored(recs, inter, "auc").mean)
    assert close(float(got["rmse"]), oracle_scored(recs, inter, "rmse").mean)


def _weighted(seed: int) -> tuple[Rows, Rows]:
    """scored_data's rows, each with a weight drawn from {0, 0.5, 1, 2.5, 4} (0: the row
    counts nowhere)."""
    recs, inter = scored_data(seed)
    rng = np.random.default_rng(seed + 2000)
    choices = [0.0, 0.5, 1.0, 2.5, 4.0]
    return [{**row, "weight": float(rng.choice(choices))} for row in recs], inter


def test_weighted_sql_matches_scikit_learn_sample_weight_and_the_oracle() -> None:
    """columns={"weight": ...}: every metric over scored rows against scikit-learn's
    sample_weight (and, per user and for ne, gauc_positives, against tests/oracle.py's
    weighted pairs and curves)."""
    from sklearn import metrics as sk

    recs, inter = _weighted(25)
    relevant = {(r["user_id"], r["item_id"]) for r in inter if r["relevance"] > 0}
    rows = [r for r in recs if r["score"] is not None]
    labels = np.array([int((r["user_id"], r["item_id"]) in relevant) for r in rows])
    scores = np.array([r["score"] for r in rows])
    weights = np.array([r["weight"] for r in rows])
    rec_df, truth_df = frames(recs, inter)
    rec_df["weight"] = [r["weight"] for r in recs]
    asked = [*SCORED, "gauc_positives"]
    got = sqlmetrics.evaluate(rec_df, truth_df, asked, columns={"weight": "weight"})
    per_user = sqlmetrics.evaluate(
        rec_df, truth_df, asked, columns={"weight": "weight"}, per_user=True
    )
    problems: list[str] = []

    def check(label: str, want: float) -> None:
        if not close(float(got[label].iloc[0]), float(want)):
            problems.append(f"{label}: got {got[label].iloc[0]!r} scikit-learn {want!r}")

    check("auc", sk.roc_auc_score(labels, scores, sample_weight=weights))
    check("logloss", sk.log_loss(labels, scores, sample_weight=weights))
    check("average_precision", sk.average_precision_score(labels, scores, sample_weight=weights))
    precision, recall, _ = sk.precision_recall_curve(labels, scores, sample_weight=weights)
    check("pr_auc", sk.auc(recall, precision))
    check("calibration", (scores * weights).sum() / (labels * weights).sum())
    base = (labels * weights).sum() / weights.sum()
    entropy = -(base * math.log(base) + (1 - base) * math.log(1 - base))
    check("ne", sk.log_loss(labels, scores, sample_weight=weights) / entropy)
    for label in SCORED[4 : -len(CLICKS)]:
        name, at = _label_name(label)
        function = {
            "accuracy": sk.accuracy_score,
            "score_precision": sk.precision_score,
            "score_recall": sk.recall_score,
            "score_f1": sk.f1_score,
        }[name]
        check(label, function(labels, (scores >= at).astype(int), sample_weight=weights))
    for label in asked:
        name, at = _label_name(label)
        want = oracle_scored(recs, inter, name, score_threshold=at, weight="weight")
        if not close(float(got[label].iloc[0]), want.mean):
            problems.append(f"{label}: got {got[label].iloc[0]!r} oracle {want.mean!r}")
        known = {u: v for u, v in want.per_user.items() if not math.isnan(v)}
        got_users = per_user_dict(per_user, label)
        problems += diff_users({u: got_users[u] for u in known}, known, label)
    report(problems)
    # the weights change the numbers: the same rows unweighted give another auc
    plain = sqlmetrics.evaluate(rec_df, truth_df, ["auc"])
    assert not close(float(plain["auc"].iloc[0]), float(got["auc"].iloc[0]))


def _sessions(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tie-free sessions (TorchRec's GAUC orders equal predictions as argsort does): 60 users
    of 2-12 scored rows each, about a third relevant, weights in (0, 3)."""
    rng = np.random.default_rng(seed)
    recs, truth = [], []
    for user in range(60):
        for item in range(int(rng.integers(2, 13))):
            recs.append((user, item, float(rng.random()), float(rng.random() * 3)))
            if rng.random() < 0.35:
                truth.append((user, item, 1))
    return (
        pd.DataFrame(recs, columns=["user_id", "item_id", "score", "weight"]),
        pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"]),
    )


def _torchrec(p: np.ndarray, y: np.ndarray, w: np.ndarray) -> dict[str, float]:
    """TorchRec's NE, Calibration and AUPRC as its modules compute them (torchrec/metrics/
    ne.py, calibration.py, auprc.py), written here from their formulas: log2, eta = 1e-12,
    a Riemann sum over the distinct predictions."""
    eta = 1e-12
    clamped = np.clip(p, eta, 1 - eta)
    cross_entropy = -(w * y * np.log2(clamped) + w * (1 - y) * np.log2(1 - clamped)).sum()
    positives, negatives = (w * y).sum(), (w * (1 - y)).sum()
    mean_label = np.clip(positives / w.sum(), eta, 1 - eta)
    norm = -positives * np.log2(mean_label) - negatives * np.log2(1 - mean_label)
    order = np.argsort(-p, kind="stable")
    threshold, labels, weights = p[order], y[order], w[order]
    last = np.append(np.diff(threshold) != 0, True)
    tp = np.cumsum(weights * labels)[last]
    fp = np.cumsum(weights * (1 - labels))[last]
    precision = np.append((tp / (tp + fp))[::-1], 1.0)
    recall = np.append((tp / tp[-1])[::-1], 0.0)
    return {
        "ne": cross_entropy / norm,
        "calibration": (p * w).sum() / positives,
        "auprc": -np.sum((recall[1:] - recall[:-1]) * precision[:-1]),
    }


def _session_aucs(frame: pd.DataFrame) -> list[tuple[float, int]]:
    """Each session's AUC from its descending ranks (TorchRec's and RecBole's rank sums),
    with its positives; sessions of one label skipped."""
    found = []
    for _, own in frame.groupby("user_id"):
        y = own["relevant"].to_numpy()
        positives, n = int(y.sum()), len(y)
        if 0 < positives < n:
            descending = np.empty(n)
            descending[np.argsort(-own["score"].to_numpy())] = np.arange(1, n + 1)
            pairs = (n + 1) * positives - positives * (positives + 1) / 2
            found.append(
                ((pairs - descending[y == 1].sum()) / (positives * (n - positives)), positives)
            )
    return found


def test_torchrec_and_recbole_profiles_agree_with_their_formulas() -> None:
    """profile="torchrec" (ne, calibration, pr_auc = AUPRC, gauc) and profile="recbole"
    (gauc weighted by positives, auc) against the libraries' formulas written in numpy
    (neither library installs here)."""
    from sklearn import metrics as sk

    recs, truth = _sessions(31)
    rows = recs.merge(truth, on=["user_id", "item_id"], how="left")
    rows["relevant"] = rows["relevance"].fillna(0).astype(int)
    p, y, w = rows["score"].to_numpy(), rows["relevant"].to_numpy(), rows["weight"].to_numpy()
    torchrec = _torchrec(p, y, w)
    weighted = sqlmetrics.evaluate(
        recs,
        truth,
        ["ne", "calibration", "pr_auc"],
        profile="torchrec",
        columns={"weight": "weight"},
    ).iloc[0]
    problems: list[str] = []
    for label, name in (("ne", "ne"), ("calibration", "calibration"), ("pr_auc", "auprc")):
        if not close(float(weighted[label]), float(torchrec[name])):
            problems.append(f"torchrec {label}: got {weighted[label]!r} want {torchrec[name]!r}")
    # TorchRec's GAUC reads no weights: the plain mean of the sessions' AUCs
    aucs = _session_aucs(rows)
    plain = sqlmetrics.evaluate(recs, truth, ["gauc"], profile="torchrec").iloc[0]
    if not close(float(plain["gauc"]), sum(a for a, _ in aucs) / len(aucs)):
        problems.append(f"torchrec gauc: got {plain['gauc']!r}")
    recbole = sqlmetrics.evaluate(recs, truth, ["gauc", "auc"], profile="recbole").iloc[0]
    want = sum(a * n for a, n in aucs) / sum(n for _, n in aucs)
    if not close(float(recbole["gauc"]), want):
        problems.append(f"recbole gauc: got {recbole['gauc']!r} want {want!r}")
    if not close(float(recbole["auc"]), sk.roc_auc_score(y, p)):
        problems.append(f"recbole auc: got {recbole['auc']!r}")
    # the three GAUC weightings differ on these sessions
    ours = float(sqlmetrics.evaluate(recs, truth, ["gauc"]).iloc[0]["gauc"])
    assert len({round(ours, 9), round(float(plain["gauc"]), 9), round(want, 9)}) == 3
    report(problems)
