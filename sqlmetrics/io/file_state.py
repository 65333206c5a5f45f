"""The files an input reads, as they were when the call bound them: a file replaced or rewritten
while a query reads it would give numbers that mix two versions (or DuckDB's internal errors),
so a call compares each file's size and modification time when its queries end."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field


@dataclass
class FileStates:
    """(size, modification time) of every local file a call's inputs read, by role."""

    states: dict[str, tuple[str, dict[str, tuple[int, int] | None]]] = field(default_factory=dict)

    def watch(self, role: str, pattern: str) -> None:
        """Records the files matching ``pattern`` (a path or glob as DuckDB reads it, escaped
        where the path itself has glob characters); remote paths are not watched."""
        if "://" in pattern:
            return
        files = sorted(glob.glob(pattern, recursive=True))
        self.states[role] = (pattern, {path: _state(path) for path in files})

    def changed(self) -> str | None:
        """Why the inputs are no longer what the call bound, or None."""
        for role, (pattern, states) in self.states.items():
            now = set(glob.glob(pattern, recursive=True))
            for path, state in states.items():
                if path not in now or _state(path) != state:
                    return _message(role, path, "was replaced or rewritten")
            added = sorted(now - set(states))
            if added:
                return _message(role, added[0], "appeared")
        return None


def _state(path: str) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_size, status.st_mtime_ns


def _message(role: str, path: str, what: str) -> str:
    return (
        f"{role}: {path} {what} while sqlmetrics read it, so the numbers could mix two versions "
        "of the input and none are given; run again once the files are written (write a new "
        "file and rename it into place)"
    )
