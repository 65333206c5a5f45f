"""The page's sections on how it was made and what it means: the diagnostics, the provenance
and the definitions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlmetrics.reporting.common import Context, model_names, named
from sqlmetrics.reporting.common import escaped as _e
from sqlmetrics.reporting.data import Plan, Results

# provenance -------------------------------------------------------------------------------------


def provenance(results: Results, the_plan: Plan, context: Context) -> str:
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
        f"<p>The same page from the command line{_filled(context.command)}:</p>"
        f"<pre>{_e(context.command)}</pre>"
        if context.command
        else f'<p class="note">{_e(context.command_note)}</p>'
    )
    return f'<section id="provenance"><h2>Provenance</h2><table>{table}</table>{command}</section>'


def _filled(command: str) -> str:
    return " (with the connection's password where it shows ***)" if "***" in command else ""


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


def diagnostics(results: Results, the_plan: Plan, context: Context) -> str:
    frame = results.diagnostics
    models = model_names(frame, context.group_by)
    meanings = _meanings(the_plan, context.options)
    head = "".join(f"<th>{named(m)}</th>" for m in models)
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
                sentences.append(
                    f"<li>{named(model)}: {int(count):,} {_e(what)}; {_e(meaning)}.</li>"
                )
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


def definitions(the_plan: Plan) -> str:
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
