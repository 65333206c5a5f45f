"""Custom gains of the relevance levels (``ndcg(gains={1:3,2:9,4:4.5})@10``, trec_eval's
``-m ndcg.1=3,2=9,4=4.5``): the parameter's text read and checked, its one written form, and
the gain of an item as the SQL that judgements.sql's ``$gain`` is bound to.

A level listed takes its gain (0 or negative allowed, as trec_eval allows; level 0 may be
given one); a level not listed keeps the usual gain, its relevance when relevant (above the
threshold), else 0; an item the interactions do not judge gains 0.
"""

from __future__ import annotations

import math
import re

from sqlglot import exp

from sqlmetrics.errors import SqlmetricsError

# what the refusal says the parameter may be
GAINS_VALUES = (
    "rel=gain pairs in braces, like {1:3,2:9,4:4.5} (ir_measures' gains; trec_eval writes "
    "ndcg.1=3,2=9,4=4.5): each rel level a whole number of at least 0, once, each gain a number"
)
_LEVEL = re.compile(r"\+?\d+")
_GAIN = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def parse_gains(label: str, text: str, separator: str = ":") -> dict[int, float]:
    """``{1:3,2:9}`` (``1=3,2=9`` with ``separator`` "=", trec_eval's) as {1: 3.0, 2: 9.0}."""
    inner = text.strip()
    if separator == ":":
        if not (inner.startswith("{") and inner.endswith("}")):
            raise SqlmetricsError(f"gains in {label!r} must be {GAINS_VALUES}, not {text!r}")
        inner = inner[1:-1]
    gains: dict[int, float] = {}
    for part in filter(None, (piece.strip() for piece in inner.split(","))):
        level, equals, gain = (side.strip() for side in part.partition(separator))
        if level.startswith("-") and _LEVEL.fullmatch(level[1:]):
            # trec_eval reads -1 as every document outside the qrels and -2 as the documents
            # judged with a negative rel (RELVALUE_NONPOOL, RELVALUE_UNJUDGED), no rel level
            raise SqlmetricsError(
                f"gains in {label!r}: {level} is not a rel level (trec_eval would give its gain "
                "to the documents the qrels do not judge); levels are whole numbers of at least 0"
            )
        if not equals or not _LEVEL.fullmatch(level) or not _GAIN.fullmatch(gain):
            raise SqlmetricsError(f"gains in {label!r} must be {GAINS_VALUES}, not {part!r}")
        if int(level) in gains:
            raise SqlmetricsError(f"gains in {label!r} give rel level {int(level)} twice")
        if not math.isfinite(float(gain)):
            raise SqlmetricsError(f"gains in {label!r}: {gain!r} is not a finite number")
        gains[int(level)] = float(gain)
    return gains


def written(gains: dict[int, float]) -> str:
    """The gains' one written form, levels in order: ``{1:3,2:9,4:4.5}``."""
    return "{" + ",".join(f"{level}:{_text(gains[level])}" for level in sorted(gains)) + "}"


def _text(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)


def gain_of(gains: dict[int, float], relevance: exp.Expr, threshold: float) -> exp.Expr:
    """The gain of an item of relevance ``relevance`` (NULL: not judged): a listed level's
    gain, else the relevance when above ``threshold``, else 0."""
    case = exp.Case()
    for level in sorted(gains):
        listed = exp.EQ(this=relevance.copy(), expression=exp.convert(level))
        case = case.when(listed, _number(gains[level]))
    relevant = exp.GT(this=relevance.copy(), expression=exp.convert(threshold))
    # one type for every branch: ClickHouse makes a Variant of an integer relevance and a
    # fractional gain, which it cannot sort by
    return exp.cast(case.when(relevant, relevance.copy()).else_(exp.Literal.number(0)), "DOUBLE")


def _number(value: float) -> exp.Expr:
    """A gain as a literal (a negative one as its negation: a literal holds no sign)."""
    literal = exp.Literal.number(repr(abs(value)))
    return exp.Neg(this=literal) if value < 0 else literal
