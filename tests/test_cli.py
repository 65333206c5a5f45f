"""The command line: same numbers as the API, one-line errors, nothing half-written."""

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
METRICS = ["ndcg@10", "map@10", "mrr@10", "precision@5", "recall@20", "hit_rate@10", "f1@10"]


def test_json_output_equals_the_api_exactly() -> None:
    run = cli(
        "evaluate",
        RECS,
        TRUTH,
        "-m",
        ",".join(METRICS),
        "--group-by",
        "model",
        "--format",
        "json",
        "--quiet",
    )
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)
    frame = sqlmetrics.evaluate(RECS, TRUTH, METRICS, group_by=["model"])
    assert [list(row) for row in rows] == [list(frame.columns)] * len(frame)
    assert rows == frame.to_dict(orient="records")
    assert run.stderr == ""


def test_csv_output_round_trips_every_digit(tmp_path: Path) -> None:
    out = tmp_path / "metrics.csv"
    run = cli(
        "evaluate",
        RECS,
        TRUTH,
        *[f"-m{m}" for m in METRICS],
        "--group-by",
        "model",
        "--format",
        "csv",
        "--output",
        str(out),
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    assert (
        "diagnostics (duckdb SQL):" in run.stderr
    )  # diagnostics go to stderr, the numbers to the file
    written = pd.read_csv(out)
    frame = sqlmetrics.evaluate(RECS, TRUTH, METRICS, group_by=["model"])
    pd.testing.assert_frame_equal(written, frame, check_exact=True)


def test_table_output_and_per_user() -> None:
    run = cli("evaluate", RECS, TRUTH, "-m", "ndcg@10", "--group-by", "model", "--per-user", "-q")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].split() == ["model", "user_id", "ndcg@10"]
    assert len(lines) == 1 + 2 * 458


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "ndgc@10"], "sqlmetrics: error: unknown metric 'ndgc@10'. Did you mean 'ndcg'?"),
        (["-m", "ndcg@0"], "sqlmetrics: error: cutoff in 'ndcg@0' must be a whole number"),
        (
            ["-m", "ndcg@10", "--user-column", "customer"],
            "sqlmetrics: error: recommendations has no column 'customer' (the user column).",
        ),
        ([], "sqlmetrics: error: no metrics requested"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    run = cli("evaluate", RECS, TRUTH, "--group-by", "model", *args, "--output", str(out))
    assert run.returncode == 2
    assert run.stderr.startswith(message), run.stderr
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_missing_file_is_one_line() -> None:
    run = cli("evaluate", "nope.parquet", TRUTH, "-m", "ndcg@10")
    assert run.returncode == 2
    assert run.stderr == "sqlmetrics: error: recommendations: no such file 'nope.parquet'\n"


def test_sql_subcommand_prints_a_runnable_query() -> None:
    run = cli(
        "sql",
        "-m",
        "ndcg@10",
        "-m",
        "map@10",
        "--recommendations",
        "analytics.recs",
        "--interactions",
        "analytics.truth",
    )
    assert run.returncode == 0, run.stderr
    assert "FROM analytics.recs" in run.stdout and run.stdout.rstrip().endswith(";")
    assert 'AS "ndcg@10"' in run.stdout and 'AS "map@10"' in run.stdout


def test_sql_subcommand_refuses_injected_table_names() -> None:
    run = cli("sql", "-m", "ndcg@10", "--recommendations", "recs; DROP TABLE users")
    assert run.returncode == 2
    assert "is not a table name in duckdb" in run.stderr


def test_metrics_lists_every_metric_file() -> None:
    run = cli("metrics", "--format", "json")
    names = [row["name"] for row in json.loads(run.stdout)]
    files = sorted(path.stem for path in (EXAMPLES.parent / "sql").glob("*.sql"))
    assert names == files


def test_example_runs_the_bundled_data() -> None:
    run = cli("example", "--format", "json", "-q")
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)
    assert [row["model"] for row in rows] == ["popularity", "two_tower"]
    assert rows[1]["ndcg@10"] > rows[0]["ndcg@10"]


def test_the_metrics_index_table_is_the_generated_one() -> None:
    """The site's index of the metrics ends with the table `metrics --format markdown` prints."""
    index = (EXAMPLES.parent / "docs" / "reference" / "metrics" / "index.md").read_text()
    assert index.endswith("\n" + cli("metrics", "--format", "markdown").stdout)


def test_readme_example_output_is_what_make_example_prints() -> None:
    readme = (EXAMPLES.parent / "README.md").read_text()
    run = cli("evaluate", RECS, TRUTH, "-m", ",".join(METRICS), "--group-by", "model", "-q")
    assert run.stdout.strip() in readme


def test_rating_column_flag_and_score_threshold(tmp_path: Path) -> None:
    recs = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [1, 2, 3], "score": [0.9, 0.2, 0.6]})
    truth = pd.DataFrame({"user_id": [1, 2], "item_id": [1, 3], "stars": [1.0, 0.0]})
    recs.to_parquet(tmp_path / "recs.parquet")
    truth.to_parquet(tmp_path / "truth.parquet")
    paths = [str(tmp_path / "recs.parquet"), str(tmp_path / "truth.parquet")]
    run = cli(
        "evaluate", *paths, "-m", "mae,auc,accuracy@0.7", "--rating-column", "stars", "-q",
        "--format", "json",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    # mae: |0.9 - 1| and |0.6 - 0| -> 0.35; auc: positives 0.9, 0.6 against 0.2 -> 1;
    # accuracy@0.7: 0.9 relevant and >= 0.7 (right), 0.2 neither (right), 0.6 relevant (wrong)
    [row] = json.loads(run.stdout)
    assert row["users"] == 2 and row["auc"] == 1.0
    assert abs(row["mae"] - 0.35) < 1e-12 and abs(row["accuracy@0.7"] - 2 / 3) < 1e-12
    missing = cli("evaluate", *paths, "-m", "rmse", "-q")
    assert missing.returncode == 2
    assert "interactions has no column 'rating' (the rating column)" in missing.stderr
