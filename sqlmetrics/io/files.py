"""Every file the CLI writes goes through here: the rules that keep a user's files safe.

- An output is never one of the inputs, a file inside an input folder or one an input glob
  matches (compared by device and inode, so symlinks, ``..`` and case variants count).
- A regular file is replaced atomically (a temp file beside it, then a rename), keeping its mode;
  a new file gets the umask's mode. A symlink is written through to its target, and a character
  device or a FIFO (``/dev/null``, a pipe) is written to, never replaced.
- A folder is written only if it is new, empty, or one sqlmetrics wrote (a marker file lists
  what it wrote); a file sqlmetrics did not write is never replaced or deleted.
- Every failure is a ``SqlmetricsError`` naming the file, why, and what to do.
"""

from __future__ import annotations

import contextlib
import fnmatch
import glob
import os
import stat
import sys
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path

from sqlmetrics.errors import SqlmetricsError

MARKER = ".sqlmetrics-written"
"""In a folder sqlmetrics wrote: the files it wrote there, one relative path a line."""
_MARKER_HEADER = "# written by sqlmetrics; the files below may be replaced by it\n"
_GLOB_CHARS = "*?["


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def _identity(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino


def _ancestors(path: str) -> list[tuple[int, int]]:
    """The identities of the folders holding ``path`` (its parent up to the root)."""
    found = []
    current = os.path.dirname(os.path.abspath(path))
    while True:
        identity = _identity(current)
        if identity is not None:
            found.append(identity)
        parent = os.path.dirname(current)
        if parent == current:
            return found
        current = parent


def _case_insensitive(folder: str) -> bool:
    """Whether ``folder``'s file system ignores case: detected, never assumed."""
    folder = os.path.abspath(folder)
    swapped = folder.swapcase()
    if swapped == folder:
        return False
    return _identity(swapped) is not None and _identity(swapped) == _identity(folder)


def _glob_root(pattern: str) -> tuple[str, str]:
    """``pattern`` split into the folder before its first wildcard and the rest."""
    parts = Path(os.path.abspath(pattern)).parts
    for index, part in enumerate(parts):
        if any(char in part for char in _GLOB_CHARS):
            return str(Path(*parts[:index])), os.path.join(*parts[index:])
    return os.path.dirname(os.path.abspath(pattern)), os.path.basename(pattern)


def _glob_would_match(pattern: str, output: str) -> bool:
    """Whether ``output`` (written or not yet) is or would be matched by ``pattern``; ``*``
    is let cross folders, which refuses more rather than less."""
    root, rest = _glob_root(pattern)
    real_root = os.path.realpath(root)
    folder = os.path.realpath(os.path.dirname(os.path.abspath(output)))
    name = os.path.join(folder, os.path.basename(output))
    fold = _case_insensitive(folder)
    for base in {os.path.abspath(root), real_root}:
        if os.path.commonpath([base, name]) != base and not fold:
            continue
        spelled = os.path.join(base, rest)
        if fold and fnmatch.fnmatchcase(name.lower(), spelled.lower()):
            return True
        if fnmatch.fnmatchcase(name, spelled) or fnmatch.fnmatchcase(
            os.path.abspath(output), spelled
        ):
            return True
    return False


def check_not_input(output: str, inputs: Iterable[str | None]) -> None:
    """Refuses an ``output`` that is an input, lies inside an input folder, or that an input
    glob matches: the write would destroy what the next run reads."""
    mine = _identity(output)
    holders = set(_ancestors(os.path.realpath(output))) | set(_ancestors(output))
    for value in inputs:
        if value is None or "://" in value:
            continue
        if os.path.exists(value) or not any(char in value for char in _GLOB_CHARS):
            matches = [value]  # an existing path is a path, brackets and all
        else:
            matches = glob.glob(value, recursive=True)
            if _glob_would_match(value, output):
                raise _is_input(output, value, "matched by the input glob")
        for match in matches:
            identity = _identity(match)
            if identity is None:
                continue
            if identity == mine:
                raise _is_input(output, value, "the input")
            if os.path.isdir(match) and identity in holders:
                raise _is_input(output, value, "inside the input folder")


def _is_input(output: str, value: str, what: str) -> SqlmetricsError:
    return SqlmetricsError(
        f"--output {output!r} is {what} {value!r}: writing it would destroy an input; "
        "choose another output file"
    )


def check_output(output: str, inputs: Sequence[str | None] = ()) -> None:
    """What can be known before the work: refuses an empty name, an input, a folder, a
    missing folder. Called again when writing."""
    if output == "":
        raise SqlmetricsError("--output is empty: give a file name, like -o metrics.csv")
    check_not_input(output, inputs)
    if os.path.isdir(output):
        raise SqlmetricsError(
            f"cannot write {output!r}: it is a folder; give a file name, like "
            f"{os.path.join(output, 'metrics.csv')}"
        )
    folder = os.path.dirname(os.path.realpath(output)) or "."
    if not os.path.isdir(folder):
        raise SqlmetricsError(
            f"cannot write {output!r}: folder {os.path.dirname(output)!r} does not exist; "
            "create it first"
        )


def write_output(data: str | bytes, output: str, inputs: Sequence[str | None] = ()) -> None:
    """Writes ``data`` to the file ``output`` (see the module's rules)."""
    check_output(output, inputs)
    write_file(output, data.encode("utf-8") if isinstance(data, str) else data)


def write_file(path: str, data: bytes) -> None:
    """Writes ``data`` to ``path``: through a symlink, into a device or FIFO, or atomically."""
    target = os.path.realpath(path) if os.path.islink(path) else path
    try:
        info: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        info = None
    except OSError as error:
        raise SqlmetricsError(f"cannot write {path!r}: {_reason(error)}") from error
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise SqlmetricsError(
            f"cannot write {path!r}: it is a folder; give a file name, like "
            f"{os.path.join(path, 'metrics.csv')}"
        )
    if info is not None and (stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
        _write_through(path, target, data)
        return
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise SqlmetricsError(
            f"cannot write {path!r}: it is neither a regular file, a character device nor a FIFO"
        )
    folder = os.path.dirname(target) or "."
    if not os.path.isdir(folder):
        raise SqlmetricsError(
            f"cannot write {path!r}: folder {folder!r} does not exist; create it first"
        )
    _replace(path, target, folder, data, info)


def _write_through(path: str, target: str, data: bytes) -> None:
    try:
        descriptor = os.open(target, os.O_WRONLY | getattr(os, "O_BINARY", 0))
        with os.fdopen(descriptor, "wb", buffering=0) as handle:
            view = memoryview(data)
            while view:
                view = view[handle.write(view) or 0 :]
    except OSError as error:
        raise SqlmetricsError(f"cannot write {path!r}: {_reason(error)}") from error


def _replace(path: str, target: str, folder: str, data: bytes, info: os.stat_result | None) -> None:
    """A temp file in the target's folder renamed over it: an interrupted or failed run leaves
    the old file whole and no partial one."""
    temporary = os.path.join(folder, f".{os.path.basename(target)}.{uuid.uuid4().hex[:12]}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    try:
        # 0o666 and the kernel applies the umask, as for any new file (mkstemp's 0o600 did not).
        descriptor = os.open(temporary, flags, 0o666)
    except OSError as error:
        raise SqlmetricsError(
            f"cannot write {path!r}: {_reason(error)}; choose a folder you can write to"
        ) from error
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())  # a full disk shows here, before the old file is gone
            if info is not None:  # the replaced file keeps its mode (and owner, where allowed)
                os.chmod(handle.fileno(), stat.S_IMODE(info.st_mode))
                if hasattr(os, "chown") and (info.st_uid, info.st_gid) != _owner(handle.fileno()):
                    with contextlib.suppress(OSError):
                        os.chown(handle.fileno(), info.st_uid, info.st_gid)
        os.replace(temporary, target)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise SqlmetricsError(f"cannot write {path!r}: {_reason(error)}") from error
        raise


def _owner(descriptor: int) -> tuple[int, int]:
    info = os.fstat(descriptor)
    return info.st_uid, info.st_gid


def write_stdout(text: str) -> None:
    """Writes to stdout and flushes, so a full disk or a closed pipe is an error now."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as error:
        _silence_stdout()
        raise SqlmetricsError(f"cannot write to stdout: {_reason(error)}") from error


def _silence_stdout() -> None:
    """Points stdout at the null device, so the interpreter's last flush does not fail again."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


# folders -------------------------------------------------------------------------------------


def prepare_folder(folder: str, what: str) -> Path:
    """``folder`` created if needed; refused if it is a file or cannot be made."""
    if folder == "":
        raise SqlmetricsError(f"{what}: the folder name is empty")
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise SqlmetricsError(f"{what}: {folder!r} is a file, not a folder; choose a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise SqlmetricsError(f"{what}: cannot create {folder!r}: {_reason(error)}") from error
    return path


def written_by_us(folder: Path) -> set[str] | None:
    """The files the marker lists (relative paths), or None when the folder has no marker."""
    marker = folder / MARKER
    if not marker.is_file() or marker.is_symlink():
        return None
    try:
        lines = marker.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    return {line for line in lines if line and not line.startswith("#")}


def write_marker(folder: Path, names: Iterable[str]) -> None:
    text = _MARKER_HEADER + "".join(f"{name}\n" for name in sorted(names))
    write_file(str(folder / MARKER), text.encode("utf-8"))


def refuse_existing(folder: Path, names: Iterable[str], what: str, force: bool) -> None:
    """Refuses to overwrite a file in ``folder`` that sqlmetrics did not write (unless
    ``force``)."""
    if force:
        return
    ours = written_by_us(folder) or set()
    theirs = [name for name in names if os.path.lexists(folder / name) and name not in ours]
    if theirs:
        listed = ", ".join(str(folder / name) for name in sorted(theirs)[:3])
        more = f" and {len(theirs) - 3} more" if len(theirs) > 3 else ""
        raise SqlmetricsError(
            f"{what}: {listed}{more} already exists and was not written by sqlmetrics; "
            "move it away or pass --force to overwrite"
        )


def refuse_foreign_file(path: str, signature: str, force: bool) -> None:
    """Refuses to replace an existing regular file that does not carry ``signature`` in its
    first 4 KB (one sqlmetrics wrote carries it), unless ``force``: a page written over a
    user's own file would lose it. Devices and FIFOs are written to, never replaced."""
    if force:
        return
    target = os.path.realpath(path)
    if not os.path.isfile(target):
        return
    try:
        with open(target, "rb") as handle:
            head = handle.read(4096)
    except OSError as error:
        raise SqlmetricsError(f"cannot read {path!r}: {_reason(error)}") from error
    if signature.encode("utf-8") not in head:
        raise SqlmetricsError(
            f"{path!r} already exists and was not written by {signature}; move it away, choose "
            "another file, or pass --force (force=True) to overwrite it"
        )
