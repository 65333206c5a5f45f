"""The documentation site's tables written from the code when the site is built
(docs/hooks/site.py replaces ``<!-- include: NAME -->`` with ``INCLUDES[NAME]()``), so that
they cannot drift from it: nothing of them is committed.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlmetrics.compose import plan
from sqlmetrics.errors import SqlmetricsError

_RULER = re.compile(r"^(=+)( +)=+\s*$")


def docstring_table(text: str) -> str:
    """The first two-column reStructuredText simple table of ``text`` (between its ``====``
    rulers) as a markdown table: a line starting in the first column starts a row, an indented
    one continues the row's second cell."""
    lines = text.splitlines()
    rulers = [(i, match) for i, line in enumerate(lines) if (match := _RULER.match(line))]
    if len(rulers) < 2:
        raise SqlmetricsError("no reStructuredText simple table (two ==== rulers) in the text")
    (first, ruler), (last, _) = rulers[:2]
    split = len(ruler.group(1)) + len(ruler.group(2))
    rows: list[list[str]] = []
    for line in lines[first + 1 : last]:
        if line[:split].strip():
            rows.append([line[:split].strip(), line[split:].strip()])
        elif line.strip() and rows:
            rows[-1][1] += " " + line.strip()
    out = ["| choice | what decides it |", "|---|---|"]
    out += [f"| `{name}` | {cell.replace('|', chr(92) + '|')} |" for name, cell in rows]
    return "\n".join(out) + "\n"


def plan_table() -> str:
    """sqlmetrics/compose/plan.py's table of the choices of plan, in the order they are made."""
    return docstring_table(plan.__doc__ or "")


INCLUDES: dict[str, Callable[[], str]] = {"plan-table": plan_table}
