"""A TREC file's lines in DuckDB: read_csv over the file, one line a row, each line's fields,
and the columns of a run's or qrels' line with when such a line is malformed (and why).
"""

from __future__ import annotations

import glob
import re
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlmetrics.io.trec_bytes import MAX_LINE, NO_DELIMITER, Prepass

if TYPE_CHECKING:
    import duckdb

RUN_LAYOUT = "qid Q0 docno rank score tag"
QRELS_LAYOUT = "qid iter docno rel"
# TREC diversity qrels (ndeval's): the second field an intent (subtopic), not trec_eval's iter
INTENT_QRELS_LAYOUT = "qid intent docno rel"
# A field: a run of anything but C's isspace (RE2 has no \v in \s).
_FIELD = r"[^ \t\n\v\f\r]+"
# A number as C's strtod reads one (DuckDB's cast also takes 1_000, which atof does not).
SCORE = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
# A rel: an integer or a decimal, of which atol reads the whole part.
REL = r"[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)"


def _named(name: str, value: exp.Expr) -> exp.EQ:
    return exp.EQ(this=exp.column(name), expression=value)


def _lines(
    path: str, compression: str, crlf: bool, fields: tuple[str, ...] = ("line",)
) -> exp.Expr:
    """read_csv over the file: one VARCHAR column ``line`` per line, or with ``fields`` the
    line's fields between single spaces (a line of another width is an error)."""
    columns = exp.Struct(
        expressions=[
            exp.PropertyEQ(this=exp.to_identifier(name), expression=exp.Literal.string("VARCHAR"))
            for name in fields
        ]
    )
    split = len(fields) > 1
    return exp.func(
        "read_csv",
        # DuckDB globs every path it reads: the name is escaped.
        exp.Literal.string(glob.escape(path)),
        _named("columns", columns),
        _named("header", exp.false()),
        _named("delim", exp.Literal.string(" " if split else NO_DELIMITER)),
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
        # Lines are not CSV records: a stray quote must not stop the reader. Split into
        # fields, a line of another width must.
        _named("strict_mode", exp.true() if split else exp.false()),
    )


RUN_FIELDS = ("qid", "q0", "docno", "rank", "score", "tag")
QRELS_FIELDS = ("qid", "iter", "docno", "rel")


def plain_lines(path: str, read: Prepass, kind: str, intents: bool = False) -> exp.Select:
    """A plain file's lines (trec_bytes.Prepass.plain: every field holds a byte and no line
    is a comment) split at their spaces: (user_id, item_id, score or relevance), the score or
    relevance NULL where the line is not a data line of ``kind`` as written (a score the
    general reader would refuse, a rel that is not a whole number); such a line is left to
    the general reader (``numbered``), which says what is wrong with it. ``intents``: qrels
    whose second field is the intent, kept as ``intent``."""
    if kind == "run":
        read_as: exp.Expr = exp.TryCast(this=exp.column("score"), to=exp.DataType.build("DOUBLE"))
        if read.underscore:  # DuckDB's cast reads 1_5 as 15, strtod as 1
            no_underscore = exp.EQ(
                this=exp.func("strpos", exp.column("score"), exp.Literal.string("_")),
                expression=exp.Literal.number(0),
            )
            read_as = exp.case().when(no_underscore, read_as)
    else:
        integer = exp.func(
            "regexp_full_match", exp.column("rel"), exp.Literal.string(r"[+-]?[0-9]+")
        )
        whole = exp.TryCast(this=exp.column("rel"), to=exp.DataType.build("BIGINT"))
        read_as = exp.case().when(integer, whole)
    names = RUN_FIELDS if kind == "run" else QRELS_FIELDS
    return exp.select(
        exp.alias_(exp.column("qid"), "user_id"),
        *([exp.alias_(exp.column("iter"), "intent")] if intents else []),
        exp.alias_(exp.column("docno"), "item_id"),
        exp.alias_(read_as, "score" if kind == "run" else "relevance"),
    ).from_(exp.alias_(_lines(path, read.compression, read.crlf, names), "lines"))


def _field(index: int) -> exp.Expr:
    """The index-th field, counted from 1 (sqlglot's subscripts count from 0 and DuckDB's
    rendering adds the 1)."""
    return exp.Bracket(this=exp.column("fields"), expressions=[exp.Literal.number(index - 1)])


def _width() -> exp.Expr:
    return exp.ArraySize(this=exp.column("fields"))


def numbered(path: str, read: Prepass, indents: bool = False) -> exp.Select:
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


def comment_line() -> exp.Expr:
    return exp.and_(
        exp.GT(this=_width(), expression=exp.Literal.number(0)),
        exp.func("starts_with", _field(1), exp.Literal.string("#")),
    )


def kept_line(kind: str) -> exp.Expr:
    """The lines that are data (or, in qrels, a blank line, which is refused)."""
    if kind == "run":
        return exp.and_(
            exp.GT(this=_width(), expression=exp.Literal.number(0)), exp.not_(comment_line())
        )
    return exp.not_(comment_line())


def _rel_whole() -> exp.Expr:
    """atol of the rel field: the digits before any point ('', '+', '-': 0), NULL past BIGINT."""
    whole = exp.func("regexp_extract", _field(4), exp.Literal.string(r"^[+-]?[0-9]*"))
    empty = exp.In(this=whole.copy(), expressions=[exp.Literal.string(s) for s in ("", "+", "-")])
    return (
        exp.case()
        .when(empty, exp.Literal.number(0))
        .else_(exp.TryCast(this=whole, to=exp.DataType.build("BIGINT")))
    )


def line_columns(kind: str, intents: bool = False) -> tuple[list[exp.Expr], exp.Expr]:
    """The table's columns from the fields (qrels' second field as ``intent`` with
    ``intents``), and when a kept line is malformed."""
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
        exp.not_(exp.func("regexp_full_match", _field(4), exp.Literal.string(REL))),
        whole.copy().is_(exp.null()),
    )
    columns = [
        user,
        *([exp.alias_(_field(2), "intent")] if intents else []),
        item,
        exp.alias_(whole, "relevance"),
        exp.alias_(fraction, "fraction"),
        exp.alias_(_field(4), "rel_text"),
    ]
    return columns, bad


def why_malformed(fields: list[str], kind: str) -> str:
    """Why a line's fields are not a TREC line of ``kind``."""
    if kind == "run":
        if len(fields) < 6:
            return f"{len(fields)} field(s) where `{RUN_LAYOUT}` has 6"
        if not SCORE.fullmatch(fields[4]):
            return "the score is not a number"
        return "the score is not a finite number"
    if not fields:
        return "a blank line, which trec_eval refuses in qrels; remove it"
    if len(fields) != 4:
        return f"{len(fields)} field(s) where `{QRELS_LAYOUT}` has 4"
    if not re.fullmatch(REL, fields[3]):
        return "the rel is not a number"
    return "the rel is out of range"


def execute(cursor: duckdb.DuckDBPyConnection, query: exp.Expr) -> list[tuple[Any, ...]]:
    return cursor.execute(query.sql("duckdb")).fetchall()


def line_number() -> exp.Expr:
    """A line's number: the table holds every line of the file in its order."""
    return exp.Add(this=exp.column("rowid"), expression=exp.Literal.number(1))
