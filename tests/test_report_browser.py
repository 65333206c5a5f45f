"""The bundled example's report in headless Chromium: no console error, no request but the page
itself, every chart drawn and non-empty, and a screenshot kept in the test's tmp dir (CI keeps
it as an artifact). Skipped without chromium, unless SQLMETRICS_ENGINES requires it (all, or a
list naming chromium): then it fails."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.chromium import chromium, find_chromium
from tests.conftest import EXAMPLES
from tests.engines.conftest import skip_or_fail

pytest.importorskip("matplotlib")

# Per chart: its name, whether an <svg> is there, its drawn size in pixels, and how many shapes
# (paths, text) it holds.
CHARTS = """
Array.from(document.querySelectorAll('figure[data-chart]')).map(figure => {
  const svg = figure.querySelector('svg');
  const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
  return {
    name: figure.dataset.chart,
    svg: !!svg,
    width: box.width,
    height: box.height,
    paths: svg ? svg.querySelectorAll('path').length : 0,
    texts: svg ? svg.querySelectorAll('text').length : 0,
    title: svg ? Array.from(svg.querySelectorAll('text')).map(t => t.textContent).join(' ') : '',
  };
})
"""


@pytest.fixture(scope="module")
def browser_binary() -> str:
    binary = find_chromium()
    if binary is None:
        skip_or_fail("chromium", "no chromium on PATH (apt-get install chromium)")
    if importlib.util.find_spec("websocket") is None:
        skip_or_fail("chromium", "websocket-client is not installed (pip install -e '.[dev]')")
    assert binary is not None
    return binary


def test_example_report_in_headless_chromium(browser_binary: str, tmp_path: Path) -> None:
    import sqlmetrics
    from sqlmetrics.cli import EXAMPLE_REPORT, EXAMPLE_REPORT_METRICS

    page = tmp_path / "report.html"
    report = sqlmetrics.report(
        str(EXAMPLES / "recommendations.parquet"),
        str(EXAMPLES / "interactions.parquet"),
        EXAMPLE_REPORT_METRICS,
        **EXAMPLE_REPORT,
    )
    report.save(str(page))
    assert page.stat().st_size < 3_000_000
    with chromium(browser_binary) as browser:
        loaded = browser.load(page)
        charts = browser.evaluate(CHARTS)
        headings = browser.evaluate(
            "Array.from(document.querySelectorAll('h2')).map(h => h.textContent)"
        )
        browser.screenshot(tmp_path / "report.png")
    assert loaded.errors == []
    assert loaded.requests == [page.resolve().as_uri()]  # nothing but the page itself
    assert headings == [
        "Summary",
        "Metric@k curves",
        "Segments",
        "Per-user distributions",
        "Beyond accuracy",
        "Diagnostics",
        "Provenance",
        "Definitions",
    ]
    curves = [f"curve {name}" for name in ("ndcg", "map", "recall", "hit_rate")]
    segments = [f"segments {label}" for label in EXAMPLE_REPORT_METRICS[:4]]
    distributions = [f"distribution {label}" for label in EXAMPLE_REPORT_METRICS[:4]]
    assert [chart["name"] for chart in charts] == [
        *curves,
        *segments,
        *distributions,
        "beyond gini@10",
        "beyond novelty@10",
    ]
    for chart in charts:
        assert chart["svg"], chart["name"]
        assert chart["width"] > 200 and chart["height"] > 100, chart
        assert chart["paths"] > 5 and chart["texts"] > 5, chart
        label = chart["name"].split(" ", 1)[1]
        assert label in chart["title"], chart  # its title names what it shows
    screenshot = (tmp_path / "report.png").read_bytes()
    assert screenshot.startswith(b"\x89PNG") and len(screenshot) > 50_000


def test_the_browser_check_sees_errors_and_requests(browser_binary: str, tmp_path: Path) -> None:
    """The checks above can fail: a script error, a console error and a fetch are all seen."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><html><body><img src='http://127.0.0.1:9/none.png'>"
        "<script>console.error('broken'); undefined_function();</script></body></html>"
    )
    with chromium(browser_binary) as browser:
        loaded = browser.load(page)
    assert any("broken" in error for error in loaded.errors)
    assert any("undefined_function" in error for error in loaded.errors)
    assert "http://127.0.0.1:9/none.png" in loaded.requests


def test_the_overlap_and_exposure_sections_in_headless_chromium(
    browser_binary: str, tmp_path: Path
) -> None:
    """A report with the overlap metrics against a baseline and the exposure between the
    example's items in four providers (tests/test_report_groups.py): both sections drawn."""
    import sqlmetrics
    from tests.test_report_groups import METRICS, example_items

    page = tmp_path / "groups.html"
    report = sqlmetrics.report(
        str(EXAMPLES / "recommendations.parquet"),
        str(EXAMPLES / "interactions.parquet"),
        METRICS,
        group_by="model",
        baseline="popularity",
        k_max=10,
        items=example_items(),
        columns={"item_group": "provider"},
        exposure_k=10,
    )
    report.save(str(page))
    with chromium(browser_binary) as browser:
        loaded = browser.load(page)
        charts = browser.evaluate(CHARTS)
        headings = browser.evaluate(
            "Array.from(document.querySelectorAll('h2')).map(h => h.textContent)"
        )
    assert loaded.errors == []
    assert loaded.requests == [page.resolve().as_uri()]
    assert headings[headings.index("Beyond accuracy") + 1 :][:2] == [
        "Overlap with the baseline",
        "Exposure between item groups",
    ]
    drawn = {chart["name"]: chart for chart in charts}
    assert "beyond intersection@10" not in drawn  # in the overlap section instead
    for name, title in (
        ("overlap with the baseline", "overlap with popularity"),
        ("exposure between item groups", "share of the exposure in the top 10"),
    ):
        chart = drawn[name]
        assert chart["svg"] and chart["width"] > 200 and chart["height"] > 100, chart
        assert chart["paths"] > 5 and chart["texts"] > 5, chart
        assert title in chart["title"], chart
