"""The documentation site's pages written from the code (sqlmetrics/cli/pages.py)."""

from __future__ import annotations

import pytest

from sqlmetrics.cli.pages import docstring_table, plan_table
from sqlmetrics.compose import plan
from sqlmetrics.errors import SqlmetricsError


def test_a_docstring_table_becomes_a_markdown_table() -> None:
    text = """Intro.

=====  ==========
one    first line
       continued
two    a | b
=====  ==========

After.
"""
    assert docstring_table(text) == (
        "| choice | what decides it |\n|---|---|\n"
        "| `one` | first line continued |\n| `two` | a \\| b |\n"
    )
    with pytest.raises(SqlmetricsError, match="no reStructuredText simple table"):
        docstring_table("no table here")


def test_the_plan_table_has_a_row_per_choice_of_plan_py() -> None:
    """Every choice the module's table names is a row of the site's table, in its order."""
    rows = [line.split("|")[1].strip(" `") for line in plan_table().splitlines()[2:]]
    assert rows[:2] == ["groups", "lists"]
    for row in rows:
        assert f"\n{row} " in (plan.__doc__ or "")


def test_the_diagnostics_page_names_every_count() -> None:
    """A diagnostic or input check added to the query is described on the site's page."""
    from pathlib import Path

    from sqlmetrics.compose.diagnostics import CHECKS, DIAGNOSTICS

    page = Path(__file__).resolve().parents[1] / "docs" / "reference" / "diagnostics.md"
    text = page.read_text(encoding="utf-8")
    missing = [name for name in (*DIAGNOSTICS, *CHECKS) if f"`{name}`" not in text]
    assert not missing, f"docs/reference/diagnostics.md does not describe {missing}"
