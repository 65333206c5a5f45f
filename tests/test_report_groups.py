"""The report's overlap section (each model's intersection, rbo and unexpectedness with the
baseline's lists) and exposure section (read_exposure per item group): their cells are
evaluate's, the overlap metrics leave the beyond-accuracy charts for their own section, and the
page's command line names the item group column and the cutoff."""

from __future__ import annotations

import math
import shlex
from pathlib import Path

import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics import cli
from tests.conftest import EXAMPLES
from tests.test_report import elements

pytest.importorskip("matplotlib")

RECS = str(EXAMPLES / "recommendations.parquet")
TRUTH = str(EXAMPLES / "interactions.parquet")
METRICS = ["ndcg@10", "gini@10", "intersection@10", "rbo@10", "unexpectedness@10"]
OVERLAP = METRICS[2:]


def example_items() -> pd.DataFrame:
    """The example's items in four providers: item_000..029 studio_D, the others by their
    number modulo 3 (a provider of a tenth of the catalogue, three of three tenths)."""
    recommendations, truth = pd.read_parquet(RECS), pd.read_parquet(TRUTH)
    items = pd.DataFrame({"item_id": sorted(set(recommendations.item_id) | set(truth.item_id))})
    number = items.item_id.str[-3:].astype(int)
    items["provider"] = [
        "studio_D" if n < 30 else "studio_" + "ABC"[n % 3] for n in number.tolist()
    ]
    return items


@pytest.fixture(scope="module")
def page() -> sqlmetrics.Report:
    return sqlmetrics.report(
        RECS,
        TRUTH,
        METRICS,
        group_by="model",
        baseline="popularity",
        k_max=10,
        items=example_items(),
        columns={"item_group": "provider"},
        exposure_k=10,
    )


def cells(report: sqlmetrics.Report, key: str) -> dict[tuple[str, ...], float]:
    return {
        (str(attrs["data-model"]), str(attrs.get(key) or ""), str(attrs["data-metric"])): float(
            attrs["data-value"] or "nan"
        )
        for tag, attrs in elements(report.html)
        if tag == "td" and "data-value" in attrs and attrs.get("data-metric")
    }


def section(html: str, anchor: str) -> str:
    start = html.index(f'<section id="{anchor}">')
    return html[start : html.index("</section>", start)]


def test_the_overlap_cells_are_evaluates(page: sqlmetrics.Report) -> None:
    result = sqlmetrics.evaluate(RECS, TRUTH, OVERLAP, group_by="model", baseline="popularity")
    shown = section(page.html, "overlap")
    seen = {
        (str(a["data-model"]), str(a["data-metric"])): float(a["data-value"] or "nan")
        for tag, a in elements(shown)
        if tag == "td" and "data-value" in a
    }
    want = {
        (row["model"], label): row[label]
        for row in result.to_dict("records")
        if row["model"] != "popularity"  # the baseline against itself is left out
        for label in OVERLAP
    }
    assert seen.keys() == want.keys()
    for key, value in want.items():
        assert math.isclose(seen[key], value, rel_tol=1e-12), key
    assert 'data-chart="overlap with the baseline"' in shown
    beyond = section(page.html, "beyond")
    assert 'data-chart="beyond gini@10"' in beyond
    assert not any(label in beyond for label in OVERLAP)


def test_the_exposure_cells_are_read_exposures(page: sqlmetrics.Report) -> None:
    result = sqlmetrics.evaluate(
        RECS,
        TRUTH,
        ["ndcg@10"],
        group_by="model",
        items=example_items(),
        columns={"item_group": "provider"},
        exposure_k=10,
    )
    table = sqlmetrics.read_exposure(result)
    assert page.exposure is not None
    pd.testing.assert_frame_equal(page.exposure, table)
    shown = cells(page, "data-item-group")
    for row in table.to_dict("records"):
        exposed = shown[row["model"], row["item_group"], "exposure_share"]
        assert math.isclose(exposed, row["exposure_share"], rel_tol=1e-12)
    # every model has the same relevant items (the interactions have no model): one column
    relevant = {key for key in shown if key[2] == "relevant_share"}
    assert {key[0] for key in relevant} == {"popularity"}
    for row in table[table.model == "popularity"].to_dict("records"):
        value = shown["popularity", row["item_group"], "relevant_share"]
        assert math.isclose(value, row["relevant_share"], rel_tol=1e-12)
    text = section(page.html, "exposure")
    assert "share of the exposure in the top 10" in text
    assert 'href="#exposure"' in page.html and 'href="#overlap"' in page.html


def test_without_exposure_k_or_a_baseline_neither_section_is_there() -> None:
    report = sqlmetrics.report(RECS, TRUTH, ["ndcg@10", "gini@10"], group_by="model", k_max=10)
    assert report.exposure is None
    assert 'id="exposure"' not in report.html and 'id="overlap"' not in report.html


def test_the_page_s_command_line_names_the_item_group_column(
    page: sqlmetrics.Report, tmp_path: Path
) -> None:
    items = tmp_path / "items.parquet"
    example_items().to_parquet(items)
    report = sqlmetrics.report(
        RECS,
        TRUTH,
        ["ndcg@10"],
        group_by="model",
        k_max=10,
        items=str(items),
        columns={"item_group": "provider"},
        exposure_k=5,
        exposure_patience=0.5,
    )
    line = report.html[report.html.index("sqlmetrics report ") :].split("</", 1)[0]
    words = shlex.split(line.replace("&#x27;", "'"))
    assert words[words.index("--item-group-column") + 1] == "provider"
    assert words[words.index("--exposure-k") + 1] == "5"
    assert words[words.index("--exposure-patience") + 1] == "0.5"
    out = tmp_path / "again.html"
    assert cli.main([*words[1:-2], "-o", str(out), "-q"]) == 0
    assert "share of the exposure in the top 5" in out.read_text()
