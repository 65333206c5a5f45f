"""`sqlmetrics dbt export` and `sqlmetrics dbt models` without dbt (tests/engines/test_dbt.py
renders the macros and runs dbt itself)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

import sqlmetrics
from sqlmetrics.catalog.metrics import metrics
from sqlmetrics.cli import main
from sqlmetrics.dbt import models, package, templates
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.io.files import write_marker
from tests.cli_runner import cli


def _has_its_query_macro(adapter: str, body: str) -> bool:
    return f"{{% macro {adapter}__sqlmetrics_query(" in body and "sqlmetrics_sentinel" not in body


def test_export_writes_a_package_and_replaces_an_earlier_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The package's files, the earlier export's stale file removed, a foreign folder refused.
    Each adapter's body is rendered by a stand-in here (the real ones below: rendering them
    all is a minute of CPU)."""
    # An earlier export, with a file a later version no longer writes, as its marker lists it
    folder = tmp_path / "sqlmetrics"
    (folder / "macros").mkdir(parents=True)
    (folder / "dbt_project.yml").write_text('name: "sqlmetrics"\n', encoding="utf-8")
    (folder / "macros" / "removed_metric.sql").write_text("", encoding="utf-8")
    write_marker(folder, ["dbt_project.yml", "macros/removed_metric.sql"])
    rendered: list[tuple[str, str]] = []

    def body_of(adapter: str, dialect: str) -> str:
        return f"{{% macro {adapter}__sqlmetrics_query() %}}{dialect}{{% endmacro %}}"

    def stand_in(adapter: str, dialect: str) -> str:
        rendered.append((adapter, dialect))
        return body_of(adapter, dialect)

    monkeypatch.setattr(package, "adapter_macros", stand_in)
    assert main(["dbt", "export", str(folder)]) == 0
    assert sorted(rendered) == sorted(
        {**templates.ADAPTERS, "default": templates.DEFAULT_DIALECT}.items()
    )
    adapters = sorted(p.stem for p in (folder / "macros" / "adapters").glob("*.sql"))
    assert adapters == sorted([*templates.ADAPTERS, "default"])
    for adapter, dialect in rendered:
        body = (folder / "macros" / "adapters" / f"{adapter}.sql").read_text(encoding="utf-8")
        assert body == body_of(adapter, dialect)
    _check_shared_macros(folder)
    assert "name: sqlmetrics" in (folder / "dbt_project.yml").read_text(encoding="utf-8")
    assert not (folder / "macros" / "removed_metric.sql").exists()
    # A folder that is not a package is left alone (refused before anything is rendered).
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine", encoding="utf-8")
    refused = cli("dbt", "export", str(other))
    assert refused.returncode == 2
    assert "is not a sqlmetrics dbt package" in refused.stderr
    assert (other / "keep.txt").exists()


def _check_shared_macros(folder: Path) -> None:
    shared = (folder / "macros" / "sqlmetrics.sql").read_text(encoding="utf-8")
    # One macro per packaged metric (the ranking ones); the others (arp...) have none.
    packaged = {metric.name for metric in templates.packaged_metrics()}
    assert packaged and set(metrics()) - packaged
    for metric in metrics().values():
        macro = f"{{% macro {metric.name}(recommendations, interactions"
        assert (macro in shared) == (metric.name in packaged), metric.name


def test_the_default_adapters_body_holds_its_query_macro() -> None:
    """The body unknown adapters get, rendered for real (every adapter's: the next test)."""
    try:
        assert _has_its_query_macro(
            "default", templates.adapter_macros("default", templates.DEFAULT_DIALECT)
        )
    finally:
        templates.composed_once.cache_clear()


# In CI, with tests/engines/test_dbt.py, on the worker that renders the package for it.
@pytest.mark.full_matrix
@pytest.mark.xdist_group("dbt")
def test_every_adapters_body_holds_its_query_macro(exported_dbt_package: Path) -> None:
    _check_shared_macros(exported_dbt_package)
    for adapter in [*templates.ADAPTERS, "default"]:
        body = (exported_dbt_package / "macros" / "adapters" / f"{adapter}.sql").read_text(
            encoding="utf-8"
        )
        assert _has_its_query_macro(adapter, body), adapter


def test_models_writes_to_sql_with_refs(tmp_path: Path) -> None:
    run = cli(
        "dbt", "models", str(tmp_path), "--name", "quality", "--recommendations", "recs",
        "--interactions", "clicks", "-m", "ndcg@2,precision@2", "--group-by", "model",
        "--interactions-group-by", "model", "--no-relevance",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    text = (tmp_path / "quality.sql").read_text(encoding="utf-8")
    assert "{{ config(materialized='table') }}" in text
    assert "{{ ref('recs') }}" in text and "{{ ref('clicks') }}" in text
    # With the refs as tables, the model computes to_sql's numbers.
    connection = duckdb.connect()
    connection.execute(
        "CREATE TABLE recs AS SELECT * FROM (VALUES ('a', 1, 10, 0.9), ('a', 1, 11, 0.5),"
        " ('b', 1, 11, 0.8), ('a', 2, 12, 0.3)) AS t(model, user_id, item_id, score)"
    )
    connection.execute(
        "CREATE TABLE clicks AS SELECT * FROM (VALUES ('a', 1, 11), ('b', 1, 11), ('a', 2, 13))"
        " AS t(model, user_id, item_id)"
    )
    body = text.split("\n", 2)[2]
    model = body.replace("{{ ref('recs') }}", "recs").replace("{{ ref('clicks') }}", "clicks")
    reference = sqlmetrics.to_sql(
        ["ndcg@2", "precision@2"], "recs", "clicks", group_by=["model"],
        columns={"relevance": None},
    )  # fmt: skip
    got = connection.sql(f"SELECT * FROM ({model}) ORDER BY 1").fetchall()
    assert got == connection.sql(reference).fetchall()
    assert len(got) == 2


def test_models_read_items_and_history_models(tmp_path: Path) -> None:
    run = cli(
        "dbt", "models", str(tmp_path), "--name", "beyond", "--recommendations", "recs",
        "--interactions", "clicks", "--items", "catalogue", "--history", "seen",
        "-m", "ild@2,serendipity@2,coverage@2", "--no-relevance",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    text = (tmp_path / "beyond.sql").read_text(encoding="utf-8")
    refs = {"recs": "recs", "clicks": "clicks", "catalogue": "catalogue", "seen": "seen"}
    for ref in refs:
        assert f"{{{{ ref('{ref}') }}}}" in text
    connection = duckdb.connect()
    connection.execute(
        "CREATE TABLE recs AS SELECT * FROM (VALUES (1, 10, 0.9), (1, 11, 0.5), (1, 12, 0.1),"
        " (2, 11, 0.8), (2, 13, 0.7)) AS t(user_id, item_id, score)"
    )
    connection.execute(
        "CREATE TABLE clicks AS SELECT * FROM (VALUES (1, 11), (2, 13)) AS t(user_id, item_id)"
    )
    connection.execute(
        "CREATE TABLE catalogue AS SELECT * FROM (VALUES (10, 'a'), (11, 'b'), (12, 'a'),"
        " (13, 'a'), (14, 'c')) AS t(item_id, category)"
    )
    connection.execute(
        "CREATE TABLE seen AS SELECT * FROM (VALUES (1, 12), (2, 14)) AS t(user_id, item_id)"
    )
    body = text.split("\n", 2)[2]
    for ref in refs:
        body = body.replace(f"{{{{ ref('{ref}') }}}}", ref)
    got = connection.sql(body).df()
    expected = sqlmetrics.evaluate(
        connection.table("recs").df(), connection.table("clicks").df(),
        ["ild@2", "serendipity@2", "coverage@2"],
        items=connection.table("catalogue").df(), history=connection.table("seen").df(),
        columns={"relevance": None},
    )  # fmt: skip
    for label in ("ild@2", "serendipity@2", "coverage@2"):
        assert got[label].iloc[0] == pytest.approx(expected[label].iloc[0], abs=1e-12)
    # Without them, the metrics that read them say what to pass.
    missing = cli(
        "dbt", "models", str(tmp_path), "--name", "q", "--recommendations", "recs",
        "--interactions", "clicks", "-m", "ild@2", "--no-relevance",
    )  # fmt: skip
    assert missing.returncode == 2 and "--items" in missing.stderr


def test_models_refuses_what_is_not_a_model_name(tmp_path: Path) -> None:
    with pytest.raises(SqlmetricsError, match="is not a dbt model name"):
        models.model_sql(["ndcg@10"], "recs') }}{{ x", "clicks")
    with pytest.raises(SqlmetricsError, match=r"items: .* is not a dbt model name"):
        models.model_sql(["ild@10"], "recs", "clicks", items="items') }}")
    with pytest.raises(SqlmetricsError, match="is not a dbt model name"):
        models.write_models(tmp_path, [("../escape", "SELECT 1")])
    run = cli(
        "dbt", "models", str(tmp_path), "--name", "q", "--recommendations", "recs",
        "--interactions", "clicks", "-m", "ndcg@0",
    )  # fmt: skip
    assert run.returncode == 2 and "cutoff in 'ndcg@0'" in run.stderr
