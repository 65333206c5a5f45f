"""The command line of issue 19: intervals in the table, compare's table, and the gates of a
scheduled job (--fail-if, compare --against --fail-if-worse) with their exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import sqlmetrics
from tests.cli_runner import cli
from tests.conftest import EXAMPLES

RECS = str(EXAMPLES / "recommendations.parquet")
TRUTH = str(EXAMPLES / "interactions.parquet")


def test_the_table_shows_each_interval_beside_its_value_and_csv_keeps_the_numbers() -> None:
    api = sqlmetrics.evaluate(RECS, TRUTH, ["ndcg@10"], group_by="model", ci=0.95)
    run = cli("evaluate", RECS, TRUTH, "-m", "ndcg@10", "--group-by", "model", "--ci", "0.95", "-q")
    assert run.returncode == 0, run.stderr
    for _, row in api.iterrows():
        shown = f"{row['ndcg@10']:.4f} [{row['ndcg@10_lo']:.4f}, {row['ndcg@10_hi']:.4f}]"
        assert shown in run.stdout
    assert "95% Student's t-interval" in run.stdout
    csv = cli(
        "evaluate",
        RECS,
        TRUTH,
        "-m",
        "ndcg@10",
        "--group-by",
        "model",
        "--ci",
        "0.95",
        "--format",
        "csv",
        "-q",
    )
    import io

    frame = pd.read_csv(io.StringIO(csv.stdout))
    assert list(frame.columns) == ["model", "users", "ndcg@10", "ndcg@10_lo", "ndcg@10_hi"]
    assert frame["ndcg@10_lo"].to_numpy() == pytest.approx(api["ndcg@10_lo"].to_numpy(), abs=1e-15)


@pytest.mark.parametrize(
    ("gate", "code", "failed"),
    [
        ("ndcg@10 < 0.30", 1, ["model=popularity"]),
        ("ndcg@10 < 0.01", 0, []),
        ("ndcg@10_lo <= 0.3", 1, ["model=popularity", "model=two_tower"]),
    ],
)
def test_fail_if_exits_1_with_one_line_per_failed_gate(
    gate: str, code: int, failed: list[str]
) -> None:
    run = cli(
        "evaluate",
        RECS,
        TRUTH,
        "-m",
        "ndcg@10",
        "--group-by",
        "model",
        "--ci",
        "0.95",
        "--fail-if",
        gate,
        "-q",
    )
    assert run.returncode == code, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.startswith("gate failed")]
    assert len(lines) == len(failed)
    for line, where in zip(lines, failed, strict=True):
        assert line.startswith(f"gate failed: {gate} ({where}: ")


@pytest.mark.parametrize(
    ("gate", "message"),
    [
        ("ndcg@10 is low", "write a metric, a comparison and a number"),
        ("ndcg@5 < 1", "not a column"),
    ],
)
def test_a_bad_gate_is_refused(gate: str, message: str) -> None:
    run = cli("evaluate", RECS, TRUTH, "-m", "ndcg@10", "--fail-if", gate, "--group-by", "model")
    assert run.returncode == 2 and message in run.stderr


def test_compare_prints_the_baseline_and_marks_significant_differences() -> None:
    metrics = ["ndcg@10", "mrr@10"]
    api = sqlmetrics.compare(RECS, TRUTH, metrics, baseline="popularity")
    run = cli("compare", RECS, TRUTH, "-m", ",".join(metrics), "--baseline", "popularity", "-q")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[1].split()[0] == "popularity" and lines[2].split()[0] == "two_tower"
    for _, row in api.iterrows():
        assert f"{row['value']:.4f} {row['difference']:+.4f}" in lines[2]
    assert lines[2].count(" *") == 2
    assert "Holm-Bonferroni over 2 comparisons" in run.stdout
    # the baseline is worse than two_tower: --fail-if-worse passes; reversed, it fails
    worse = cli(
        "compare", RECS, TRUTH, "-m", "ndcg@10", "--baseline", "two_tower", "--fail-if-worse", "-q"
    )
    assert worse.returncode == 1
    assert worse.stderr.startswith("worse than two_tower: popularity ndcg@10 0.0427678")


def test_compare_against_an_earlier_result_fails_when_significantly_worse(tmp_path: Path) -> None:
    stored = tmp_path / "previous.json"
    first = cli(
        "evaluate",
        RECS,
        TRUTH,
        "-m",
        "ndcg@10,mrr@10",
        "--group-by",
        "model",
        "--ci",
        "0.95",
        "-q",
        "-o",
        str(stored),
    )
    assert first.returncode == 0, first.stderr
    document = json.loads(stored.read_text())
    assert document["options"]["metrics"] == ["ndcg@10", "mrr@10"]
    assert {row["metric"] for row in document["moments"]} == {"ndcg@10", "mrr@10"}
    same = cli("compare", RECS, TRUTH, "--against", str(stored), "--fail-if-worse", "-q")
    assert same.returncode == 0, same.stderr
    # today's two_tower is yesterday's popularity: significantly worse
    recs = pd.read_parquet(RECS)
    today = recs[recs["model"] == "popularity"].assign(model="two_tower")
    today_path = tmp_path / "today.parquet"
    today.to_parquet(today_path)
    worse = cli("compare", str(today_path), TRUTH, "--against", str(stored), "--fail-if-worse")
    assert worse.returncode == 1, worse.stderr
    failed = [line for line in worse.stderr.splitlines() if line.startswith("worse than")]
    assert len(failed) == 2 and all("model=two_tower" in line for line in failed)
    other = cli("compare", RECS, TRUTH, "--against", str(stored), "--ties", "average")
    assert other.returncode == 2 and "evaluated with other options (ties 'id' there" in other.stderr


def test_compare_needs_a_baseline_or_an_earlier_result() -> None:
    run = cli("compare", RECS, TRUTH, "-m", "ndcg@10")
    assert run.returncode == 2 and "--baseline MODEL" in run.stderr
