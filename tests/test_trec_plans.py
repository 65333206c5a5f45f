"""The shape of the TREC path's query: what it stores and what it reads again.

Why: a parsed TREC file is a table in sqlmetrics' own memory, so a query reading it twice
(the ranking and the list lengths) costs less scanning it again than storing a copy of it,
which on a 5M-line run is 200 MB of the report's peak (docs/benchmark.md, TREC files). -M
ranks each query in the relation itself: that window is stored, not computed twice.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlmetrics
from sqlmetrics.engines import duckdb_passes
from sqlmetrics.trec import read_qrels, read_run

RUN = "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.5 t\n1 Q0 c 3 1.0 t\n2 Q0 a 1 1.0 t\n"
QRELS = "1 0 a 1\n1 0 c 2\n2 0 a 0\n"


def _query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **run_options: int) -> str:
    (tmp_path / "run").write_text(RUN)
    (tmp_path / "qrels").write_text(QRELS)
    queries: list[str] = []
    split = duckdb_passes.split_diagnostics

    def recorded(connection: object, query: str, *args: object) -> object:
        queries.append(query)
        return split(connection, query, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(duckdb_passes, "split_diagnostics", recorded)
    sqlmetrics.evaluate(
        read_run(tmp_path / "run", **run_options),
        read_qrels(tmp_path / "qrels"),
        ["map", "P@10", "bpref"],
        profile="trec_eval",
    )
    [query] = queries
    return query


def test_a_parsed_file_is_read_again_not_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = _query(tmp_path, monkeypatch)
    assert "input_recommendations AS NOT MATERIALIZED (" in query
    assert "input_interactions AS NOT MATERIALIZED (" in query


def test_a_run_cut_by_max_per_query_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = _query(tmp_path, monkeypatch, max_per_query=2)
    assert "input_recommendations AS (" in query
    assert "input_interactions AS NOT MATERIALIZED (" in query
