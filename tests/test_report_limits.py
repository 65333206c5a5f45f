"""The report at its documented limits: curves up to k_max = 1000 as rows of one query whose
width does not grow with k_max, refusals said before the queries of the metrics (too many curve
labels, models), and the largest segments shown with how many were left out."""

from __future__ import annotations

import re
from typing import Any

import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics.engines import duckdb_passes
from sqlmetrics.engines.duckdb import DuckDBEngine
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.reporting import curves, data, page
from tests.conftest import EXAMPLES

pytest.importorskip("matplotlib")

RECS = str(EXAMPLES / "recommendations.parquet")
TRUTH = str(EXAMPLES / "interactions.parquet")


@pytest.fixture
def widths(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of columns of every result the report's queries return on DuckDB."""
    seen: list[int] = []
    fetch = DuckDBEngine.fetch
    split = duckdb_passes.split_diagnostics

    def fetched(self: DuckDBEngine, sql: str) -> Any:
        names, rows = fetch(self, sql)
        seen.append(len(names))
        return names, rows

    def split_fetched(*args: Any, **kwargs: Any) -> Any:
        metrics, counted = split(*args, **kwargs)
        seen.append(metrics.shape[1])
        return metrics, counted

    monkeypatch.setattr(DuckDBEngine, "fetch", fetched)
    monkeypatch.setattr(duckdb_passes, "split_diagnostics", split_fetched)
    return seen


def exact_values(html: str, name: str) -> dict[tuple[str, int], float]:
    """The curve's exact values table: (model, k) -> value (the title of each cell)."""
    table = re.search(rf"Exact values of {name}@k</summary><table>(.*?)</table>", html, re.S)
    assert table is not None
    models = re.findall(r"<th><bdi>(\w+)</bdi></th>", table.group(1))
    values: dict[tuple[str, int], float] = {}
    for k, cells in re.findall(r"<tr><td>(\d+)</td>(.*?)</tr>", table.group(1)):
        for model, value in zip(models, re.findall(r'title="([^"]+)"', cells), strict=True):
            values[(model, int(k))] = float(value)
    return values


@pytest.mark.parametrize("k_max", [100, data.LARGEST_K_MAX])
def test_curves_to_the_largest_k_max_are_rows_not_columns(widths: list[int], k_max: int) -> None:
    """The curves are one query's rows per (model, k): no result of the report's queries is
    wider than a few dozen columns at k_max = 100 or 1000 (it was a column per metric and k,
    three with intervals: 6 metrics at 1000 crashed DuckDB after minutes), and the values
    at the ends and in the middle are evaluate's, to the bit (their intervals to rounding)."""
    metrics = ["ndcg@10", "recall@20", "gini@10"]
    report = sqlmetrics.report(RECS, TRUTH, metrics, group_by="model", k_max=k_max)
    assert widths and max(widths) < 60, widths
    frame = report.curves.set_index(["model", "metric", "k"])
    assert len(frame) == 2 * 2 * k_max
    ks = [1, 10, 37, k_max]
    labels = [f"{name}@{k}" for name in ("ndcg", "recall") for k in ks]
    expected = sqlmetrics.evaluate(RECS, TRUTH, labels, group_by="model", ci=data.PAGE_CI)
    table = exact_values(report.html, "ndcg")
    for row in expected.to_dict("records"):
        for name in ("ndcg", "recall"):
            for k in ks:
                label = f"{name}@{k}"
                got = frame.loc[(row["model"], name, k)]
                assert got["value"] == row[label], label
                # the squares are summed step by step here, user by user there: to rounding
                interval = (row[f"{label}_lo"], row[f"{label}_hi"])
                assert (got["lo"], got["hi"]) == pytest.approx(interval, rel=1e-12, abs=1e-15)
        assert table[(row["model"], k_max)] == row[f"ndcg@{k_max}"]


def test_curves_the_curve_plan_cannot_take_are_labels_within_a_budget(
    widths: list[int],
) -> None:
    """trec_eval's judged population is not the curve plan's: the curves are labels of the
    main call, the same numbers; beyond curves.LARGEST_LABELS of them the report is refused
    before any query of the metrics, saying why and what k_max fits."""
    report = sqlmetrics.report(
        RECS, TRUTH, ["ndcg@10"], group_by="model", k_max=12, population="judged"
    )
    labels = [f"ndcg@{k}" for k in range(1, 13)]
    expected = sqlmetrics.evaluate(RECS, TRUTH, labels, group_by="model", population="judged")
    table = exact_values(report.html, "ndcg")
    for row in expected.to_dict("records"):
        assert [table[(row["model"], k)] for k in range(1, 13)] == [row[x] for x in labels]
    widths.clear()
    k_max = curves.LARGEST_LABELS // 2 + 1  # two curves: one label more than the budget
    with pytest.raises(SqlmetricsError) as refused:
        sqlmetrics.report(
            RECS, TRUTH, ["ndcg", "map"], group_by="model", k_max=k_max, population="judged"
        )
    message = str(refused.value)
    assert f"would be {2 * k_max:,} metric columns" in message
    assert f"--k-max {curves.LARGEST_LABELS // 2}" in message
    assert set(widths) <= {1}  # counts of the inputs; not a query of the metrics ran


def test_too_many_models_are_refused_before_the_queries_of_the_metrics(
    widths: list[int],
) -> None:
    models = data.MOST_MODELS + 1
    recs = pd.DataFrame(
        {
            "model": [f"m{i}" for i in range(models)],
            "user_id": [1] * models,
            "item_id": ["a"] * models,
            "score": [1.0] * models,
        }
    )
    truth = pd.DataFrame({"user_id": [1], "item_id": ["a"]})
    with pytest.raises(SqlmetricsError, match=f"more than {data.MOST_MODELS} models"):
        sqlmetrics.report(recs, truth, ["ndcg@3"], group_by="model", k_max=3)
    assert set(widths) <= {1}  # the count of the models alone
    page_of_fewer = sqlmetrics.report(
        recs.head(data.MOST_MODELS), truth, ["ndcg@3"], group_by="model", k_max=3
    )
    assert page_of_fewer.summary["model"].nunique() == data.MOST_MODELS


def test_the_largest_segments_are_shown_and_the_others_counted() -> None:
    """Segment s<i> has i users (i = 1..n): the page shows the MOST_SEGMENTS largest, largest
    first, says how many it left out, and Report.segments keeps them all."""
    count = page.MOST_SEGMENTS + 6
    rows = [(f"s{i}", i * 100 + u) for i in range(1, count + 1) for u in range(i)]
    recs = pd.DataFrame(
        {
            "model": "m",
            "segment": [s for s, _ in rows],
            "user_id": [u for _, u in rows],
            "item_id": "a",
            "score": 1.0,
        }
    )
    truth = recs[["segment", "user_id", "item_id"]]
    report = sqlmetrics.report(
        recs, truth, ["hit_rate@1"], group_by="model", segment="segment", k_max=1
    )
    assert report.segments is not None and len(report.segments) == count
    section = report.html[report.html.index('<section id="segments">') :]
    table = section[: section.index("</table>")]
    shown = re.findall(r'<tr><td class="text"><bdi>(s\d+)</bdi>', table)
    assert shown == [f"s{i}" for i in range(count, count - page.MOST_SEGMENTS, -1)]
    assert (
        f"The {page.MOST_SEGMENTS} largest of {count} segments are shown; 6 smaller ones "
        "(at most 6 users each) are left out" in section
    )
