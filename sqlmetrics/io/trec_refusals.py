"""The refusals of a parsed TREC file, each naming the file and the line: a malformed line, a
comment the chosen trec_eval would read as data, a (qid, docno) twice, a file without data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.io.trec_lines import execute, line_number, numbered, why_malformed

if TYPE_CHECKING:
    import duckdb

    from sqlmetrics.io.trec_bytes import Prepass
    from sqlmetrics.io.trec_reader import TrecFile


def refuse_malformed(
    cursor: duckdb.DuckDBPyConnection, rowid: int, read: Prepass, trec: TrecFile
) -> None:
    """Refuses the file at its first malformed line (``rowid``), read again for its fields."""
    again = numbered(trec.path, read).limit(1).offset(rowid)
    fields = list(execute(cursor, again)[0][0])
    shown = " ".join(fields)
    # a run line read as qrels, or a qrels line as a run
    swapped = len(fields) == (6 if trec.kind == "qrels" else 4)
    hint = ", or check that the run and qrels are not swapped" if swapped else ""
    raise SqlmetricsError(
        f"TREC {trec.kind} file {trec.path!r} is not a file of lines `{trec.layout}`: "
        f"line {rowid + 1}: {why_malformed(fields, trec.kind)} (found {shown[:200]!r}). "
        f"Fix or remove the line{hint}"
    )


def may_repeat(
    cursor: duckdb.DuckDBPyConnection, table: str, every_line: bool = False, intents: bool = False
) -> bool:
    """Whether two data lines may hold the same (qid, docno): two equal hashes of the pair,
    found by sorting them in numpy (a third of the CPU of DuckDB's COUNT(DISTINCT)), which
    refuse_duplicates confirms and names. ``every_line``: the table holds data lines only;
    ``intents``: diversity qrels, where a line is one (qid, intent, docno)."""
    import numpy as np

    pair = exp.func("hash", *map(exp.column, _key(intents)))
    hashes = exp.select(exp.alias_(pair, "pair")).from_(table)
    if not every_line:
        hashes = hashes.where(exp.column("kept"))
    found = np.asarray(cursor.execute(hashes.sql("duckdb")).fetchnumpy()["pair"])
    found.sort()
    return bool(np.any(found[1:] == found[:-1]))


def refuse_comments(
    cursor: duckdb.DuckDBPyConnection, table: str, trec: TrecFile, first: int
) -> None:
    """A # line the chosen trec_eval would read as data (or stop at) is refused, not skipped:
    under 9.0.8 every one (``first``, the first comment's rowid: it has no comments); in 10's
    qrels one indented before its #, one right after another comment (its get_qrels.c skips
    one comment line, then parses the next as data), or the last line (read past the end)."""
    where = f"TREC {trec.kind} file {trec.path!r}: line {{}} starts with #"
    if trec.version == 9:
        raise SqlmetricsError(
            f"{where.format(first + 1)}, but trec_eval 9.0.8 has no comments (it reads such a "
            "line as data of a query named '#...', or stops at it): remove the line, or "
            "evaluate as trec_eval 10 does (version=10, --trec-version 10)"
        )
    if trec.kind == "run":
        return
    order = exp.Order(expressions=[exp.Ordered(this=exp.column("rowid"))])
    marked = exp.select(
        "rowid",
        "comment",
        "indented",
        exp.alias_(exp.Window(this=exp.func("LAG", exp.column("comment")), order=order), "after"),
        exp.alias_(exp.Window(this=exp.func("LEAD", exp.column("rowid")), order=order), "next"),
    ).from_(table)
    misread = exp.or_(
        exp.column("indented"), exp.column("after"), exp.column("next").is_(exp.null())
    )
    found = (
        exp.select("rowid")
        .from_(marked.subquery("marked"))
        .where(exp.and_(exp.column("comment"), misread))
        .order_by("rowid")
        .limit(1)
    )
    rows = execute(cursor, found)
    if rows:
        raise SqlmetricsError(
            f"{where.format(rows[0][0] + 1)}, which trec_eval 10 does not skip in qrels (only a "
            "# in the first column of a line that follows a data line, and not on the last "
            "line: it reads the line as data or stops at it): move the comment or remove it"
        )


def refuse_duplicates(cursor: duckdb.DuckDBPyConnection, table: str, trec: TrecFile) -> None:
    """trec_eval stops at a qrels judging a document twice for one query, and at a run
    listing a document twice for one query (form_res_rels.c): the first such pair, by line."""
    lines = exp.func("list", line_number())
    key = _key(trec.intents)
    first = (
        exp.select(*key, exp.alias_(lines, "lines"))
        .from_(table)
        .where(exp.column("kept"))
        .group_by(*key)
        .having(exp.GT(this=exp.func("COUNT", exp.Star()), expression=exp.Literal.number(1)))
        .order_by(exp.func("list_min", exp.column("lines")))
        .limit(1)
    )
    rows = execute(cursor, first)
    if rows:
        user, *intent, item, numbers = rows[0]
        first_two = sorted(numbers)[:2]
        does = "judge" if trec.kind == "qrels" else "list"
        under = f" under intent {intent[0]!r}" if intent else ""
        diversity = (
            "; or, if the second field is an intent (TREC diversity qrels, qid intent docno "
            "rel), read them as such: read_qrels(path, intents=True) (CLI: --trec-intents)"
            if trec.kind == "qrels" and not trec.intents
            else ""
        )
        raise SqlmetricsError(
            f"TREC {trec.kind} file {trec.path!r}: lines {first_two[0]} and {first_two[1]} both "
            f"{does} document {item!r} for query {user!r}{under} (trec_eval stops at a "
            f"duplicate); keep one{diversity}"
        )


def _key(intents: bool) -> tuple[str, ...]:
    """What a line is one of: (qid, docno), or (qid, intent, docno) in diversity qrels."""
    return ("user_id", "intent", "item_id") if intents else ("user_id", "item_id")


def refuse_empty(trec: TrecFile, read: Prepass, lines: int) -> None:
    if read.size and not lines:  # /proc and the like: stat says 0 bytes, reading gives more
        raise SqlmetricsError(
            f"TREC {trec.kind} file {trec.path!r} reports a size of 0 bytes but has "
            "content (a /proc or other pseudo file): copy it to a regular file first"
        )
    raise SqlmetricsError(
        f"TREC {trec.kind} file {trec.path!r} has no lines"
        + (" but blank and comment ones" if lines else " (it is empty)")
    )
