"""Confidence intervals and paired comparisons (issue 19; sqlmetrics/stats/query.py and
inference.py).

The numbers are checked against independent computations on the per-user values that
``evaluate(per_user=True)`` returns: scipy's t.interval and ttest_rel to 1e-9, ranx's Fisher
randomization test within Monte-Carlo error, a hand-derived golden case, and calibration by
simulation (coverage of a known mean, the A/A rejection rate, the power against a known
difference). The engines' agreement for the same seed is in tests/engines/test_stats_engines.py.
"""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats as scipy_stats

import sqlmetrics
from sqlmetrics.render.dialects import render
from sqlmetrics.stats import tdist
from sqlmetrics.stats.draws import draw_value, uniform_draw
from sqlmetrics.stats.inference import holm, percentile_interval
from sqlmetrics.stats.moments import welch_test
from sqlmetrics.stats.resampling import POISSON_CDF
from tests.conftest import FULL_MATRIX

REPO = Path(__file__).resolve().parent.parent
RECS = str(REPO / "examples" / "recommendations.parquet")
TRUTH = str(REPO / "examples" / "interactions.parquet")
EXAMPLE = ["ndcg@10", "map@10", "mrr@10", "precision@5", "recall@20", "hit_rate@10", "f1@10"]
TOLERANCE = 1e-9


# --- Student's t, without scipy -------------------------------------------------------------


@pytest.mark.parametrize("df", [1, 2, 3, 4.5, 9, 19.5, 20, 29, 99, 457, 12345, 999_999, 1e6, 1e7])
def test_t_distribution_equals_scipy(df: float) -> None:
    for p in (1e-7, 0.005, 0.025, 0.3, 0.5000001, 0.6, 0.9, 0.975, 0.9995, 0.99999):
        want = scipy_stats.t.ppf(p, df)
        assert tdist.t_quantile(p, df) == pytest.approx(want, rel=TOLERANCE, abs=TOLERANCE)
    for t in (0.0, 1e-7, 0.001, 0.5, 1.96, 3.0, 10.0, 40.0, -2.5):
        want = 2 * scipy_stats.t.sf(abs(t), df)
        assert tdist.two_sided_p(t, df) == pytest.approx(want, rel=0, abs=TOLERANCE)


def test_holm_and_welch_equal_their_definitions() -> None:
    p = [0.01, 0.04, 0.03, 0.005, math.nan]
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1, running maximum
    assert holm(p)[:4] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert math.isnan(holm(p)[4])
    want = scipy_stats.ttest_ind_from_stats(0.31, 0.3**0.5, 400, 0.29, 0.2**0.5, 300, False)
    assert welch_test(0.31, 0.3, 400, 0.29, 0.2, 300) == pytest.approx(want.pvalue, abs=TOLERANCE)
    assert percentile_interval([3.0, 1.0, 2.0, 4.0], 0.5) == pytest.approx(
        tuple(np.quantile([1, 2, 3, 4], [0.25, 0.75]))
    )


# --- the draws ------------------------------------------------------------------------------


def test_the_draws_are_the_same_in_sql_on_duckdb_and_sqlite_and_in_python() -> None:
    import duckdb
    from sqlglot import exp

    pairs = [(b, r) for b in (0, 1, 2, 999, 12345) for r in (0, 1, 7, 999, 99_999)]
    rows = exp.union(
        *(
            exp.select(
                exp.alias_(exp.Literal.number(b), "b"), exp.alias_(exp.Literal.number(r), "r")
            )
            for b, r in pairs
        ),
        distinct=False,
    )
    query = exp.select(
        "b", "r", exp.alias_(uniform_draw(exp.column("b"), exp.column("r"), 42), "u")
    ).from_(rows.subquery("t"))
    want = {(b, r): draw_value(b, r, 42) for b, r in pairs}
    on_duckdb = duckdb.sql(render(query, "duckdb")).fetchall()
    on_sqlite = sqlite3.connect(":memory:").execute(render(query, "sqlite")).fetchall()
    for found in (on_duckdb, on_sqlite):
        assert {(b, r): u for b, r, u in found} == want


def test_the_draws_look_uniform_and_independent() -> None:
    draws = np.array([[draw_value(b, r, 3) for b in range(300)] for r in range(300)])
    assert abs(draws.mean() - 0.5) < 0.005
    assert abs(draws.var() - 1 / 12) < 0.002
    # neighbouring buckets, neighbouring replicates and another seed are uncorrelated
    other = np.array([[draw_value(b, r, 4) for b in range(300)] for r in range(300)])
    for a, b in ((draws[:, :-1], draws[:, 1:]), (draws[:-1], draws[1:]), (draws, other)):
        assert abs(np.corrcoef(a.ravel(), b.ravel())[0, 1]) < 0.02
    weights = np.searchsorted(np.array(POISSON_CDF), draws.ravel(), side="right")
    assert abs(weights.mean() - 1) < 0.01 and abs(weights.var() - 1) < 0.02


# --- t-intervals and the paired t-test against scipy ----------------------------------------


@pytest.fixture(scope="module")
def per_user() -> pd.DataFrame:
    return sqlmetrics.evaluate(RECS, TRUTH, EXAMPLE, group_by="model", per_user=True)


def test_t_intervals_equal_scipy_on_the_per_user_values(per_user: pd.DataFrame) -> None:
    plain = sqlmetrics.evaluate(RECS, TRUTH, EXAMPLE, group_by="model")
    result = sqlmetrics.evaluate(RECS, TRUTH, EXAMPLE, group_by="model", ci=0.9)
    assert list(result["model"]) == list(plain["model"])
    assert list(result["users"]) == list(plain["users"])
    for _, row in result.iterrows():
        users = per_user[per_user["model"] == row["model"]]
        for metric in EXAMPLE:
            values = users[metric].dropna().to_numpy()
            want = scipy_stats.t.interval(
                0.9, len(values) - 1, loc=values.mean(), scale=scipy_stats.sem(values)
            )
            assert row[metric] == pytest.approx(values.mean(), abs=1e-12)
            assert (row[f"{metric}_lo"], row[f"{metric}_hi"]) == pytest.approx(want, abs=TOLERANCE)
    for metric in EXAMPLE:
        assert result[metric].to_numpy() == pytest.approx(plain[metric].to_numpy(), abs=1e-12)
    assert result.attrs["ci"]["method"] == "t"
    pd.testing.assert_frame_equal(
        sqlmetrics.read_diagnostics(result), sqlmetrics.read_diagnostics(plain)
    )


def test_compare_equals_scipys_paired_t_test(per_user: pd.DataFrame) -> None:
    result = sqlmetrics.compare(RECS, TRUTH, EXAMPLE, group_by="model", baseline="popularity")
    assert list(result["metric"]) == EXAMPLE
    assert set(result["model"]) == {"two_tower"}
    model = per_user[per_user["model"] == "two_tower"].set_index("user_id")
    base = per_user[per_user["model"] == "popularity"].set_index("user_id")
    for _, row in result.iterrows():
        a, b = model[row["metric"]], base[row["metric"]].loc[model.index]
        differences = (a - b).to_numpy()
        assert row["p_t"] == pytest.approx(scipy_stats.ttest_rel(a, b).pvalue, abs=TOLERANCE)
        want = scipy_stats.t.interval(
            0.95,
            len(differences) - 1,
            loc=differences.mean(),
            scale=scipy_stats.sem(differences),
        )
        assert (row["difference_lo"], row["difference_hi"]) == pytest.approx(want, abs=TOLERANCE)
        assert row["difference"] == pytest.approx(differences.mean(), abs=1e-12)
        assert row["baseline"] == pytest.approx(b.mean(), abs=1e-12)
        assert row["relative_difference"] == pytest.approx(differences.mean() / b.mean())
        assert row["users"] == len(differences)
    # seven metrics, Holm over the seven p-values of the chosen test (t)
    assert list(result["p_holm"]) == pytest.approx(holm(list(result["p_t"])))
    assert result["significant"].all()  # two_tower is far better than popularity


def test_the_golden_interval_derived_by_hand() -> None:
    spec = yaml.safe_load(
        (REPO / "fixtures" / "stats" / "group_by_model_intervals.yaml").read_text()
    )
    given = yaml.safe_load((REPO / "fixtures" / spec["given"]).read_text())["given"]
    recs, truth = pd.DataFrame(given["recommendations"]), pd.DataFrame(given["interactions"])
    options = spec["options"]
    result = sqlmetrics.evaluate(recs, truth, spec["metrics"], ci=spec["ci"]["level"], **options)
    for want, (_, got) in zip(spec["ci"]["expect"], result.iterrows(), strict=True):
        for key, value in want.items():
            assert got[key] == (
                pytest.approx(value, abs=1e-12) if isinstance(value, float) else value
            )
    compared = sqlmetrics.compare(
        recs,
        truth,
        spec["metrics"],
        baseline=spec["compare"]["baseline"],
        replicates=4000,
        **options,
    )
    for want, (_, got) in zip(spec["compare"]["expect"], compared.iterrows(), strict=True):
        for key, value in want.items():
            assert got[key] == (
                pytest.approx(value, abs=1e-12) if isinstance(value, float) else value
            )
    # hit_rate@2's exact randomization p-value is 1/2 (the derivation); 4 standard errors
    assert abs(compared["p_randomization"].iloc[1] - 0.5) < 4 * math.sqrt(0.25 / 4000)


# --- bootstrap and randomization ------------------------------------------------------------


def test_the_bootstrap_is_deterministic_and_close_to_the_t_interval_on_many_users() -> None:
    options: dict[str, Any] = {"group_by": "model", "ci": 0.95}
    t = sqlmetrics.evaluate(RECS, TRUTH, EXAMPLE, **options)
    boot = sqlmetrics.evaluate(RECS, TRUTH, EXAMPLE, **options, ci_method="bootstrap", seed=5)
    again = sqlmetrics.evaluate(RECS, TRUTH, EXAMPLE, **options, ci_method="bootstrap", seed=5)
    other = sqlmetrics.evaluate(RECS, TRUTH, EXAMPLE, **options, ci_method="bootstrap", seed=6)
    pd.testing.assert_frame_equal(boot, again)
    assert not boot.equals(other)
    for metric in EXAMPLE:
        for side in ("_lo", "_hi"):
            # 458 users: the percentile interval is within a fifth of the t half-width
            half = (t[f"{metric}_hi"] - t[f"{metric}_lo"]) / 2
            gap = (boot[metric + side] - t[metric + side]).abs()
            assert (gap < 0.2 * half).all(), (metric, side)


def _two_arms(users: int, shift: float, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two models recommending 10 of 40 items each; each item relevant with probability 0.2,
    model b's first item with probability 0.2 + shift more."""
    rng = np.random.default_rng(seed)
    rows, truth = [], []
    for user in range(users):
        items = rng.permutation(40)
        relevant = set(np.flatnonzero(rng.random(40) < 0.2).tolist()) | {int(items[0])}
        if shift and rng.random() < shift:
            relevant.add(int(items[20]))
        truth += [{"user_id": user, "item_id": int(i)} for i in sorted(relevant)]
        for model, listed in (("a", items[1:11]), ("b", [items[20], *items[21:30]])):
            order = rng.permutation(listed) if model == "a" else listed
            rows += [
                {"model": model, "user_id": user, "item_id": int(i), "score": 10.0 - k}
                for k, i in enumerate(order)
            ]
    return pd.DataFrame(rows), pd.DataFrame(truth)


def test_the_randomization_test_agrees_with_ranx() -> None:
    from ranx.statistical_tests import fisher_randomization_test

    recs, truth = _two_arms(300, 0.08, seed=11)
    metrics = ["precision@10", "mrr@10", "ndcg@10"]
    replicates = 4000
    result = sqlmetrics.compare(
        recs, truth, metrics, baseline="a", replicates=replicates, seed=2, test="randomization"
    )
    values = sqlmetrics.evaluate(recs, truth, metrics, group_by="model", per_user=True)
    a = values[values["model"] == "a"].set_index("user_id")
    b = values[values["model"] == "b"].set_index("user_id").loc[a.index]
    checked = 0
    for _, row in result.iterrows():
        ours = row["p_randomization"]
        control, treatment = a[row["metric"]].to_numpy(), b[row["metric"]].to_numpy()
        expected = _randomization_p(control, treatment, replicates, seed=7)
        error = math.sqrt(max(ours * (1 - ours), 1e-3) / replicates)
        assert abs(ours - expected) < 4 * math.sqrt(2) * error, (row["metric"], ours, expected)
        # ranx's permutations run in parallel threads that do not take its seed, and it
        # compares tied differences of means (precision's are) as rounded: its p moves by a
        # few hundredths from run to run and with numba's thread count, so it is checked
        # loosely, the numpy reference above strictly.
        theirs, _ = fisher_randomization_test(control, treatment, replicates, 0.05, 42)
        assert abs(ours - theirs) < 0.06, (row["metric"], ours, theirs)
        checked += 0.02 < theirs < 0.98  # a p-value away from the ends, where it can differ
    assert checked >= 1


def _randomization_p(
    control: np.ndarray, treatment: np.ndarray, replicates: int, seed: int
) -> float:
    """Fisher's randomization test (Smucker et al. 2007) in numpy: each user's pair swapped
    with probability 1/2; a permuted difference of means at least the observed one counts, a
    tie included (compared with a relative margin for the rounding of the means)."""
    rng = np.random.default_rng(seed)
    observed = abs(control.mean() - treatment.mean())
    swapped = rng.random((replicates, len(control))) < 0.5
    differences = np.abs(np.where(swapped, treatment - control, control - treatment).mean(axis=1))
    extreme = np.count_nonzero(differences >= observed * (1 - 1e-9))
    return float((extreme + 1) / (replicates + 1))


# --- calibration by simulation --------------------------------------------------------------

# Calibration over simulated datasets: CI simulates 1,000 (SQLMETRICS_FULL_MATRIX=1), a
# developer's run 250, its bands twice as wide (the binomial error goes as 1 / sqrt(datasets)).
DATASETS = 1000 if FULL_MATRIX else 250
SPREAD = math.sqrt(1000 / DATASETS)
EDGE = 1e-12  # a band's edges included, as 0.93 <= x <= 0.97 includes them


def _datasets(users: int, p: float, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """DATASETS datasets (a ``dataset`` column) of ``users`` users with 10 recommendations,
    each relevant with probability p. The population is the users with a relevant item, so
    the population mean of precision@10 is E[X / 10 | X >= 1], X ~ Binomial(10, p)."""
    rng = np.random.default_rng(seed)
    size = DATASETS * users * 10
    recs = pd.DataFrame(
        {
            "dataset": np.repeat(np.arange(DATASETS), users * 10),
            "user_id": np.tile(np.repeat(np.arange(users), 10), DATASETS),
            "item_id": np.tile(np.arange(10), DATASETS * users),
        }
    )
    recs["score"] = (10 - recs["item_id"]).astype(float)
    truth = recs.loc[rng.random(size) < p, ["dataset", "user_id", "item_id"]]
    return recs, truth.reset_index(drop=True), p / (1 - (1 - p) ** 10)


@pytest.mark.parametrize(("method", "replicates"), [("t", 1000), ("bootstrap", 200)])
def test_95_percent_intervals_cover_the_known_mean_95_percent_of_the_time(
    method: str, replicates: int
) -> None:
    recs, truth, mean = _datasets(users=100, p=0.3, seed=19)
    result = sqlmetrics.evaluate(
        recs,
        truth,
        ["precision@10"],
        group_by="dataset",
        ci=0.95,
        ci_method=method,
        replicates=replicates,
        seed=1,
    )
    assert len(result) == DATASETS
    covered = ((result["precision@10_lo"] <= mean) & (mean <= result["precision@10_hi"])).mean()
    assert abs(covered - 0.95) <= 0.02 * SPREAD + EDGE, covered


def _paired_datasets(users: int, shift: float, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """DATASETS pairs of models a and b over the same users: each of the 10 items a model
    recommends is relevant with probability 0.3 (b's first with 0.3 + shift), independently."""
    rng = np.random.default_rng(seed)
    per_model = DATASETS * users * 10
    frames = []
    relevant = []
    for arm, offset in (("a", 0), ("b", 10)):
        recs = pd.DataFrame(
            {
                "model": arm,
                "dataset": np.repeat(np.arange(DATASETS), users * 10),
                "user_id": np.tile(np.repeat(np.arange(users), 10), DATASETS),
                "item_id": np.tile(np.arange(10), DATASETS * users) + offset,
            }
        )
        recs["score"] = (20 - recs["item_id"]).astype(float)
        chance = np.full(per_model, 0.3)
        if arm == "b":
            chance[recs["item_id"].to_numpy() == 10] += shift
        frames.append(recs)
        relevant.append(recs.loc[rng.random(per_model) < chance, ["dataset", "user_id", "item_id"]])
    # every user relevant to an item outside both lists too, so that both models share the
    # population (users with a relevant interaction)
    anchor = pd.DataFrame(
        {
            "dataset": np.repeat(np.arange(DATASETS), users),
            "user_id": np.tile(np.arange(users), DATASETS),
            "item_id": 99,
        }
    )
    truth = pd.concat([*relevant, anchor], ignore_index=True)
    return pd.concat(frames, ignore_index=True), truth


@pytest.fixture(scope="module")
def a_a() -> pd.DataFrame:
    recs, truth = _paired_datasets(users=60, shift=0.0, seed=23)
    return sqlmetrics.compare(
        recs,
        truth,
        ["precision@10"],
        group_by=["model", "dataset"],
        baseline="a",
        replicates=200,
        seed=3,
    )


@pytest.mark.parametrize("test", ["p_t", "p_randomization"])
def test_a_a_comparisons_reject_at_5_percent(a_a: pd.DataFrame, test: str) -> None:
    assert len(a_a) == DATASETS
    rejected = (a_a[test] < 0.05).mean()
    assert abs(rejected - 0.05) <= 0.02 * SPREAD + EDGE, rejected
    # and the 95% interval of the difference covers 0 as often as the test accepts
    covers = ((a_a["difference_lo"] <= 0) & (a_a["difference_hi"] >= 0)).mean()
    assert abs(covers - 0.95) <= 0.02 * SPREAD + EDGE, covers


def test_a_real_difference_is_detected_at_the_expected_power() -> None:
    shift = 0.25
    recs, truth = _paired_datasets(users=60, shift=shift, seed=29)
    result = sqlmetrics.compare(
        recs, truth, ["precision@10"], group_by=["model", "dataset"], baseline="a", replicates=20
    )
    # the difference of precision@10 per user: (b's hits - a's hits) / 10, b's first item
    # shifted: mean shift / 10, variance (20 * 0.21 - 0.21 + (0.3 + s)(0.7 - s)) / 100
    mean = shift / 10
    sd = math.sqrt((20 * 0.21 - 0.21 + (0.3 + shift) * (0.7 - shift)) / 100)
    n = 60
    critical = scipy_stats.t.ppf(0.975, n - 1)
    power = scipy_stats.nct.sf(critical, n - 1, mean / (sd / math.sqrt(n))) + scipy_stats.nct.cdf(
        -critical, n - 1, mean / (sd / math.sqrt(n))
    )
    detected = (result["p_t"] < 0.05).mean()
    # the binomial error of 1,000 datasets is at most 0.016: 3 of them
    assert abs(detected - power) < 0.05 * SPREAD, (detected, power)
    assert result["difference"].mean() == pytest.approx(mean, abs=0.005 * SPREAD)


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"ci": 1.5}, "ci must be between 0 and 1"),
        ({"ci": "95%"}, "ci must be a number"),
        ({"ci": 0.95, "ci_method": "jackknife"}, "ci_method must be one of t, bootstrap"),
        ({"ci": 0.95, "replicates": 0}, "replicates must be a whole number from 1"),
        ({"ci": 0.95, "seed": -1}, "seed must be a whole number from 0"),
        ({"ci": 0.95, "per_user": True}, "per_user does not apply"),
    ],
)
def test_bad_interval_options_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(sqlmetrics.SqlmetricsError, match=message):
        sqlmetrics.evaluate(RECS, TRUTH, ["ndcg@10"], group_by="model", **options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"baseline": "pop"},
            "baseline 'pop' is not among the models of model: popularity, two_tower",
        ),
        (
            {"baseline": "popularity", "group_by": []},
            "compare needs the column that names the model",
        ),
        ({"baseline": "popularity", "test": "wilcoxon"}, "test must be one of t, randomization"),
        ({"baseline": "popularity", "alpha": 5}, "alpha must be a number between 0 and 1"),
    ],
)
def test_bad_comparisons_are_refused(options: dict[str, Any], message: str) -> None:
    options = {"group_by": "model", **options}
    with pytest.raises(sqlmetrics.SqlmetricsError, match=message):
        sqlmetrics.compare(RECS, TRUTH, ["ndcg@10"], **options)


def test_metrics_without_a_per_user_value_say_so() -> None:
    result = sqlmetrics.evaluate(
        RECS, TRUTH, ["ndcg@10", "coverage@10", "micro_hit_ratio@10"], group_by="model", ci=0.95
    )
    assert result["coverage@10_lo"].isna().all() and result["micro_hit_ratio@10_hi"].isna().all()
    assert result["ndcg@10_lo"].notna().all()
    assert "no interval for coverage@10, micro_hit_ratio@10" in result.attrs["notes"][0]
    # their values are evaluate's own, beside the intervals of the others
    plain = sqlmetrics.evaluate(
        RECS, TRUTH, ["ndcg@10", "coverage@10", "micro_hit_ratio@10"], group_by="model"
    )
    for metric in ("ndcg@10", "coverage@10", "micro_hit_ratio@10"):
        assert result[metric].to_numpy() == pytest.approx(plain[metric].to_numpy(), abs=1e-12)


@pytest.mark.parametrize("method", ["t", "bootstrap"])
def test_a_date_group_column_with_a_group_level_metric_gets_its_intervals(method: str) -> None:
    # evaluate's rows hold a DATE key as datetime64, the statistics query's as datetime.date:
    # the intervals were merged on both and pandas refused the merge
    recs = pd.read_parquet(RECS)
    days = {"popularity": "2024-01-01", "two_tower": "2024-01-02"}
    recs["day"] = pd.to_datetime(recs["model"].map(days)).dt.date
    metrics = ["ndcg@10", "coverage@10"]
    options: dict[str, Any] = {"ci": 0.95, "ci_method": method, "replicates": 200}
    by_day = sqlmetrics.evaluate(
        recs.drop(columns="model"), TRUTH, metrics, group_by="day", **options
    )
    by_model = sqlmetrics.evaluate(recs, TRUTH, metrics, group_by="model", **options)
    for column in ("ndcg@10", "ndcg@10_lo", "ndcg@10_hi"):
        assert by_day[column].to_numpy() == pytest.approx(by_model[column].to_numpy())
    assert by_day["ndcg@10_lo"].notna().all() and by_day["coverage@10_lo"].isna().all()


def test_a_mean_over_the_lists_keeps_evaluates_value_and_has_no_interval() -> None:
    # novelty averages over every user with a list, the per-user rows over the population
    metrics = ["hit_rate@10", "novelty@10"]
    plain = sqlmetrics.evaluate(RECS, TRUTH, metrics, group_by="model")
    result = sqlmetrics.evaluate(RECS, TRUTH, metrics, group_by="model", ci=0.95)
    assert result["novelty@10"].to_numpy() == pytest.approx(plain["novelty@10"].to_numpy())
    assert result["novelty@10_lo"].isna().all() and result["hit_rate@10_lo"].notna().all()
    with pytest.raises(
        sqlmetrics.SqlmetricsError, match=r"micro \(ratio of sums\), group-level and over-the-lists"
    ):
        sqlmetrics.compare(RECS, TRUTH, ["coverage@10"], group_by="model", baseline="popularity")


def test_models_on_different_users_are_compared_on_the_common_ones() -> None:
    recs = pd.read_parquet(RECS)
    # popularity loses its lists for a third of the users: under population="common" it is
    # evaluated on fewer users than two_tower
    dropped = recs["user_id"].drop_duplicates().iloc[::3]
    recs = recs[~((recs["model"] == "popularity") & recs["user_id"].isin(dropped))]
    result = sqlmetrics.compare(
        recs, TRUTH, ["ndcg@10"], group_by="model", baseline="popularity", population="common"
    )
    counts = sqlmetrics.evaluate(recs, TRUTH, ["ndcg@10"], group_by="model", population="common")
    users = dict(zip(counts["model"], counts["users"], strict=True))
    assert result["users"].iloc[0] == users["popularity"] < users["two_tower"]
    assert "compared on the" in result.attrs["notes"][0]
    assert f"({users['two_tower']} and {users['popularity']} users)" in result.attrs["notes"][0]


@pytest.mark.parametrize("population", ["judged", "all_judged"])
def test_compare_pairs_the_users_of_trec_eval_s_populations(population: str) -> None:
    """Under population="judged" a model without a list for a judged user has no value for it
    (compared on the common users); under "all_judged" it scores 0 there (every pair)."""
    recs = pd.read_parquet(RECS)
    dropped = recs["user_id"].drop_duplicates().iloc[::3]
    recs = recs[~((recs["model"] == "popularity") & recs["user_id"].isin(dropped))]
    options = {"group_by": "model", "population": population}
    result = sqlmetrics.compare(recs, TRUTH, ["ndcg@10"], baseline="popularity", **options)
    counts = sqlmetrics.evaluate(recs, TRUTH, ["ndcg@10"], **options)
    users = dict(zip(counts["model"], counts["users"], strict=True))
    if population == "judged":
        assert result["users"].iloc[0] == users["popularity"] < users["two_tower"]
    else:
        assert result["users"].iloc[0] == users["popularity"] == users["two_tower"]
    values = dict(zip(counts["model"], counts["ndcg@10"], strict=True))
    if population == "all_judged":
        assert result["value"].iloc[0] == pytest.approx(values["two_tower"], abs=1e-12)
        assert result["baseline"].iloc[0] == pytest.approx(values["popularity"], abs=1e-12)


def test_to_sql_gives_the_statistics_in_every_dialect() -> None:
    from sqlmetrics.render.dialects import DIALECTS

    for dialect in DIALECTS:
        for options in (
            {"ci": 0.95},
            {"ci": 0.9, "ci_method": "bootstrap", "replicates": 50, "seed": 1},
            {"baseline": "a"},
        ):
            text = sqlmetrics.to_sql(
                ["ndcg@10", "mrr"], group_by="model", dialect=dialect, **options
            )
            assert "stats_moments" in text
            assert ("stats_replicates" in text) == (
                options.get("ci_method") == "bootstrap" or "baseline" in options
            )


@pytest.mark.parametrize(
    ("metrics", "population", "users"),
    [
        (["ndcg@10", "gauc"], "all", 3),
        (["ndcg@10", "auc"], "all", 3),
        (["precision@2", "user_auc"], "all", 3),
        (["ndcg@10", "gauc", "num_ret"], "judged", 3),
        (["precision@2", "user_auc", "gm_map"], "all_judged", 4),
    ],
)
def test_users_and_values_with_intervals_equal_evaluates_when_populations_differ(
    metrics: list[str], population: str, users: int
) -> None:
    """Ranking and scored metrics in one call keep different users: user 1 has a list and a
    relevant item (both), 2 a list with nothing relevant (scored metrics only; gauc skips it
    for want of a positive), 3 a relevant item and no list (ranking only, scoring 0), 4 both.
    ``users`` counts the ranking population (1, 3 and 4) with intervals as without; under
    population="judged" 1, 2 (judged with nothing relevant: 0) and 4, "all_judged" all four."""
    recs = pd.DataFrame(
        {
            "user_id": [1, 1, 1, 2, 2, 4, 4],
            "item_id": [1, 2, 3, 1, 2, 1, 2],
            "score": [0.9, 0.5, 0.1, 0.8, 0.2, 0.7, 0.3],
        }
    )
    truth = pd.DataFrame(
        {"user_id": [1, 3, 2, 4], "item_id": [2, 1, 9, 1], "relevance": [1, 1, 0, 1]}
    )
    plain = sqlmetrics.evaluate(recs, truth, metrics, population=population)
    with_intervals = sqlmetrics.evaluate(recs, truth, metrics, ci=0.95, population=population)
    assert plain["users"].tolist() == with_intervals["users"].tolist() == [users]
    pd.testing.assert_frame_equal(plain[metrics], with_intervals[metrics], check_exact=True)


def test_the_diagnostics_with_intervals_come_in_group_order_as_without() -> None:
    """The statistics query is a union without an order; its diagnostics rows are sorted by
    group as evaluate's own (a run under load once gave them in another order)."""
    rng = np.random.default_rng(0)
    models = [f"model_{letter}" for letter in "qwertyuiopasdfghjklz"]  # not in sorted order
    recs = pd.DataFrame(
        [(m, u, i, rng.random()) for m in models for u in range(30) for i in range(5)],
        columns=["model", "user_id", "item_id", "score"],
    )
    truth = pd.DataFrame(
        [(u, int(i)) for u in range(30) for i in rng.choice(10, 2, replace=False)],
        columns=["user_id", "item_id"],
    )
    with_intervals = sqlmetrics.evaluate(recs, truth, ["ndcg@5"], group_by="model", ci=0.95)
    plain = sqlmetrics.evaluate(recs, truth, ["ndcg@5"], group_by="model")
    diagnostics = sqlmetrics.read_diagnostics(with_intervals)
    assert diagnostics["model"].tolist() == sorted(models)
    pd.testing.assert_frame_equal(diagnostics, sqlmetrics.read_diagnostics(plain))
