"""The bytes of a TREC file, before DuckDB reads it: what its line reader would misread or
report badly is refused here with the file and line (a NUL byte, the control character it
takes as a delimiter, a carriage return inside a line, a path that is not a regular file),
and, when DuckDB fails anyway, the line it failed on is found (not UTF-8, too long).
"""

from __future__ import annotations

import gzip
import os
import re
import stat
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from sqlmetrics.errors import SqlmetricsError

# DuckDB's own default line limit, said explicitly so that the message can name it.
MAX_LINE = 1 << 21
_BLOCK = 1 << 24
# The character the line reader splits on: the pre-pass refuses a file holding it, so each
# line is one column.
NO_DELIMITER = "\x01"
_GZIP = b"\x1f\x8b"
_ZSTD = b"\x28\xb5\x2f\xfd"


def existing(path: str | os.PathLike[str], kind: str) -> str:
    """The path, refused with the reason when it is not a regular file sqlmetrics can read."""
    text = os.fspath(path)
    where = f"TREC {kind} file {text!r}"
    try:
        mode = os.stat(text).st_mode
    except FileNotFoundError:
        raise SqlmetricsError(f"{where}: no such file") from None
    except OSError as error:
        raise SqlmetricsError(f"{where}: cannot be read ({error.strerror})") from None
    if stat.S_ISDIR(mode):
        raise SqlmetricsError(f"{where} is a directory; name the file inside it")
    if not stat.S_ISREG(mode):
        what = (
            "a FIFO (named pipe)"
            if stat.S_ISFIFO(mode)
            else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "not a regular file"
        )
        raise SqlmetricsError(
            f"{where} is {what}, not a regular file: TREC files are read in place, more than "
            "once; write its content to a file first"
        )
    if not os.access(text, os.R_OK):
        raise SqlmetricsError(f"{where}: cannot be read (permission denied)")
    return text


def opened(path: str) -> tuple[BinaryIO | gzip.GzipFile, str]:
    """The file's bytes (a gzip file decompressed) and the compression DuckDB is to read."""
    with open(path, "rb") as handle:
        magic = handle.read(4)
    if magic.startswith(_GZIP):
        return gzip.open(path, "rb"), "gzip"
    if magic.startswith(_ZSTD):
        return open(path, "rb"), "zstd"
    return open(path, "rb"), "none"


def _blocks(handle: BinaryIO | gzip.GzipFile, where: str) -> Iterator[bytes]:
    try:
        while block := handle.read(_BLOCK):
            yield block
    except (OSError, EOFError, zlib.error) as error:
        raise SqlmetricsError(f"{where}: cannot be decompressed ({error})") from None


def _refuse_bytes(data: bytes, lines: int, where: str) -> None:
    """Refuses a NUL, a \\x01 (the line reader's delimiter) or a \\r inside a line (one at the
    end of ``data`` is judged with the next block); ``lines``: the lines before ``data``."""
    checks = (
        (b"\0", "holds a NUL byte: a binary or sparse file, not TREC text"),
        (
            NO_DELIMITER.encode(),
            "holds the control character \\x01, which no TREC line holds; remove it",
        ),
    )
    for byte, why in checks:
        at = data.find(byte)
        if at >= 0:
            number = lines + data.count(b"\n", 0, at) + 1
            raise SqlmetricsError(f"{where}, line {number} {why}")
    # a search for \r is a memchr; counting \r and \r\n costs 25 times more, on every block
    if b"\r" not in data or data.count(b"\r") == data.count(b"\r\n"):
        return
    for match in re.finditer(rb"\r(?!\n)", data):
        if match.start() < len(data) - 1:
            number = lines + data.count(b"\n", 0, match.start()) + 1
            raise SqlmetricsError(
                f"{where}, line {number} holds a carriage return (\\r) that does not end the "
                "line, which trec_eval reads as a space: replace it with a space "
                "(tr '\\r' ' ')"
            )


@dataclass(frozen=True)
class Prepass:
    """What the pass over the bytes found: the compression DuckDB is to read, how many bytes
    the file gave (a /proc file says size 0), whether a line ends in \\r\\n, and, for a
    ``plain`` file (each line's fields separated by single spaces: no other whitespace, no
    empty field, no blank line, no line starting with #), its lines, the last one's bytes
    and whether a byte is ``_`` (which DuckDB's cast reads in a number as a digit
    separator)."""

    compression: str
    size: int
    crlf: bool
    plain: bool = False
    lines: int = 0
    last_line: bytes = b""
    underscore: bool = False


# Whitespace that a plain file has none of: its fields can then only be separated by spaces.
_NOT_PLAIN = (b"\t", b"\v", b"\f", b"\r")
_SPACE, _NEWLINE, _HASH = 32, 10, 35
# numpy compares a block in parts this long, so that its temporaries stay in the CPU's cache
_PART = 1 << 18


def _below_space(block: bytes, pairs: bool) -> tuple[int, int, bool]:
    """The bytes of ``block`` below a space (its line ends, if it has no control character),
    its line ends, and, with ``pairs``, whether two bytes up to a space (a space, a line end,
    a control character) meet in it."""
    import numpy as np

    data = np.frombuffer(block, np.uint8)
    below = newlines = 0
    meet = not pairs
    for at in range(0, len(data), _PART):
        part = data[at : at + _PART + 1]  # a byte more: the pair across two parts
        below += int(np.count_nonzero(part[:_PART] < _SPACE))
        newlines += int(np.count_nonzero(part[:_PART] == _NEWLINE))
        if not meet:
            separator = part <= _SPACE
            meet = bool(np.any(separator[1:] & separator[:-1]))
    return below, newlines, pairs and meet


def _separators_meet(block: bytes) -> bool:
    """Whether a space or a line end meets another in ``block`` (holding control
    characters, which _below_space counts as separators)."""
    import numpy as np

    data = np.frombuffer(block, np.uint8)
    separator = (data == _SPACE) | (data == _NEWLINE)
    return bool(np.any(separator[1:] & separator[:-1]))


def _single_spaces(block: bytes, previous: bytes, meet: bool) -> bool:
    """Whether ``block`` keeps a file plain, its separators' pairs known (``meet``): no empty
    field across its start (``previous``: the byte before it) and no line starting with #."""
    if meet or (previous in (b" ", b"\n") and block[:1] in (b" ", b"\n")):
        return False
    if b"#" not in block:
        return True
    import numpy as np

    data = np.frombuffer(block, np.uint8)
    starts = data[1:][data[:-1] == _NEWLINE]
    return not (np.any(starts == _HASH) or (previous == b"\n" and block[:1] == b"#"))


def _last_line(last: bytes, block: bytes) -> bytes:
    """The file's last line once ``block`` is read (with its line end, if it has one);
    ``last``: the last line before it."""
    cut = block.rfind(b"\n", 0, len(block) - 1)
    if cut >= 0:
        return block[cut + 1 :]
    joined = last + block
    return joined[joined.rfind(b"\n", 0, len(joined) - 1) + 1 :]


def prepass(path: str, kind: str) -> Prepass:
    """Refuses what DuckDB's line reader would misread (see the module), and says how to read
    the file."""
    where = f"TREC {kind} file {path!r}"
    handle, compression = opened(path)
    if compression == "zstd":  # DuckDB decompresses it; Python cannot look inside
        handle.close()
        return Prepass(compression, os.path.getsize(path), crlf=True)
    size = lines = 0
    crlf = underscore = False
    plain = True
    previous = b"\n"  # the byte before the block (a line starts the file)
    last = b""
    with handle:
        for block in _blocks(handle, where):
            below, newlines, meet = _below_space(block, plain)
            # a \r ending the block before is judged with this block's first byte
            if previous == b"\r" or below != newlines:
                data = previous + block
                _refuse_bytes(data, lines - previous.count(b"\n"), where)
                crlf = crlf or (b"\r" in data and b"\r\n" in data)
                plain = plain and not any(byte in block for byte in _NOT_PLAIN)
                meet = plain and _separators_meet(block)
            plain = plain and _single_spaces(block, previous, meet)
            underscore = underscore or b"_" in block
            last = _last_line(last, block)
            lines += newlines
            size += len(block)
            previous = block[-1:]
    if not plain or not size or previous == b" ":
        return Prepass(compression, size, crlf)
    lines += previous != b"\n"
    return Prepass(compression, size, crlf, True, lines, last.removesuffix(b"\n"), underscore)


def diagnosis(path: str, kind: str) -> str | None:
    """Why DuckDB could not read the file, found line by line (None: nothing found)."""
    where = f"TREC {kind} file {path!r}"
    handle, compression = opened(path)
    if compression == "zstd":
        handle.close()
        return None
    with handle:
        try:
            for number, line in enumerate(handle, 1):
                if len(line) > MAX_LINE:
                    return (
                        f"{where}, line {number} is longer than {MAX_LINE:,} bytes: not a "
                        "TREC line (a run line is `qid Q0 docno rank score tag`)"
                    )
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError as error:
                    byte = line[error.start]
                    return (
                        f"{where}, line {number} is not UTF-8 text (byte 0x{byte:02x} at "
                        f"column {error.start + 1}): convert the file to UTF-8, e.g. "
                        "iconv -f latin1 -t utf-8"
                    )
        except (OSError, EOFError, zlib.error) as error:
            return f"{where}: cannot be decompressed ({error})"
    return None
