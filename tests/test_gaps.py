"""evaluate's ``segment``: each metric per segment of users and the gaps between the segments
(range and mean absolute pairwise difference, Elliot's UserMADranking), with bootstrap
intervals. Checked against a hand-derived case, against the pairs enumerated one by one, and
against the gaps of the statistics query's replicates recomputed here with numpy."""

from __future__ import annotations

import itertools
import math

import duckdb
import numpy as np
import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics.compose.diagnostics import KIND
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.stats.gaps import range_and_mad
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


def test_bootstrap_intervals_are_the_replicates_gaps() -> None:
    """The statistics query's replicates (to_sql's SQL, run here), their gaps taken with numpy
    per model and replicate, and numpy's percentile interval: read_gaps' intervals."""
    recs, truth = random_data(3)
    metrics = ["ndcg@5", "recall@3"]
    result = sqlmetrics.evaluate(
        recs, truth, metrics, group_by="model", segment="country", ci=0.9, ci_method="bootstrap"
    )
    gaps = sqlmetrics.read_gaps(result).set_index(["model", "metric"])
    sql = sqlmetrics.to_sql(
        metrics,
        "recs",
        "truth",
        group_by=["model", "country"],
        interactions_group_by=["country"],
        columns={"relevance": None},
        ci=0.9,
        ci_method="bootstrap",
    )
    connection = duckdb.connect()
    connection.register("recs", recs)
    connection.register("truth", truth)
    rows = connection.execute(sql).df()
    replicates = rows[rows[KIND] == "replicates"]
    for i, metric in enumerate(metrics):
        for model, part in replicates.groupby("model"):
            table = part.pivot(index="replicate", columns="country", values=f"m{i}_n")
            values = table.to_numpy(dtype=float)
            ranges = values.max(axis=1) - values.min(axis=1)
            pairs = list(itertools.combinations(range(values.shape[1]), 2))
            mads = np.mean([np.abs(values[:, a] - values[:, b]) for a, b in pairs], axis=0)
            row = gaps.loc[(model, metric)]
            for name, draws in (("range", ranges), ("mad", mads)):
                low, high = np.quantile(draws, [0.05, 0.95])
                assert row[f"{name}_lo"] == pytest.approx(low), (model, metric, name)
                assert row[f"{name}_hi"] == pytest.approx(high), (model, metric, name)
            means = result[result["model"] == model][metric].to_numpy()
            assert row["range"] == pytest.approx(means.max() - means.min())


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
        ({"segment": "planet"}, "'planet' is not in recommendations"),
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
