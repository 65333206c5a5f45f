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
DuckDB read into the table (every line in the file's order, so its rowid numbers it; split at
single spaces when the pass found nothing else between fields), then one scan for the checks,
each refusal naming the file and line: a malformed line, and a (qid, docno) twice in qrels or
in a run (trec_eval stops at both).
"""

from __future__ import annotations

import dataclasses
import glob
import itertools
import os
import re
import weakref
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.io.database import local_database
from sqlmetrics.io.trec_bytes import (
    MAX_LINE,
    NO_DELIMITER,
    Prepass,
    diagnosis,
    existing,
    opened,
    prepass,
)

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

RUN_LAYOUT = "qid Q0 docno rank score tag"
QRELS_LAYOUT = "qid iter docno rel"
# A field: a run of anything but C's isspace (RE2 has no \v in \s).
_FIELD = r"[^ \t\n\v\f\r]+"
# A number as C's strtod reads one (DuckDB's cast also takes 1_000, which atof does not).
_SCORE = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
# A rel: an integer or a decimal, of which atol reads the whole part.
_REL = r"[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)"
_names = itertools.count(1)


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
    parsed: Parsed | None = field(default=None, compare=False, repr=False)

    @property
    def layout(self) -> str:
        return RUN_LAYOUT if self.kind == "run" else QRELS_LAYOUT


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


def read_qrels(path: str | os.PathLike[str]) -> TrecFile:
    """A TREC qrels file (``qid iter docno rel`` per line; .gz read as well) as the
    interactions of ``evaluate``: user_id = qid, item_id = docno (text), relevance = rel, read
    as trec_eval's atol reads it (0.5 is 0; the result's notes count such values). A line
    with a negative rel is a document of the pool left unjudged for trec_eval
    (RELVALUE_UNJUDGED, form_res_rels.c): only infap (infAP) tells it from a document never
    judged, so the line is kept (as that negative relevance) only when infap is asked, and
    left out otherwise (bpref skips both; every other measure reads them as not relevant),
    while a line with rel 0 is judged non-relevant (bpref and infap count it)."""
    return TrecFile(existing(path, "qrels"), "qrels")


# --- the pass in Python ------------------------------------------------------------------------


# --- the read in DuckDB ------------------------------------------------------------------------


def _named(name: str, value: exp.Expr) -> exp.EQ:
    return exp.EQ(this=exp.column(name), expression=value)


def _lines(path: str, compression: str, crlf: bool) -> exp.Expr:
    """read_csv over the file, one VARCHAR column ``line`` per line."""
    columns = exp.Struct(
        expressions=[
            exp.PropertyEQ(this=exp.to_identifier("line"), expression=exp.Literal.string("VARCHAR"))
        ]
    )
    return exp.func(
        "read_csv",
        # DuckDB globs every path it reads: the name is escaped.
        exp.Literal.string(glob.escape(path)),
        _named("columns", columns),
        _named("header", exp.false()),
        _named("delim", exp.Literal.string(NO_DELIMITER)),
        _named("quote", exp.Literal.string("")),
        _named("escape", exp.Literal.string("")),
        _named("auto_detect", exp.false()),
        _named("compression", exp.Literal.string(compression)),
        # "\r\n" reads \n line ends too, where "\n" (or detection) reads a \r\n as two;
        # its parallel reader refuses some files ("does not support a full read")
        *(
            [_named("new_line", exp.Literal.string("\\r\\n")), _named("parallel", exp.false())]
            if crlf
            else [_named("new_line", exp.Literal.string("\\n"))]
        ),
        _named("max_line_size", exp.Literal.number(MAX_LINE)),
        # Lines are not CSV records: a stray quote must not stop the reader.
        _named("strict_mode", exp.false()),
    )


def _field(index: int) -> exp.Expr:
    """The index-th field, counted from 1 (sqlglot's subscripts count from 0 and DuckDB's
    rendering adds the 1)."""
    return exp.Bracket(this=exp.column("fields"), expressions=[exp.Literal.number(index - 1)])


def _width() -> exp.Expr:
    return exp.ArraySize(this=exp.column("fields"))


def _numbered(path: str, read: Prepass, indents: bool = False) -> exp.Select:
    """Every line's fields, in the file's order (DuckDB keeps it, so the table's rowid + 1 is
    the line's number); with ``indents``, whether the line starts with whitespace (a qrels
    comment of trec_eval 10's has its # in the first column)."""
    line = exp.func("COALESCE", exp.column("line"), exp.Literal.string(""))
    # A line without a tab, \v, \f or \r is split at its spaces, the empty parts dropped: the
    # same fields as the regular expression gives, at a fraction of its cost.
    odd = exp.or_(*(exp.func("contains", line.copy(), exp.func("chr", c)) for c in (9, 11, 12, 13)))
    parts = exp.func("string_split", line.copy(), exp.Literal.string(" "))
    lambda_ = exp.Lambda(
        this=exp.NEQ(this=exp.column("part"), expression=exp.Literal.string("")),
        expressions=[exp.to_identifier("part")],
    )
    fields = (
        exp.case()
        .when(odd, exp.func("regexp_extract_all", line.copy(), exp.Literal.string(_FIELD)))
        .else_(exp.func("list_filter", parts, lambda_))
    )
    first = exp.func("ascii", line.copy())  # 0 for an empty line
    indented = exp.In(this=first, expressions=[exp.Literal.number(c) for c in (9, 11, 12, 13, 32)])
    return exp.select(
        exp.alias_(fields, "fields"), *([exp.alias_(indented, "indented")] if indents else [])
    ).from_(exp.alias_(_lines(path, read.compression, read.crlf), "lines"))


def _comment() -> exp.Expr:
    return exp.and_(
        exp.GT(this=_width(), expression=exp.Literal.number(0)),
        exp.func("starts_with", _field(1), exp.Literal.string("#")),
    )


def _kept(kind: str) -> exp.Expr:
    """The lines that are data (or, in qrels, a blank line, which is refused)."""
    if kind == "run":
        return exp.and_(
            exp.GT(this=_width(), expression=exp.Literal.number(0)), exp.not_(_comment())
        )
    return exp.not_(_comment())


def _rel_whole() -> exp.Expr:
    """atol of the rel field: the digits before any point ('', '+', '-': 0), NULL past BIGINT."""
    whole = exp.func("regexp_extract", _field(4), exp.Literal.string(r"^[+-]?[0-9]*"))
    empty = exp.In(this=whole.copy(), expressions=[exp.Literal.string(s) for s in ("", "+", "-")])
    return (
        exp.case()
        .when(empty, exp.Literal.number(0))
        .else_(exp.TryCast(this=whole, to=exp.DataType.build("BIGINT")))
    )


def _columns(kind: str) -> tuple[list[exp.Expr], exp.Expr]:
    """The table's columns from the fields, and when a kept line is malformed."""
    user = exp.alias_(_field(1), "user_id")
    item = exp.alias_(_field(3), "item_id")
    if kind == "run":
        score = exp.TryCast(this=_field(5), to=exp.DataType.build("DOUBLE"))
        bad = exp.or_(
            exp.LT(this=_width(), expression=exp.Literal.number(6)),
            score.is_(exp.null()),
            exp.not_(exp.func("isfinite", score.copy())),
            exp.GT(
                this=exp.func("strpos", _field(5), exp.Literal.string("_")),
                expression=exp.Literal.number(0),
            ),
        )
        return [user, item, exp.alias_(score, "score"), exp.alias_(_field(6), "tag")], bad
    whole = _rel_whole()
    fraction = exp.func("regexp_matches", _field(4), exp.Literal.string(r"[.][0-9]*[1-9]"))
    bad = exp.or_(
        exp.NEQ(this=_width(), expression=exp.Literal.number(4)),
        exp.not_(exp.func("regexp_full_match", _field(4), exp.Literal.string(_REL))),
        whole.copy().is_(exp.null()),
    )
    columns = [
        user,
        item,
        exp.alias_(whole, "relevance"),
        exp.alias_(fraction, "fraction"),
        exp.alias_(_field(4), "rel_text"),
    ]
    return columns, bad


def _why(fields: list[str], kind: str) -> str:
    """Why a line's fields are not a TREC line of ``kind``."""
    if kind == "run":
        if len(fields) < 6:
            return f"{len(fields)} field(s) where `{RUN_LAYOUT}` has 6"
        if not _SCORE.fullmatch(fields[4]):
            return "the score is not a number"
        return "the score is not a finite number"
    if not fields:
        return "a blank line, which trec_eval refuses in qrels; remove it"
    if len(fields) != 4:
        return f"{len(fields)} field(s) where `{QRELS_LAYOUT}` has 4"
    if not re.fullmatch(_REL, fields[3]):
        return "the rel is not a number"
    return "the rel is out of range"


def _execute(cursor: duckdb.DuckDBPyConnection, query: exp.Expr) -> list[tuple[Any, ...]]:
    return cursor.execute(query.sql("duckdb")).fetchall()


def _line() -> exp.Expr:
    """A line's number: the table holds every line of the file in its order."""
    return exp.Add(this=exp.column("rowid"), expression=exp.Literal.number(1))


def _refuse_malformed(
    cursor: duckdb.DuckDBPyConnection, rowid: int, read: Prepass, trec: TrecFile
) -> None:
    """Refuses the file at its first malformed line (``rowid``), read again for its fields."""
    again = _numbered(trec.path, read).limit(1).offset(rowid)
    fields = list(_execute(cursor, again)[0][0])
    shown = " ".join(fields)
    # a run line read as qrels, or a qrels line as a run
    swapped = len(fields) == (6 if trec.kind == "qrels" else 4)
    hint = ", or check that the run and qrels are not swapped" if swapped else ""
    raise SqlmetricsError(
        f"TREC {trec.kind} file {trec.path!r} is not a file of lines `{trec.layout}`: "
        f"line {rowid + 1}: {_why(fields, trec.kind)} (found {shown[:200]!r}). "
        f"Fix or remove the line{hint}"
    )


def _may_repeat(cursor: duckdb.DuckDBPyConnection, table: str) -> bool:
    """Whether two data lines may hold the same (qid, docno): two equal hashes of the pair,
    found by sorting them in numpy (a third of the CPU of DuckDB's COUNT(DISTINCT)), which
    _refuse_duplicates confirms and names."""
    import numpy as np

    pair = exp.func("hash", exp.column("user_id"), exp.column("item_id"))
    hashes = exp.select(exp.alias_(pair, "pair")).from_(table).where(exp.column("kept"))
    found = np.asarray(cursor.execute(hashes.sql("duckdb")).fetchnumpy()["pair"])
    found.sort()
    return bool(np.any(found[1:] == found[:-1]))


def _refuse_comments(
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
    rows = _execute(cursor, found)
    if rows:
        raise SqlmetricsError(
            f"{where.format(rows[0][0] + 1)}, which trec_eval 10 does not skip in qrels (only a "
            "# in the first column of a line that follows a data line, and not on the last "
            "line: it reads the line as data or stops at it): move the comment or remove it"
        )


def _refuse_duplicates(cursor: duckdb.DuckDBPyConnection, table: str, trec: TrecFile) -> None:
    """trec_eval stops at a qrels judging a document twice for one query, and at a run
    listing a document twice for one query (form_res_rels.c): the first such pair, by line."""
    lines = exp.func("list", _line())
    first = (
        exp.select("user_id", "item_id", exp.alias_(lines, "lines"))
        .from_(table)
        .where(exp.column("kept"))
        .group_by("user_id", "item_id")
        .having(exp.GT(this=exp.func("COUNT", exp.Star()), expression=exp.Literal.number(1)))
        .order_by(exp.func("list_min", exp.column("lines")))
        .limit(1)
    )
    rows = _execute(cursor, first)
    if rows:
        user, item, numbers = rows[0]
        first_two = sorted(numbers)[:2]
        does = "judge" if trec.kind == "qrels" else "list"
        raise SqlmetricsError(
            f"TREC {trec.kind} file {trec.path!r}: lines {first_two[0]} and {first_two[1]} both "
            f"{does} document {item!r} for query {user!r} (trec_eval stops at a duplicate); "
            "keep one"
        )


def _create(name: str, query: exp.Query) -> str:
    return exp.Create(this=exp.to_table(name), kind="TABLE", expression=query).sql("duckdb")


def _read(cursor: duckdb.DuckDBPyConnection, table: str, trec: TrecFile) -> Prepass:
    """Every line into ``table``, in the file's order: its columns, whether it is data
    (``kept``) and whether it is data but malformed; DuckDB's failure becomes a message about
    the file."""
    read = prepass(trec.path, trec.kind)
    columns, bad = _columns(trec.kind)
    kept = _kept(trec.kind)
    indents = trec.kind == "qrels" and trec.version == 10
    lines = exp.select(
        *columns,
        exp.alias_(kept, "kept"),
        exp.alias_(exp.and_(kept.copy(), bad), "malformed"),
        exp.alias_(_comment(), "comment"),
        *(["indented"] if indents else []),
    ).from_(_numbered(trec.path, read, indents).subquery("numbered"))
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
    return read


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


def load(trec: TrecFile) -> TrecFile:
    """The file with its lines parsed (once: a file already parsed is returned as it is)."""
    if trec.parsed is not None:
        return trec
    existing(trec.path, trec.kind)
    table = _Table(f"sqlmetrics_trec_{next(_names)}")
    cursor = local_database().cursor()
    try:
        read = _read(cursor, table.name, trec)
        counted = _execute(cursor, _counts(trec.kind).from_(table.name))[0]
        data, every, malformed, comment = counted[:4]
        if comment is not None:
            _refuse_comments(cursor, table.name, trec, int(comment))
        if not data:
            _refuse_empty(trec, read, every)
        if malformed is not None:
            _refuse_malformed(cursor, int(malformed), read, trec)
        if _may_repeat(cursor, table.name):
            _refuse_duplicates(cursor, table.name, trec)
        parsed = _summary(cursor, table, trec, counted[4:])
    finally:
        cursor.close()
    return dataclasses.replace(trec, parsed=parsed)


def _refuse_empty(trec: TrecFile, read: Prepass, lines: int) -> None:
    if read.size and not lines:  # /proc and the like: stat says 0 bytes, reading gives more
        raise SqlmetricsError(
            f"TREC {trec.kind} file {trec.path!r} reports a size of 0 bytes but has "
            "content (a /proc or other pseudo file): copy it to a regular file first"
        )
    raise SqlmetricsError(
        f"TREC {trec.kind} file {trec.path!r} has no lines"
        + (" but blank and comment ones" if lines else " (it is empty)")
    )


def _summary(
    cursor: duckdb.DuckDBPyConnection, table: _Table, trec: TrecFile, counted: tuple[Any, ...]
) -> Parsed:
    """The run's runid (its last line's tag), or the qrels' fractions and their first."""
    if trec.kind == "run":
        return Parsed(table, runid=str(counted[0]))
    fractional, first = int(counted[0] or 0), counted[1]
    example = None
    if fractional:
        text = (
            exp.select("rel_text")
            .from_(table.name)
            .where(exp.EQ(this=exp.column("rowid"), expression=exp.Literal.number(int(first))))
        )
        example = (int(first) + 1, str(_execute(cursor, text)[0][0]))
    return Parsed(table, fractional=fractional, fraction_example=example)


# --- the file as a relation --------------------------------------------------------------------


def relation(trec: TrecFile, source: exp.Expr | None = None, unjudged: bool = False) -> exp.Expr:
    """The parsed file as a relation: (user_id, item_id, score) for a run, (user_id, item_id,
    relevance) for qrels, of its data lines, without the lines of a negative rel (read_qrels
    says why) unless ``unjudged`` or the file's own ``unjudged``. ``source``: where the parsed
    rows are (their table in sqlmetrics' own database by default)."""
    if trec.parsed is None:
        raise SqlmetricsError(f"TREC {trec.kind} file {trec.path!r} was not read (load it)")
    table = source if source is not None else exp.to_table(trec.parsed.name)
    user, item = exp.column("user_id"), exp.column("item_id")
    kept = exp.column("kept")  # the table holds every line: its comments and blank ones too
    if trec.kind == "qrels":
        select = exp.select(user, item, exp.column("relevance")).from_(table).where(kept)
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
                    if len(fields) == 6 and _SCORE.fullmatch(fields[4]) and fields[1] == "Q0":
                        return "run"
                    is_qrels = len(fields) == 4 and re.fullmatch(_REL, fields[3])
                    return "qrels" if is_qrels else None
    except (OSError, EOFError, zlib.error):  # binary or compressed otherwise: not TREC text
        return None
    return None
