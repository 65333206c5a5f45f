"""What the error for an unknown metric name says: why, when trec_eval or ir_measures computes
it and sqlmetrics does not; the metric meant, for a synonym or a one-letter typo."""

from __future__ import annotations

import re
from collections.abc import Sequence

from sqlmetrics.errors import SqlmetricsError

# Names of measures that trec_eval or ir_measures compute and sqlmetrics does not (yet): the
# error says so instead of suggesting a metric of a similar spelling but another quantity
# (bpref is not rprec). Matched on the name without its cutoff.
ELSEWHERE = {
    "relstring": "a string of relevance values, not a number",
    "num_q": "the number of queries is the result's users column (and a line of --format trec)",
    "runid": "the run's tag is a line of --format trec",
}
# Names of the same quantity that are not spellings sqlmetrics accepts: suggested as they are.
SYNONYMS = {
    "mean_average_precision": "map",
    "hitrate": "hit_rate",
    "hitratio": "hit_rate",
    "reciprocal_rank": "mrr",
    "mean_reciprocal_rank": "mrr",
    "rprecision": "r_precision",
    "num_relevant_retrieved": "hits",
}


def unknown_metric(label: str, name: str, spellings: Sequence[str]) -> SqlmetricsError:
    """The error for an unknown name: why, when another tool computes it; the metric meant,
    for a known synonym or a one-letter typo of one of ``spellings``; else where to look. The
    nearest spelling alone is not suggested: set_recall is not score_recall."""
    where = "Run `sqlmetrics metrics` for the list."
    bare = re.sub(r"([._]?\d+(\.\d+)?)+$", "", name)  # iprec_at_recall_0.10 -> iprec_at_recall
    for candidate in (name, bare):
        if candidate in ELSEWHERE:
            return SqlmetricsError(
                f"unknown metric {label!r}: trec_eval's {candidate} is not in sqlmetrics "
                f"({ELSEWHERE[candidate]}). {where}"
            )
    meant = SYNONYMS.get(name) or SYNONYMS.get(bare)
    if meant is None:
        typos = [known for known in spellings if _edits(name, known) <= 1 and len(name) >= 4]
        meant = min(typos) if typos else None
    hint = f" Did you mean {meant!r}?" if meant else ""
    return SqlmetricsError(f"unknown metric {label!r}.{hint} {where}")


def _edits(left: str, right: str) -> int:
    """Edits (insert, delete, substitute, swap two neighbours) from left to right."""
    if abs(len(left) - len(right)) > 1:
        return 2
    previous: list[int] = []
    row = list(range(len(right) + 1))
    for i, a in enumerate(left, 1):
        before, previous, row = previous, row, [i] + [0] * len(right)
        for j, b in enumerate(right, 1):
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a != b))
            if i > 1 and j > 1 and a == right[j - 2] and left[i - 2] == b:
                row[j] = min(row[j], before[j - 2] + 1)
    return row[-1]
