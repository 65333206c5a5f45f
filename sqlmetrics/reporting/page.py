"""The report as one HTML page: inline CSS and SVG, no script, nothing fetched."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlmetrics.reporting import charts
from sqlmetrics.reporting.data import Plan, Results

if TYPE_CHECKING:
    import pandas as pd

GENERATOR = "sqlmetrics report"
"""In every page's <meta name="generator">: how a page (a file we may replace) is recognised."""
DEFAULT_SMALL_SEGMENT = 30
# Metrics where the smaller value is the better one: errors, and gini (a more even exposure).
LOWER_IS_BETTER = frozenset({"rmse", "mae", "mse", "logloss", "gini"})

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


@dataclass(frozen=True)
class Context:
    """What the page says about how it was made."""

    inputs: Mapping[str, str]  # role -> path, table name or a description of the object
    options: Mapping[str, Any]  # the options as given, for the provenance
    versions: Mapping[str, str]
    engine: str
    created: str  # UTC, ISO 8601
    command: str | None  # the equivalent CLI command, when the inputs are files or tables
    group_by: Sequence[str]
    segment: str | None
    baseline: str | None
    small_segment: int = DEFAULT_SMALL_SEGMENT


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _float(value: Any) -> float:
    """A cell as a float: NaN for NULL (a group without a value, e.g. no population)."""
    return float("nan") if _missing(value) else float(value)


def _number(value: object, digits: int = 4) -> str:
    number = _float(value)
    return "n/a" if math.isnan(number) else f"{number:.{digits}f}"


def model_names(frame: pd.DataFrame, group_by: Sequence[str]) -> list[str]:
    """A model's name on the page: its group values joined (``all`` without group_by)."""
    if not group_by:
        return ["all"] * len(frame)
    return [
        " · ".join("NULL" if _missing(value) else str(value) for value in row)
        for row in frame[list(group_by)].itertuples(index=False, name=None)
    ]


def _missing(value: object) -> bool:
    try:
        return bool(value is None or value != value)  # NaN, None, pandas.NA
    except (TypeError, ValueError):
        return True


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
        _diagnostics(results, the_plan, context),
        _provenance(results, the_plan, context),
        _definitions(the_plan),
    ]
    # The charts were placed as markers: their ids are made unique across the page here.
    body = "\n".join(section for section in sections if section)
    for index, svg in enumerate(charts.svg_ids_unique(charts_svg)):
        body = body.replace(f"<!--chart:{index}-->", svg, 1)
    title = "sqlmetrics report"
    if context.group_by:
        title += f": {', '.join(context.group_by)}"
    nav = " ".join(
        f'<a href="#{anchor}">{name}</a>'
        for anchor, name in (
            ("summary", "Summary"),
            ("curves", "Curves"),
            ("segments", "Segments"),
            ("distributions", "Distributions"),
            ("beyond", "Beyond accuracy"),
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
        f"<h1>{_e(title)}</h1>\n<nav>{nav}</nav>\n{body}\n</main>\n</body>\n</html>\n"
    )


def _chart(svgs: list[str], svg: str, name: str) -> str:
    svgs.append(svg)
    return f'<figure class="chart" data-chart="{_e(name)}"><!--chart:{len(svgs) - 1}--></figure>'


# provenance -------------------------------------------------------------------------------------


def _provenance(results: Results, the_plan: Plan, context: Context) -> str:
    rows = []
    for role, described in context.inputs.items():
        count = results.rows.get(role)
        rows.append((role, f"{described} ({'?' if count is None else f'{count:,}'} rows)"))
    rows += [
        ("created", context.created),
        ("engine", context.engine),
        *((name, version) for name, version in context.versions.items()),
        ("group by (models)", ", ".join(context.group_by) or "(none: one model, all)"),
        ("segment", context.segment or "(none)"),
        ("baseline", context.baseline or "(none)"),
        ("curves", f"k = 1..{the_plan.k_max}"),
        *((name, repr(value)) for name, value in context.options.items()),
    ]
    table = "".join(
        f'<tr><th class="text">{_e(k)}</th><td class="text">{_e(v)}</td></tr>' for k, v in rows
    )
    command = (
        f"<p>The same page from the command line:</p><pre>{_e(context.command)}</pre>"
        if context.command
        else '<p class="note">The inputs are objects in memory, so no command line reproduces '
        "this page; the options above do, with the same objects.</p>"
    )
    return f'<section id="provenance"><h2>Provenance</h2><table>{table}</table>{command}</section>'


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
        if values:
            lower = the_plan.metrics[label].name in LOWER_IS_BETTER
            wins.setdefault((min(values) if lower else max(values))[1], []).append(label)
    said = "; ".join(
        f"{_e(model)} is best on {_e(', '.join(labels))}" for model, labels in wins.items()
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
            lower = the_plan.metrics[label].name in LOWER_IS_BETTER
            best = bool(column) and len(models) > 1 and value == (min if lower else max)(column)
            delta = ""
            if baseline_row is not None and row != baseline_row:
                base, _ = _cell(frame, baseline_row, label)
                mark = _significance(comparison, model, label)
                delta = (
                    f'<span class="delta">{value - base:+.4f} vs {_e(context.baseline)}'
                    f"{mark}</span>"
                )
            cells.append(
                f'<td class="{"best" if best else ""}" data-model="{_e(model)}" '
                f'data-metric="{_e(label)}" data-value="{value!r}" title="{value!r}">'
                f"{_number(value)}{interval}{delta}</td>"
            )
        users = frame["users"].iloc[row] if "users" in frame.columns else ""
        body.append(
            f'<tr><td class="text">{_e(model)}</td><td>{_e(users)}</td>{"".join(cells)}</tr>'
        )
    notes = [
        "Bold: the best model on that metric (the lowest for "
        f"{', '.join(sorted(LOWER_IS_BETTER))}). Hover a cell for its exact value.",
        f"A metric asked without a cutoff is shown at k = {the_plan.k_max}, the curves' end.",
    ]
    if not any(f"{label}_lo" in frame.columns for label in labels):
        notes.append("No confidence intervals were computed for this page.")
    if context.baseline is not None:
        notes.append(
            f"Under each value: its difference from the baseline {context.baseline!r}"
            + (
                "; * marks a difference that a paired t-test over the common users finds "
                "significant (p < 0.05 after Holm's correction over the page's metrics; the "
                "p-value on hover)."
                if comparison is not None
                else " (a difference of means, without a test)."
            )
        )
    return (
        '<section id="summary"><h2>Summary</h2><table><tr><th class="text">model</th>'
        f"<th>users</th>{head}</tr>{''.join(body)}</table>"
        f'<p class="note">{" ".join(_e(note) for note in notes)}</p></section>'
    )


def _significance(comparison: Any, model: str, label: str) -> str:
    if comparison is None:
        return ""
    match = comparison[(comparison["model"] == model) & (comparison["metric"] == label)]
    if match.empty or not bool(match["significant"].iloc[0]):
        return ""
    return f' <span title="p = {float(match["p_value"].iloc[0]):.3g}">*</span>'


# curves -----------------------------------------------------------------------------------------


def _curves(results: Results, the_plan: Plan, context: Context, svgs: list[str]) -> str:
    if not the_plan.curves:
        return ""
    frame = results.main
    models = model_names(frame, context.group_by)
    ks = list(range(1, the_plan.k_max + 1))
    parts = []
    for name, labels in the_plan.curves.items():
        lines = {
            m: [_float(frame[label].iloc[i]) for label in labels] for i, m in enumerate(models)
        }
        bands = {}
        if all(f"{label}_lo" in frame.columns for label in labels):
            bands = {
                m: (
                    [_float(frame[f"{label}_lo"].iloc[i]) for label in labels],
                    [_float(frame[f"{label}_hi"].iloc[i]) for label in labels],
                )
                for i, m in enumerate(models)
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
                f'<td title="{lines[m][k - 1]!r}">{_number(lines[m][k - 1])}</td>' for m in models
            )
            + "</tr>"
            for k in ks
        )
        head = "".join(f"<th>{_e(m)}</th>" for m in models)
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


def _segments(results: Results, the_plan: Plan, context: Context, svgs: list[str]) -> str:
    frame = results.segments
    if frame is None or context.segment is None:
        return ""
    segment = context.segment
    values = ["NULL" if _missing(v) else str(v) for v in frame[segment]]
    models = model_names(frame, context.group_by)
    sizes: dict[str, int] = {}
    for value, users in zip(values, frame["users"], strict=True):
        sizes[value] = max(sizes.get(value, 0), int(users))
    order = sorted(sizes, key=lambda v: (-sizes[v], v))
    small = [sizes[v] < context.small_segment for v in order]
    names = [
        f"{v}\n({sizes[v]:,}{', small' if s else ''})" for v, s in zip(order, small, strict=True)
    ]
    unique_models = list(dict.fromkeys(models))
    parts = []
    for label in the_plan.summary:
        cell = {
            (m, v): _float(frame[label].iloc[i])
            for i, (m, v) in enumerate(zip(models, values, strict=True))
        }
        heights = {m: [cell.get((m, v), float("nan")) for v in order] for m in unique_models}
        intervals = None
        if f"{label}_lo" in frame.columns and f"{label}_hi" in frame.columns:
            bounds = {
                (m, v): (_float(frame[f"{label}_lo"].iloc[i]), _float(frame[f"{label}_hi"].iloc[i]))
                for i, (m, v) in enumerate(zip(models, values, strict=True))
            }
            nan = (float("nan"), float("nan"))
            intervals = {
                m: (
                    [bounds.get((m, v), nan)[0] for v in order],
                    [bounds.get((m, v), nan)[1] for v in order],
                )
                for m in unique_models
            }
        svg = charts.grouped_bars(f"{label} by {segment}", label, names, heights, small, intervals)
        rows = "".join(
            f'<tr><td class="text">{_e(v)}{" <em>(small)</em>" if s else ""}</td>'
            f"<td>{sizes[v]:,}</td>"
            + "".join(
                f'<td data-model="{_e(m)}" data-segment="{_e(v)}" data-metric="{_e(label)}" '
                f'data-value="{cell.get((m, v), float("nan"))!r}">{_number(cell.get((m, v)))}</td>'
                for m in unique_models
            )
            + "</tr>"
            for v, s in zip(order, small, strict=True)
        )
        head = "".join(f"<th>{_e(m)}</th>" for m in unique_models)
        parts.append(
            f'<div class="block"><h3>{_e(label)}</h3>{_chart(svgs, svg, f"segments {label}")}'
            f"<details><summary>Values of {_e(label)} by {_e(segment)}</summary><table>"
            f'<tr><th class="text">{_e(segment)}</th><th>users</th>{head}</tr>{rows}</table>'
            "</details></div>"
        )
    note = (
        f"Segments of {segment!r}, largest first (users: the population of the segment). Small: "
        f"fewer than {context.small_segment} users, where a mean moves a lot with a few users."
    )
    return (
        f'<section id="segments"><h2>Segments</h2><p class="note">{_e(note)}</p>'
        f'<div class="charts">{"".join(parts)}</div></section>'
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
        legend = {f"{m} ({shares[m]:.0%} at 0)": row["quantiles"] for m, row in spread.items()}
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
    head = "".join(f"<th>{_e(m)}</th>" for m in unique_models)
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
    if not the_plan.beyond:
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
        for label in the_plan.beyond
    ]
    return (
        '<section id="beyond"><h2>Beyond accuracy</h2><div class="charts">'
        f"{''.join(parts)}</div></section>"
    )


# diagnostics ------------------------------------------------------------------------------------


def _meanings(the_plan: Plan, options: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    population = options.get("population", "all")
    ties = options.get("ties", "id")
    deepest = f"the first {the_plan.k_max} positions"
    ties_said = {
        "id": "by item id, descending",
        "id_text": "by the item id's text, descending",
        "optimistic": "relevant items first",
        "pessimistic": "relevant items last",
        "average": "as the average over every order",
    }.get(str(ties), str(ties))
    judged = population in ("judged", "all_judged")  # trec_eval's: every interaction counts
    return {
        "users_in_interactions": (
            "users in the interactions",
            f"any relevance; with population='{population}' the population is those with "
            + ("a list too" if population == "judged" else "any interaction")
            if judged
            else "any relevance; the population is those with a relevant one",
        ),
        "users_with_recommendations": ("users with a list", "users the model recommended to"),
        "population_without_recommendations": (
            "users with relevant items and no recommendations",
            f"they score 0 on every ranking metric because population='{population}'"
            if population in ("all", "all_judged")
            else f"they are left out of the means because population='{population}'",
        ),
        "recommended_without_relevant": (
            "users recommended to with nothing relevant",
            f"those with an interaction (judged) are in the population ('{population}') and "
            "score 0; the others count in no mean"
            if judged
            else "not in the population: their lists count in no mean",
        ),
        "lists_shorter_than_k": (
            f"lists shorter than k = {the_plan.k_max}",
            "positions past a list's end hold nothing: metrics at deeper cutoffs cannot rise there",
        ),
        "duplicate_recommendations": (
            f"repeated (user, item) rows in {deepest}",
            "duplicates='first' kept the best-placed row of each",
        ),
        "duplicate_interactions": (
            "repeated (user, item) interactions",
            "each pair counts once, with its largest relevance",
        ),
        "null_scores": ("recommendations without a score", "they rank after every scored item"),
        "tied_score_groups": (
            f"groups of tied scores in {deepest} (and the next)",
            f"ties='{ties}' ordered them ({ties_said}); another order can change the numbers",
        ),
        "single_class_users": (
            "users whose scored rows are all relevant or none",
            "gauc and user_auc skip them",
        ),
    }


def _diagnostics(results: Results, the_plan: Plan, context: Context) -> str:
    frame = results.diagnostics
    models = model_names(frame, context.group_by)
    meanings = _meanings(the_plan, context.options)
    head = "".join(f"<th>{_e(m)}</th>" for m in models)
    rows = []
    for column, (what, meaning) in meanings.items():
        if column not in frame.columns:
            continue
        counts = [int(v) for v in frame[column]]
        muted = "" if any(counts) else ' class="muted"'
        cells = "".join(
            f'<td data-model="{_e(m)}" data-diagnostic="{_e(column)}">{c:,}</td>'
            for m, c in zip(models, counts, strict=True)
        )
        rows.append(
            f'<tr{muted}><td class="text">{_e(what)}<br><code>{_e(column)}</code></td>{cells}'
            f'<td class="text">{_e(meaning)}</td></tr>'
        )
    sentences = []
    for column, (what, meaning) in meanings.items():
        if (
            column in ("users_in_interactions", "users_with_recommendations")
            or column not in frame.columns
        ):
            continue
        for model, count in zip(models, frame[column], strict=True):
            if int(count):
                sentences.append(f"<li>{_e(model)}: {int(count):,} {_e(what)}; {_e(meaning)}.</li>")
    said = (
        f"<ul>{''.join(sentences)}</ul>"
        if sentences
        else "<p>Nothing in the data needs a caveat.</p>"
    )
    return (
        '<section id="diagnostics"><h2>Diagnostics</h2>'
        '<p class="note">What in the data could mislead, counted by the query of the curves.</p>'
        f'{said}<table><tr><th class="text">what</th>{head}'
        '<th class="text">what it means for the numbers</th></tr>'
        f"{''.join(rows)}</table></section>"
    )


# definitions ------------------------------------------------------------------------------------


def _definitions(the_plan: Plan) -> str:
    seen: dict[str, str] = {}
    rows = []
    for metric in the_plan.metrics.values():
        if metric.name in seen:
            continue
        seen[metric.name] = metric.name
        rows.append(
            f'<tr><td class="text"><code>{_e(metric.name)}</code></td><td class="text">'
            f"{_e(metric.title)}: {_e(metric.definition)}</td>"
            f'<td class="text"><code>sqlmetrics/sql/{_e(metric.name)}.sql</code></td></tr>'
        )
    return (
        '<section id="definitions"><h2>Definitions</h2><table><tr><th class="text">metric</th>'
        '<th class="text">definition (its SQL file\'s header)</th><th class="text">file</th></tr>'
        f'{"".join(rows)}</table><p class="note">Under a profile, a name may stand for a variant: '
        "see the provenance's profile and docs/profiles.md.</p></section>"
    )
