"""``sqlmetrics evaluate``: the metrics as a table, CSV or JSON (with intervals under --ci),
TREC files in and trec_eval's lines out, and the --fail-if gates."""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlmetrics.cli.arguments import call_options, column_names, metric_list, requested_metrics
from sqlmetrics.cli.output import (
    exposure_text,
    gaps_text,
    number_text,
    render,
    sampled_text,
    show_diagnostics,
    show_notes,
    write,
    write_notes,
)
from sqlmetrics.cli.sources import clear_progress, engine_connection, local_inputs, progress
from sqlmetrics.cli.stored import stored_json
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.io.files import check_output

if TYPE_CHECKING:
    import pandas as pd

    from sqlmetrics.stats.sampled import Sampled
    from sqlmetrics.trec import TrecReport


def evaluate_command(args: argparse.Namespace) -> int:
    from sqlmetrics.options import EvaluateOptions
    from sqlmetrics.run import evaluate

    recommendations, interactions = _trec_inputs(args)
    if args.format == "trec":
        if _sampled(args) is not None:
            raise SqlmetricsError(
                "--format trec prints trec_eval's measures, which have no sampled estimates: "
                "drop --sampled-items and --sampled-negatives, or use --format table, csv or json"
            )
        inputs = [args.recommendations, args.interactions]
        if args.output is not None:
            check_output(args.output, inputs)
        report = _trec_report(args, recommendations, interactions)
        write(report.text(), args.output, inputs)
        if not args.quiet:
            write_notes(report.notes or ())
        return 0
    metrics = requested_metrics(args)
    gates = _gates(args, metrics)  # refused before the work
    inputs = local_inputs(args)
    fmt = _format(args)
    with engine_connection(args) as connection:
        try:
            result = evaluate(
                recommendations,
                interactions,
                metrics,
                **call_options(args, EvaluateOptions),
                sampled=_sampled(args),
                progress=progress(args),
                connection=connection,
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
    # --segment's gaps, --sampled-items' estimates and --exposure-k's table: part of the
    # answer, after the table; beside a CSV or JSON, on stderr
    gaps = _after_table(result)
    if gaps and fmt == "table":
        text = text.rstrip("\n") + "\n\n" + gaps
    write(text, args.output, inputs)
    if not args.quiet:
        show_diagnostics(result)
        if gaps and fmt != "table":
            sys.stderr.write(gaps)
        show_notes(result)
    failed = [line for gate in gates for line in _failed(gate, result, args.group_by)]
    for line in failed:
        sys.stderr.write(line + "\n")
    return 1 if failed else 0


def _after_table(result: pd.DataFrame) -> str:
    """--segment's gaps, --sampled-items' estimates and --exposure-k's table, each a table, or
    nothing."""
    parts = (gaps_text(result), sampled_text(result), exposure_text(result))
    return "\n".join(part for part in parts if part)


def _sampled(args: argparse.Namespace) -> Sampled | None:
    """--sampled-items and --sampled-negatives (both, or neither) as evaluate's sampled=."""
    from sqlmetrics.stats.sampled import DEFAULT_GAMMA, Sampled

    items, negatives, gamma = args.sampled_items, args.sampled_negatives, args.sampled_gamma
    if items is None and negatives is None:
        if gamma is not None:
            raise SqlmetricsError("--sampled-gamma needs --sampled-items and --sampled-negatives")
        return None
    if items is None or negatives is None:
        raise SqlmetricsError(
            "sampled candidates need both --sampled-items N (the catalogue) and "
            "--sampled-negatives M (the negatives in each list)"
        )
    return Sampled(items, negatives, DEFAULT_GAMMA if gamma is None else gamma)


def _gates(args: argparse.Namespace, metrics: Sequence[str]) -> list[tuple[str, str, float, str]]:
    """The --fail-if gates, each on a column the result will have."""
    gates = [_gate(text) for text in args.fail_if]
    known = [*metrics, *(f"{m}{side}" for m in metrics for side in ("_lo", "_hi") if args.ci)]
    for column, _, _, text in gates:
        if column not in known:
            raise SqlmetricsError(
                f"--fail-if {text!r}: {column} is not a column of the result ({', '.join(known)}"
                + ("" if args.ci else "; the _lo and _hi columns need --ci")
                + ")"
            )
    return gates


def _trec_inputs(args: argparse.Namespace) -> tuple[object, object]:
    """The inputs as given, or as TREC files with --input-format trec; the TREC options are
    refused without it rather than ignored."""
    from sqlmetrics.trec import read_qrels, read_run

    trec_only = {
        "--format trec": args.format == "trec",
        "--trec-complete": args.trec_complete,
        "--trec-intents": args.trec_intents,
        "--trec-level": args.trec_level is not None,
        "--trec-version": args.trec_version is not None,
        "--trec-max": args.trec_max is not None,
        "--trec-num-docs": args.trec_num_docs is not None,
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
    instead = {
        "--trec-complete": "--population all_judged",
        "--trec-level": "--threshold N-1",
        "--trec-version": "--profile trec_eval_9",
        "--trec-num-docs": "utility's coefficients through --format trec",
    }
    for option, other in instead.items():
        if trec_only[option] and args.format != "trec":
            raise SqlmetricsError(
                f"{option} applies to --format trec; for the other formats use {other}"
            )
    run = read_run(args.recommendations, max_per_query=args.trec_max)
    return run, read_qrels(args.interactions, intents=args.trec_intents)


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


def _trec_report(args: argparse.Namespace, run: object, qrels: object) -> TrecReport:
    """trec_eval's lines: its conventions are the report's, so sqlmetrics' own options that
    would change them are refused, each naming its trec_eval equivalent."""
    from sqlmetrics.trec import trec_report

    clashes = {
        "--threshold (use --trec-level)": args.threshold != 0.0,
        "--population (use --trec-complete)": args.population != "all",
        "--ties (trec_eval's order is the profile's)": args.ties != "id",
        "--group-by": bool(args.group_by),
        "--profile (use --trec-version)": args.profile not in (None, "trec_eval"),
        "--duplicates": args.duplicates != "error",
        "--ranks (a run's ranks are trec_eval's: it orders by score)": args.ranks != "consecutive",
        "column names": bool(column_names(args)),
    }
    for option, used in clashes.items():
        if used:
            raise SqlmetricsError(f"--format trec computes as trec_eval does; drop {option}")
    metrics = metric_list(args.metrics) or None
    return trec_report(
        run,  # type: ignore[arg-type]
        qrels,  # type: ignore[arg-type]
        metrics,
        per_query=args.per_user,
        complete=args.trec_complete,
        level=1 if args.trec_level is None else args.trec_level,
        version=10 if args.trec_version is None else args.trec_version,
        num_docs=0 if args.trec_num_docs is None else args.trec_num_docs,
    )


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
