"""The markdown written from the code: each generated part must be what ``make docs`` writes now.

README.md's metric table and docs/METRICS.md's tables come from the metric files' headers
(sqlmetrics/cli/markdown.py), fixtures/INDEX.md from the fixtures' expected columns
(tests/fixture_index.py). A new metric file changes them; these tests fail until ``make docs``
has rewritten them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sqlmetrics.catalog.metrics import metrics
from sqlmetrics.cli.markdown import DOCUMENTS, FAMILIES, family, refreshed, region_names
from sqlmetrics.errors import SqlmetricsError
from tests.fixture_index import INDEX, fixtures_by_metric, index_markdown

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("document", DOCUMENTS)
def test_generated_regions_are_current(document: str) -> None:
    text = (REPO / document).read_text(encoding="utf-8")
    assert region_names(text), f"{document} holds no generated region"
    assert text == refreshed(text, document), f"{document} is stale: run make docs"


def test_metrics_page_has_a_table_per_family_and_every_metric_once() -> None:
    """Every metric falls in one family, and docs/METRICS.md shows each family's table once."""
    page = (REPO / "docs" / "METRICS.md").read_text(encoding="utf-8")
    assert region_names(page) == [f"{name}-metrics" for name in FAMILIES]
    for name, metric in metrics().items():
        assert page.count(f"| `{name}` |") == 1, f"{name}: run make docs"
        assert family(metric) in FAMILIES


def test_a_region_without_its_end_is_refused() -> None:
    text = "<!-- generated: ranking-metrics -->\n| stale |\n"
    with pytest.raises(SqlmetricsError, match="no '<!-- end generated: ranking-metrics -->'"):
        refreshed(text, "page.md")
    with pytest.raises(SqlmetricsError, match="no generated region named 'rankings'"):
        refreshed("<!-- generated: rankings -->\n<!-- end generated: rankings -->\n", "page.md")


def test_fixture_index_is_current() -> None:
    assert INDEX.read_text(encoding="utf-8") == index_markdown(), "stale: run make docs"


def test_every_metric_has_a_golden_fixture() -> None:
    """A metric file comes with a fixture (CONTRIBUTING.md, "Adding a metric")."""
    missing = [name for name, stems in fixtures_by_metric().items() if not stems]
    assert not missing, f"no fixture in fixtures/ asks for {missing}"
