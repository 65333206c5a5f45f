"""The calls no plan can serve, refused before a plan is chosen: each a Refusal naming the
requests it concerns and what to do instead (``check_compatible`` raises the first that
holds)."""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlmetrics.catalog.metrics import Metric, MetricRequest
from sqlmetrics.compose.inputs import ID_TIES, Inputs, Options
from sqlmetrics.errors import SqlmetricsError


@dataclass(frozen=True)
class Refusal:
    """A call check_compatible refuses: requests whose metric ``concerns`` (every call when
    None) under inputs and options where ``holds``; ``message`` names them as ``$labels``."""

    concerns: Callable[[Metric], bool] | None
    holds: Callable[[Inputs, Options], bool]
    message: str


# The refusals in the order they are checked: the first that holds is the error raised.
REFUSALS = (
    Refusal(
        lambda metric: not metric.ties_average,
        lambda inputs, options: options.ties == "average",
        "ties='average' has no exact closed form for $labels; "
        "use ties='id', 'optimistic' or 'pessimistic' for these metrics",
    ),
    Refusal(
        lambda metric: "category" in metric.needs_items,
        lambda inputs, options: inputs.items is None,
        "$labels need an items table with a category column: pass "
        "items=... (CLI: --items), one row per item with the item column and its category",
    ),
    Refusal(
        lambda metric: "category" in metric.needs_items,
        lambda inputs, options: inputs.category is None,
        "$labels read the category of each item, and the items table has no "
        "category column; name yours with columns={'category': ...} (CLI: --category-column)",
    ),
    Refusal(
        lambda metric: metric.needs_history,
        lambda inputs, options: inputs.history is None,
        "$labels compare each recommended item with what the user consumed "
        "before: pass history=... (CLI: --history), one row per (user, item) of the "
        "user's past, with the same user and item columns",
    ),
    Refusal(
        lambda metric: metric.needs_intent,
        lambda inputs, options: inputs.intent is None,
        "$labels judge each item per intent of the query: give the interactions an intent "
        "column, one row per (user, intent, item) judged, and name it with "
        "columns={'intent': ...} (CLI: --intent-column) unless it is called intent; TREC "
        "diversity qrels (qid intent docno rel) give one when read as such: "
        "read_qrels(path, intents=True) (CLI: --input-format trec --trec-intents)",
    ),
    Refusal(
        lambda metric: metric.reads in ("scored", "rated"),
        lambda inputs, options: inputs.rank is not None,
        "$labels read the scores, not positions: give the score column instead of the rank column",
    ),
    Refusal(
        lambda metric: metric.reads == "rated",
        lambda inputs, options: inputs.rating is None,
        "$labels compare the score with a rating: name the interactions' rating "
        "column with columns={'rating': ...} (CLI: --rating-column)",
    ),
    Refusal(
        None,
        lambda inputs, options: inputs.rank is not None and options.ties not in ID_TIES,
        "a rank column fixes the order, so ties must stay 'id' (or 'id_text'); drop the "
        "rank column or ties",
    ),
    Refusal(
        lambda metric: metric.walks_positions,
        lambda inputs, options: inputs.rank is not None and options.ranks == "literal",
        'ranks="literal" cannot serve $labels: it walks each list item by '
        "item in order, which a repeated rank leaves open; give ranks 1, 2, ..., n (the "
        'default ranks="consecutive") or a score column',
    ),
)


def check_compatible(requests: Sequence[MetricRequest], inputs: Inputs, options: Options) -> None:
    """Raises the first of REFUSALS that holds for the call, naming the requests it concerns."""
    for refusal in REFUSALS:
        concerns = refusal.concerns
        labels = [r.label for r in requests if concerns is None or concerns(r.metric)]
        if (labels or concerns is None) and refusal.holds(inputs, options):
            message = string.Template(refusal.message).substitute(labels=", ".join(labels))
            raise SqlmetricsError(message)
    if inputs.weight is not None and not any(r.metric.reads == "scored" for r in requests):
        # a weight nothing reads would change no number: said rather than ignored
        raise SqlmetricsError(
            f"the weight column ({inputs.weight.name}) weighs the scored rows of auc, gauc, "
            "user_auc, logloss, ne, calibration, average_precision, pr_auc and the metrics at a "
            f"score threshold; {', '.join(r.label for r in requests)} read no weight: drop "
            "columns={'weight': ...} (CLI: --weight-column) or ask for one of those"
        )
