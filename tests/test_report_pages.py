"""Report pages with hostile or odd data: a segment only the recommendations have, names that
reorder text or run for thousands of characters, a missing value against the baseline, and the
provenance of a run through a connection."""

from __future__ import annotations

import re
import sqlite3
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics import cli
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.reporting import common, data
from tests.conftest import EXAMPLES

pytest.importorskip("matplotlib")

RECS = str(EXAMPLES / "recommendations.parquet")
TRUTH = str(EXAMPLES / "interactions.parquet")


class Texts(HTMLParser):
    """Every text node of a page with whether it is inside a <bdi>."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.texts: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.depth += tag == "bdi"

    def handle_endtag(self, tag: str) -> None:
        self.depth -= tag == "bdi"

    def handle_data(self, data: str) -> None:
        self.texts.append((data, self.depth > 0))


def texts(page: str) -> list[tuple[str, bool]]:
    parser = Texts()
    parser.feed(page)
    return parser.texts


def renamed(models: dict[str, str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    recs = pd.read_parquet(RECS)
    recs["model"] = recs["model"].map(lambda name: models.get(name, name))
    return recs, pd.read_parquet(TRUTH)


# segments --------------------------------------------------------------------------------------


def test_a_segment_of_the_recommendations_alone_is_refused() -> None:
    """Each segment is evaluated against its own users, as the interactions place them: a
    column only the recommendations have would judge every segment against every user (its
    values a fraction of its own), so it is refused, saying how to give it."""
    recs = pd.read_parquet(RECS)
    truth = pd.read_parquet(TRUTH).drop(columns=["country"])
    with pytest.raises(SqlmetricsError) as refused:
        sqlmetrics.report(recs, truth, ["ndcg@10"], group_by="model", segment="country")
    message = str(refused.value)
    assert "segment 'country' is not a column of the interactions" in message
    assert "add it to the interactions too" in message


@pytest.mark.parametrize(
    ("segment", "change", "said"),
    [
        ("contry", None, "segment 'contry' is not a column of the recommendations"),
        (
            "country",
            "number",
            "segment 'country' is BIGINT in recommendations but VARCHAR in interactions",
        ),
    ],
)
def test_segment_errors_speak_of_the_segment(segment: str, change: str | None, said: str) -> None:
    recs, truth = renamed({})
    if change == "number":
        recs["country"] = recs["country"].map({c: i for i, c in enumerate(["DE", "FR", "ES"])})
        recs["country"] = recs["country"].fillna(9).astype("int64")
    with pytest.raises(SqlmetricsError) as refused:
        sqlmetrics.report(recs, truth, ["ndcg@10"], group_by="model", segment=segment)
    assert said in str(refused.value)
    assert "group_by" not in str(refused.value)


# names -----------------------------------------------------------------------------------------


def test_names_are_isolated_so_they_reorder_only_themselves() -> None:
    """A model named with U+202E (right-to-left override) reversed the one-line answer: every
    text of the page holding a name of the data is inside a <bdi>."""
    evil = "\u202eledom"
    recs, truth = renamed({"two_tower": evil})
    page = sqlmetrics.report(
        recs, truth, ["ndcg@10"], group_by="model", baseline="popularity", k_max=10
    ).html
    holding = [(text, isolated) for text, isolated in texts(page) if "\u202e" in text]
    assert holding, "the name is on the page"
    # the SVG's own <text> elements isolate each label already; the HTML's must be <bdi>
    html_part = re.sub(r"<svg.*?</svg>", "", page, flags=re.S)
    assert all(isolated for text, isolated in texts(html_part) if "\u202e" in text)
    headline = re.search(r'<p class="headline" id="headline">(.*?)</p>', page, re.S)
    assert headline is not None and f"<bdi>{evil}</bdi> is best on ndcg@10" in headline.group(1)


def test_long_names_are_shortened_and_whole_on_hover() -> None:
    """3,000-character names pushed the numbers off the page: the page writes at most
    common.LONGEST_NAME characters of a name, the whole one in a title to hover."""
    long = "m" * 2990 + "0123456789"
    recs, truth = renamed({"two_tower": long})
    page = sqlmetrics.report(recs, truth, ["ndcg@10", "gini@10"], group_by="model", k_max=10)
    longest = max(len(run) for text, _ in texts(page.html) for run in re.findall("m+", text))
    assert longest < common.LONGEST_NAME
    assert f'title="{long}"' in page.html
    shown = common.shortened(long)
    assert len(shown) == common.LONGEST_NAME and shown.endswith("…mm0123456789")
    assert set(page.summary["model"]) == {"popularity", long}  # the frames keep it whole


def test_a_missing_value_against_the_baseline_is_n_a(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model without a value (NaN) showed "+nan vs popularity"."""
    gather = data.gather

    def without_a_value(*args: Any, **kwargs: Any) -> data.Results:
        results = gather(*args, **kwargs)
        results.main.loc[results.main["model"] == "two_tower", "ndcg@10"] = float("nan")
        return results

    monkeypatch.setattr(data, "gather", without_a_value)
    page = sqlmetrics.report(
        RECS, TRUTH, ["ndcg@10"], group_by="model", baseline="popularity", k_max=10
    ).html
    assert "nan vs" not in page
    cell = re.search(r'data-model="two_tower" data-metric="ndcg@10".*?</td>', page, re.S)
    assert cell is not None and '<span class="delta">n/a vs <bdi>popularity' in cell.group(0)


# provenance ------------------------------------------------------------------------------------


def test_a_cli_page_through_a_connection_names_its_engine_and_command(tmp_path: Path) -> None:
    """`report --connection URL`: the page named the engine sqlalchemy.engine.base.Engine and
    said its inputs were objects in memory; it says which database, through what, and the
    command line that makes it again (the password left out)."""
    pytest.importorskip("sqlalchemy")
    database = tmp_path / "reco.db"
    with sqlite3.connect(database) as connection:
        pd.read_parquet(RECS).to_sql("recs", connection, index=False)
        pd.read_parquet(TRUTH).to_sql("truth", connection, index=False)
    out = tmp_path / "report.html"
    url = f"sqlite:///{database}"
    argv = ["report", "recs", "truth", "-m", "ndcg@5", "--group-by", "model", "--k-max", "8"]
    assert cli.main([*argv, "--connection", url, "-o", str(out), "-q"]) == 0
    page = out.read_text()
    assert "sqlalchemy.engine.base.Engine" not in page
    assert "sqlite (sqlite) (SQL dialect sqlite), through your sqlalchemy Engine" in page
    assert "objects in memory" not in page
    command = re.search(r"<pre>(.*?)</pre>", page, re.S)
    assert command is not None
    assert f"sqlmetrics report recs truth --connection {url} -m ndcg@5" in command.group(1)
