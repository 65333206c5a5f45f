"""The report's sections over other models' lists and over groups of items: each model's
overlap with the baseline's lists (intersection, rbo, unexpectedness, when asked for with a
baseline), and the exposure between item groups (evaluate's ``exposure_k``, read_exposure)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from sqlmetrics.compose.lists import reads_baseline
from sqlmetrics.reporting import charts
from sqlmetrics.reporting.common import Context, chart_marker, model_names, named
from sqlmetrics.reporting.common import as_float as _float
from sqlmetrics.reporting.common import as_number as _number
from sqlmetrics.reporting.common import escaped as _e
from sqlmetrics.reporting.common import missing as _missing
from sqlmetrics.reporting.data import Plan, Results

if TYPE_CHECKING:
    import pandas as pd


def overlap_labels(the_plan: Plan) -> list[str]:
    """The page's metrics that compare each model's lists with the baseline's."""
    return [label for label in the_plan.beyond if reads_baseline(the_plan.metrics[label])]


def overlap_section(results: Results, the_plan: Plan, context: Context, svgs: list[str]) -> str:
    """Each model's overlap with the baseline's lists: a bar per model for each metric, and
    the values (the baseline against itself left out: 1, 1 and 0 by definition)."""
    labels = overlap_labels(the_plan)
    if not labels or context.baseline is None or not context.group_by:
        return ""
    frame = results.main
    keep = [str(value) != context.baseline for value in frame[context.group_by[0]]]
    models = [m for m, kept in zip(model_names(frame, context.group_by), keep, strict=True) if kept]
    rows = frame.loc[keep].reset_index(drop=True)
    if not models:
        return ""
    heights = {m: [_float(rows[label].iloc[i]) for label in labels] for i, m in enumerate(models)}
    svg = charts.grouped_bars(
        f"overlap with {context.baseline}",
        "overlap",
        labels,
        heights,
        [False] * len(labels),
        xlabel="metric",
    )
    head = "".join(f"<th>{_e(label)}</th>" for label in labels)
    cells = "".join(
        f'<tr><td class="text">{named(m)}</td>'
        + "".join(
            f'<td data-model="{_e(m)}" data-metric="{_e(label)}" '
            f'data-value="{_float(rows[label].iloc[i])!r}">{_number(rows[label].iloc[i])}</td>'
            for label in labels
        )
        + "</tr>"
        for i, m in enumerate(models)
    )
    note = (
        f"How much each model's lists share with {named(context.baseline)}'s, user by user: "
        "intersection the share of the baseline's top k in the model's, rbo the rank-biased "
        "overlap (1: the same list in the same order), unexpectedness the share of the "
        "model's top k the baseline does not list."
    )
    return (
        f'<section id="overlap"><h2>Overlap with the baseline</h2><p class="note">{note}</p>'
        f'<div class="charts">{chart_marker(svgs, svg, "overlap with the baseline")}</div>'
        f'<table><tr><th class="text">model</th>{head}</tr>{cells}</table></section>'
    )


def _item_group(value: object) -> str:
    return "NULL" if _missing(value) else str(value)


def exposure_section(results: Results, context: Context, svgs: list[str]) -> str:
    """Per item group: its share of each model's exposure in the top k, beside its share of
    the catalogue and of the relevant items (one column when every model has the same)."""
    frame = results.exposure
    if frame is None or frame.empty:
        return ""
    models = model_names(frame, context.group_by)
    groups = list(dict.fromkeys(_item_group(v) for v in frame["item_group"]))
    share: dict[str, dict[tuple[str, str], float]] = {}
    for column in ("catalogue_share", "exposure_share", "relevant_share"):
        share[column] = {
            (m, _item_group(g)): _float(v)
            for m, g, v in zip(models, frame["item_group"], frame[column], strict=True)
        }
    unique = list(dict.fromkeys(models))
    relevant = {m: [share["relevant_share"].get((m, g), math.nan) for g in groups] for m in unique}
    alike = all(values == relevant[unique[0]] for values in relevant.values())
    bars = {"catalogue": [share["catalogue_share"][unique[0], g] for g in groups]}
    if alike:
        bars["relevant items"] = relevant[unique[0]]
    for m in unique:
        bars[m] = [share["exposure_share"].get((m, g), math.nan) for g in groups]
    k = context.exposure_k
    svg = charts.grouped_bars(
        f"share of the exposure in the top {k}",
        "share",
        groups,
        bars,
        [False] * len(groups),
        xlabel="item group",
        legend="share of",
    )
    table = _exposure_table(frame, groups, unique, share, alike)
    distances = "; ".join(f"{named(m)} {_number(_distance(relevant[m], bars[m]))}" for m in unique)
    note = (
        f"Each item group's share of the exposure in the top {k} of every list (position p "
        "weighs patience^(p - 1), LensKit's discount), against its share of the catalogue and "
        "of the relevant items. Half the sum of |exposure share - relevant share| (0: every "
        f"group exposed as often as it is relevant): {distances}."
    )
    return (
        '<section id="exposure"><h2>Exposure between item groups</h2>'
        f'<p class="note">{note}</p>'
        f'<div class="charts">{chart_marker(svgs, svg, "exposure between item groups")}</div>'
        f"{table}</section>"
    )


def _distance(relevant: list[float], exposed: list[float]) -> float:
    pairs = [(r, e) for r, e in zip(relevant, exposed, strict=True) if not math.isnan(r + e)]
    return sum(abs(r - e) for r, e in pairs) / 2 if pairs else math.nan


def _exposure_table(
    frame: pd.DataFrame,
    groups: list[str],
    models: list[str],
    share: dict[str, dict[tuple[str, str], float]],
    alike: bool,
) -> str:
    """Item groups as rows: items, catalogue share, the relevant share (per model unless
    alike) and each model's exposure share."""
    items = {
        _item_group(g): int(n) for g, n in zip(frame["item_group"], frame["items"], strict=True)
    }
    relevant_models = models[:1] if alike else models
    head = "".join(
        [
            '<th class="text">item group</th><th>items</th><th>catalogue share</th>',
            *(
                "<th>relevant share</th>" if alike else f"<th>relevant share, {named(m)}</th>"
                for m in relevant_models
            ),
            *(f"<th>exposure share, {named(m)}</th>" for m in models),
        ]
    )

    def cell(column: str, model: str, group: str) -> str:
        value = share[column].get((model, group), math.nan)
        return (
            f'<td data-model="{_e(model)}" data-item-group="{_e(group)}" '
            f'data-metric="{column}" data-value="{value!r}">{_number(value)}</td>'
        )

    rows = "".join(
        f'<tr><td class="text">{named(g)}</td><td>{items[g]:,}</td>'
        f"<td>{_number(share['catalogue_share'][models[0], g])}</td>"
        + "".join(cell("relevant_share", m, g) for m in relevant_models)
        + "".join(cell("exposure_share", m, g) for m in models)
        + "</tr>"
        for g in groups
    )
    return f"<table><tr>{head}</tr>{rows}</table>"
