"""The report as one HTML page: inline CSS and SVG, no script, nothing fetched."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlmetrics.reporting import charts
from sqlmetrics.reporting.about import definitions, diagnostics, provenance
from sqlmetrics.reporting.common import Context, chart_marker, model_names, named, shortened
from sqlmetrics.reporting.common import as_float as _float
from sqlmetrics.reporting.common import as_number as _number
from sqlmetrics.reporting.common import escaped as _e
from sqlmetrics.reporting.common import missing as _missing
from sqlmetrics.reporting.data import Plan, Results
from sqlmetrics.reporting.groups import exposure_section, overlap_labels, overlap_section

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

GENERATOR = "sqlmetrics report"
"""In every page's <meta name="generator">: how a page (a file we may replace) is recognised."""
# How the summary says which value is the best, by the metric header's ``better:``.
BEST_IS = {"lower": "the lowest", "one": "the nearest to 1", "none": "none"}


def best_of(values: Sequence[float], better: str) -> float | None:
    """The best of a metric's values (its header's ``better:``); None without a direction."""
    if not values or better == "none":
        return None
    if better == "lower":
        return min(values)
    if better == "one":
        return min(values, key=lambda value: abs(value - 1))
    return max(values)


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;
background:#fff;line-height:1.45}
main{max-width:1100px;margin:0 auto;padding:1rem 1.5rem 3rem}
h1{font-size:1.6rem;margin:.5rem 0}h2{font-size:1.25rem;border-bottom:1px solid #ddd;
padding-bottom:.2rem;margin-top:2rem}h3{font-size:1rem;margin:1.2rem 0 .3rem}
nav a{margin-right:.9rem}table{border-collapse:collapse;margin:.4rem 0;font-size:.9rem}
th,td{border:1px solid #ddd;padding:.25rem .55rem;text-align:right;vertical-align:top}
th{background:#f4f4f4}td.text,th.text{text-align:left}td.best{font-weight:bold}
.interval,.delta{display:block;font-size:.78rem;color:#555}.muted{color:#999}
.charts{display:flex;flex-wrap:wrap;gap:0 1.5rem}.block{flex:1 1 460px;min-width:0}
.chart{margin:0}.charts>.chart{flex:1 1 360px}.chart svg{width:100%;height:auto}
code,pre{background:#f6f6f6;padding:.1rem .3rem}
pre{padding:.6rem;overflow-x:auto;white-space:pre-wrap}.note{color:#555;font-size:.9rem}
.headline{font-size:1.1rem;background:#eef5fb;padding:.5rem .8rem;border-left:4px solid
#0072B2}details{margin:.3rem 0 1rem}summary{cursor:pointer;color:#0645ad}
"""


def render(results: Results, the_plan: Plan, context: Context, comparison: Any = None) -> str:
    """The whole page."""
    results = results.without_attrs()
    charts_svg: list[str] = []
    # The answer first (which model, where, how sure); how the page was made after it.
    sections = [
        _headline(results, the_plan, context),
        _summary(results, the_plan, context, comparison),
        _curves(results, the_plan, context, charts_svg),
        _segments(results, the_plan, context, charts_svg),
        _distributions(results, the_plan, context, charts_svg),
        _beyond(results, the_plan, context, charts_svg),
        overlap_section(results, the_plan, context, charts_svg),
        exposure_section(results, context, charts_svg),
        diagnostics(results, the_plan, context),
        provenance(results, the_plan, context),
        definitions(the_plan),
    ]
    # The charts were placed as markers: their ids are made unique across the page here.
    body = "\n".join(section for section in sections if section)
    for index, svg in enumerate(charts.svg_ids_unique(charts_svg)):
        body = body.replace(f"<!--chart:{index}-->", svg, 1)
    title = "sqlmetrics report"
    heading = _e(title)
    if context.group_by:
        title += f": {', '.join(context.group_by)}"
        heading += ": " + ", ".join(named(column) for column in context.group_by)
    nav = " ".join(
        f'<a href="#{anchor}">{name}</a>'
        for anchor, name in (
            ("summary", "Summary"),
            ("curves", "Curves"),
            ("segments", "Segments"),
            ("distributions", "Distributions"),
            ("beyond", "Beyond accuracy"),
            ("overlap", "Overlap"),
            ("exposure", "Exposure"),
            ("diagnostics", "Diagnostics"),
            ("provenance", "Provenance"),
            ("definitions", "Definitions"),
        )
        if f'id="{anchor}"' in body
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta name="generator" content="{GENERATOR}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
        f"<h1>{heading}</h1>\n<nav>{nav}</nav>\n{body}\n</main>\n</body>\n</html>\n"
    )


_chart = chart_marker


# headline ---------------------------------------------------------------------------------------


def _headline(results: Results, the_plan: Plan, context: Context) -> str:
    """One sentence: the best model on each summary metric."""
    frame = results.main
    models = model_names(frame, context.group_by)
    if len(models) < 2 or not the_plan.summary:
        return ""
    wins: dict[str, list[str]] = {}
    for label in the_plan.summary:
        values = [
            (float(v), m) for v, m in zip(frame[label], models, strict=True) if not _missing(v)
        ]
        best = best_of([value for value, _ in values], the_plan.metrics[label].better)
        if best is not None:
            winner = next(model for value, model in values if value == best)
            wins.setdefault(winner, []).append(label)
    if not wins:
        return ""  # no summary metric has a direction (better: none): no model is best
    said = "; ".join(
        f"{named(model)} is best on {_e(', '.join(labels))}" for model, labels in wins.items()
    )
    return f'<p class="headline" id="headline">{said}.</p>'


# summary ----------------------------------------------------------------------------------------


def _cell(frame: pd.DataFrame, row: int, label: str) -> tuple[float, str]:
    value = frame[label].iloc[row]
    value = _float(value)
    interval = ""
    if f"{label}_lo" in frame.columns and f"{label}_hi" in frame.columns:
        low, high = _float(frame[f"{label}_lo"].iloc[row]), _float(frame[f"{label}_hi"].iloc[row])
        # group-level and micro metrics have none (NaN): nothing to show rather than "n/a"
        if math.isfinite(low) and math.isfinite(high):
            interval = f'<span class="interval">[{_number(low)}, {_number(high)}]</span>'
    return value, interval


def _best_rules(the_plan: Plan, labels: Sequence[str]) -> str:
    """Where the best is not the highest value: ' (the lowest for mae; none for rbo@10)'."""
    named_by: dict[str, list[str]] = {}
    for label in labels:
        better = the_plan.metrics[label].better
        if better in BEST_IS:
            named_by.setdefault(better, []).append(label)
    rules = [
        f"{BEST_IS[better]} for {', '.join(named_by[better])}"
        for better in BEST_IS
        if better in named_by
    ]
    return f" ({'; '.join(rules)})" if rules else ""


def _summary(results: Results, the_plan: Plan, context: Context, comparison: Any) -> str:
    frame = results.main
    labels = [*the_plan.summary, *the_plan.beyond]
    if not labels:
        return ""
    models = model_names(frame, context.group_by)
    baseline_row = models.index(context.baseline) if context.baseline in models else None
    head = "".join(f"<th>{_e(label)}</th>" for label in labels)
    body = []
    for row, model in enumerate(models):
        cells = []
        for label in labels:
            value, interval = _cell(frame, row, label)
            column = [float(v) for v in frame[label] if not _missing(v)]
            best = len(models) > 1 and value == best_of(column, the_plan.metrics[label].better)
            delta = ""
            if baseline_row is not None and row != baseline_row:
                base, _ = _cell(frame, baseline_row, label)
                mark = _significance(comparison, model, label)
                delta = (
                    f'<span class="delta">{_difference(value, base)} vs '
                    f"{named(context.baseline)}{mark}</span>"
                )
            cells.append(
                f'<td class="{"best" if best else ""}" data-model="{_e(model)}" '
                f'data-metric="{_e(label)}" data-value="{value!r}" title="{value!r}">'
                f"{_number(value)}{interval}{delta}</td>"
            )
        users = frame["users"].iloc[row] if "users" in frame.columns else ""
        body.append(
            f'<tr><td class="text">{named(model)}</td><td>{_e(users)}</td>{"".join(cells)}</tr>'
        )
    notes = [
        f"Bold: the best model on that metric{_best_rules(the_plan, labels)}. Hover a cell for "
        "its exact value.",
        f"A metric asked without a cutoff is shown at k = {the_plan.k_max}, the curves' end.",
    ]
    if not any(f"{label}_lo" in frame.columns for label in labels):
        notes.append("No confidence intervals were computed for this page.")
    said = " ".join(_e(note) for note in notes)
    if context.baseline is not None:
        said += (
            f" Under each value: its difference from the baseline {named(context.baseline)}"
            + _e(
                "; * marks a difference that a paired t-test over the common users finds "
                "significant (p < 0.05 after Holm's correction over the page's metrics; the "
                "p-value on hover)."
                if comparison is not None
                else " (a difference of means, without a test)."
            )
            + " (n/a where either value is missing)."
        )
    return (
        '<section id="summary"><h2>Summary</h2><table><tr><th class="text">model</th>'
        f"<th>users</th>{head}</tr>{''.join(body)}</table>"
        f'<p class="note">{said}</p></section>'
    )


def _difference(value: float, base: float) -> str:
    """A value's difference from the baseline's, n/a where either is missing (NaN)."""
    difference = value - base
    return f"{difference:+.4f}" if math.isfinite(difference) else "n/a"


def _significance(comparison: Any, model: str, label: str) -> str:
    if comparison is None:
        return ""
    match = comparison[(comparison["model"] == model) & (comparison["metric"] == label)]
    if match.empty or not bool(match["significant"].iloc[0]):
        return ""
    return f' <span title="p = {float(match["p_value"].iloc[0]):.3g}">*</span>'


# curves -----------------------------------------------------------------------------------------


def _curve_lines(
    results: Results, the_plan: Plan, context: Context
) -> dict[str, dict[str, tuple[list[float], list[float], list[float]]]]:
    """Per curve and model (in the summary's order), its values, lows and highs at k = 1..k_max
    (NaN where the curves' frame has no row)."""
    frame = results.curves
    size = the_plan.k_max
    models = model_names(results.main, context.group_by)
    lines = {
        name: {m: ([math.nan] * size, [math.nan] * size, [math.nan] * size) for m in models}
        for name in the_plan.curves
    }
    rows = zip(
        model_names(frame, context.group_by),
        frame["metric"],
        frame["k"],
        frame["value"],
        frame["lo"],
        frame["hi"],
        strict=True,
    )
    for model, name, k, value, low, high in rows:
        line = lines.get(name, {}).get(model)
        if line is not None and 1 <= k <= size:
            for series, number in zip(line, (value, low, high), strict=True):
                series[k - 1] = _float(number)
    return lines


def _curves(results: Results, the_plan: Plan, context: Context, svgs: list[str]) -> str:
    if not the_plan.curves:
        return ""
    ks = list(range(1, the_plan.k_max + 1))
    parts = []
    for name, by_model in _curve_lines(results, the_plan, context).items():
        lines = {m: values for m, (values, _, _) in by_model.items()}
        bands = {
            m: (low, high)
            for m, (_, low, high) in by_model.items()
            if any(math.isfinite(v) for v in low)
        }
        marked = next(
            (
                int(label.rpartition("@")[2])
                for label in the_plan.summary
                if label.startswith(f"{name}@")
            ),
            None,
        )
        svg = charts.curves(f"{name}@k for k = 1..{the_plan.k_max}", name, ks, lines, bands, marked)
        rows = "".join(
            f"<tr><td>{k}</td>"
            + "".join(
                f'<td title="{values[k - 1]!r}">{_number(values[k - 1])}</td>'
                for values in lines.values()
            )
            + "</tr>"
            for k in ks
        )
        head = "".join(f"<th>{named(m)}</th>" for m in lines)
        parts.append(
            f'<div class="block"><h3>{_e(name)}</h3>{_chart(svgs, svg, f"curve {name}")}'
            f"<details><summary>Exact values of {_e(name)}@k</summary>"
            f"<table><tr><th>k</th>{head}</tr>{rows}</table></details></div>"
        )
    note = "The dotted line marks the cutoff of the summary table."
    return (
        f'<section id="curves"><h2>Metric@k curves</h2><p class="note">{note}</p>'
        f'<div class="charts">{"".join(parts)}</div></section>'
    )


# segments ---------------------------------------------------------------------------------------


# The most segments a page shows, the largest: 10,000 segments drew a chart 648,072 points
# wide in a minute of matplotlib. Report.segments keeps every one.
MOST_SEGMENTS = 24


@dataclass(frozen=True)
class _Segmented:
    """The segments' frame as the page reads it: per row its model and segment value, and the
    segments shown, largest first, with their sizes and whether each is small."""

    frame: pd.DataFrame
    segment: str
    models: list[str]
    values: list[str]
    order: list[str]
    sizes: dict[str, int]
    small: list[bool]

    def unique_models(self) -> list[str]:
        return list(dict.fromkeys(self.models))

    def cells(self, column: str) -> dict[tuple[str, str], float]:
        return {
            (m, v): _float(x)
            for m, v, x in zip(self.models, self.values, self.frame[column], strict=True)
        }


def _segments(results: Results, the_plan: Plan, context: Context, svgs: list[str]) -> str:
    frame = results.segments
    if frame is None or context.segment is None:
        return ""
    segment = context.segment
    values = ["NULL" if _missing(v) else str(v) for v in frame[segment]]
    sizes: dict[str, int] = {}
    for value, users in zip(values, frame["users"], strict=True):
        sizes[value] = max(sizes.get(value, 0), int(users))
    ranked = sorted(sizes, key=lambda v: (-sizes[v], v))
    order = ranked[:MOST_SEGMENTS]
    seen = _Segmented(
        frame,
        segment,
        model_names(frame, context.group_by),
        values,
        order,
        sizes,
        [sizes[v] < context.small_segment for v in order],
    )
    gaps = _gap_lines(results.gaps, context.group_by)
    parts = [_segment_block(seen, label, svgs, gaps.get(label, "")) for label in the_plan.summary]
    note = (
        f"Segments of {named(segment)}, largest first (users: the population of the segment). "
        + _e(
            f"Small: fewer than {context.small_segment} users, where a mean moves a lot with a "
            "few users."
        )
    )
    if len(ranked) > len(order):
        left = len(ranked) - len(order)
        note += _e(
            f" The {len(order)} largest of {len(ranked):,} segments are shown; {left:,} smaller "
            f"ones (at most {sizes[ranked[len(order)]]:,} users each) are left out here and "
            "kept in Report.segments."
        )
    return (
        f'<section id="segments"><h2>Segments</h2><p class="note">{note}</p>'
        f'<div class="charts">{"".join(parts)}</div></section>'
    )


def _gap_lines(gaps: pd.DataFrame | None, group_by: Sequence[str]) -> dict[str, str]:
    """Per metric, a line per model: the gap between its lowest and highest segment and the
    mean absolute difference over the pairs of segments (read_gaps)."""
    if gaps is None or gaps.empty:
        return {}
    lines: dict[str, list[str]] = {}
    for name, (_, row) in zip(model_names(gaps, group_by), gaps.iterrows(), strict=True):
        if row["segments"] < 2:
            continue
        who = f"{named(name)}: " if group_by else ""
        lines.setdefault(str(row["metric"]), []).append(
            f"{who}{_number(row['range'])} from {named(_label(row['lowest']))} to "
            f"{named(_label(row['highest']))} over its {int(row['segments'])} segments (small "
            f"ones too), mean difference between segments {_number(row['mad'])}"
        )
    return {
        metric: f'<p class="note">Gap between segments: {"; ".join(parts)}.</p>'
        for metric, parts in lines.items()
    }


def _label(value: object) -> str:
    return "NULL" if _missing(value) else str(value)


def _segment_block(seen: _Segmented, label: str, svgs: list[str], gap: str = "") -> str:
    """One metric by segment: its chart, the gaps between the segments and the values."""
    frame, order, models = seen.frame, seen.order, seen.unique_models()
    cell = seen.cells(label)
    nan = float("nan")
    heights = {m: [cell.get((m, v), nan) for v in order] for m in models}
    intervals = None
    if f"{label}_lo" in frame.columns and f"{label}_hi" in frame.columns:
        low, high = seen.cells(f"{label}_lo"), seen.cells(f"{label}_hi")
        intervals = {
            m: ([low.get((m, v), nan) for v in order], [high.get((m, v), nan) for v in order])
            for m in models
        }
    names = [
        f"{shortened(v)}\n({seen.sizes[v]:,}{', small' if s else ''})"
        for v, s in zip(order, seen.small, strict=True)
    ]
    svg = charts.grouped_bars(
        f"{label} by {shortened(seen.segment)}", label, names, heights, seen.small, intervals
    )
    rows = "".join(
        f'<tr><td class="text">{named(v)}{" <em>(small)</em>" if s else ""}</td>'
        f"<td>{seen.sizes[v]:,}</td>"
        + "".join(
            f'<td data-model="{_e(m)}" data-segment="{_e(v)}" data-metric="{_e(label)}" '
            f'data-value="{cell.get((m, v), nan)!r}">{_number(cell.get((m, v)))}</td>'
            for m in models
        )
        + "</tr>"
        for v, s in zip(order, seen.small, strict=True)
    )
    head = "".join(f"<th>{named(m)}</th>" for m in models)
    return (
        f'<div class="block"><h3>{_e(label)}</h3>{_chart(svgs, svg, f"segments {label}")}{gap}'
        f"<details><summary>Values of {_e(label)} by {named(seen.segment)}</summary><table>"
        f'<tr><th class="text">{named(seen.segment)}</th><th>users</th>{head}</tr>{rows}</table>'
        "</details></div>"
    )


# distributions ----------------------------------------------------------------------------------


def _distributions(results: Results, the_plan: Plan, context: Context, svgs: list[str]) -> str:
    frame = results.distributions
    if frame is None or not the_plan.distributions:
        return ""
    models = model_names(frame, context.group_by)
    unique_models = list(dict.fromkeys(models))
    parts = []
    zero_rows = []
    for label in the_plan.distributions:
        spread = {
            model: row
            for model, (_, row) in zip(models, frame.iterrows(), strict=True)
            if row["metric"] == label
        }
        shares = {
            m: row["users_at_0"] / row["users"] if row["users"] else float("nan")
            for m, row in spread.items()
        }
        legend = {
            f"{shortened(m)} ({shares[m]:.0%} at 0)": row["quantiles"] for m, row in spread.items()
        }
        svg = charts.ecdf(f"{label} per user (ECDF)", label, legend)
        parts.append(
            f'<div class="block"><h3>{_e(label)}</h3>'
            f"{_chart(svgs, svg, f'distribution {label}')}</div>"
        )
        zero_rows.append(
            f'<tr><td class="text">{_e(label)}</td>'
            + "".join(
                f'<td data-model="{_e(m)}" data-metric="{_e(label)}" '
                f'data-share-zero="{shares[m]!r}">'
                f"{_number(shares[m] * 100, 1)}% of {spread[m]['users']:,}</td>"
                for m in unique_models
                if m in spread
            )
            + "</tr>"
        )
    head = "".join(f"<th>{named(m)}</th>" for m in unique_models)
    table = f'<table><tr><th class="text">users at 0</th>{head}</tr>{"".join(zero_rows)}</table>'
    note = (
        "How the per-user values spread: a mean of 0.3 can be most users near 0.3 or a third at 1 "
        "and the rest at 0. The height of a line at 0 is the share of users at 0. Each line "
        "steps through the percentiles 0 %, 1 %, .., 100 % of the users' values."
    )
    return (
        f'<section id="distributions"><h2>Per-user distributions</h2><p class="note">{_e(note)}</p>'
        f'{table}<div class="charts">{"".join(parts)}</div></section>'
    )


# beyond accuracy --------------------------------------------------------------------------------


def _beyond(results: Results, the_plan: Plan, context: Context, svgs: list[str]) -> str:
    overlap = overlap_labels(the_plan)  # a section of their own, against the baseline
    labels = [label for label in the_plan.beyond if label not in overlap]
    if not labels:
        return ""
    frame = results.main
    models = model_names(frame, context.group_by)
    parts = [
        _chart(
            svgs,
            charts.bars(
                label, label, {m: _float(frame[label].iloc[i]) for i, m in enumerate(models)}
            ),
            f"beyond {label}",
        )
        for label in labels
    ]
    return (
        '<section id="beyond"><h2>Beyond accuracy</h2><div class="charts">'
        f"{''.join(parts)}</div></section>"
    )
