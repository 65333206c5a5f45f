"""evaluate's ``segment``: each metric per segment of users and the gaps between the segments
(range and mean absolute pairwise difference, Elliot's UserMADranking), with bootstrap
intervals. Checked against a hand-derived case, against the pairs enumerated one by one, and
against the gaps of the statistics query's replicates recomputed here with numpy."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics.compose.diagnostics import KIND
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.stats.draws import draw_value
from sqlmetrics.stats.gaps import range_and_mad, segment_gaps
from sqlmetrics.stats.resampling import BUCKETS, POISSON_CDF
from tests.cli_runner import cli


def hand_data() -> tuple[pd.DataFrame, pd.DataFrame]:
    # precision@1, one list per user, the relevant item of each user "r":
    #   se: u1 hit (r first), u2 miss                   mean 1/2
    #   de: u3 hit                                      mean 1
    #   fr: u4 miss, u5 miss, u6 hit                    mean 1/3
    # range = 1 - 1/3 = 2/3 (highest de, lowest fr)
    # mad = (|1/2 - 1| + |1/2 - 1/3| + |1 - 1/3|) / 3 = (1/2 + 1/6 + 2/3) / 3 = 4/9
    users = [(1, "se", True), (2, "se", False), (3, "de", True)]
    users += [(4, "fr", False), (5, "fr", False), (6, "fr", True)]
    recs, truth = [], []
    for user, country, hit in users:
        first, second = ("r", "x") if hit else ("x", "r")
        recs += [(user, first, 0.9, country), (user, second, 0.5, country)]
        truth.append((user, "r", country))
    return (
        pd.DataFrame(recs, columns=["user_id", "item_id", "score", "country"]),
        pd.DataFrame(truth, columns=["user_id", "item_id", "country"]),
    )


def test_hand_derived_gaps() -> None:
    recs, truth = hand_data()
    result = sqlmetrics.evaluate(recs, truth, ["precision@1"], segment="country")
    assert result["country"].tolist() == ["de", "fr", "se"]
    assert result["precision@1"].tolist() == pytest.approx([1, 1 / 3, 1 / 2])
    gaps = sqlmetrics.read_gaps(result)
    assert gaps.columns.tolist() == ["metric", "segments", "lowest", "highest", "range", "mad"]
    row = gaps.iloc[0]
    assert (row["metric"], row["segments"], row["lowest"], row["highest"]) == (
        "precision@1",
        3,
        "fr",
        "de",
    )
    assert row["range"] == pytest.approx(2 / 3)
    assert row["mad"] == pytest.approx(4 / 9)


def test_range_and_mad_against_the_pairs_enumerated() -> None:
    rng = np.random.default_rng(7)
    for size in range(0, 9):
        values = [float(v) for v in rng.random(size)] + [math.nan]
        spread, mad = range_and_mad(values)
        numbers = [v for v in values if not math.isnan(v)]
        if len(numbers) < 2:
            assert math.isnan(spread) and math.isnan(mad)
            continue
        pairs = list(itertools.combinations(numbers, 2))
        assert spread == pytest.approx(max(numbers) - min(numbers))
        assert mad == pytest.approx(sum(abs(a - b) for a, b in pairs) / len(pairs))


def random_data(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two models, four segments of unequal sizes, random scores and relevant items."""
    rng = np.random.default_rng(seed)
    recs, truth = [], []
    for user in range(90):
        country = ("se", "de", "fr", "no")[min(user // 15, 3) if user < 45 else user % 4]
        for model in ("a", "b"):
            for item in range(6):
                recs.append((model, user, item, float(rng.random()), country))
        for item in rng.choice(10, size=int(rng.integers(1, 4)), replace=False):
            truth.append((user, int(item), country))
    return (
        pd.DataFrame(recs, columns=["model", "user_id", "item_id", "score", "country"]),
        pd.DataFrame(truth, columns=["user_id", "item_id", "country"]),
    )


def replicate_means(per_user: pd.DataFrame, metric: str, replicates: int) -> dict[str, np.ndarray]:
    """The bootstrap's per-segment replicate means, computed here from the per-user values by
    the rule of stats/replicates.py: within a model, users ranked by segment then user (their
    text), bucket = rank mod 1000; each replicate weighs a bucket by Poisson(1) drawn by
    inversion from draw_value(bucket, replicate, seed 0); a mean is the weighted sum over the
    weighted count. Per model: replicates x segments (in the segments' order)."""
    means = {}
    for model, part in per_user.groupby("model"):
        part = part.assign(_s=part["country"].astype(str), _u=part["user_id"].astype(str))
        part = part.sort_values(["_s", "_u"]).reset_index(drop=True)
        buckets = part.index.to_numpy() % BUCKETS
        segments = sorted(part["_s"].unique())
        values = part[metric].to_numpy(dtype=float)
        known = ~np.isnan(values)
        table = np.empty((replicates, len(segments)))
        for r in range(replicates):
            draws = np.array([draw_value(int(b), r, 0) for b in range(buckets.max() + 1)])
            weights = np.searchsorted(np.array(POISSON_CDF), draws, side="right")[buckets]
            for j, segment in enumerate(segments):
                mine = known & (part["_s"].to_numpy() == segment)
                total = weights[mine].sum()
                table[r, j] = (weights[mine] * values[mine]).sum() / total if total else np.nan
        means[str(model)] = table
    return means


def mad_rows(values: np.ndarray) -> np.ndarray:
    pairs = list(itertools.combinations(range(values.shape[1]), 2))
    return np.mean([np.abs(values[:, a] - values[:, b]) for a, b in pairs], axis=0)


def test_bootstrap_intervals_are_the_gaps_of_a_bootstrap_computed_here() -> None:
    """The SQL's bootstrap against the same bootstrap written here in numpy from evaluate's
    per-user values (the buckets across the segments, the draws, the weighted means), then
    numpy's percentile interval of each replicate's range and mean absolute difference."""
    recs, truth = random_data(3)
    metrics = ["ndcg@5", "recall@3"]
    options: dict[str, Any] = {"ci": 0.9, "ci_method": "bootstrap", "replicates": 200}
    result = sqlmetrics.evaluate(
        recs, truth, metrics, group_by="model", segment="country", **options
    )
    gaps = sqlmetrics.read_gaps(result).set_index(["model", "metric"])
    per_user = sqlmetrics.evaluate(
        recs, truth, metrics, group_by=["model", "country"], per_user=True
    )
    for metric in metrics:
        for model, values in replicate_means(per_user, metric, 200).items():
            ranges = values.max(axis=1) - values.min(axis=1)
            row = gaps.loc[(model, metric)]
            for name, draws in (("range", ranges), ("mad", mad_rows(values))):
                low, high = np.quantile(draws, [0.05, 0.95])
                assert row[f"{name}_lo"] == pytest.approx(low), (model, metric, name)
                assert row[f"{name}_hi"] == pytest.approx(high), (model, metric, name)
            means = result[result["model"] == model][metric].to_numpy()
            assert row["range"] == pytest.approx(means.max() - means.min())


def test_a_replicate_missing_a_segment_gives_no_gap() -> None:
    """hand_data's segments have 1, 2 and 3 users: in about e^-1 of the replicates de draws
    nobody. Those replicates are left out of the interval (over the other segments their gap
    would be smaller), as the bootstrap computed here leaves them: about 52 % are complete."""
    recs, truth = hand_data()
    options: dict[str, Any] = {"ci": 0.9, "ci_method": "bootstrap", "replicates": 300}
    result = sqlmetrics.evaluate(recs, truth, ["precision@1"], segment="country", **options)
    row = sqlmetrics.read_gaps(result).iloc[0]
    per_user = sqlmetrics.evaluate(recs, truth, ["precision@1"], group_by="country", per_user=True)
    values = replicate_means(per_user.assign(model="all"), "precision@1", 300)["all"]
    complete = values[~np.isnan(values).any(axis=1)]
    assert 0.35 * len(values) < len(complete) < 0.7 * len(values)  # (1 - e^-1)(1 - e^-2)(1 - e^-3)
    low, high = np.quantile(complete.max(axis=1) - complete.min(axis=1), [0.05, 0.95])
    assert (row["range_lo"], row["range_hi"]) == pytest.approx((low, high))


def test_the_segments_draws_are_independent_when_ids_trend_with_the_values() -> None:
    """Two segments of 400 users whose hits fall with the order of their ids: the n-th users
    of the two segments are alike. Dealt into buckets per segment, they shared a draw and the
    segments' replicate means moved together (correlation ~0.6); across the segments, none."""
    recs, truth = [], []
    for segment in ("a", "b"):
        for n in range(400):
            user = f"{segment}{n:04d}"
            hit = n < 200
            recs += [(user, "r" if hit else "x", 0.9, segment), (user, "y", 0.5, segment)]
            truth.append((user, "r", segment))
    frame = pd.DataFrame(recs, columns=["user_id", "item_id", "score", "country"])
    truth_frame = pd.DataFrame(truth, columns=["user_id", "item_id", "country"])
    seen: dict[str, Any] = {}

    def spy(*args: Any, **kwargs: Any) -> pd.DataFrame:
        seen["replicated"] = args[5] if len(args) > 5 else kwargs.get("replicated")
        return segment_gaps(*args, **kwargs)

    import sqlmetrics.run

    original = sqlmetrics.run.segment_gaps
    sqlmetrics.run.segment_gaps = spy  # type: ignore[assignment]
    try:
        sqlmetrics.evaluate(
            frame, truth_frame, ["hit_rate@1"], segment="country", ci=0.95, ci_method="bootstrap"
        )
    finally:
        sqlmetrics.run.segment_gaps = original  # type: ignore[assignment]
    rows = seen["replicated"][0]
    replicates = rows[rows[KIND] == "replicates"]
    table = replicates.pivot(index="replicate", columns="country", values="m0_n")
    correlation = np.corrcoef(table.to_numpy(dtype=float).T)[0, 1]
    assert abs(correlation) < 0.15, correlation


def test_gaps_without_a_bootstrap_have_no_interval_and_say_why() -> None:
    recs, truth = random_data(4)
    result = sqlmetrics.evaluate(
        recs, truth, ["ndcg@5", "coverage@5"], group_by="model", segment="country", ci=0.95
    )
    gaps = sqlmetrics.read_gaps(result)
    assert "range_lo" not in gaps.columns
    assert gaps["metric"].tolist() == ["ndcg@5", "coverage@5", "ndcg@5", "coverage@5"]
    assert any("ci_method='bootstrap'" in note for note in result.attrs["notes"])


def test_a_group_level_metric_gets_gaps_but_no_interval() -> None:
    recs, truth = random_data(5)
    result = sqlmetrics.evaluate(
        recs,
        truth,
        ["ndcg@5", "coverage@5"],
        group_by="model",
        segment="country",
        ci=0.95,
        ci_method="bootstrap",
    )
    gaps = sqlmetrics.read_gaps(result).set_index(["model", "metric"])
    assert not math.isnan(gaps.loc[("a", "ndcg@5"), "range_lo"])
    assert math.isnan(gaps.loc[("a", "coverage@5"), "range_lo"])
    coverage = result[result["model"] == "a"]["coverage@5"]
    assert gaps.loc[("a", "coverage@5"), "range"] == pytest.approx(coverage.max() - coverage.min())


def test_a_segment_of_the_recommendations_alone_is_refused() -> None:
    recs, truth = hand_data()
    with pytest.raises(SqlmetricsError, match="add it to the interactions too"):
        sqlmetrics.evaluate(recs, truth.drop(columns="country"), ["precision@1"], segment="country")


def test_results_with_gaps_concatenate() -> None:
    recs, truth = hand_data()
    first = sqlmetrics.evaluate(recs, truth, ["precision@1"], segment="country")
    second = sqlmetrics.evaluate(recs, truth, ["hit_rate@1"], segment="country")
    joined = pd.concat([first, second])
    assert len(joined) == 6
    assert len(sqlmetrics.read_gaps(first)) == len(sqlmetrics.read_gaps(second)) == 1


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"group_by": "country"}, "also in group_by"),
        ({"per_user": True}, "per_user the rows are the users' values"),
        ({"segment": ""}, "segment must be the name of a column"),
        # named as the caller gave it (segment=), not as the group_by column it becomes
        ({"segment": "planet"}, "segment 'planet' is not a column of the recommendations"),
    ],
)
def test_refusals(options: dict[str, object], said: str) -> None:
    recs, truth = hand_data()
    given = {"segment": "country", **options}
    with pytest.raises(SqlmetricsError, match=said):
        sqlmetrics.evaluate(recs, truth, ["precision@1"], **given)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["metric", "range", "lowest"])
def test_a_group_column_named_like_a_gap_column_is_refused(name: str) -> None:
    # read_gaps' rows hold the group columns beside its own: a group column "metric" was
    # overwritten by the metric's name, each model's gaps labelled with it
    recs, truth = random_data(3)
    recs = recs.rename(columns={"model": name})
    with pytest.raises(SqlmetricsError, match=f"group_by column {name!r} is also a column"):
        sqlmetrics.evaluate(recs, truth, ["ndcg@5"], group_by=name, segment="country")


def test_the_command_line_prints_the_gaps(tmp_path: pytest.TempPathFactory) -> None:
    recs, truth = hand_data()
    recs_path, truth_path = tmp_path / "recs.csv", tmp_path / "truth.csv"  # type: ignore[operator]
    recs.to_csv(recs_path, index=False)
    truth.to_csv(truth_path, index=False)
    paths = str(recs_path), str(truth_path)
    done = cli("evaluate", *paths, "-m", "precision@1", "--segment", "country", "-q")
    assert done.returncode == 0, done.stderr
    table, gaps = done.stdout.split("gaps between segments:\n")
    assert "fr" in table and "se" in table
    assert "0.666667" in gaps and "0.444444" in gaps
    as_csv = cli("evaluate", *paths, "-m", "precision@1", "--segment", "country", "--format", "csv")
    assert "gaps" not in as_csv.stdout
    assert "gaps between segments:" in as_csv.stderr and "0.666667" in as_csv.stderr


def test_the_report_shows_the_gaps_under_each_metric() -> None:
    recs, truth = hand_data()
    page = sqlmetrics.report(recs, truth, ["precision@1"], segment="country").html
    block = page[page.index('<section id="segments">') :]
    # the hand-derived gap: 2/3 from fr to de, mean pairwise difference 4/9
    shown = block[block.index("Gap between segments") :]
    shown = shown[: shown.index("</p>")]
    assert "0.6667 from <bdi>fr</bdi> to <bdi>de</bdi>" in shown, shown
    assert "mean difference between segments 0.4444" in shown, shown


def test_a_null_segment_is_a_segment_and_prints_as_null() -> None:
    from sqlmetrics.cli.output import gaps_text

    recs, truth = hand_data()
    # de's one user (the highest, 1.0) without a segment: NULL is a segment of its own
    recs.loc[recs["country"] == "de", "country"] = None
    truth.loc[truth["country"] == "de", "country"] = None
    result = sqlmetrics.evaluate(recs, truth, ["precision@1"], segment="country")
    row = sqlmetrics.read_gaps(result).iloc[0]
    assert row["segments"] == 3 and row["range"] == pytest.approx(2 / 3)
    assert pd.isna(row["highest"]) and row["lowest"] == "fr"
    assert "fr    NULL" in gaps_text(result)


def test_gaps_against_a_baseline_are_the_paired_replicates() -> None:
    """Each model's gap minus the baseline's, per bootstrap replicate (the same draws for the
    same users): numpy's percentile interval of those differences and twice the smaller count
    on either side of zero, plus one, over the replicates plus one, from the bootstrap computed
    here."""
    recs, truth = random_data(6)
    options: dict[str, Any] = {"ci": 0.9, "ci_method": "bootstrap", "replicates": 200}
    result = sqlmetrics.evaluate(
        recs, truth, ["ndcg@5"], group_by="model", segment="country", baseline="b", **options
    )
    gaps = sqlmetrics.read_gaps(result).set_index("model")
    per_user = sqlmetrics.evaluate(
        recs, truth, ["ndcg@5"], group_by=["model", "country"], per_user=True
    )
    tables = replicate_means(per_user, "ndcg@5", 200)
    ranges = {model: values.max(axis=1) - values.min(axis=1) for model, values in tables.items()}
    shifts = ranges["a"] - ranges["b"]
    low, high = np.quantile(shifts, [0.05, 0.95])
    below, above = int(np.sum(shifts <= 0)), int(np.sum(shifts >= 0))
    p = min(1.0, 2 * (1 + min(below, above)) / (1 + len(shifts)))  # never 0
    row = gaps.loc["a"]
    assert row["range_difference"] == pytest.approx(gaps.loc["a", "range"] - gaps.loc["b", "range"])
    assert (row["range_difference_lo"], row["range_difference_hi"]) == pytest.approx((low, high))
    assert row["range_p"] == pytest.approx(p)
    assert math.isnan(gaps.loc["b", "range_difference"]) and math.isnan(gaps.loc["b", "range_p"])


def test_a_baseline_with_segments_but_no_model_column_is_refused() -> None:
    recs, truth = hand_data()
    with pytest.raises(SqlmetricsError, match="names a model, a value of the first group_by"):
        sqlmetrics.evaluate(recs, truth, ["precision@1"], segment="country", baseline="se")
