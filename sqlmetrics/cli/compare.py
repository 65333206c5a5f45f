"""``sqlmetrics compare``: models against a baseline, user by user (--baseline), or groups
against an earlier stored evaluation (--against)."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlmetrics.attrs import read
from sqlmetrics.cli.arguments import call_options, metric_list, requested_metrics
from sqlmetrics.cli.output import (
    number_text,
    records,
    render,
    show_diagnostics,
    show_notes,
    write,
)
from sqlmetrics.cli.sources import clear_progress, engine_connection, local_inputs, progress
from sqlmetrics.cli.stored import read_stored, stored_options
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.options import Definitions, defaults
from sqlmetrics.stats.inference import ONLY_BEFORE, ONLY_TODAY, against_stored
from sqlmetrics.stats.moments import gate_failure

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
    from sqlmetrics.options import CompareOptions
    from sqlmetrics.run import compare

    metrics = requested_metrics(args)
    with engine_connection(args) as connection:
        result = compare(
            args.recommendations,
            args.interactions,
            metrics,
            baseline=args.baseline,
            **call_options(args, CompareOptions),
            progress=progress(args),
            connection=connection,
        )
    clear_progress(args)
    text = _compare_table(result) if args.format == "table" else render(result, args.format)
    write(text, args.output, inputs)
    if not args.quiet:
        show_diagnostics(result)
        show_notes(result)
    if not args.fail_if_worse:
        return 0
    return _failed(_baseline_failures(result, args.baseline, args.alpha))


def _failed(lines: Sequence[str]) -> int:
    for line in lines:
        sys.stderr.write(line + "\n")
    return 1 if lines else 0


def _baseline_failures(result: pd.DataFrame, baseline: str, alpha: float) -> list[str]:
    """One line per comparison the gate fails on (moments.gate_failure)."""
    model = result.attrs["compare"]["model"]
    others = list(result.columns[: list(result.columns).index("metric")])
    lines = []
    for _, row in result.iterrows():
        why = (
            f"no user paired with {baseline}"
            if row["users"] == 0
            else "fewer than 2 paired users"
            if row["users"] < 2
            else "the variance of the differences is not finite (see the notes)"
        )
        failure = gate_failure(
            row["metric"], float(row["difference"]), float(row["p_holm"]), alpha, why
        )
        if failure is None:
            continue
        where = ", ".join(f"{name}={row[name]}" for name in others if name != model)
        name = f"{row[model]}{f' ({where})' if where else ''} {row['metric']}"
        if failure == "significantly worse":
            lines.append(
                f"worse than {baseline}: {name} {row['value']:.6g} vs {row['baseline']:.6g} "
                f"(difference {row['difference']:+.6g}, adjusted p = {row['p_holm']:.3g})"
            )
        else:
            lines.append(f"cannot pass against {baseline}: {name}: {failure}")
    return lines


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
            base_row[metric] = _baseline_cell(within[within["metric"] == metric]["baseline"])
        rows.append(base_row)
        for name in dict.fromkeys(within[model]):
            row: dict[str, Any] = {model: name, **first}
            for metric in metrics:
                row[metric] = _model_cell(
                    within[(within[model] == name) & (within["metric"] == metric)]
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


def _baseline_cell(values: pd.Series) -> str:
    """The baseline's value; " ~" where it differs between models (each model is paired with
    the baseline on its own common users)."""
    known = values.dropna()
    text = number_text(known.iloc[0]) if len(known) else ""
    return text + ("" if len({float(v) for v in known}) <= 1 else " ~")


def _model_cell(rows: pd.DataFrame) -> str:
    """A model's value, its difference with the baseline and the interval, * if significant."""
    if rows.empty or math.isnan(float(rows.iloc[0]["difference"])):
        return "" if rows.empty else "not compared"
    r = rows.iloc[0]
    return (
        f"{number_text(r['value'])} {float(r['difference']):+.4f} "
        f"[{float(r['difference_lo']):+.4f}, {float(r['difference_hi']):+.4f}]"
        + (" *" if r["significant"] else "")
    )


def _compare_against(args: argparse.Namespace, inputs: Sequence[str | None]) -> int:
    import pandas as pd

    from sqlmetrics.options import EvaluateOptions
    from sqlmetrics.run import evaluate

    stored = read_stored(args.against)
    options = stored["options"]
    metrics = metric_list(args.metrics) or list(options["metrics"])
    group_by = list(args.group_by) or list(options["group_by"])
    current = stored_options(args)
    current["group_by"] = group_by
    # A file written before an option existed was evaluated with its default.
    written = {**defaults(Definitions), **options}
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
    given = call_options(args, EvaluateOptions)
    # the stored moments are the t-interval's: compared by Welch's test, whatever --ci-method
    for name in ("per_user", "ci_method", "replicates", "seed"):
        given.pop(name, None)
    given.update(group_by=group_by, ci=args.ci if args.ci is not None else 0.95)
    with engine_connection(args) as connection:
        result = evaluate(
            args.recommendations,
            args.interactions,
            metrics,
            **given,
            progress=progress(args),
            connection=connection,
        )
    clear_progress(args)
    previous = pd.DataFrame(
        [row for row in stored["moments"] if row["metric"] in metrics],
        columns=[*group_by, "metric", "mean", "variance", "n"],
    )
    # today's moments as the file holds them (numpy scalars, Decimal keys), to match its keys
    today = pd.DataFrame(records(read(result, "moments")), columns=previous.columns)
    compared = against_stored(previous, today, group_by, args.alpha)
    one_side = compared["note"].isin([ONLY_TODAY, ONLY_BEFORE])
    if one_side.all():
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
    return _failed(_against_failures(compared, args.against, group_by, args.alpha))


def _against_failures(
    compared: pd.DataFrame, against: str, group_by: Sequence[str], alpha: float
) -> list[str]:
    """One line per (group, metric) the gate fails on: significantly worse, missing from this
    evaluation, or not testable where it may be worse (moments.gate_failure)."""
    lines = []
    for _, row in compared.iterrows():
        if row["note"] == ONLY_TODAY:
            continue  # nothing to be worse than
        name = ", ".join([*(f"{name}={row[name]}" for name in group_by), str(row["metric"])])
        if row["note"] == ONLY_BEFORE:
            lines.append(
                f"missing from this evaluation: {name} ({row['previous']:.6g} in {against}); "
                "a gate cannot pass on what was not evaluated"
            )
            continue
        failure = gate_failure(
            str(row["metric"]),
            float(row["difference"]),
            float(row["p_holm"]),
            alpha,
            str(row["note"]) or "no p-value",
        )
        if failure == "significantly worse":
            lines.append(
                f"worse than {against}: {name} {row['current']:.6g} vs {row['previous']:.6g} "
                f"(adjusted p = {row['p_holm']:.3g})"
            )
        elif failure is not None:
            lines.append(f"cannot pass against {against}: {name}: {failure}")
    return lines
