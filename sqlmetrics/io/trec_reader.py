"""TREC files read as trec_eval 10 reads them, once, into a table every later step reads.

A run (``qid Q0 docno rank score tag``) and qrels (``qid iter docno rel``): fields are
separated by any run of C's whitespace (space, tab, \\v, \\f, \\r), at either end of a line
too; a run line may carry fields after its tag, which are ignored; a line whose first field
starts with ``#`` is a comment; a blank run line is skipped, a blank qrels line refused, as
trec_eval does. qid and docno stay text (trec_eval compares them with strcmp); rel is read as
trec_eval's ``atol`` reads it (the whole part of a decimal: 0.5 is 0), and the rels that had a
fraction are counted so the caller can say so. A duplicate (qid, docno) in qrels is refused.

``load`` parses a file into a table of sqlmetrics' own in-memory DuckDB database (dropped when
the ``Parsed`` that names it is collected): first a pass in Python over the bytes for what
DuckDB's line reader would misread or report badly (a NUL byte, a control character it takes
as a delimiter, a carriage return inside a line, a file that is not a regular one), then one
DuckDB read into the table (every line in the file's order, so its rowid numbers it; its data
lines split at their spaces when the pass found each field separated from the next by one
space and no comment), then one scan for the checks, each refusal naming the file and line: a
malformed line, and a (qid, docno) twice in qrels or in a run (trec_eval stops at both).
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
import weakref
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.io.database import local_database
from sqlmetrics.io.trec_bytes import Prepass, diagnosis, existing, opened, prepass
from sqlmetrics.io.trec_lines import (
    INTENT_QRELS_LAYOUT,
    QRELS_LAYOUT,
    REL,
    RUN_LAYOUT,
    SCORE,
    comment_line,
    execute,
    kept_line,
    line_columns,
    numbered,
    plain_lines,
)
from sqlmetrics.io.trec_refusals import (
    may_repeat,
    refuse_comments,
    refuse_duplicates,
    refuse_empty,
    refuse_malformed,
)

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

_names = itertools.count(1)
# A qid that BIGINT holds and writes back as it is: no sign, no leading zero, 18 digits at most.
_NUMBER = re.compile(r"0|[1-9][0-9]{0,17}")
TABLE_PREFIX = "sqlmetrics_trec_"  # the tables of parsed files, in sqlmetrics' own database


class _Table:
    """A table of sqlmetrics' own database, dropped when nothing refers to it any more."""

    def __init__(self, name: str) -> None:
        self.name = name
        weakref.finalize(self, _drop, name)


def _dropping(name: str) -> str:
    return exp.Drop(tables=[exp.to_table(name)], kind="TABLE", exists=True).sql("duckdb")


def _drop(name: str) -> None:
    try:
        cursor = local_database().cursor()
        cursor.execute(_dropping(name))
        cursor.close()
    except Exception:  # at interpreter exit the database may be gone already
        return


@dataclass(frozen=True)
class Parsed:
    """A file's lines as a table (user_id, item_id, score or relevance; ``kept``: a data line)."""

    table: _Table
    runid: str = ""  # a run's: the tag of its last line, as trec_eval's runid
    fractional: int = 0  # qrels: the rels that had a fraction (read as their whole part)
    fraction_example: tuple[int, str] | None = None  # (line, rel as written)
    every_line: bool = False  # every row is a data line (a plain file's: no ``kept`` column)
    # each query's data lines (a qrels' negative rels too), counted while the file is read
    queries: Mapping[str, int] = field(default_factory=dict)
    # every qid is a whole number as BIGINT writes it (no sign, no leading 0): the table
    # holds them as BIGINT, a narrower key for every join and partition
    numeric_qids: bool = False

    @property
    def name(self) -> str:
        return self.table.name

    def notes(self, path: str) -> list[str]:
        if not self.fractional or self.fraction_example is None:
            return []
        line, text = self.fraction_example
        return [
            f"TREC qrels file {path!r}: {self.fractional} rel value(s) had a fraction (first "
            f"at line {line}: {text}), read as trec_eval reads them (atol: the whole part, "
            f"{text} -> {_whole(text)}); write whole grades to mean otherwise"
        ]


@dataclass(frozen=True)
class TrecFile:
    """A TREC run or qrels file, as an input of ``evaluate`` (DuckDB only)."""

    path: str
    kind: str  # "run" or "qrels"
    max_per_query: int | None = None  # run only: trec_eval -M, the first n docs per query
    # qrels only: keep the lines of a negative rel (the pool's unjudged documents); evaluate
    # sets it when infap is asked, the one metric that reads them (read_qrels says why)
    unjudged: bool = False
    # run only: compare scores as 32-bit floats, as trec_eval 9 reads them
    single_precision: bool = False
    # the trec_eval whose comment rules apply: 10 skips a line starting with #, 9 reads none
    version: int = 10
    # read the qids as numbers (trec_eval() sets it when both files' are, Parsed.numeric_qids:
    # then equal as numbers is equal as text); otherwise a numeric table's qids are read back
    # as text
    numeric_qids: bool = False
    # qrels only: diversity qrels (ndeval's), the second field an intent, not the iter
    # trec_eval ignores; a (qid, intent, docno) once, the relation's ``intent`` column
    intents: bool = False
    parsed: Parsed | None = field(default=None, compare=False, repr=False)

    @property
    def layout(self) -> str:
        if self.kind == "run":
            return RUN_LAYOUT
        return INTENT_QRELS_LAYOUT if self.intents else QRELS_LAYOUT


def _whole(text: str) -> int:
    match = re.match(r"[+-]?\d*", text)
    digits = match.group(0) if match else ""
    return int(digits) if digits.strip("+-") else 0


def read_run(
    path: str | os.PathLike[str],
    *,
    max_per_query: int | None = None,
    single_precision: bool = False,
) -> TrecFile:
    """A TREC run file (``qid Q0 docno rank score tag`` per line, fields after the tag
    ignored; .gz read as well) as the recommendations of ``evaluate``: user_id = qid, item_id
    = docno (text), score. ``max_per_query`` keeps each query's first n docs in trec_eval's
    order (score descending, then docno descending), as trec_eval -M n;
    ``single_precision`` compares the scores as 32-bit floats, as trec_eval 9 does."""
    if max_per_query is not None and (
        isinstance(max_per_query, bool) or not isinstance(max_per_query, int) or max_per_query < 1
    ):
        raise SqlmetricsError(
            f"max_per_query must be a whole number of at least 1 (trec_eval -M), "
            f"not {max_per_query!r}"
        )
    return TrecFile(existing(path, "run"), "run", max_per_query, single_precision=single_precision)


def read_qrels(path: str | os.PathLike[str], *, intents: bool = False) -> TrecFile:
    """A TREC qrels file (``qid iter docno rel`` per line; .gz read as well) as the
    interactions of ``evaluate``: user_id = qid, item_id = docno (text), relevance = rel, read
    as trec_eval's atol reads it (0.5 is 0; the result's notes count such values). A line
    with a negative rel is a document of the pool left unjudged for trec_eval
    (RELVALUE_UNJUDGED, form_res_rels.c): only infap (infAP) tells it from a document never
    judged, so the line is kept (as that negative relevance) only when infap is asked, and
    left out otherwise (bpref skips both; every other measure reads them as not relevant),
    while a line with rel 0 is judged non-relevant (bpref and infap count it).

    ``intents=True`` reads TREC diversity qrels (``qid intent docno rel``, ndeval's, the Web
    track's): the second field is the intent (subtopic) the line judges, which trec_eval's
    iter is not, and a document may be judged once per intent (the interactions' ``intent``
    column, which the intent-aware metrics read: alpha_ndcg, err_ia...). The layout is the
    same, so it is never guessed: say which."""
    if not isinstance(intents, bool):
        raise SqlmetricsError(f"intents must be True or False, not {intents!r}")
    return TrecFile(existing(path, "qrels"), "qrels", intents=intents)


def _create(name: str, query: exp.Query) -> str:
    return exp.Create(this=exp.to_table(name), kind="TABLE", expression=query).sql("duckdb")


def _read(cursor: duckdb.DuckDBPyConnection, table: str, trec: TrecFile, read: Prepass) -> None:
    """Every line into ``table``, in the file's order: its columns, whether it is data
    (``kept``) and whether it is data but malformed; DuckDB's failure becomes a message about
    the file."""
    columns, bad = line_columns(trec.kind, trec.intents)
    kept = kept_line(trec.kind)
    indents = trec.kind == "qrels" and trec.version == 10
    lines = exp.select(
        *columns,
        exp.alias_(kept, "kept"),
        exp.alias_(exp.and_(kept.copy(), bad), "malformed"),
        exp.alias_(comment_line(), "comment"),
        *(["indented"] if indents else []),
    ).from_(numbered(trec.path, read, indents).subquery("numbered"))
    try:
        cursor.execute(_create(table, lines))
    except Exception as error:  # duckdb raises several types (IO, invalid input)
        found = diagnosis(trec.path, trec.kind)
        if found is not None:
            raise SqlmetricsError(found) from None
        text = str(error).strip().splitlines()
        raise SqlmetricsError(
            f"cannot read TREC {trec.kind} file {trec.path!r}: {text[0] if text else error!r}"
        ) from None


def _plain(
    cursor: duckdb.DuckDBPyConnection, table: _Table, trec: TrecFile, read: Prepass
) -> Parsed | None:
    """A plain file (Prepass.plain) read into ``table`` split at its spaces, its data lines
    only, when every line is a well-formed data line and no (qid, docno) may repeat; None
    (and no table) otherwise, for the general reader to read it again and say why."""
    try:
        cursor.execute(_create(table.name, plain_lines(trec.path, read, trec.kind, trec.intents)))
    except Exception:  # duckdb raises several types; the general reader says what is wrong
        return None
    value = exp.column("score" if trec.kind == "run" else "relevance")
    bad: exp.Expr = value.is_(exp.null())
    if trec.kind == "run":
        bad = exp.or_(bad, exp.not_(exp.func("isfinite", value.copy())))
    counts = exp.select(
        "user_id", exp.func("COUNT", exp.Star()), exp.func("COUNT_IF", bad)
    ).group_by("user_id")
    counted = execute(cursor, counts.from_(table.name))
    lines = sum(row[1] for row in counted)
    malformed = any(row[2] for row in counted)
    queries = {str(row[0]): int(row[1]) for row in counted}
    # numbers first: the repeats' hashes of BIGINT qids cost less
    numbers = lines == read.lines and not malformed and _as_numbers(cursor, table.name, queries)
    # a line a read_csv would not give shows in the count
    if (
        lines != read.lines
        or malformed
        or may_repeat(cursor, table.name, every_line=True, intents=trec.intents)
    ):
        cursor.execute(_dropping(table.name))
        return None
    runid = b""
    if trec.kind == "run":
        runid = read.last_line.split(b" ")[-1]
    return Parsed(
        table,
        runid=runid.decode("utf-8", errors="replace"),
        every_line=True,
        queries=queries,
        numeric_qids=numbers,
    )


def _as_numbers(cursor: duckdb.DuckDBPyConnection, table: str, queries: Mapping[str, int]) -> bool:
    """Whether every qid is a number BIGINT writes back as it is; if so, the table holds them
    as BIGINT."""
    if not all(_NUMBER.fullmatch(qid) for qid in queries):
        return False
    retyped = exp.AlterColumn(this=exp.to_identifier("user_id"), dtype=exp.DataType.build("BIGINT"))
    cursor.execute(
        exp.Alter(this=exp.to_table(table), kind="TABLE", actions=[retyped]).sql("duckdb")
    )
    return True


def _queries(cursor: duckdb.DuckDBPyConnection, table: str) -> dict[str, int]:
    """Each query's data lines."""
    lines = (
        exp.select("user_id", exp.func("COUNT", exp.Star()))
        .from_(table)
        .where(exp.column("kept"))
        .group_by("user_id")
    )
    return {str(user): int(count) for user, count in execute(cursor, lines)}


def _counts(kind: str) -> exp.Select:
    """One scan of the table for what the checks and the summary need: its data lines, every
    line, the first malformed one and the first comment (rowids), then a run's tag of its last
    line or the qrels' rels with a fraction and the first of them."""
    kept = exp.column("kept")
    counts: list[exp.Expr] = [
        exp.func("COUNT_IF", kept.copy()),
        exp.func("COUNT", exp.Star()),
        exp.Filter(
            this=exp.func("MIN", exp.column("rowid")),
            expression=exp.Where(this=exp.column("malformed")),
        ),
        exp.Filter(
            this=exp.func("MIN", exp.column("rowid")),
            expression=exp.Where(this=exp.column("comment")),
        ),
    ]
    if kind == "run":
        last = exp.func("ARG_MAX", exp.column("tag"), exp.column("rowid"))
        counts.append(exp.Filter(this=last, expression=exp.Where(this=kept.copy())))
    else:
        fraction = exp.and_(kept.copy(), exp.column("fraction"))
        counts += [
            exp.func("COUNT_IF", fraction),
            exp.Filter(
                this=exp.func("MIN", exp.column("rowid")),
                expression=exp.Where(this=fraction.copy()),
            ),
        ]
    return exp.select(*counts)


def with_notes(result: pd.DataFrame, interactions: object) -> None:
    """A qrels file's notes (its fractional rels) on the result."""
    if isinstance(interactions, TrecFile) and interactions.parsed is not None:
        notes = interactions.parsed.notes(interactions.path)
        if notes:
            result.attrs["notes"] = [*result.attrs.get("notes", []), *notes]


def load(trec: TrecFile) -> TrecFile:
    """The file with its lines parsed (once: a file already parsed is returned as it is)."""
    if trec.parsed is not None:
        return trec
    existing(trec.path, trec.kind)
    table = _Table(f"{TABLE_PREFIX}{next(_names)}")
    cursor = local_database().cursor()
    try:
        read = prepass(trec.path, trec.kind)
        found = _plain(cursor, table, trec, read) if read.plain else None
        if found is not None:
            return dataclasses.replace(trec, parsed=found)
        _read(cursor, table.name, trec, read)
        counted = execute(cursor, _counts(trec.kind).from_(table.name))[0]
        data, every, malformed, comment = counted[:4]
        if comment is not None:
            refuse_comments(cursor, table.name, trec, int(comment))
        if not data:
            refuse_empty(trec, read, every)
        if malformed is not None:
            refuse_malformed(cursor, int(malformed), read, trec)
        if may_repeat(cursor, table.name, intents=trec.intents):
            refuse_duplicates(cursor, table.name, trec)
        parsed = _summary(cursor, table, trec, counted[4:])
    finally:
        cursor.close()
    return dataclasses.replace(trec, parsed=parsed)


def _summary(
    cursor: duckdb.DuckDBPyConnection, table: _Table, trec: TrecFile, counted: tuple[Any, ...]
) -> Parsed:
    """The run's runid (its last line's tag), or the qrels' fractions and their first; and
    each query's lines."""
    queries = _queries(cursor, table.name)
    if trec.kind == "run":
        return Parsed(table, runid=str(counted[0]), queries=queries)
    fractional, first = int(counted[0] or 0), counted[1]
    example = None
    if fractional:
        text = (
            exp.select("rel_text")
            .from_(table.name)
            .where(exp.EQ(this=exp.column("rowid"), expression=exp.Literal.number(int(first))))
        )
        example = (int(first) + 1, str(execute(cursor, text)[0][0]))
    return Parsed(table, fractional=fractional, fraction_example=example, queries=queries)


# --- the file as a relation --------------------------------------------------------------------


def relation(trec: TrecFile, source: exp.Expr | None = None, unjudged: bool = False) -> exp.Expr:
    """The parsed file as a relation: (user_id, item_id, score) for a run, (user_id, item_id,
    relevance) for qrels, of its data lines, without the lines of a negative rel (read_qrels
    says why) unless ``unjudged`` or the file's own ``unjudged``. ``source``: where the parsed
    rows are (their table in sqlmetrics' own database by default)."""
    if trec.parsed is None:
        raise SqlmetricsError(f"TREC {trec.kind} file {trec.path!r} was not read (load it)")
    table = source if source is not None else exp.to_table(trec.parsed.name)
    user: exp.Expr = exp.column("user_id")
    if trec.parsed.numeric_qids and not trec.numeric_qids:
        user = exp.alias_(exp.cast(user, "VARCHAR"), "user_id")
    item = exp.column("item_id")
    # the general reader's table holds every line: its comments and blank ones too
    kept = exp.true() if trec.parsed.every_line else exp.column("kept")
    if trec.kind == "qrels":
        intent = [exp.column("intent")] if trec.intents else []
        select = exp.select(user, *intent, item, exp.column("relevance")).from_(table).where(kept)
        if not (unjudged or trec.unjudged):
            select = select.where(
                exp.GTE(this=exp.column("relevance"), expression=exp.Literal.number(0))
            )
        return select.subquery("qrels")
    score: exp.Expr = exp.column("score")
    if trec.single_precision:  # trec_eval 9 keeps scores as float
        score = exp.cast(exp.cast(score, "FLOAT"), "DOUBLE")
    select = exp.select(user, item, exp.alias_(score, "score")).from_(table).where(kept)
    if trec.max_per_query is not None:
        # trec_eval -M: the first n in its order (score descending, then docno descending as
        # strcmp; VARCHAR comparison in DuckDB is byte order too).
        order = exp.Order(
            expressions=[
                exp.Ordered(this=score.copy(), desc=True),
                exp.Ordered(this=exp.column("item_id"), desc=True),
            ]
        )
        window = exp.Window(
            this=exp.func("ROW_NUMBER"), partition_by=[exp.column("user_id")], order=order
        )
        select.set(
            "qualify",
            exp.Qualify(
                this=exp.LTE(this=window, expression=exp.Literal.number(trec.max_per_query))
            ),
        )
    return select.subquery("run")


def scans_parsed_tables(relation: exp.Expr) -> bool:
    """Whether a relation is a plain scan of parsed files' tables (no window: not -M's), which
    are in memory: a query reading it twice costs less reading it again than storing it."""
    tables = list(relation.find_all(exp.Table))
    return (
        bool(tables)
        and all(table.name.startswith(TABLE_PREFIX) for table in tables)
        and relation.find(exp.Window) is None
    )


def frame(trec: TrecFile) -> pd.DataFrame:
    """The relation's rows, for a connection other than sqlmetrics' own."""
    cursor = local_database().cursor()
    try:
        return cursor.execute(exp.select("*").from_(relation(trec)).sql("duckdb")).df()
    finally:
        cursor.close()


def looks_like(path: object) -> str | None:
    """ "run" or "qrels" when a local file's first line has that layout, for a hint in an
    error (never to read a file as TREC without being told)."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return None
    text = os.fspath(path)
    try:
        handle, compression = opened(text)
        if compression == "zstd":
            handle.close()
            return None
        with handle:
            for raw in handle:
                fields = raw.decode("utf-8", errors="replace").split()
                if fields:
                    if len(fields) == 6 and SCORE.fullmatch(fields[4]) and fields[1] == "Q0":
                        return "run"
                    is_qrels = len(fields) == 4 and re.fullmatch(REL, fields[3])
                    return "qrels" if is_qrels else None
    except (OSError, EOFError, zlib.error):  # binary or compressed otherwise: not TREC text
        return None
    return None
