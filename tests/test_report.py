"""sqlmetrics.report: the page's numbers are evaluate's, it fetches nothing, bad input is refused
with a clear message, and the CLI writes only files it may replace."""

from __future__ import annotations

import html
import re
import shlex
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics import cli
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.reporting import data
from tests.conftest import EXAMPLES, REPO

pytest.importorskip("matplotlib")

RECS = str(EXAMPLES / "recommendations.parquet")
TRUTH = str(EXAMPLES / "interactions.parquet")
METRICS = ["ndcg@10", "map", "recall@20", "hit_rate@10", "coverage@10"]
K_MAX = 25


class Cells(HTMLParser):
    """Every element's attributes, and the text of each <td>."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))


def elements(page: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Cells()
    parser.feed(page)
    return parser.elements


@pytest.fixture(scope="module")
def example() -> sqlmetrics.Report:
    return sqlmetrics.report(
        RECS,
        TRUTH,
        METRICS,
        group_by="model",
        segment="country",
        baseline="popularity",
        k_max=K_MAX,
    )


def found(pattern: str, text: str) -> str:
    match = re.search(pattern, text, re.S)
    assert match is not None, pattern
    return match.group(1)


def _value(attrs: dict[str, str | None], name: str = "data-value") -> float:
    return float(attrs[name] or "nan")


def test_summary_cells_equal_evaluate(example: sqlmetrics.Report) -> None:
    labels = ["ndcg@10", f"map@{K_MAX}", "recall@20", "hit_rate@10", "coverage@10"]
    expected = sqlmetrics.evaluate(RECS, TRUTH, labels, group_by="model").set_index("model")
    found = {
        (attrs["data-model"], attrs["data-metric"]): _value(attrs)
        for tag, attrs in elements(example.html)
        if tag == "td" and "data-value" in attrs and "data-segment" not in attrs
    }
    assert len(found) == len(labels) * 2
    for (model, label), value in found.items():
        assert value == float(expected.loc[model, label]), (model, label)


def test_curves_equal_evaluate_at_every_k(example: sqlmetrics.Report) -> None:
    """The exact-values tables under the curves: every k, every model, every metric."""
    curves = ["ndcg", "map", "recall", "hit_rate"]
    labels = [f"{name}@{k}" for name in curves for k in range(1, K_MAX + 1)]
    expected = sqlmetrics.evaluate(RECS, TRUTH, labels, group_by="model").set_index("model")
    tables = re.findall(r"Exact values of (\w+)@k</summary><table>(.*?)</table>", example.html)
    assert [name for name, _ in tables] == curves
    for name, table in tables:
        rows = re.findall(r"<tr><td>(\d+)</td>(.*?)</tr>", table)
        assert [int(k) for k, _ in rows] == list(range(1, K_MAX + 1))
        for k, cells in rows:
            values = [float(v) for v in re.findall(r'title="([^"]+)"', cells)]
            wanted = [float(expected.loc[m, f"{name}@{k}"]) for m in ("popularity", "two_tower")]
            assert values == wanted, (name, k)


def test_segments_equal_evaluate(example: sqlmetrics.Report) -> None:
    labels = ["ndcg@10", f"map@{K_MAX}", "recall@20", "hit_rate@10"]
    expected = sqlmetrics.evaluate(RECS, TRUTH, labels, group_by=["model", "country"])
    expected = expected.set_index(["model", "country"])
    found = [
        (attrs["data-model"], attrs["data-segment"], attrs["data-metric"], _value(attrs))
        for tag, attrs in elements(example.html)
        if tag == "td" and "data-segment" in attrs
    ]
    assert len(found) == len(expected) * len(labels)
    for model, country, label, value in found:
        assert value == float(expected.loc[(model, country), label])
    # largest segment first; the 10 users of PT are marked small (fewer than 30)
    section = example.html[example.html.index('<section id="segments">') :]
    table = section[: section.index("</table>")]
    order = re.findall(r'<tr><td class="text"><bdi>(\w+)</bdi>(?: <em>\(small\)</em>)?</td>', table)
    sizes = expected.groupby(level="country")["users"].max()
    assert order == list(sizes.sort_values(ascending=False).index)
    assert "PT</bdi> <em>(small)</em>" in example.html
    assert "DE</bdi> <em>(small)</em>" not in example.html


def test_share_of_users_at_zero_equals_per_user(example: sqlmetrics.Report) -> None:
    labels = ["ndcg@10", f"map@{K_MAX}", "recall@20", "hit_rate@10"]
    per_user = sqlmetrics.evaluate(RECS, TRUTH, labels, group_by="model", per_user=True)
    shares = {
        (attrs["data-model"], attrs["data-metric"]): _value(attrs, "data-share-zero")
        for tag, attrs in elements(example.html)
        if tag == "td" and "data-share-zero" in attrs
    }
    assert len(shares) == 8
    for (model, label), share in shares.items():
        values = per_user.loc[per_user["model"] == model, label]
        assert share == pytest.approx(float((values == 0).mean()), abs=1e-12)
        assert 0 < share < 1  # the example has users at 0 and above it


def test_diagnostics_in_words_with_their_counts(example: sqlmetrics.Report) -> None:
    diagnostics = sqlmetrics.read_diagnostics(
        sqlmetrics.evaluate(RECS, TRUTH, [f"ndcg@{K_MAX}"], group_by="model", per_user=False)
    ).set_index("model")
    missing = int(diagnostics.loc["two_tower", "population_without_recommendations"])
    assert missing > 0
    assert (
        f"<bdi>two_tower</bdi>: {missing:,} users with relevant items and no recommendations; "
        "they score 0 "
        "on every ranking metric because population=&#x27;all&#x27;" in example.html
    )
    for tag, attrs in elements(example.html):
        if tag == "td" and "data-diagnostic" in attrs:
            column, model = attrs["data-diagnostic"], attrs["data-model"]
            assert attrs.get("title") is None
            assert model in diagnostics.index and column in diagnostics.columns


def test_definitions_and_provenance(example: sqlmetrics.Report) -> None:
    from sqlmetrics.catalog.metrics import metrics

    for name in ("ndcg", "map", "recall", "hit_rate", "coverage"):
        assert f"<code>sqlmetrics/sql/{name}.sql</code>" in example.html
        definition = metrics()[name].definition
        assert definition.replace("'", "&#x27;").replace("<", "&lt;") in example.html
    assert "19,200 rows" in example.html  # the example's recommendations
    command = re.search(r"<pre>(sqlmetrics report .*?)</pre>", example.html)
    assert command is not None
    words = shlex.split(command.group(1).replace("&#x27;", "'"))
    assert words[words.index("--k-max") + 1] == str(K_MAX)
    assert words[words.index("--segment") + 1] == "country"


def test_every_chart_has_a_title_axes_and_a_legend(example: sqlmetrics.Report) -> None:
    charts = re.findall(
        r'<figure class="chart" data-chart="([^"]+)">(.*?)</figure>', example.html, re.S
    )
    # 4 curves, 4 segment charts, 4 distributions, 1 beyond-accuracy chart
    assert len(charts) == 13
    for name, svg in charts:
        assert svg.startswith("<svg"), name
        assert "<path" in svg, name
        assert 'id="legend_1"' not in svg  # ids are prefixed per chart, unique on the page
    ids = re.findall(r'\bid="([^"]+)"', example.html)
    assert len(ids) == len(set(ids))
    assert len(example.html.encode()) < 3_000_000


def test_jupyter_shows_the_page_in_a_frame_of_its_own(example: sqlmetrics.Report) -> None:
    shown = example._repr_html_()
    assert shown.startswith("<iframe srcdoc=") and "<style>" not in shown
    source = html.unescape(re.search(r'srcdoc="([^"]*)"', shown).group(1))  # type: ignore[union-attr]
    assert source == example.html


# no external URL -----------------------------------------------------------------------------

# Attributes by which a page fetches something; namespaces (xmlns) are names, never fetched.
_FETCHING = {"src", "href", "xlink:href", "srcset", "poster", "data", "action", "background"}
_TAGS = {"script", "link", "iframe", "img", "object", "embed", "video", "audio", "source"}


def external_references(page: str) -> list[str]:
    found = []
    for tag, attrs in elements(page):
        if tag in _TAGS:
            found.append(f"<{tag}>")
        for name, value in attrs.items():
            if name in _FETCHING and value is not None and not value.startswith("#"):
                found.append(f"{name}={value}")
    found += [m for m in re.findall(r"url\(\s*['\"]?([^)'\"]*)", page) if not m.startswith("#")]
    found += re.findall(r"@import[^;]*", page)
    without_namespaces = re.sub(r'\bxmlns(:\w+)?="[^"]*"', "", page)
    found += re.findall(r"https?://[^\s\"'<>)]*", without_namespaces)
    return found


def test_the_page_fetches_nothing(example: sqlmetrics.Report) -> None:
    assert external_references(example.html) == []


@pytest.mark.parametrize(
    "snippet",
    [
        '<img src="https://example.com/a.png">',
        '<script src="x.js"></script>',
        '<link rel="stylesheet" href="//cdn.example.com/a.css">',
        '<div style="background: url(https://example.com/a.png)"></div>',
        "<style>@import 'x.css';</style>",
        '<svg><image xlink:href="http://example.com/i.png"/></svg>',
        '<a href="https://example.com">a link</a>',
    ],
)
def test_the_fetch_check_finds_what_it_looks_for(snippet: str) -> None:
    page = "<html><body>" + snippet + "</body></html>"
    assert external_references(page) != []


# the plan --------------------------------------------------------------------------------------


def test_plan_reads_one_query_for_every_k() -> None:
    plan = data.plan(["ndcg", "map@5", "ap@3", "coverage@10", "auc"], 6)
    assert plan.curves == {
        "ndcg": [f"ndcg@{k}" for k in range(1, 7)],
        "map": [f"map@{k}" for k in range(1, 7)],
    }
    assert plan.summary == ["ndcg@6", "map@5", "map@3", "auc"]
    assert plan.beyond == ["coverage@10"]
    # auc is one ROC AUC over all scored rows (micro): no per-user values to spread
    assert plan.distributions == ["ndcg@6", "map@5", "map@3"]
    labels = plan.main_labels()
    assert len(labels) == len(set(labels)) == 12 + 1 + 1


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"metrics": ["ndcg@200"]}, "deeper than k_max=100"),
        ({"metrics": ["ndcg"], "k_max": 0}, "k_max must be a whole number"),
        ({"metrics": ["ndcg"], "k_max": True}, "k_max must be a whole number"),
        ({"metrics": ["ndcg"], "baseline": "pop"}, "baseline 'pop' is not one of the models"),
        ({"metrics": ["ndcg"], "segment": "model"}, "is also a group_by column"),
        ({"metrics": ["ndcg"], "small_segment": -1}, "small_segment must be"),
        ({"metrics": ["ndgc"]}, "unknown metric"),
    ],
)
def test_bad_input_is_refused_clearly(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(SqlmetricsError, match=re.escape(message)):
        sqlmetrics.report(RECS, TRUTH, group_by="model", **arguments)


# the seams of issue 19 -------------------------------------------------------------------------


def test_intervals_and_marks_are_evaluates_and_compares() -> None:
    """The page's intervals are evaluate(ci=0.95)'s and its marks compare's (paired t-test,
    Holm over the page's metrics): every summary cell and every difference from the baseline."""
    metrics = ["ndcg@10", "recall@20"]
    page = sqlmetrics.report(
        RECS, TRUTH, metrics, group_by="model", baseline="popularity", k_max=20
    ).html
    evaluated = sqlmetrics.evaluate(RECS, TRUTH, metrics, group_by="model", ci=0.95)
    for values in evaluated.to_dict(orient="records"):
        for label in metrics:
            low, high = values[f"{label}_lo"], values[f"{label}_hi"]
            assert f'<span class="interval">[{low:.4f}, {high:.4f}]</span>' in page
    compared = sqlmetrics.compare(RECS, TRUTH, metrics, baseline="popularity")
    for row in compared.itertuples(index=False):
        assert bool(row.significant) == (f'title="p = {row.p_holm:.3g}">*</span>' in page)


def test_interval_columns_become_cells_and_bands(monkeypatch: pytest.MonkeyPatch) -> None:
    """When evaluate gives <label>_lo and <label>_hi (ci=), the table shows them and each curve
    gets a band and each segment bar an error bar; with compare, a significant difference gets
    its mark. (Without ci= here, so that the page without intervals is seen too.)"""
    monkeypatch.setattr(data, "interval_options", lambda: {})
    gather = data.gather
    plain = sqlmetrics.report(RECS, TRUTH, ["ndcg@10"], group_by="model", k_max=12).html
    with_segments = sqlmetrics.report(
        RECS, TRUTH, ["ndcg@10"], group_by="model", segment="country", k_max=12
    ).html

    def with_intervals(*args: Any, **kwargs: Any) -> data.Results:
        results = gather(*args, **kwargs)
        results.curves["lo"] = results.curves["value"] - 0.01
        results.curves["hi"] = results.curves["value"] + 0.01
        for frame in (results.main, results.segments):
            for label in [c for c in ([] if frame is None else frame.columns) if "@" in c]:
                frame[f"{label}_lo"] = frame[label] - 0.01
                frame[f"{label}_hi"] = frame[label] + 0.01
        return results

    def comparison(arguments: Any, labels: list[str], baseline: str) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "model": ["two_tower"],
                "metric": ["ndcg@10"],
                "p_value": [0.001],
                "significant": [True],
            }
        )

    monkeypatch.setattr(data, "gather", with_intervals)
    monkeypatch.setattr(data, "baseline_comparison", comparison)
    page = sqlmetrics.report(
        RECS,
        TRUTH,
        ["ndcg@10"],
        group_by="model",
        baseline="popularity",
        segment="country",
        k_max=12,
    ).html
    value = float(found(r'data-model="two_tower" data-metric="ndcg@10" data-value="([^"]+)"', page))
    assert f'<span class="interval">[{value - 0.01:.4f}, {value + 0.01:.4f}]</span>' in page
    assert 'title="p = 0.001">*</span>' in page
    assert "No confidence intervals" not in page and "No confidence intervals" in plain
    curve = found(r'data-chart="curve ndcg">(.*?)</figure>', page)
    bare = found(r'data-chart="curve ndcg">(.*?)</figure>', plain)
    bands = r'id="c\d+-band_\d+"'  # what fill_between draws
    segments = found(r'data-chart="segments ndcg@10">(.*?)</figure>', page)
    assert segments.count("<path") > found(
        r'data-chart="segments ndcg@10">(.*?)</figure>', with_segments
    ).count("<path")
    assert len(re.findall(bands, curve)) == 2 and len(re.findall(bands, bare)) == 0


# the CLI ---------------------------------------------------------------------------------------


def test_cli_writes_the_page_and_replaces_only_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.html"
    argv = ["report", RECS, TRUTH, "-m", "ndcg@5,recall", "--group-by", "model", "--k-max", "8"]
    assert cli.main([*argv, "-o", str(out)]) == 0
    first = out.read_text()
    assert first.startswith("<!DOCTYPE html>") and "recall@8" in first
    assert cli.main([*argv, "-o", str(out), "-q"]) == 0  # ours: replaced
    theirs = tmp_path / "theirs.html"
    theirs.write_text("<p>my notes</p>")
    assert cli.main([*argv, "-o", str(theirs)]) == 2
    assert "was not written by sqlmetrics report" in capsys.readouterr().err
    assert theirs.read_text() == "<p>my notes</p>"
    assert cli.main([*argv, "-o", str(theirs), "--force"]) == 0
    assert "recall@8" in theirs.read_text()
    assert cli.main(argv) == 2  # no -o
    assert "give its file, like -o report.html" in capsys.readouterr().err
    assert cli.main([*argv, "-o", RECS]) == 2  # an input
    assert "would destroy an input" in capsys.readouterr().err


def test_make_example_writes_the_same_report_as_sqlmetrics_example(tmp_path: Path) -> None:
    makefile = (REPO / "Makefile").read_text()
    line = re.search(r"\$\(BIN\)/sqlmetrics report (.*?)-o \$\(EXAMPLE_REPORT\)", makefile, re.S)
    assert line is not None
    metrics = re.search(r"^EXAMPLE_REPORT_METRICS = (.*)$", makefile, re.M)
    assert metrics is not None and metrics.group(1).split(",") == cli.EXAMPLE_REPORT_METRICS
    words = shlex.split(line.group(1).replace("\\\n", " "))
    assert words[:4] == [
        "examples/recommendations.parquet",
        "examples/interactions.parquet",
        "-m",
        "$(EXAMPLE_REPORT_METRICS)",
    ]
    options = dict(zip(words[4::2], words[5::2], strict=True))
    assert options == {
        "--group-by": cli.EXAMPLE_REPORT["group_by"][0],
        "--segment": cli.EXAMPLE_REPORT["segment"],
        "--baseline": cli.EXAMPLE_REPORT["baseline"],
        "--k-max": str(cli.EXAMPLE_REPORT["k_max"]),
    }
    out = tmp_path / "example.html"
    assert cli.main(["example", "-q", "--report", str(out)]) == 0
    assert out.stat().st_size < 3_000_000


def test_a_connection_and_table_names_as_in_evaluate() -> None:
    import duckdb

    connection = duckdb.connect()
    connection.execute(f"CREATE TABLE recs AS SELECT * FROM read_parquet('{RECS}')")
    connection.execute(f"CREATE TABLE truth AS SELECT * FROM read_parquet('{TRUTH}')")
    page = sqlmetrics.report(
        "recs", "truth", ["recall@5"], group_by="model", k_max=5, connection=connection
    )
    expected = sqlmetrics.evaluate(
        "recs", "truth", ["recall@5"], group_by="model", connection=connection
    ).set_index("model")
    cells = {
        attrs["data-model"]: _value(attrs)
        for tag, attrs in elements(page.html)
        if tag == "td" and attrs.get("data-metric") == "recall@5" and "data-value" in attrs
    }
    assert cells == {model: float(expected.loc[model, "recall@5"]) for model in expected.index}
    assert "recs (19,200 rows)" in page.html and "truth (2,975 rows)" in page.html
    assert "The same page from the command line" not in page.html  # a connection of the caller's


def test_dataframes_without_groups(small: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    """One model ("all"), a metric without a cutoff, a group-level one, inputs in memory."""
    recs, truth = small
    page = sqlmetrics.report(recs, truth, ["ndcg", "auc", "gini@3"], k_max=3)
    expected = sqlmetrics.evaluate(recs, truth, ["ndcg@3", "auc", "gini@3"])
    cells = {
        attrs["data-metric"]: _value(attrs)
        for tag, attrs in elements(page.html)
        if tag == "td" and "data-value" in attrs
    }
    assert cells.keys() == {"ndcg@3", "auc", "gini@3"}
    assert cells["gini@3"] == float(expected["gini@3"].iloc[0])
    assert cells["ndcg@3"] == float(expected["ndcg@3"].iloc[0])
    assert cells["auc"] == float(expected["auc"].iloc[0])
    assert "a pandas DataFrame in memory (5 rows)" in page.html
    assert "no command line reproduces" in page.html
    assert 'id="headline"' not in page.html  # one model: nothing to rank


def test_the_best_is_as_the_metric_header_says() -> None:
    """gini and arp (better: lower): the more even exposure and the less popular lists, the
    smaller values, are in bold; num_ret (better: none) counts the lists' items: no best."""
    labels = ["ndcg@10", "gini@10", "arp@10", "num_ret"]
    page = sqlmetrics.report(RECS, TRUTH, labels, group_by="model", k_max=10)
    expected = sqlmetrics.evaluate(RECS, TRUTH, labels, group_by="model").set_index("model")
    bold = {
        attrs["data-metric"]: attrs["data-model"]
        for tag, attrs in elements(page.html)
        if tag == "td" and attrs.get("class") == "best"
    }
    assert bold == {
        "ndcg@10": expected["ndcg@10"].idxmax(),
        "gini@10": expected["gini@10"].idxmin(),
        "arp@10": expected["arp@10"].idxmin(),
    }
    assert "(the lowest for gini@10, arp@10; none for num_ret)" in html.unescape(page.html)


def test_no_headline_when_no_summary_metric_has_a_direction() -> None:
    """num_ret (better: none) names no best model: the page has no headline, not a lone '.'."""
    page = sqlmetrics.report(RECS, TRUTH, ["num_ret"], group_by="model", k_max=10)
    assert 'id="headline"' not in page.html


def test_the_best_calibration_is_the_nearest_to_one() -> None:
    from sqlmetrics.reporting.page import best_of

    assert best_of([0.7, 1.2, 1.4], "one") == 1.2
    assert best_of([0.7, 1.2], "lower") == 0.7
    assert best_of([0.7, 1.2], "higher") == 1.2
    assert best_of([0.7, 1.2], "none") is None
    assert best_of([], "higher") is None


def test_without_matplotlib_the_report_is_refused_before_its_query(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The charts need matplotlib: its absence is said at once, not after the evaluate call."""
    import importlib.util

    import sqlmetrics.run

    queried: list[object] = []
    monkeypatch.setattr(sqlmetrics.run, "evaluate", lambda *args, **kwargs: queried.append(args))
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *rest: None if name == "matplotlib" else find_spec(name, *rest),
    )
    with pytest.raises(SqlmetricsError, match=re.escape("pip install 'sqlmetrics[report]'")):
        sqlmetrics.report(RECS, TRUTH, ["ndcg@10"], group_by="model")
    assert queried == []
