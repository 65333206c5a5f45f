"""``sqlmetrics compare``: models against a baseline, user by user (--baseline), or groups
against an earlier stored evaluation (--against)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlmetrics.attrs import read
from sqlmetrics.cli.arguments import api_options, column_names, metric_list, requested_metrics
from sqlmetrics.cli.output import number_text, render, show_diagnostics, show_notes, write
from sqlmetrics.cli.sources import clear_progress, engine_connection, engine_options, local_inputs
from sqlmetrics.cli.stored import read_stored, stored_options
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.stats.inference import against_stored, better_is_lower

if TYPE_CHECKING:
    import pandas as pd


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
    # A file written before an option existed was evaluated with its default.
    written = {"ranks": "consecutive", **options}
    differing = [
        f"{name} {written.get(name)!r} there, {current[name]!r} here"
        for name in current
        if name != "group_by" and written.get(name) != current[name]
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
            ranks=args.ranks,
            profile=args.profile,
            **engine_options(args),
            connection=connection,
            ci=ci,
        )
    clear_progress(args)
    previous = pd.DataFrame(stored["moments"])
    compared = against_stored(previous, read(result, "moments"), group_by, args.alpha)
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
