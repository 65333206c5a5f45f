"""An input file rewritten, replaced or joined by another while a call reads it is refused by
name: the numbers could mix two versions of the input, and DuckDB may fail with an internal
error instead (issue 39, cause 11: a Parquet file swapped mid-read)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from sqlglot import exp

from sqlmetrics.engines.duckdb import DuckDBEngine
from sqlmetrics.errors import SqlmetricsError


def _write(path: Path, rows: int) -> None:
    frame = pd.DataFrame({"user_id": range(rows), "item_id": range(rows), "score": 0.5})
    frame.to_parquet(path)


def _count(engine: DuckDBEngine, relation: exp.Expr) -> int:
    return int(engine.rows(exp.select("COUNT(*)").from_(relation.copy()))[0][0])


def test_an_unchanged_file_reads_as_bound(tmp_path: Path) -> None:
    path = tmp_path / "recs.parquet"
    _write(path, 3)
    engine = DuckDBEngine()
    try:
        source = engine.bind(str(path), "recommendations")
        assert _count(engine, source.relation) == 3
        assert engine.inputs_changed() is None
    finally:
        engine.close()


def test_a_file_rewritten_after_binding_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "recs.parquet"
    _write(path, 3)
    engine = DuckDBEngine()
    try:
        source = engine.bind(str(path), "recommendations")
        _write(path, 5)  # a new version, as a job rewriting the file in place would leave it
        with pytest.raises(
            SqlmetricsError, match=r"^recommendations: .*recs\.parquet was replaced"
        ):
            _count(engine, source.relation)
    finally:
        engine.close()


def test_a_file_broken_mid_read_gives_the_reason_not_duckdbs_error(tmp_path: Path) -> None:
    """Half a file (a writer still at work) fails in DuckDB; the message says what happened."""
    path = tmp_path / "recs.parquet"
    _write(path, 3)
    engine = DuckDBEngine()
    try:
        source = engine.bind(str(path), "recommendations")
        path.write_bytes(path.read_bytes()[:40])
        with pytest.raises(SqlmetricsError) as refused:
            _count(engine, source.relation)
        message = str(refused.value)
        assert message.startswith("recommendations: ") and "was replaced or rewritten" in message
        assert "duckdb could not run" not in message
    finally:
        engine.close()


def test_a_file_added_to_a_folder_input_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "recs"
    folder.mkdir()
    _write(folder / "part-0.parquet", 3)
    engine = DuckDBEngine()
    try:
        source = engine.bind(str(folder), "recommendations")
        _write(folder / "part-1.parquet", 2)
        with pytest.raises(SqlmetricsError, match=r"part-1\.parquet appeared while"):
            _count(engine, source.relation)
    finally:
        engine.close()
