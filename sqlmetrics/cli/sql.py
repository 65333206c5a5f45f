"""The commands that print or write SQL and describe it, running nothing: ``sql``, ``dbt``,
``metrics`` and ``profiles``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sqlmetrics.api import describe_metrics, to_sql
from sqlmetrics.catalog.metrics import Metric, metrics, parse_request
from sqlmetrics.catalog.profiles import PROFILES, describe_profiles
from sqlmetrics.cli.arguments import call_options, requested_metrics
from sqlmetrics.cli.markdown import profiles_markdown
from sqlmetrics.cli.metric_pages import metrics_markdown
from sqlmetrics.cli.output import write
from sqlmetrics.compose.lists import reads_baseline
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.io.files import (
    prepare_folder,
    refuse_existing,
    write_marker,
    write_stdout,
    written_by_us,
)
from sqlmetrics.options import QueryOptions, SqlOptions


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
                **call_options(args, SqlOptions),
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
    for metric in filter(lambda metric: _fed(metric, args), metrics().values()):
        labels += [f"{metric.name}@{k}" for k in cutoffs] if metric.takes_cutoff else [metric.name]
    return labels


def _fed(metric: Metric, args: argparse.Namespace) -> bool:
    """Whether --all takes the metric: what it reads is given (ild without --items,
    serendipity without --history, the overlap metrics without --baseline have nothing to
    read), and it takes --ties."""
    return not (
        (args.ties == "average" and not metric.ties_average)
        or (metric.needs_items and args.items is None)
        or (metric.needs_history and args.history is None)
        or (reads_baseline(metric) and args.baseline is None)
    )


def dbt_command(args: argparse.Namespace) -> None:
    from sqlmetrics.dbt import models, package

    if args.dbt_command == "export":
        if args.folder == "":
            raise SqlmetricsError("dbt export: the folder name is empty")
        written = package.export(Path(args.folder))
        sys.stderr.write(
            f"wrote the sqlmetrics dbt package ({len(written)} files) to {args.folder}\n"
        )
        return
    if args.output is not None:
        raise SqlmetricsError("dbt models writes FOLDER/NAME.sql; --output does not apply")
    text = models.model_sql(
        requested_metrics(args),
        args.recommendations,
        args.interactions,
        materialized=args.materialized,
        **call_options(args, QueryOptions),
    )
    (path,) = models.write_models(Path(args.folder), [(args.name, text)], force=args.force)
    sys.stderr.write(f"wrote {path}\n")


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
