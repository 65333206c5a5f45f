"""The wheel carries the metric files and the example data, so an installed copy works."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from tests.conftest import REPO


def test_wheel_ships_sql_and_examples(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(tmp_path),
            str(REPO),
        ],
        check=True,
    )
    (wheel,) = tmp_path.glob("sqlmetrics-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in sorted((REPO / "sql").rglob("*.sql")):
        assert f"sqlmetrics/sql/{path.relative_to(REPO / 'sql').as_posix()}" in names
    assert "sqlmetrics/dbt/macros.sql" in names  # the dbt package's hand-written template
    assert "sqlmetrics/examples/recommendations.parquet" in names
    assert "sqlmetrics/examples/interactions.parquet" in names
