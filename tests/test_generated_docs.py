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
from sqlmetrics.cli.markdown import (
    DOCUMENTS,
    FAMILIES,
    family,
    refreshed,
    region_names,
    site_pages,
    stale_metric_pages,
)
from sqlmetrics.cli.metric_pages import METRIC_PAGES
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


def test_site_pages_are_current() -> None:
    """The site's page of each metric (and their index) and of the command line are what
    ``make docs`` writes now, and no page is left of a metric file gone."""
    stale = [
        str(path.relative_to(REPO))
        for path, text in site_pages(REPO).items()
        if not path.is_file() or path.read_text(encoding="utf-8") != text
    ]
    assert not stale, f"stale: {stale}: run make docs"
    assert not stale_metric_pages(REPO), "pages of metrics gone: run make docs"


def test_every_listed_metric_has_its_page() -> None:
    pages = {path.stem for path in (REPO / METRIC_PAGES).glob("*.md")}
    assert set(metrics()) <= pages
    index = (REPO / METRIC_PAGES / "index.md").read_text(encoding="utf-8")
    for name in metrics():
        assert index.count(f"[`{name}`]({name}.md)") == 1, name


def test_a_page_of_a_metric_gone_is_removed(tmp_path: Path) -> None:
    """write_docs deletes the page of a metric file that no longer exists, and only that."""
    from sqlmetrics.cli.markdown import write_docs

    for document in (*DOCUMENTS, "fixtures/INDEX.md"):
        (tmp_path / document).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / document).write_text((REPO / document).read_text(encoding="utf-8"))
    gone = tmp_path / METRIC_PAGES / "removed_metric.md"
    gone.parent.mkdir(parents=True)
    gone.write_text("# removed\n", encoding="utf-8")
    changed = write_docs(tmp_path)
    assert gone in changed and not gone.exists()
    assert (tmp_path / METRIC_PAGES / "ndcg.md").is_file()
    assert write_docs(tmp_path) == []


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
