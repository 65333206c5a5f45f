"""The commands the README and the documentation site show on the bundled example run, and the
output printed under one (a ```text block right after its ```sh block) is what it prints.

Every ``sqlmetrics`` command of a ```sh block that reads ``examples/`` is run in-process from a
folder holding the examples (so that a file it writes lands there); a command with
``--fail-if`` may exit 1, its gate failing. Commands on files of your own (``recs.parquet``)
are not run here: the CLI's tests run each of their options.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from sqlmetrics.cli import main

REPO = Path(__file__).resolve().parent.parent
# The pages written by hand: benchmark.md's commands time large data (bench/), and the
# generated pages hold no command.
PAGES = (
    "README.md",
    *sorted(
        str(path.relative_to(REPO))
        for path in (REPO / "docs").rglob("*.md")
        if path.name != "benchmark.md"
        and "reference/metrics" not in path.as_posix()
        and path.relative_to(REPO).as_posix() not in ("docs/reference/cli.md", "docs/profiles.md")
    ),
)
_BLOCK = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```\n", re.MULTILINE | re.DOTALL)


def shown_commands(text: str) -> list[tuple[str, str | None]]:
    """Each example command of the page's ```sh blocks, with the ```text block right after
    its block when there is one (its expected output; the block's last command prints it)."""
    blocks = list(_BLOCK.finditer(text))
    found: list[tuple[str, str | None]] = []
    for index, block in enumerate(blocks):
        if block.group("lang") not in ("sh", "bash"):
            continue
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        output = None
        if following and following.group("lang") == "text" and following.start() == block.end():
            output = following.group("body")
        lines = block.group("body").replace("\\\n", " ").splitlines()
        commands = [
            line.split(" #")[0].strip()
            for line in lines
            if line.startswith("sqlmetrics ") and "examples/" in line
        ]
        found += [(command, None) for command in commands[:-1]]
        if commands:
            found.append((commands[-1], output))
    return found


CASES = [
    pytest.param(command, output, id=f"{page}:{command[11:60]}")
    for page in PAGES
    for command, output in shown_commands((REPO / page).read_text(encoding="utf-8"))
]


def test_the_pages_show_commands_on_the_example() -> None:
    pages = {case.id.split(":")[0] for case in CASES}
    assert {"README.md", "docs/getting-started.md", "docs/how-to/compare.md"} <= pages


@pytest.mark.parametrize(("command", "output"), CASES)
def test_a_shown_command_runs_and_prints_what_the_page_shows(
    command: str,
    output: str | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "examples").symlink_to(REPO / "examples")
    monkeypatch.chdir(tmp_path)
    status = main(shlex.split(command)[1:])
    printed = capsys.readouterr()
    allowed = (0, 1) if "--fail-if" in command else (0,)
    assert status in allowed, printed.err
    if output is not None:
        assert printed.out.rstrip() == output.rstrip()


def test_a_text_block_after_a_command_is_its_output() -> None:
    page = (
        "```sh\nsqlmetrics metrics examples/a \\\n    --x  # why\nsqlmetrics b examples/b\n```\n"
        "```text\nprinted\n```\n```sh\nsqlmetrics c examples/c\n```\n\n```text\nnot its\n```\n"
    )
    assert shown_commands(page) == [
        ("sqlmetrics metrics examples/a      --x", None),
        ("sqlmetrics b examples/b", "printed\n"),
        ("sqlmetrics c examples/c", None),
    ]
