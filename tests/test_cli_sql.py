"""``sqlmetrics sql`` for warehouses: --dialect, and --all --output-dir (one file per metric)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import sqlglot

import sqlmetrics
from sqlmetrics.catalog.metrics import metrics
from sqlmetrics.compose.lists import reads_baseline


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sqlmetrics.cli", *args], capture_output=True, text=True, check=False
    )


def test_sql_for_snowflake_is_to_sql_with_the_same_arguments() -> None:
    run = cli(
        "sql",
        "-m",
        "ndcg@10",
        "-m",
        "recall@20",
        "--dialect",
        "snowflake",
        "--recommendations",
        "DB.SCHEMA.RECS",
        "--interactions",
        "DB.SCHEMA.TRUTH",
        "--group-by",
        "MODEL",
        "--per-user",
    )
    assert run.returncode == 0, run.stderr
    expected = sqlmetrics.to_sql(
        ["ndcg@10", "recall@20"],
        "DB.SCHEMA.RECS",
        "DB.SCHEMA.TRUTH",
        group_by=["MODEL"],
        per_user=True,
        dialect="snowflake",
    )
    assert run.stdout == expected + ";\n"
    # SCHEMA is a reserved word in Snowflake: quoted, upper case as Snowflake folds it.
    assert 'FROM DB."SCHEMA".RECS' in run.stdout


def test_all_with_output_dir_writes_one_scheduled_query_per_metric(tmp_path: Path) -> None:
    out = tmp_path / "sql_bigquery"
    run = cli(
        "sql",
        "--all",
        "--dialect",
        "bigquery",
        "--output-dir",
        str(out),
        "--recommendations",
        "project.dataset.recs",
        "--interactions",
        "project.dataset.truth",
        "--items",  # ild and serendipity need these two
        "project.dataset.items",
        "--history",
        "project.dataset.history",
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    # the overlap metrics need --baseline (and --group-by): left out without it
    compared = {name for name, metric in metrics().items() if reads_baseline(metric)}
    assert sorted(p.stem for p in out.glob("*.sql")) == sorted(set(metrics()) - compared)
    for name, metric in metrics().items():
        if name in compared:
            continue
        text = (out / f"{name}.sql").read_text(encoding="utf-8")
        assert text.endswith(";\n")
        assert len(sqlglot.parse(text, read="bigquery")) == 1
        label = f"{name}@10" if metric.takes_cutoff else name
        assert f"AS `{label}`" in text, name


def test_all_takes_cutoffs_and_prints_one_query_without_output_dir() -> None:
    run = cli(
        "sql",
        "--all",
        "--cutoff",
        "5",
        "--cutoff",
        "20",
        "--dialect",
        "duckdb",
        "--items",
        "items",
        "--history",
        "history",
    )
    assert run.returncode == 0, run.stderr
    for name, metric in metrics().items():
        labels = [f"{name}@5", f"{name}@20"] if metric.takes_cutoff else [name]
        for label in labels:
            # the overlap metrics need --baseline: left out without it
            assert (f'AS "{label}"' in run.stdout) != reads_baseline(metric), label
    # The DuckDB query runs as printed.
    connection = duckdb.connect()
    connection.execute(
        "CREATE TABLE recommendations AS SELECT 1 AS user_id, 1 AS item_id, 0.5 AS score"
    )
    connection.execute(  # the rating metrics read a rating column, the intent-aware an intent
        "CREATE TABLE interactions AS SELECT 1 AS user_id, 1 AS item_id, 1 AS relevance,"
        " 4.0 AS rating, 's1' AS intent"
    )
    connection.execute("CREATE TABLE items AS SELECT 1 AS item_id, 'a' AS category")
    connection.execute("CREATE TABLE history AS SELECT 1 AS user_id, 1 AS item_id")
    row = connection.execute(run.stdout.rstrip().rstrip(";")).fetchone()
    assert row is not None and row[0] == 1


def test_all_with_ties_average_leaves_out_the_metrics_that_refuse_it(tmp_path: Path) -> None:
    run = cli("sql", "--all", "--ties", "average", "--output-dir", str(tmp_path))
    assert run.returncode == 0, run.stderr
    written = {p.stem for p in tmp_path.glob("*.sql")}
    assert written == {name for name, m in metrics().items() if m.ties_average}


def test_sql_argument_errors_are_one_line_and_write_nothing(tmp_path: Path) -> None:
    cases = [
        (["--all", "-m", "ndcg@10"], "either --all or -m"),
        (["-m", "ndcg@10", "--cutoff", "5"], "--cutoff goes with --all"),
        (["--all", "--output", "x.sql", "--output-dir", str(tmp_path)], "either --output"),
        (["-m", "ndcg@10", "--dialect", "snowflak"], "unknown dialect 'snowflak'"),
        (["--checks", "-m", "ndcg@10", "--output-dir", str(tmp_path)], "--checks writes one query"),
        (["--checks", "-m", "ndcg@10", "--per-user"], "per_user does not apply"),
        (["--all", "--recommendations", "x; DROP TABLE y", "--output-dir", str(tmp_path)], ""),
    ]
    for args, message in cases:
        run = cli("sql", *args)
        assert run.returncode == 2, (args, run.stderr)
        assert run.stderr.startswith("sqlmetrics: error: ") and message in run.stderr, run.stderr
        assert run.stderr.count("\n") == 1, run.stderr
    assert not list(tmp_path.iterdir())


def test_checks_print_a_query_a_scheduled_job_can_gate_on(tmp_path: Path) -> None:
    run = cli("sql", "--checks", "-m", "ndcg_exp@3", "--group-by", "ds", "--dialect", "postgres")
    assert run.returncode == 0, run.stderr
    expected = sqlmetrics.to_sql(["ndcg_exp@3"], group_by=["ds"], dialect="postgres", checks=True)
    assert run.stdout == expected + ";\n"
    connection = duckdb.connect()
    connection.execute(
        "CREATE TABLE recommendations AS SELECT * FROM (VALUES "
        "(1, 1, 10, 0.9), (1, 1, 11, 0.8), (1, 2, 20, 0.5), (2, 1, 10, 0.4)) "
        "AS t(ds, user_id, item_id, score)"
    )
    connection.execute(
        "CREATE TABLE interactions AS SELECT * FROM (VALUES "
        "(1, 1, 10, 1), (1, 2, 20, NULL), (2, 1, 10, 1001)) AS t(ds, user_id, item_id, relevance)"
    )
    query = sqlmetrics.to_sql(["ndcg_exp@3"], group_by=["ds"], checks=True)
    rows = connection.sql(query).fetchall()
    columns = [column for column, *_ in connection.sql(query).description]
    by_ds = {row[0]: dict(zip(columns, row, strict=True)) for row in rows}
    # ds 1: one NULL relevance; ds 2: relevance 1001, refused with an exponential gain.
    assert (by_ds[1]["bad_relevance"], by_ds[1]["refused_rows"]) == (1, 1)
    assert (by_ds[2]["relevance_over_1000"], by_ds[2]["refused_rows"]) == (1, 1)
    linear = connection.sql(sqlmetrics.to_sql(["ndcg@3"], group_by=["ds"], checks=True))
    assert [row[-1] for row in linear.fetchall()] == [1, 0]  # a linear gain takes 1001


def test_baseline_gives_the_overlap_metrics_their_baseline_s_lists() -> None:
    """--baseline with an overlap metric: evaluate's query, the baseline's lists read from
    ranked; with no overlap metric, compare's query of the models against it."""
    run = cli("sql", "-m", "rbo@5", "--group-by", "model", "--baseline", "pop")
    assert run.returncode == 0, run.stderr
    assert "baseline_lists AS (" in run.stdout and "'pop'" in run.stdout
    compared = cli("sql", "-m", "ndcg@5", "--group-by", "model", "--baseline", "pop")
    assert compared.returncode == 0, compared.stderr
    assert "stats_pairs" in compared.stdout
    refused = cli("sql", "-m", "rbo@5")
    assert refused.returncode != 0 and "baseline" in refused.stderr


def test_the_weight_column_flag_reaches_sql_and_dbt_models(tmp_path: Path) -> None:
    """--weight-column is to_sql's columns={"weight": ...} for sql and dbt models alike."""
    run = cli("sql", "-m", "auc", "-m", "ne", "--weight-column", "w", "--dialect", "postgres")
    assert run.returncode == 0, run.stderr
    expected = sqlmetrics.to_sql(["auc", "ne"], columns={"weight": "w"}, dialect="postgres")
    assert run.stdout == expected + ";\n"
    assert "w AS weight" in expected
    models = cli(
        "dbt", "models", str(tmp_path), "--name", "clicks", "--recommendations", "recs",
        "--interactions", "inter", "-m", "auc", "--weight-column", "w",
    )  # fmt: skip
    assert models.returncode == 0, models.stderr
    assert "w AS weight" in (tmp_path / "clicks.sql").read_text()
    refused = cli("sql", "-m", "ndcg@10", "--weight-column", "w")
    assert refused.returncode == 2 and "ndcg@10 read no weight" in refused.stderr
