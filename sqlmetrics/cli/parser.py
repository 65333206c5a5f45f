"""The command line: every command, its options and their help (``build_parser``)."""

from __future__ import annotations

import argparse

from sqlmetrics.cli.arguments import add_flags
from sqlmetrics.cli.off_policy import add_off_policy
from sqlmetrics.compose.inputs import COLUMN_ROLES
from sqlmetrics.options import (
    CompareOptions,
    Definitions,
    EvaluateOptions,
    Grouped,
    Intervals,
    Running,
    Sources,
    declared,
)
from sqlmetrics.reporting import ReportOptions


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-m",
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help="a metric like ndcg@10 (ndcg@1:100: every cutoff from 1 to 100); repeat or separate "
        "with commas",
    )
    parser.add_argument(
        "--group-by",
        action="append",
        default=[],
        metavar="COLUMN",
        help="evaluate each value of this column separately; repeatable",
    )
    parser.add_argument("--per-user", action="store_true", help="one row per (group, user)")
    for role in COLUMN_ROLES:
        parser.add_argument(
            f"--{role.replace('_', '-')}-column",
            metavar="NAME",
            help=_COLUMN_HELP.get(role, f"name of the {role} column"),
        )
    parser.add_argument(
        "--no-relevance",
        action="store_true",
        help="every interaction has relevance 1, whatever the columns",
    )
    add_flags(parser, Definitions)
    parser.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")


_COLUMN_HELP = {
    "item_group": "name of the items table's item group column (provider, category: the "
    "exposure table's groups, with --exposure-k)",
    "weight": "name of the recommendations' weight column (each scored row counts its weight "
    "in the metrics over scored rows: auc, gauc, logloss, ne, ...)",
}


def _add_sources(parser: argparse.ArgumentParser) -> None:
    """The inputs and where they are read: evaluate's and report's."""
    parser.add_argument(
        "recommendations",
        help="Parquet/CSV file, glob or folder; a table with --connection/--spark",
    )
    parser.add_argument(
        "interactions", help="Parquet/CSV file, glob or folder; a table with --connection/--spark"
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--connection",
        metavar="URL",
        help="run in this database: a SQLAlchemy URL (postgresql+psycopg://user@host/db, "
        "snowflake://..., bigquery://project/dataset, databricks://...); credentials from the "
        "URL or the driver's environment",
    )
    where.add_argument(
        "--spark",
        nargs="?",
        const="local[*]",
        metavar="MASTER",
        help="run on Spark (a new session on MASTER, default local[*]); inputs are table names",
    )
    parser.add_argument(
        "--dialect", help="with --connection: the sqlglot dialect, when sqlmetrics cannot tell"
    )
    parser.add_argument(
        "--items",
        metavar="FILE",
        help="one row per item (item column, category for ild): the catalogue of coverage, gini",
    )
    parser.add_argument(
        "--history",
        metavar="FILE",
        help="what each user consumed before (serendipity; popularity counts it)",
    )
    add_flags(parser, Sources)


def _add_intervals(parser: argparse.ArgumentParser, declaration: type) -> None:
    """--ci at the command's default (evaluate's none, compare's 0.95), and how to resample."""
    (default,) = [item.option.default for item in declared(declaration) if item.name == "ci"]
    parser.add_argument(
        "--ci",
        type=float,
        default=default,
        metavar="LEVEL",
        help="confidence level of the intervals, like 0.95"
        + ("" if default is None else f" (default {default})"),
    )
    add_flags(parser, Intervals)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sqlmetrics",
        description="Recommender and ranking metrics as SQL, on DuckDB or in your warehouse.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    _add_evaluate(commands)
    _add_compare(commands)
    _add_report(commands)
    _add_sql(commands)
    _add_dbt(commands)
    add_off_policy(commands)
    _add_listings(commands)
    return parser


def _add_sampled(evaluate: argparse.ArgumentParser) -> None:
    """evaluate's sampled candidates (docs/how-to/sampled-metrics.md)."""
    sampled = evaluate.add_argument_group(
        "sampled candidates (docs/how-to/sampled-metrics.md)",
        "each user's list is their held-out positive(s) among M negatives sampled from N items: "
        "the metrics are the sampled ones, and a table gives corrected full-catalogue estimates",
    )
    sampled.add_argument(
        "--sampled-items", type=int, metavar="N", help="the catalogue's number of items"
    )
    sampled.add_argument(
        "--sampled-negatives", type=int, metavar="M", help="the sampled negatives in each list"
    )
    sampled.add_argument(
        "--sampled-gamma",
        type=float,
        metavar="GAMMA",
        help="the bias-variance correction's weight on the variance, in [0, 1] (default 0.01)",
    )


def _add_trec(evaluate: argparse.ArgumentParser) -> None:
    """evaluate's TREC files in and trec_eval's report out."""
    trec = evaluate.add_argument_group("TREC files (docs/profiles.md, trec_eval)")
    trec.add_argument(
        "--input-format",
        choices=("auto", "trec"),
        default="auto",
        help="trec: the inputs are a TREC run (qid Q0 docno rank score tag) and qrels "
        "(qid iter docno rel), whitespace-separated, .gz too; never guessed from the content",
    )
    trec.add_argument(
        "--trec-intents",
        action="store_true",
        help="the qrels are TREC diversity qrels (qid intent docno rel, ndeval's): the second "
        "field is the intent the line judges, not trec_eval's ignored iter (alpha_ndcg, err_ia...)",
    )
    trec.add_argument(
        "--trec-complete",
        action="store_true",
        help="trec_eval -c: average over every query of the qrels (no run: 0); --format trec",
    )
    trec.add_argument(
        "--trec-max",
        type=int,
        metavar="N",
        help="trec_eval -M: only the first N docs of each query of the run",
    )
    trec.add_argument(
        "--trec-num-docs",
        type=int,
        metavar="N",
        help="trec_eval -N: the documents in the collection, which utility's fourth "
        "coefficient weighs (non-relevant ones not retrieved; default 0); --format trec",
    )
    trec.add_argument(
        "--trec-level",
        type=int,
        metavar="N",
        help="trec_eval -l: relevant means rel >= N (default 1); --format trec",
    )
    trec.add_argument(
        "--trec-version",
        type=int,
        choices=(10, 9),
        default=None,
        metavar="{10,9}",
        help="--format trec: trec_eval 10.0's report (the default) or 9.0.8's (its recall "
        "cutoffs of iprec_at_recall and 11pt_avg, scores as 32-bit floats)",
    )


def _add_evaluate(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``sqlmetrics evaluate``: the metrics, from files or a connection, and trec_eval's report."""
    evaluate = commands.add_parser(
        "evaluate", help="compute metrics on DuckDB, or in your warehouse or Spark"
    )
    _add_sources(evaluate)
    _add_common(evaluate)
    _add_intervals(evaluate, EvaluateOptions)
    add_flags(evaluate, EvaluateOptions, leave=(Running, Intervals))
    evaluate.add_argument(
        "--segment",
        metavar="COLUMN",
        help="each metric per value of this column (each user's, like country), and the gaps "
        "between the segments (range, mean absolute difference; with --ci and --ci-method "
        "bootstrap their intervals)",
    )
    evaluate.add_argument(
        "--fail-if",
        action="append",
        default=[],
        metavar="GATE",
        help='exit 1 when a group\'s value meets this, like "ndcg@10 < 0.30" (a metric or its '
        "_lo/_hi column, then <, <=, > or >=, then a number); repeatable",
    )
    evaluate.add_argument(
        "--format",
        choices=("table", "csv", "json", "trec"),
        help="default: json for an --output ending in .json, else table (with --ci, json "
        "also holds the means, variances and counts that compare --against reads); trec: "
        "trec_eval's lines (measure, qid or all, value), with --input-format trec",
    )
    _add_sampled(evaluate)
    _add_trec(evaluate)
    evaluate.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bar and no diagnostics on stderr"
    )


def _add_compare(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``sqlmetrics compare``: models against a baseline, or against an earlier result."""
    compare = commands.add_parser(
        "compare",
        help="compare models with a baseline (paired tests), or with an earlier result",
    )
    _add_sources(compare)
    _add_common(compare)
    _add_intervals(compare, CompareOptions)
    compare.add_argument(
        "--baseline",
        metavar="MODEL",
        help="the model (a value of the first --group-by column, default model) the others are "
        "compared with, user by user",
    )
    compare.add_argument(
        "--against",
        metavar="FILE",
        help="an earlier result (evaluate --ci ... --output FILE.json): each group and metric "
        "against it by Welch's test (its metrics and --group-by by default)",
    )
    add_flags(compare, CompareOptions, leave=(Running, Intervals))
    compare.add_argument(
        "--fail-if-worse",
        action="store_true",
        help="exit 1 when a model (--baseline) or a group (--against) is significantly worse "
        "(on a metric without a better direction, such as num_ret: significantly changed)",
    )
    compare.add_argument("--format", choices=("table", "csv", "json"), default="table")
    compare.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bar and no diagnostics on stderr"
    )


def _add_report(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``sqlmetrics report``: the HTML page."""
    report = commands.add_parser(
        "report",
        help="one self-contained HTML page: curves, segments, diagnostics (needs matplotlib)",
    )
    _add_sources(report)
    _add_common(report)
    add_flags(report, ReportOptions, leave=(Grouped, Definitions, Sources))
    report.add_argument(
        "--force",
        action="store_true",
        help="overwrite the --output file even if it is not a page sqlmetrics wrote",
    )
    report.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def _add_sql(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``sqlmetrics sql``: the SQL for a warehouse."""
    sql = commands.add_parser("sql", help="print the SQL for your warehouse")
    sql.add_argument("--recommendations", default="recommendations", metavar="TABLE")
    sql.add_argument("--interactions", default="interactions", metavar="TABLE")
    sql.add_argument(
        "--items",
        metavar="TABLE",
        help="one row per item (item column, category for ild): the catalogue of coverage, gini",
    )
    sql.add_argument(
        "--history",
        metavar="TABLE",
        help="what each user consumed before (serendipity; popularity counts it)",
    )
    sql.add_argument(
        "--baseline",
        metavar="MODEL",
        help="the model (a value of the first --group-by column) the overlap metrics "
        "(intersection, rbo, unexpectedness) compare the others' lists with; without one of "
        "them, compare's query of the models against it",
    )
    sql.add_argument(
        "--interactions-group-by",
        action="append",
        metavar="COLUMN",
        help="the --group-by columns the interactions table has too (default: all of them)",
    )
    sql.add_argument(
        "--dialect",
        default="duckdb",
        help="target dialect: duckdb, postgres, snowflake, bigquery, databricks, spark, trino, "
        "athena, presto, redshift, clickhouse, mysql, sqlite, tsql, oracle",
    )
    sql.add_argument(
        "--all",
        action="store_true",
        dest="all_metrics",
        help="every metric, at each --cutoff (instead of -m)",
    )
    sql.add_argument(
        "--cutoff",
        action="append",
        type=int,
        metavar="K",
        help="with --all: the cutoff k of the metrics that take one (default 10); repeatable",
    )
    sql.add_argument(
        "--checks",
        action="store_true",
        help="print instead the input checks and diagnostics evaluate runs for these metrics: "
        "a row per group of counts and refused_rows (0 when the inputs are fit to evaluate)",
    )
    sql.add_argument(
        "--output-dir",
        metavar="DIR",
        help="write one query per metric, DIR/<metric>.sql, instead of one query",
    )
    sql.add_argument(
        "--force",
        action="store_true",
        help="with --output-dir: overwrite DIR/<metric>.sql files sqlmetrics did not write",
    )
    _add_common(sql)


def _add_dbt(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``sqlmetrics dbt export`` and ``sqlmetrics dbt models``."""
    dbt = commands.add_parser("dbt", help="a dbt package, or dbt models, for scheduled tables")
    dbt_commands = dbt.add_subparsers(dest="dbt_command", required=True)
    export = dbt_commands.add_parser(
        "export", help="write the sqlmetrics dbt package (one macro per metric, every adapter)"
    )
    export.add_argument("folder", help="where to write it, like ./dbt_packages/sqlmetrics")
    models = dbt_commands.add_parser("models", help="write a plain SQL dbt model file")
    models.add_argument("folder", help="the dbt models folder to write NAME.sql into")
    models.add_argument("--name", required=True, help="the model's name (its file name)")
    models.add_argument("--recommendations", required=True, metavar="MODEL", help="ref() name")
    models.add_argument("--interactions", required=True, metavar="MODEL", help="ref() name")
    models.add_argument(
        "--items", metavar="MODEL", help="ref() name of the item table (ild; coverage, gini)"
    )
    models.add_argument(
        "--history", metavar="MODEL", help="ref() of what users consumed (serendipity, popularity)"
    )
    models.add_argument(
        "--baseline",
        metavar="NAME",
        help="the model (a value of the first --group-by column) the overlap metrics compare "
        "the others' lists with",
    )
    models.add_argument(
        "--interactions-group-by",
        action="append",
        metavar="COLUMN",
        help="the --group-by columns the interactions have too (default: all of them)",
    )
    models.add_argument("--dialect", default="duckdb", help="your warehouse's SQL dialect")
    models.add_argument("--materialized", choices=("table", "view", "incremental"), default="table")
    models.add_argument(
        "--force",
        action="store_true",
        help="overwrite NAME.sql even if sqlmetrics did not write it",
    )
    _add_common(models)


def _add_listings(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``sqlmetrics metrics``, ``profiles`` and ``example``."""
    listing = commands.add_parser("metrics", help="every metric with its definition")
    listing.add_argument("--format", choices=("table", "json", "markdown"), default="table")

    profiles = commands.add_parser("profiles", help="what each definition profile changes")
    profiles.add_argument("--format", choices=("table", "markdown", "json"), default="table")

    example = commands.add_parser("example", help="evaluate the bundled example data")
    example.add_argument("--format", choices=("table", "csv", "json"), default="table")
    example.add_argument("-q", "--quiet", action="store_true")
    example.add_argument(
        "--report",
        metavar="FILE",
        help="also write the example's HTML report here (needs matplotlib: sqlmetrics[report])",
    )
