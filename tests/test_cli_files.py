"""What the CLI writes: never an input, never a file it did not write, through links and into
devices, one error line rather than a traceback (issue 23: causes 1, 2, 3, 11 and 12)."""

from __future__ import annotations

import io
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlmetrics.cli import main
from tests.conftest import EXAMPLES

RECS = EXAMPLES / "recommendations.parquet"
TRUTH = EXAMPLES / "interactions.parquet"
METRIC = ["-m", "ndcg@10", "--group-by", "model", "--format", "csv", "-q"]


def run(*args: str) -> tuple[int, str, str]:
    """The CLI in-process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def assert_one_error_line(code: int, err: str) -> None:
    assert code == 2, err
    assert err.startswith("sqlmetrics: error: "), err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder``: file bytes, link targets, 'dir'."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        key = path.relative_to(folder).as_posix()
        if path.is_symlink():
            found[key] = "-> " + os.readlink(path)
        elif path.is_dir():
            found[key] = "dir"
        elif path.is_file():
            found[key] = path.read_bytes()
        else:
            found[key] = f"mode {stat.S_IFMT(path.lstat().st_mode)}"
    return found


def case_insensitive(folder: Path) -> bool:
    probe = folder / "CaseProbe"
    probe.write_text("")
    try:
        return (folder / "caseprobe").exists()
    finally:
        probe.unlink()


# 1. an output is never an input -------------------------------------------------------------


@pytest.fixture(scope="module")
def inputs() -> Iterator[Path]:
    """Inputs of every kind, and links to them: data/recs.parquet, data/truth.csv, a folder
    data/parts/, a glob's folder data/glob/, items and history, link.csv -> data/truth.csv,
    datalink -> data."""
    with tempfile.TemporaryDirectory() as name:
        root = Path(name)
        data = root / "data"
        (data / "parts").mkdir(parents=True)
        (data / "glob").mkdir()
        shutil.copy(RECS, data / "recs.parquet")
        pd.read_parquet(TRUTH).to_csv(data / "truth.csv", index=False)
        shutil.copy(RECS, data / "parts" / "part-0.parquet")
        shutil.copy(RECS, data / "glob" / "a.parquet")
        (data / "items.csv").write_text("item_id\nitem_001\n")
        (data / "history.csv").write_text("user_id,item_id\n1,item_001\n")
        (root / "link.csv").symlink_to(data / "truth.csv")
        (root / "datalink").symlink_to(data, target_is_directory=True)
        yield root


def spell(root: Path, relative: str, how: int, swap_case: bool) -> str:
    """One of many spellings of root/relative: absolute, relative to the working folder, with
    ./ and .. detours, through the folder link, case-swapped."""
    if relative.startswith("data/") and how & 1:
        relative = "datalink/" + relative[len("data/") :]
    if how & 2:
        relative = relative.replace("/", "/./", 1)
    if how & 4 and "/" in relative:
        head, tail = relative.split("/", 1)
        relative = f"{head}/../{head}/{tail}"
    path = str(root / relative)
    if how & 8:
        path = os.path.relpath(path)
    if how & 16:
        path = "./" + path if not os.path.isabs(path) else path
    if swap_case:
        folder, name = os.path.split(path)
        path = os.path.join(folder, name.swapcase())
    return path


@settings(max_examples=60, deadline=None)
@given(
    target=st.sampled_from(
        [
            "data/recs.parquet",
            "data/truth.csv",
            "link.csv",
            "data/parts/part-0.parquet",
            "data/parts/new.csv",
            "data/parts/deeper.csv",
            "data/glob/a.parquet",
            "data/glob/b.parquet",
            "data/items.csv",
            "data/history.csv",
        ]
    ),
    how=st.integers(0, 31),
    swap_case=st.booleans(),
)
def test_an_output_that_is_an_input_however_spelled_is_refused(
    inputs: Path, target: str, how: int, swap_case: bool
) -> None:
    if swap_case and not case_insensitive(inputs):
        swap_case = False  # detected, not assumed: only where the file system folds case
    before = snapshot(inputs)
    data = inputs / "data"
    recs = str(data / "recs.parquet")
    truth = str(data / "truth.csv")
    if target.startswith("data/parts/"):
        recs = str(data / "parts")  # a folder input: nothing inside it may be written
    if target.startswith("data/glob/"):
        recs = str(data / "glob" / "*.parquet")  # a glob: nothing it matches, or would match
    extra = ["--items", str(data / "items.csv"), "--history", str(data / "history.csv")]
    output = spell(inputs, target, how, swap_case)
    code, _, err = run("evaluate", recs, truth, *METRIC, *extra, "-o", output)
    assert_one_error_line(code, err)
    assert "would destroy an input" in err
    assert snapshot(inputs) == before


def test_an_output_beside_the_inputs_is_written(inputs: Path, tmp_path: Path) -> None:
    data = inputs / "data"
    output = tmp_path / "metrics.csv"
    code, _, err = run(
        "evaluate", str(data / "recs.parquet"), str(data / "truth.csv"), *METRIC, "-o", str(output)
    )
    assert code == 0, err
    assert output.read_text().startswith("model,")


# 3. links, FIFOs, devices, modes ----------------------------------------------------------------


def evaluate_to(output: Path | str) -> tuple[int, str, str]:
    return run("evaluate", str(RECS), str(TRUTH), *METRIC, "-o", str(output))


def test_a_symlink_is_written_through_and_kept(tmp_path: Path) -> None:
    target = tmp_path / "runs" / "2024.csv"
    target.parent.mkdir()
    target.write_text("old\n")
    target.chmod(0o640)
    link = tmp_path / "latest.csv"
    link.symlink_to(target)
    code, _, err = evaluate_to(link)
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith("model,")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the replaced file keeps its mode
    assert [p.name for p in target.parent.iterdir()] == ["2024.csv"]  # no temp file left


def test_a_fifo_is_written_to_and_stays_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as handle:
            received.append(handle.read())

    reader = threading.Thread(target=read)
    reader.start()
    code, _, err = evaluate_to(fifo)
    reader.join(timeout=10)
    assert code == 0, err
    assert received and received[0].startswith(b"model,")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def device(tmp_path: Path, name: str, minor: int) -> Path:
    """A private copy of /dev/null (minor 3) or /dev/full (7): a test never risks a real node."""
    node = tmp_path / name
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, minor))
        with open(node, "wb"):
            pass
    except OSError:
        pytest.skip("cannot make and open a character device here (needs root, no nodev)")
    return node


def test_the_null_device_is_written_to_not_replaced(tmp_path: Path) -> None:
    null = device(tmp_path, "null", 3)
    code, _, err = evaluate_to(null)
    assert code == 0, err
    assert stat.S_ISCHR(null.lstat().st_mode)


def test_a_full_disk_is_an_error_and_the_device_stays(tmp_path: Path) -> None:
    full = device(tmp_path, "full", 7)
    code, _, err = evaluate_to(full)
    assert_one_error_line(code, err)
    assert "No space left on device" in err
    assert stat.S_ISCHR(full.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o002])
def test_a_new_file_takes_the_umask_mode(tmp_path: Path, umask: int) -> None:
    output = tmp_path / "query.sql"
    done = subprocess.run(
        [sys.executable, "-m", "sqlmetrics.cli", "sql", "-m", "ndcg@10", "-o", str(output)],
        capture_output=True,
        text=True,
        umask=umask,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(output.stat().st_mode) == 0o666 & ~umask


# 11. one line, exit 2, nothing written ------------------------------------------------------


def read_only_place(tmp_path: Path) -> str:
    if os.geteuid() == 0:
        return "/proc/sqlmetrics-test.csv"  # root writes anywhere a mode allows; not in /proc
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    return str(locked / "x.csv")


@pytest.mark.parametrize(
    "case",
    ["missing folder", "read-only", "existing folder", "empty", "sql empty", "sql missing"],
)
def test_output_errors_are_one_line(tmp_path: Path, case: str) -> None:
    (tmp_path / "existing").mkdir()
    output = {
        "missing folder": str(tmp_path / "nodir" / "x.csv"),
        "read-only": read_only_place(tmp_path),
        "existing folder": str(tmp_path / "existing"),
        "empty": "",
        "sql empty": "",
        "sql missing": str(tmp_path / "nodir" / "q.sql"),
    }[case]
    before = snapshot(tmp_path)
    if case.startswith("sql"):
        code, out, err = run("sql", "-m", "ndcg@10", "-o", output)
    else:
        code, out, err = evaluate_to(output)
    assert_one_error_line(code, err)
    assert out == ""
    assert snapshot(tmp_path) == before


def test_folder_arguments_that_are_files_are_one_line(tmp_path: Path) -> None:
    existing = tmp_path / "file.txt"
    existing.write_text("mine")
    for args in (
        ["sql", "--all", "--output-dir", str(existing)],
        ["sql", "--all", "--output-dir", ""],
        ["dbt", "export", str(existing)],
        ["dbt", "export", ""],
        [
            "dbt",
            "models",
            str(existing),
            "--name",
            "q",
            "--recommendations",
            "r",
            "--interactions",
            "i",
            "-m",
            "ndcg@10",
        ],
    ):
        code, _, err = run(*args)
        assert_one_error_line(code, err)
    assert snapshot(tmp_path) == {"file.txt": b"mine"}


def test_stdout_to_a_full_disk_is_one_line() -> None:
    if not os.access("/dev/full", os.W_OK):
        pytest.skip("no /dev/full here")
    for args in (["metrics"], ["sql", "-m", "ndcg@10"], ["example", "-q"]):
        with open("/dev/full", "w") as full:
            done = subprocess.run(
                [sys.executable, "-m", "sqlmetrics.cli", *args],
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                check=False,
            )
        assert_one_error_line(done.returncode, done.stderr)
        assert "No space left on device" in done.stderr


def test_a_duckdb_interrupt_is_the_clean_exit_130(monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlmetrics.run

    def interrupted(*args: object, **kwargs: object) -> None:
        raise RuntimeError("Query interrupted")

    monkeypatch.setattr(sqlmetrics.run, "evaluate", interrupted)
    code, out, err = evaluate_to("never.csv")
    assert (code, out, err) == (130, "", "sqlmetrics: interrupted; nothing was written\n")
    assert not Path("never.csv").exists()


def _reads(pid: int, path: Path) -> bool:
    """Whether process ``pid`` has ``path`` open (Linux: /proc/<pid>/fd)."""
    try:
        return any(os.readlink(fd) == str(path) for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:  # it exited, or an fd closed while listing
        return False


def _as_from_a_terminal() -> None:
    """The child starts with SIGINT as a shell gives it (default, not blocked), whatever the
    pytest worker that starts it has inherited or set: an ignored or blocked SIGINT would be
    inherited, and Ctrl-C would then never reach the CLI."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux's /proc/<pid>/fd")
def test_ctrl_c_while_duckdb_runs_exits_130(tmp_path: Path) -> None:
    import duckdb

    recs, truth = tmp_path / "recs.parquet", tmp_path / "truth.parquet"
    with duckdb.connect() as connection:  # seconds of work for DuckDB: every list sorted
        connection.execute(
            "COPY (SELECT i % 200000 AS user_id, i AS item_id, random() AS score "
            f"FROM range(20000000) t(i)) TO '{recs}' (FORMAT parquet)"
        )
        connection.execute(
            "COPY (SELECT i % 200000 AS user_id, i * 7 AS item_id FROM range(2000000) t(i)) "
            f"TO '{truth}' (FORMAT parquet)"
        )
    output = tmp_path / "out.csv"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sqlmetrics.cli",
            "evaluate",
            str(recs),
            str(truth),
            "-m",
            "ndcg",  # no cutoff: whole lists, a sort of all 20M rows
            "-q",
            "-o",
            str(output),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_from_a_terminal,
    )
    # Past the imports and into evaluate: DuckDB has the recommendations open. A fixed sleep
    # was either still in the imports or already done on a fast machine.
    deadline = time.monotonic() + 60
    while not _reads(process.pid, recs):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "sqlmetrics never opened the recommendations"
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert err == "sqlmetrics: interrupted; nothing was written\n"
    assert not output.exists()


# 2. folders: only ours are replaced -----------------------------------------------------------


def test_dbt_export_leaves_a_users_dbt_project_alone(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "macros").mkdir(parents=True)
    (project / "dbt_project.yml").write_text("name: mine\n")
    (project / "macros" / "m.sql").write_text("x\n")
    (project / "README.md").write_text("my project\n")
    before = snapshot(project)
    code, _, err = run("dbt", "export", str(project))
    assert_one_error_line(code, err)
    assert "is not a sqlmetrics dbt package" in err
    assert snapshot(project) == before
    # Named like ours is not enough: without our marker it is someone's folder too.
    (project / "dbt_project.yml").write_text("name: sqlmetrics\n")
    before = snapshot(project)
    code, _, err = run("dbt", "export", str(project))
    assert_one_error_line(code, err)
    assert snapshot(project) == before


@pytest.fixture
def quick_macros(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rendering the macros takes half a minute (test_dbt_export checks them); here only the
    files matter."""
    from sqlmetrics.dbt import package

    monkeypatch.setattr(package, "shared_macros", lambda: "-- shared\n")
    monkeypatch.setattr(package, "adapter_macros", lambda adapter, dialect: f"-- {adapter}\n")


@pytest.mark.usefixtures("quick_macros")
def test_dbt_export_replaces_its_own_export_and_nothing_else(tmp_path: Path) -> None:
    folder = tmp_path / "dbt_packages" / "sqlmetrics"
    assert run("dbt", "export", str(folder))[0] == 0
    first = snapshot(folder)
    assert ".sqlmetrics-written" in first
    code, _, err = run("dbt", "export", str(folder))  # a re-export works...
    assert code == 0, err
    assert snapshot(folder) == first
    (folder / "macros" / "mine.sql").write_text("x\n")  # ...until a file not ours is inside
    before = snapshot(folder)
    code, _, err = run("dbt", "export", str(folder))
    assert_one_error_line(code, err)
    assert "macros/mine.sql" in err
    assert snapshot(folder) == before


def test_sql_output_dir_replaces_only_its_own_files(tmp_path: Path) -> None:
    folder = tmp_path / "queries"
    args = ["sql", "-m", "ndcg@10,recall@5", "--output-dir", str(folder)]
    assert run(*args)[0] == 0
    written = snapshot(folder)
    assert {"ndcg.sql", "recall.sql"} <= set(written)
    assert run(*args)[0] == 0  # a rerun replaces what it wrote
    assert snapshot(folder) == written
    other = tmp_path / "other"
    other.mkdir()
    (other / "ndcg.sql").write_text("-- my query\n")
    (other / "notes.txt").write_text("mine\n")
    before = snapshot(other)
    code, _, err = run("sql", "-m", "ndcg@10", "--output-dir", str(other))
    assert_one_error_line(code, err)
    assert "--force" in err and "ndcg.sql" in err
    assert snapshot(other) == before
    code, _, err = run("sql", "-m", "ndcg@10", "--output-dir", str(other), "--force")
    assert code == 0, err
    assert (other / "ndcg.sql").read_text().startswith("WITH") or "SELECT" in (
        other / "ndcg.sql"
    ).read_text()
    assert (other / "notes.txt").read_text() == "mine\n"


def test_dbt_models_replaces_only_its_own_model(tmp_path: Path) -> None:
    args = [
        "dbt",
        "models",
        str(tmp_path),
        "--name",
        "quality",
        "--recommendations",
        "recs",
        "--interactions",
        "clicks",
        "-m",
        "ndcg@10",
    ]
    assert run(*args)[0] == 0
    assert run(*args)[0] == 0  # its own file: replaced
    (tmp_path / "quality.sql").write_text("select 1\n")
    code, _, err = run(*args)
    assert_one_error_line(code, err)
    assert (tmp_path / "quality.sql").read_text() == "select 1\n"
    code, _, err = run(*args, "--force")
    assert code == 0, err
    assert (tmp_path / "quality.sql").read_text().startswith("-- Generated by")


# 12. an existing path is a path, brackets and all ----------------------------------------------


def test_an_existing_file_with_brackets_is_read_as_itself(tmp_path: Path) -> None:
    shutil.copy(RECS, tmp_path / "recs [v2].parquet")
    # What the brackets would match as a glob: another file, with other rows.
    pd.read_parquet(RECS).head(50).to_parquet(tmp_path / "recs 2.parquet")
    folder = tmp_path / "parts [1]"
    folder.mkdir()
    shutil.copy(RECS, folder / "part.parquet")
    expected = run("evaluate", str(RECS), str(TRUTH), *METRIC)
    for recs in (tmp_path / "recs [v2].parquet", folder):
        assert run("evaluate", str(recs), str(TRUTH), *METRIC) == expected
