"""What the page's sections share: how the page was made (Context), and how a value or a name
is written into it (escaped, bidi-isolated, shortened; numbers with NaN as n/a)."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_SMALL_SEGMENT = 30


@dataclass(frozen=True)
class Context:
    """What the page says about how it was made."""

    inputs: Mapping[str, str]  # role -> path, table name or a description of the object
    options: Mapping[str, Any]  # the options as given, for the provenance
    versions: Mapping[str, str]
    engine: str
    created: str  # UTC, ISO 8601
    command: str | None  # the equivalent CLI command, when the inputs are files or tables
    command_note: str  # why there is no such command, when there is none
    group_by: Sequence[str]
    segment: str | None
    baseline: str | None
    small_segment: int = DEFAULT_SMALL_SEGMENT
    exposure_k: int | None = None  # the cutoff of the exposure between item groups


def chart_marker(svgs: list[str], svg: str, name: str) -> str:
    """A chart's place on the page: ``svg`` is kept in ``svgs`` and put there once every chart
    is drawn (page.render makes the ids of their SVGs unique across the page)."""
    svgs.append(svg)
    return (
        f'<figure class="chart" data-chart="{escaped(name)}"><!--chart:{len(svgs) - 1}--></figure>'
    )


def escaped(value: object) -> str:
    return html.escape(str(value), quote=True)


# A name longer than this is shown as its start, an ellipsis and its end (the whole name on
# hover): a 3,000-character model name pushed the numbers off the page.
LONGEST_NAME = 60
NAME_END = 12


def shortened(name: str) -> str:
    """A name of the data (a model, a segment) as the page shows it in text and charts."""
    if len(name) <= LONGEST_NAME:
        return name
    return f"{name[: LONGEST_NAME - NAME_END - 1]}…{name[-NAME_END:]}"


def named(name: object) -> str:
    """A name of the data in HTML text: escaped, shortened (whole on hover) and isolated
    (<bdi>), so that right-to-left characters or a U+202E in it reorder only itself, never
    the sentence or the numbers around it."""
    text = str(name)
    short = shortened(text)
    title = "" if short == text else f' title="{escaped(text)}"'
    return f"<bdi{title}>{escaped(short)}</bdi>"


def as_float(value: Any) -> float:
    """A cell as a float: NaN for NULL (a group without a value, e.g. no population)."""
    return float("nan") if missing(value) else float(value)


def as_number(value: object, digits: int = 4) -> str:
    number = as_float(value)
    return "n/a" if math.isnan(number) else f"{number:.{digits}f}"


def model_names(frame: pd.DataFrame, group_by: Sequence[str]) -> list[str]:
    """A model's name on the page: its group values joined (``all`` without group_by)."""
    if not group_by:
        return ["all"] * len(frame)
    return [
        " · ".join("NULL" if missing(value) else str(value) for value in row)
        for row in frame[list(group_by)].itertuples(index=False, name=None)
    ]


def missing(value: object) -> bool:
    try:
        return bool(value is None or value != value)  # NaN, None, pandas.NA
    except (TypeError, ValueError):
        return True
