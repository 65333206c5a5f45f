"""The ``sqlmetrics`` command: one subcommand per public function, errors as one line."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlmetrics.api import describe_metrics, to_sql
from sqlmetrics.catalog import metrics, parse_request
from sqlmetrics.cli.arguments import (
    api_options,
    column_names,
    interval_options,
    metric_list,
    requested_metrics,
)
from sqlmetrics.cli.output import number_text, render, show_diagnostics, show_notes, write
from sqlmetrics.cli.sources import clear_progress, engine_connection, engine_options, local_inputs
from sqlmetrics.cli.stored import read_stored, stored_json, stored_options
from sqlmetrics.compose import DUPLICATES, POPULATIONS, TIES
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.files import (
    check_output,
    prepare_folder,
    refuse_existing,
    write_marker,
    write_stdout,
    written_by_us,
)
from sqlmetrics.profiles import PROFILES, describe_profiles, profiles_markdown
from sqlmetrics.reporting.data import DEFAULT_K_MAX
from sqlmetrics.reporting.page import DEFAULT_SMALL_SEGMENT
from sqlmetrics.stats import CI_METHODS, TESTS, against_stored, better_is_lower

if TYPE_CHECKING:
    import pandas as pd


EXAMPLE_METRICS = [
    "ndcg@10",
    "map@10",
    "mrr@10",
    "precision@5",
    "recall@20",
    "hit_rate@10",
    "f1@10",
]


# The example's report (Makefile's `make example` writes the same page from the CLI).
EXAMPLE_REPORT_METRICS = ["ndcg@10", "map@10", "recall@20", "hit_rate@10", "gini@10", "novelty@10"]


EXAMPLE_REPORT: dict[str, Any] = {
    "group_by": ["model"],
    "segment": "country",
    "baseline": "popularity",
    "k_max": 30,
}


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
    for role in ("user", "item", "score", "rank", "relevance", "rating", "category"):
        parser.add_argument(f"--{role}-column", metavar="NAME", help=f"name of the {role} column")
    parser.add_argument(
        "--no-relevance",
        action="store_true",
        help="every interaction has relevance 1, whatever the columns",
    )
    parser.add_argument(
        "--ties",
        choices=TIES,
        default="id",
        help="how equal scores are ordered (default: id = item id descending; id_text = the "
        "id's text descending, byte order, as trec_eval)",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=0.0,
        help="relevant means relevance above this (default 0)",
    )
    parser.add_argument(
        "--population",
        choices=POPULATIONS,
        default="all",
        help="all users with a relevant interaction, or only those also recommended",
    )
    parser.add_argument(
        "--profile",
        choices=list(PROFILES),
        help="compute each metric as this library defines it (see `sqlmetrics profiles`)",
    )
    parser.add_argument(
        "--duplicates",
        choices=DUPLICATES,
        default="error",
        help="repeated (user, item) recommendations: fail, or keep the best-placed",
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")


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
        "--timeout", type=float, metavar="SECONDS", help="cancel the query after this long"
    )
    parser.add_argument(
        "--items",
        metavar="FILE",
        help="one row per item (item column, category for ild): the catalogue of coverage, gini",
    )
    parser.add_argument(
        "--history", metavar="FILE", help="what each user consumed before, for serendipity"
    )


def _add_intervals(parser: argparse.ArgumentParser, default: float | None) -> None:
    parser.add_argument(
        "--ci",
        type=float,
        default=default,
        metavar="LEVEL",
        help="confidence level of the intervals, like 0.95"
        + ("" if default is None else f" (default {default})"),
    )
    parser.add_argument(
        "--ci-method",
        choices=CI_METHODS,
        default="t",
        help="t: Student's t over the users; bootstrap: a Poisson bootstrap in SQL (default t)",
    )
    parser.add_argument(
        "--replicates",
        type=int,
        default=1000,
        help="bootstrap replicates and randomization-test flips (default 1000)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="the bootstrap's and the flips' seed (default 0)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sqlmetrics",
        description="Recommender and ranking metrics as SQL, on DuckDB or in your warehouse.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    evaluate = commands.add_parser(
        "evaluate", help="compute metrics on DuckDB, or in your warehouse or Spark"
    )
    _add_sources(evaluate)
    _add_common(evaluate)
    _add_intervals(evaluate, default=None)
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
    trec = evaluate.add_argument_group("TREC files (docs/profiles.md, trec_eval)")
    trec.add_argument(
        "--input-format",
        choices=("auto", "trec"),
        default="auto",
        help="trec: the inputs are a TREC run (qid Q0 docno rank score tag) and qrels "
        "(qid iter docno rel), whitespace-separated, .gz too; never guessed from the content",
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
        "--trec-level",
        type=int,
        metavar="N",
        help="trec_eval -l: relevant means rel >= N (default 1); --format trec",
    )
    evaluate.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bar and no diagnostics on stderr"
    )

    compare = commands.add_parser(
        "compare",
        help="compare models with a baseline (paired tests), or with an earlier result",
    )
    _add_sources(compare)
    _add_common(compare)
    _add_intervals(compare, default=0.95)
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
    compare.add_argument(
        "--test",
        choices=TESTS,
        default="t",
        help="the test whose p-values Holm's correction and the mark read (default t)",
    )
    compare.add_argument(
        "--alpha", type=float, default=0.05, help="the significance level (default 0.05)"
    )
    compare.add_argument(
        "--fail-if-worse",
        action="store_true",
        help="exit 1 when a model (--baseline) or a group (--against) is significantly worse",
    )
    compare.add_argument("--format", choices=("table", "csv", "json"), default="table")
    compare.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bar and no diagnostics on stderr"
    )

    report = commands.add_parser(
        "report",
        help="one self-contained HTML page: curves, segments, diagnostics (needs matplotlib)",
    )
    _add_sources(report)
    _add_common(report)
    report.add_argument(
        "--segment", metavar="COLUMN", help="break each metric down by this column (like country)"
    )
    report.add_argument(
        "--baseline", metavar="MODEL", help="compare every model with this one (a --group-by value)"
    )
    report.add_argument(
        "--k-max",
        type=int,
        default=DEFAULT_K_MAX,
        metavar="K",
        help=f"the curves run k = 1..K (default {DEFAULT_K_MAX}); -m ndcg is summarised at K",
    )
    report.add_argument(
        "--small-segment",
        type=int,
        default=DEFAULT_SMALL_SEGMENT,
        metavar="USERS",
        help=f"segments with fewer users are marked small (default {DEFAULT_SMALL_SEGMENT})",
    )
    report.add_argument(
        "--force",
        action="store_true",
        help="overwrite the --output file even if it is not a page sqlmetrics wrote",
    )
    report.add_argument("-q", "--quiet", action="store_true", help="no progress bar")

    sql = commands.add_parser("sql", help="print the SQL for your warehouse")
    sql.add_argument("--recommendations", default="recommendations", metavar="TABLE")
    sql.add_argument("--interactions", default="interactions", metavar="TABLE")
    sql.add_argument(
        "--items",
        metavar="TABLE",
        help="one row per item (item column, category for ild): the catalogue of coverage, gini",
    )
    sql.add_argument(
        "--history", metavar="TABLE", help="what each user consumed before, for serendipity"
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
        "--history", metavar="MODEL", help="ref() name of what users consumed (serendipity)"
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
    return parser


def _trec_inputs(args: argparse.Namespace) -> tuple[object, object]:
    """The inputs as given, or as TREC files with --input-format trec; the TREC options are
    refused without it rather than ignored."""
    from sqlmetrics.trec import read_qrels, read_run

    trec_only = {
        "--format trec": args.format == "trec",
        "--trec-complete": args.trec_complete,
        "--trec-level": args.trec_level is not None,
        "--trec-max": args.trec_max is not None,
    }
    given = [option for option, used in trec_only.items() if used]
    if args.input_format != "trec":
        if given:
            raise SqlmetricsError(
                f"{given[0]} reads TREC files: add --input-format trec (a run, then qrels)"
            )
        return args.recommendations, args.interactions
    if args.connection is not None or args.spark is not None:
        raise SqlmetricsError(
            "TREC files are read by DuckDB: drop --connection/--spark, or load them into a "
            "table of your database first"
        )
    for option in ("--trec-complete", "--trec-level"):
        if trec_only[option] and args.format != "trec":
            raise SqlmetricsError(
                f"{option} applies to --format trec; for the other formats use "
                + ("--population" if option == "--trec-complete" else "--threshold N-1")
            )
    run = read_run(args.recommendations, max_per_query=args.trec_max)
    return run, read_qrels(args.interactions)


def _trec_hint(error: SqlmetricsError, args: argparse.Namespace) -> SqlmetricsError:
    """The error, with a hint when an input that failed looks like a TREC file read as CSV."""
    from sqlmetrics.trec import looks_like

    if args.input_format == "trec" or args.connection is not None or args.spark is not None:
        return error
    kinds = [looks_like(path) for path in (args.recommendations, args.interactions)]
    if not any(kinds):
        return error
    named = ", ".join(kind or "?" for kind in kinds)
    return SqlmetricsError(
        f"{str(error).rstrip('.')}. The inputs look like TREC files ({named}): add "
        "--input-format trec to read them as a run and qrels"
    )


def _trec_report(args: argparse.Namespace, run: object, qrels: object) -> str:
    """trec_eval's lines: its conventions are the report's, so sqlmetrics' own options that
    would change them are refused, each naming its trec_eval equivalent."""
    from sqlmetrics.trec import trec_eval, trec_text

    clashes = {
        "--threshold (use --trec-level)": args.threshold != 0.0,
        "--population (use --trec-complete)": args.population != "all",
        "--ties (trec_eval's order is the profile's)": args.ties != "id",
        "--group-by": bool(args.group_by),
        "--profile other than trec_eval": args.profile not in (None, "trec_eval"),
        "--duplicates": args.duplicates != "error",
        "column names": bool(column_names(args)),
    }
    for option, used in clashes.items():
        if used:
            raise SqlmetricsError(f"--format trec computes as trec_eval does; drop {option}")
    metrics = metric_list(args.metrics) or None
    frame = trec_eval(
        run,  # type: ignore[arg-type]
        qrels,  # type: ignore[arg-type]
        metrics,
        per_query=args.per_user,
        complete=args.trec_complete,
        level=1 if args.trec_level is None else args.trec_level,
    )
    return trec_text(frame)


def evaluate_command(args: argparse.Namespace) -> int:
    from sqlmetrics.run import evaluate

    recommendations, interactions = _trec_inputs(args)
    if args.format == "trec":
        inputs = [args.recommendations, args.interactions]
        if args.output is not None:
            check_output(args.output, inputs)
        write(_trec_report(args, recommendations, interactions), args.output, inputs)
        return 0
    metrics = requested_metrics(args)
    gates = [_gate(text) for text in args.fail_if]  # refused before the work
    known = [*metrics, *(f"{m}{side}" for m in metrics for side in ("_lo", "_hi") if args.ci)]
    for column, _, _, text in gates:
        if column not in known:
            raise SqlmetricsError(
                f"--fail-if {text!r}: {column} is not a column of the result ({', '.join(known)}"
                + ("" if args.ci else "; the _lo and _hi columns need --ci")
                + ")"
            )
    inputs = local_inputs(args)
    fmt = _format(args)
    with engine_connection(args) as connection:
        try:
            result = evaluate(
                recommendations,
                interactions,
                metrics,
                **api_options(args),
                **engine_options(args),
                connection=connection,
                **interval_options(args),
            )
        except SqlmetricsError as error:
            raise _trec_hint(error, args) from error.__cause__
    clear_progress(args)
    if args.ci is not None and fmt == "json":
        text = stored_json(result, metrics, args)
    elif args.ci is not None and fmt == "table":
        text = _interval_table(result, metrics)
    else:
        text = render(result, fmt)
    write(text, args.output, inputs)
    if not args.quiet:
        show_diagnostics(result)
        show_notes(result)
    failed = [line for gate in gates for line in _failed(gate, result, args.group_by)]
    for line in failed:
        sys.stderr.write(line + "\n")
    return 1 if failed else 0


def _format(args: argparse.Namespace) -> str:
    if args.format is not None:
        return str(args.format)
    return "json" if (args.output or "").lower().endswith(".json") else "table"


def _with_interval(value: Any, low: Any, high: Any) -> str:
    text = number_text(value)
    if number_text(low) and number_text(high):
        text += f" [{number_text(low)}, {number_text(high)}]"
    return text


def _interval_table(result: pd.DataFrame, metrics: Sequence[str]) -> str:
    """The table with each metric as ``0.3110 [0.3051, 0.3169]``."""
    import pandas as pd

    labels = [label for label in result.columns if f"{label}_lo" in result.columns]
    shown = pd.DataFrame(
        {
            column: [
                _with_interval(v, lo, hi)
                for v, lo, hi in zip(
                    result[column], result[f"{column}_lo"], result[f"{column}_hi"], strict=True
                )
            ]
            if column in labels
            else result[column]
            for column in result.columns
            if not (column.endswith(("_lo", "_hi")) and column[:-3] in labels)
        }
    )
    ci = result.attrs.get("ci", {})
    footer = f"[lo, hi]: {ci.get('level', 0) * 100:g}% " + (
        "Student's t-interval over the users"
        if ci.get("method") == "t"
        else f"Poisson bootstrap percentile interval, {ci.get('replicates')} replicates, "
        f"seed {ci.get('seed')}"
    )
    del metrics
    return str(shown.to_string(index=False)) + "\n" + footer + "\n"


GATE = re.compile(r"^\s*(?P<column>\S+)\s*(?P<op><=|>=|<|>)\s*(?P<value>\S+)\s*$")


OPERATORS = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _gate(text: str) -> tuple[str, str, float, str]:
    match = GATE.match(text)
    value = None
    if match:
        try:
            value = float(match["value"])
        except ValueError:
            value = None
    if match is None or value is None or not math.isfinite(value):
        raise SqlmetricsError(
            f'--fail-if {text!r}: write a metric, a comparison and a number, like "ndcg@10 < 0.30"'
        )
    return match["column"], match["op"], value, " ".join(text.split())


def _failed(
    gate: tuple[str, str, float, str], result: pd.DataFrame, groups: Sequence[str]
) -> list[str]:
    column, op, bound, text = gate
    lines = []
    for _, row in result.iterrows():
        value = float(row[column])
        where = ", ".join(f"{name}={row[name]}" for name in groups)
        if math.isnan(value):
            lines.append(f"gate failed: {text} ({where or 'all'}: no value)")
        elif OPERATORS[op](value, bound):
            lines.append(f"gate failed: {text} ({where or 'all'}: {column} = {value:.6g})")
    return lines


def compare_command(args: argparse.Namespace) -> int:
    if (args.baseline is None) == (args.against is None):
        raise SqlmetricsError(
            "compare needs --baseline MODEL (models paired by user) or --against FILE (an "
            "earlier result), one of them"
        )
    if args.per_user:
        raise SqlmetricsError("compare summarises groups; --per-user does not apply")
    inputs = local_inputs(args)
    if args.against is not None:
        return _compare_against(args, inputs)
    from sqlmetrics.run import compare

    metrics = requested_metrics(args)
    options = api_options(args)
    options.pop("per_user")
    options["group_by"] = options["group_by"] or ["model"]
    with engine_connection(args) as connection:
        result = compare(
            args.recommendations,
            args.interactions,
            metrics,
            baseline=args.baseline,
            **options,
            **engine_options(args),
            connection=connection,
            ci=args.ci,
            ci_method=args.ci_method,
            replicates=args.replicates,
            seed=args.seed,
            test=args.test,
            alpha=args.alpha,
        )
    clear_progress(args)
    text = _compare_table(result) if args.format == "table" else render(result, args.format)
    write(text, args.output, inputs)
    if not args.quiet:
        show_diagnostics(result)
        show_notes(result)
    if not args.fail_if_worse:
        return 0
    model = result.attrs["compare"]["model"]
    failed = [
        f"worse than {args.baseline}: {row[model]} {row['metric']} {row['value']:.6g} vs "
        f"{row['baseline']:.6g} (difference {row['difference']:+.6g}, adjusted p = "
        f"{row['p_holm']:.3g})"
        for _, row in result.iterrows()
        if row["significant"] and _is_worse(row["metric"], row["difference"])
    ]
    for line in failed:
        sys.stderr.write(line + "\n")
    return 1 if failed else 0


def _is_worse(metric: str, difference: float) -> bool:
    return difference > 0 if better_is_lower(metric) else difference < 0


def _compare_table(result: pd.DataFrame) -> str:
    """ranx-like: one row per model (the baseline first), one column per metric; each model's
    value, its difference with the baseline and the interval of the difference, and * where
    the difference is significant after Holm's correction."""
    import pandas as pd

    settings = result.attrs["compare"]
    model, baseline = settings["model"], settings["baseline"]
    others = [c for c in result.columns[: list(result.columns).index("metric")] if c != model]
    metrics = list(dict.fromkeys(result["metric"]))
    rows: list[dict[str, Any]] = []
    keys = list(dict.fromkeys(tuple(row[c] for c in others) for _, row in result.iterrows()))
    for key in keys:
        within = result
        for name, value in zip(others, key, strict=True):
            within = within[within[name].isna()] if value is None else within[within[name] == value]
        first = {name: value for name, value in zip(others, key, strict=True)}
        base_row: dict[str, Any] = {model: baseline, **first}
        for metric in metrics:
            of = within[within["metric"] == metric]
            values = {float(v) for v in of["baseline"]}
            # each model is paired with the baseline on its own common users
            base_row[metric] = number_text(of["baseline"].iloc[0]) + (
                "" if len(values) == 1 else " ~"
            )
        rows.append(base_row)
        for name in dict.fromkeys(within[model]):
            row: dict[str, Any] = {model: name, **first}
            for metric in metrics:
                of = within[(within[model] == name) & (within["metric"] == metric)]
                if of.empty:
                    row[metric] = ""
                    continue
                r = of.iloc[0]
                row[metric] = (
                    f"{number_text(r['value'])} {float(r['difference']):+.4f} "
                    f"[{float(r['difference_lo']):+.4f}, {float(r['difference_hi']):+.4f}]"
                    + (" *" if r["significant"] else "")
                )
            rows.append(row)
    table = pd.DataFrame(rows)
    count = len(result)
    test = "paired t-test" if settings["test"] == "t" else "sign-flip randomization test"
    interval = (
        "t-interval"
        if settings["method"] == "t"
        else f"bootstrap percentile interval ({settings['replicates']} replicates)"
    )
    footer = (
        f"value, difference with {baseline} [{settings['level'] * 100:g}% {interval} of the "
        f"paired difference]; * significant at alpha = {settings['alpha']:g} ({test}, "
        f"Holm-Bonferroni over {count} comparison{'s' if count != 1 else ''})"
    )
    return str(table.to_string(index=False)) + "\n" + footer + "\n"


def _compare_against(args: argparse.Namespace, inputs: Sequence[str | None]) -> int:
    import pandas as pd

    from sqlmetrics.run import evaluate

    stored = read_stored(args.against)
    options = stored["options"]
    metrics = metric_list(args.metrics) or list(options["metrics"])
    group_by = list(args.group_by) or list(options["group_by"])
    current = stored_options(args)
    current["group_by"] = group_by
    differing = [
        f"{name} {options.get(name)!r} there, {current[name]!r} here"
        for name in current
        if name != "group_by" and options.get(name) != current[name]
    ]
    if group_by != list(options["group_by"]):
        differing.append(f"group_by {options['group_by']!r} there, {group_by!r} here")
    if differing:
        raise SqlmetricsError(
            f"{args.against} was evaluated with other options ({'; '.join(differing)}); "
            "evaluate with the same ones to compare"
        )
    missing = [m for m in metrics if m not in options["metrics"]]
    if missing:
        raise SqlmetricsError(
            f"{args.against} has no {', '.join(missing)} (it has {', '.join(options['metrics'])})"
        )
    ci = args.ci if args.ci is not None else 0.95
    with engine_connection(args) as connection:
        result = evaluate(
            args.recommendations,
            args.interactions,
            metrics,
            group_by=group_by,
            columns=column_names(args),
            ties=args.ties,
            threshold=args.threshold,
            population=args.population,
            duplicates=args.duplicates,
            profile=args.profile,
            **engine_options(args),
            connection=connection,
            ci=ci,
        )
    clear_progress(args)
    previous = pd.DataFrame(stored["moments"])
    compared = against_stored(previous, result.attrs["moments"], group_by, args.alpha)
    if compared.empty:
        raise SqlmetricsError(
            f"no group and metric of this evaluation is in {args.against}: nothing to compare"
        )
    write(render(compared, args.format), args.output, inputs)
    if not args.quiet:
        show_diagnostics(result)
        show_notes(result)
        sys.stderr.write(
            f"Welch's test against {args.against}, Holm-Bonferroni over {len(compared)} "
            f"comparisons, alpha = {args.alpha:g}\n"
        )
    if not args.fail_if_worse:
        return 0
    failed = [
        "worse than "
        + args.against
        + ": "
        + ", ".join([*(f"{name}={row[name]}" for name in group_by), str(row["metric"])])
        + f" {row['current']:.6g} vs {row['previous']:.6g} (adjusted p = {row['p_holm']:.3g})"
        for _, row in compared.iterrows()
        if row["worse"]
    ]
    for line in failed:
        sys.stderr.write(line + "\n")
    return 1 if failed else 0


def example_command(args: argparse.Namespace) -> None:
    from sqlmetrics.catalog import sql_folder
    from sqlmetrics.run import evaluate

    folder = sql_folder().parent / "examples"
    recommendations = str(folder / "recommendations.parquet")
    interactions = str(folder / "interactions.parquet")
    if args.report is not None:  # refused before the work, not after
        check_report_output(args.report, [recommendations, interactions], force=False)
    result = evaluate(recommendations, interactions, EXAMPLE_METRICS, group_by=["model"])
    write(render(result, args.format), None)
    if not args.quiet:
        show_diagnostics(result)
    if args.report is not None:
        from sqlmetrics.reporting import report

        page = report(recommendations, interactions, EXAMPLE_REPORT_METRICS, **EXAMPLE_REPORT)
        page.save(args.report)
        sys.stderr.write(f"wrote the example's report to {args.report}\n")


def check_report_output(output: str | None, inputs: Sequence[str | None], force: bool) -> None:
    """The page's file: named, not an input, and not a file of someone else's (unless force)."""
    from sqlmetrics.files import refuse_foreign_file
    from sqlmetrics.reporting.page import GENERATOR

    if output is None:
        raise SqlmetricsError("report writes an HTML page: give its file, like -o report.html")
    check_output(output, inputs)
    refuse_foreign_file(output, GENERATOR, force)


def report_command(args: argparse.Namespace) -> None:
    from sqlmetrics.reporting import report

    metrics = requested_metrics(args)
    remote = args.connection is not None or args.spark is not None
    inputs = [] if remote else [args.recommendations, args.interactions, args.items, args.history]
    check_report_output(args.output, inputs, args.force)
    if args.per_user:
        raise SqlmetricsError("--per-user does not apply to report: its page shows them already")
    if args.dialect is not None and args.connection is None:
        raise SqlmetricsError("--dialect applies to --connection only")
    options = api_options(args)
    del options["per_user"]
    with engine_connection(args) as connection:
        page = report(
            args.recommendations,
            args.interactions,
            metrics,
            **options,
            segment=args.segment,
            baseline=args.baseline,
            k_max=args.k_max,
            small_segment=args.small_segment,
            connection=connection,
            dialect=args.dialect,
            timeout=args.timeout,
            items=args.items,
            history=args.history,
        )
    page.save(args.output, force=args.force)
    if not args.quiet:
        sys.stderr.write(f"wrote {args.output} ({len(page.html.encode()):,} bytes)\n")


def sql_command(args: argparse.Namespace) -> None:
    labels = _sql_requested(args)
    if args.output_dir is not None and args.output is not None:
        raise SqlmetricsError("use either --output (one query) or --output-dir (one per metric)")
    if args.checks and args.output_dir is not None:
        raise SqlmetricsError("--checks writes one query: use --output, not --output-dir")

    def render(requested: list[str]) -> str:
        return (
            to_sql(
                requested,
                args.recommendations,
                args.interactions,
                **api_options(args),
                interactions_group_by=args.interactions_group_by,
                dialect=args.dialect,
                checks=args.checks,
                items=args.items,
                history=args.history,
            )
            + ";\n"
        )

    if args.output_dir is None:
        write(render(labels), args.output)
        return
    if args.output_dir == "":
        raise SqlmetricsError("--output-dir is empty: give a folder name, like sql_bigquery/")
    by_metric: dict[str, list[str]] = {}
    for label in labels:
        by_metric.setdefault(parse_request(label).metric.name, []).append(label)
    # Every file is rendered before the first is written: an error leaves the folder as it was.
    texts = {name: render(requested) for name, requested in by_metric.items()}
    names = [f"{name}.sql" for name in texts]
    if Path(args.output_dir).is_dir():  # files not ours are refused before anything is written
        refuse_existing(Path(args.output_dir), names, "--output-dir", args.force)
    folder = prepare_folder(args.output_dir, "--output-dir")
    # The marker lists what sqlmetrics wrote here, so a rerun may replace exactly those files.
    write_marker(folder, (written_by_us(folder) or set()) | set(names))
    for name, text in texts.items():
        write(text, str(folder / f"{name}.sql"))
    sys.stderr.write(f"wrote {len(texts)} queries ({args.dialect}) to {folder}\n")


def dbt_command(args: argparse.Namespace) -> None:
    from sqlmetrics import dbt

    if args.dbt_command == "export":
        if args.folder == "":
            raise SqlmetricsError("dbt export: the folder name is empty")
        written = dbt.export(Path(args.folder))
        sys.stderr.write(
            f"wrote the sqlmetrics dbt package ({len(written)} files) to {args.folder}\n"
        )
        return
    if args.output is not None:
        raise SqlmetricsError("dbt models writes FOLDER/NAME.sql; --output does not apply")
    text = dbt.model_sql(
        requested_metrics(args),
        args.recommendations,
        args.interactions,
        dialect=args.dialect,
        materialized=args.materialized,
        interactions_group_by=args.interactions_group_by,
        items=args.items,
        history=args.history,
        **api_options(args),
    )
    (path,) = dbt.write_models(Path(args.folder), [(args.name, text)], force=args.force)
    sys.stderr.write(f"wrote {path}\n")


def _sql_requested(args: argparse.Namespace) -> list[str]:
    """The -m metrics, or with --all every metric at each --cutoff (those that refuse
    ties='average' left out when it is asked for)."""
    if not args.all_metrics:
        if args.cutoff:
            raise SqlmetricsError("--cutoff goes with --all; with -m write the cutoff as ndcg@10")
        return requested_metrics(args)
    if args.metrics:
        raise SqlmetricsError("use either --all or -m METRIC, not both")
    cutoffs = args.cutoff or [10]
    if any(k < 1 for k in cutoffs):
        raise SqlmetricsError("--cutoff must be a whole number of at least 1")
    labels: list[str] = []
    if args.profile is not None:  # the names the profile's library defines
        for form in PROFILES[args.profile].metrics:
            name, _, cut = form.partition("@")
            labels += [f"{name}@{k}" for k in cutoffs] if cut else [name]
        return labels
    for metric in metrics().values():
        if args.ties == "average" and not metric.ties_average:
            continue
        if (metric.needs_items and args.items is None) or (
            metric.needs_history and args.history is None
        ):
            continue  # ild without --items, serendipity without --history have nothing to read
        labels += [f"{metric.name}@{k}" for k in cutoffs] if metric.takes_cutoff else [metric.name]
    return labels


def metrics_command(args: argparse.Namespace) -> None:
    rows = describe_metrics()
    if args.format == "json":
        write_stdout(json.dumps(rows, indent=2) + "\n")
        return
    if args.format == "markdown":
        write_stdout(metrics_markdown(rows))
        return
    for row in rows:
        write_stdout(
            f"{row['name']}  ({row['cutoff']}; {row['aggregate']}; ties=average: "
            f"{row['ties_average']})\n"
            f"    {row['title']}: {row['definition']}\n"
            + (f"    aliases: {row['aliases']}\n" if row["aliases"] else "")
            + f"    references: {row['references']}\n"
        )


def profiles_command(args: argparse.Namespace) -> None:
    if args.format == "markdown":
        write_stdout(profiles_markdown())
        return
    rows = describe_profiles()
    if args.format == "json":
        write_stdout(json.dumps(rows, indent=2) + "\n")
        return
    for row in rows:
        write_stdout(
            f"{row['profile']}  ({row['library']}; ties={row['ties']}, "
            f"population={row['population']}, relevance={row['relevance']})\n"
            f"    {row['metrics']}\n"
        )


def metrics_markdown(rows: list[dict[str, str]]) -> str:
    """The README's metric table."""
    lines = ["| metric | `@k` | definition | aliases | averaged |", "|---|---|---|---|---|"]
    for row in rows:
        aliases = ", ".join(f"`{alias}`" for alias in row["aliases"].split(", ") if alias)
        cutoff = {"none": "no", "@k required": "required"}.get(row["cutoff"], "yes")
        if row["cutoff"].startswith("@t"):
            cutoff = "`@t` (score, 0.5)"
        if row["cutoff"].startswith("@x"):
            cutoff = f"`@x` (level, {row['cutoff'].rsplit(' ', 1)[-1]})"
        averaged = row["averaged"]
        definition = row["definition"].replace("|", "\\|")
        lines.append(f"| `{row['name']}` | {cutoff} | {definition} | {aliases} | {averaged} |")
    return "\n".join(lines) + "\n"


def _interrupted() -> int:
    sys.stderr.write("sqlmetrics: interrupted; nothing was written\n")
    return 130


def _is_interrupt(error: BaseException | None) -> bool:
    """DuckDB's answer to Ctrl-C: an InterruptException, or a RuntimeError "Query interrupted"
    (possibly wrapped, as a cause, in one of ours)."""
    while error is not None:
        if type(error).__name__ == "InterruptException" or (
            isinstance(error, RuntimeError) and "interrupted" in str(error).lower()
        ):
            return True
        error = error.__cause__
    return False


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handlers: dict[str, Callable[[argparse.Namespace], int | None]] = {
        "evaluate": evaluate_command,
        "compare": compare_command,
        "sql": sql_command,
        "metrics": metrics_command,
        "profiles": profiles_command,
        "example": example_command,
        "report": report_command,
        "dbt": dbt_command,
    }
    try:
        code = handlers[args.command](args)
    except SqlmetricsError as error:
        if _is_interrupt(error.__cause__):
            return _interrupted()
        sys.stderr.write(f"sqlmetrics: error: {error}\n")
        return 2
    except KeyboardInterrupt:
        return _interrupted()
    except Exception as error:  # an engine error: one line, not a traceback
        if _is_interrupt(error):  # Ctrl-C while DuckDB runs comes back as its own error
            return _interrupted()
        if type(error).__module__.split(".")[0] not in ("duckdb", "_duckdb"):
            raise
        first = str(error).strip().splitlines()[0]
        sys.stderr.write(f"sqlmetrics: error: DuckDB: {first}\n")
        return 1
    return code or 0
