"""TREC files in, trec_eval's report out.

A run (``qid Q0 docno rank score tag``) and qrels (``qid iter docno rel``) are read in place by
DuckDB: each line as one text column, split on runs of whitespace (trec_eval reads any
whitespace), qid and docno kept as text (trec_eval compares them with strcmp). The rank, Q0
and iter columns are ignored, as trec_eval ignores them. A file is never guessed to be TREC:
``read_run``/``read_qrels`` (CLI ``--input-format trec``) say so.

``trec_eval()`` reproduces trec_eval 9's report (``measure<TAB>qid<TAB>value``) from the
per-query values of ``evaluate(profile="trec_eval")`` over trec_eval's own population:
``population="judged"`` (the queries of the run with any judgement, a query judged with
nothing relevant scoring 0) or, for ``-c``, ``"all_judged"`` (every query of the qrels, those
without a run as 0). It adds the summaries: num_* summed, gm_* geometric, num_q.
"""

from __future__ import annotations

import glob
import gzip
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlmetrics.errors import SqlmetricsError

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

RUN_LAYOUT = "qid Q0 docno rank score tag"
QRELS_LAYOUT = "qid iter docno rel"
# The character no TREC line holds, as the CSV reader's delimiter: each line is one column.
_NO_DELIMITER = "\x01"


@dataclass(frozen=True)
class TrecFile:
    """A TREC run or qrels file, as an input of ``evaluate`` (DuckDB only)."""

    path: str
    kind: str  # "run" or "qrels"
    max_per_query: int | None = None  # run only: trec_eval -M, the first n docs per query
    # qrels only: keep the lines of a negative rel (the pool's unjudged documents); evaluate
    # sets it when infap is asked, the one metric that reads them (read_qrels says why)
    unjudged: bool = False

    @property
    def layout(self) -> str:
        return RUN_LAYOUT if self.kind == "run" else QRELS_LAYOUT


def _existing(path: str | os.PathLike[str], kind: str) -> str:
    text = os.fspath(path)
    if not os.path.isfile(text):
        raise SqlmetricsError(f"TREC {kind} file {text!r}: no such file")
    return text


def read_run(path: str | os.PathLike[str], *, max_per_query: int | None = None) -> TrecFile:
    """A TREC run file (``qid Q0 docno rank score tag`` per line; .gz read as well) as the
    recommendations of ``evaluate``: user_id = qid, item_id = docno (text), score, tag.
    ``max_per_query`` keeps each query's first n docs in trec_eval's order (score descending,
    then docno descending), as trec_eval -M n."""
    if max_per_query is not None and (
        isinstance(max_per_query, bool) or not isinstance(max_per_query, int) or max_per_query < 1
    ):
        raise SqlmetricsError(
            f"max_per_query must be a whole number of at least 1 (trec_eval -M), "
            f"not {max_per_query!r}"
        )
    return TrecFile(_existing(path, "run"), "run", max_per_query)


def read_qrels(path: str | os.PathLike[str]) -> TrecFile:
    """A TREC qrels file (``qid iter docno rel`` per line; .gz read as well) as the
    interactions of ``evaluate``: user_id = qid, item_id = docno (text), relevance = rel. A
    line with a negative rel is a document of the pool left unjudged for trec_eval
    (RELVALUE_UNJUDGED, form_res_rels.c): only infap (infAP) tells it from a document never
    judged, so the line is kept (as that negative relevance) only when infap is asked, and
    left out otherwise (bpref skips both; every other measure reads them as not relevant),
    while a line with rel 0 is judged non-relevant (bpref and infap count it)."""
    return TrecFile(_existing(path, "qrels"), "qrels")


# --- reading -----------------------------------------------------------------------------------


def _named(name: str, value: exp.Expr) -> exp.EQ:
    return exp.EQ(this=exp.column(name), expression=value)


def _lines(trec: TrecFile) -> exp.Expr:
    """read_csv over the file, one VARCHAR column ``line`` per line."""
    columns = exp.Struct(
        expressions=[
            exp.PropertyEQ(this=exp.to_identifier("line"), expression=exp.Literal.string("VARCHAR"))
        ]
    )
    return exp.func(
        "read_csv",
        # DuckDB globs every path it reads: the name is escaped.
        exp.Literal.string(glob.escape(trec.path)),
        _named("columns", columns),
        _named("header", exp.false()),
        _named("delim", exp.Literal.string(_NO_DELIMITER)),
        _named("quote", exp.Literal.string("")),
        _named("escape", exp.Literal.string("")),
        _named("auto_detect", exp.false()),
        # Lines are not CSV records: a stray quote or \r must not stop the reader.
        _named("strict_mode", exp.false()),
    )


def _fields(trec: TrecFile) -> exp.Subquery:
    """Each non-blank line split on whitespace: ``fields`` (a list of text)."""
    line = exp.column("line")
    split = exp.func("regexp_split_to_array", exp.func("trim", line), exp.Literal.string(r"\s+"))
    blank = exp.EQ(this=exp.func("trim", line.copy()), expression=exp.Literal.string(""))
    return (
        exp.select(exp.alias_(split, "fields"))
        .from_(exp.alias_(_lines(trec), "lines"))
        .where(exp.and_(line.copy().is_(exp.null()).not_(), exp.not_(blank)))
        .subquery("parsed")
    )


def _field(index: int) -> exp.Expr:
    """The index-th field, counted from 1 (sqlglot's subscripts count from 0 and DuckDB's
    rendering adds the 1)."""
    return exp.Bracket(this=exp.column("fields"), expressions=[exp.Literal.number(index - 1)])


def _count_fields() -> exp.Expr:
    return exp.ArraySize(this=exp.column("fields"))


def _value(trec: TrecFile) -> tuple[int, exp.Expr]:
    """The field count of the layout, and the number it must hold (NULL when it does not)."""
    if trec.kind == "run":
        return 6, exp.TryCast(this=_field(5), to=exp.DataType.build("DOUBLE"))
    return 4, exp.TryCast(this=_field(4), to=exp.DataType.build("BIGINT"))


def _parsed(trec: TrecFile) -> tuple[exp.Select, exp.Expr]:
    """The well-formed lines, and the expression of their score or rel."""
    count, value = _value(trec)
    keep = exp.EQ(this=_count_fields(), expression=exp.Literal.number(count))
    return exp.select("*").from_(_fields(trec)).where(keep), value


def relation(trec: TrecFile, unjudged: bool = False) -> exp.Expr:
    """The file as a relation: (user_id, item_id, score, tag) for a run, (user_id, item_id,
    relevance) for qrels, without the lines of a negative rel (read_qrels says why) unless
    ``unjudged`` or the file's own ``unjudged``. Malformed lines are left out here; ``check``
    refuses them first."""
    parsed, value = _parsed(trec)
    user = exp.alias_(_field(1), "user_id")
    item = exp.alias_(_field(3), "item_id")
    if trec.kind == "qrels":
        select = parsed.select(user, item, exp.alias_(value, "relevance"), append=False)
        if not (unjudged or trec.unjudged):
            select = select.where(exp.GTE(this=value.copy(), expression=exp.Literal.number(0)))
        return select.subquery("qrels")
    select = parsed.select(
        user, item, exp.alias_(value, "score"), exp.alias_(_field(6), "tag"), append=False
    )
    if trec.max_per_query is not None:
        # trec_eval -M: the first n in its order (score descending, then docno descending as
        # strcmp; VARCHAR comparison in DuckDB is byte order too).
        order = exp.Order(
            expressions=[
                exp.Ordered(this=value.copy(), desc=True),
                exp.Ordered(this=_field(3), desc=True),
            ]
        )
        window = exp.Window(this=exp.func("ROW_NUMBER"), partition_by=[_field(1)], order=order)
        select.set(
            "qualify",
            exp.Qualify(
                this=exp.LTE(this=window, expression=exp.Literal.number(trec.max_per_query))
            ),
        )
    return select.subquery("run")


def check(connection: duckdb.DuckDBPyConnection, trec: TrecFile, role: str) -> None:
    """Refuses a file with a malformed line, naming the line (a second read, in Python, only
    when DuckDB found one)."""
    count, value = _value(trec)
    bad = exp.or_(
        exp.NEQ(this=_count_fields(), expression=exp.Literal.number(count)),
        value.is_(exp.null()),
    )
    counts = exp.select(
        exp.func("COUNT", exp.Star()),
        exp.func("COUNT_IF", bad),
    ).from_(_fields(trec))
    try:
        row = connection.execute(counts.sql("duckdb")).fetchone()
    except Exception as error:  # duckdb raises several types (IO, invalid input)
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise SqlmetricsError(
            f"{role}: cannot read TREC {trec.kind} file {trec.path!r}: {first}"
        ) from None
    if row is None or not row[0]:
        raise SqlmetricsError(f"{role}: TREC {trec.kind} file {trec.path!r} has no lines")
    if not row[1]:
        return
    found = first_bad_line(trec)
    where = (
        f"line {found[0]}: {found[1]} (found {found[2]!r})"
        if found is not None
        else "a line does not have that form"
    )
    raise SqlmetricsError(
        f"{role}: {trec.path!r} is not a TREC {trec.kind} file of lines `{trec.layout}` "
        f"({row[1]} malformed line(s)); {where}. Fix or remove the line"
        + ("" if trec.kind == "qrels" else ", or check that the run and qrels are not swapped")
    )


def _why(fields: list[str], kind: str) -> str | None:
    """Why a line's fields are not a TREC line of ``kind`` (None: they are)."""
    expected, layout = (6, RUN_LAYOUT) if kind == "run" else (4, QRELS_LAYOUT)
    if len(fields) != expected:
        return f"{len(fields)} field(s) where `{layout}` has {expected}"
    text = fields[4] if kind == "run" else fields[3]
    try:
        float(text) if kind == "run" else int(text)
    except ValueError:
        what = "score is not a number" if kind == "run" else "rel is not a whole number"
        return f"the {what}"
    return None


def first_bad_line(trec: TrecFile) -> tuple[int, str, str] | None:
    """(line number, why, the line) of the first malformed line, read in Python."""
    opener: Any = gzip.open if trec.path.lower().endswith(".gz") else open
    try:
        with opener(trec.path, "rt", encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, 1):
                fields = line.split()
                if not fields:
                    continue
                why = _why(fields, trec.kind)
                if why is not None:
                    return number, why, line.rstrip("\r\n")[:200]
    except OSError:  # a compression Python cannot read (.zst): the message says less
        return None
    return None


# --- trec_eval's report ------------------------------------------------------------------------

# trec_eval's default cutoffs (m_P.c, m_recall.c, m_ndcg_cut.c, m_map_cut.c, m_relative_P.c;
# m_success.c has its own) and float parameters (m_iprec_at_recall.c, m_Rprec_mult.c).
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALL_LEVELS = tuple(i / 10 for i in range(11))
R_MULTIPLES = tuple(i / 10 for i in range(2, 21, 2))
MIN_GEO_MEAN = 0.00001  # trec_eval.h: gm_map's and gm_bpref's floor (sql/gm_map.sql)


@dataclass(frozen=True)
class Measure:
    """A trec_eval measure sqlmetrics computes, and how its report line is made."""

    name: str
    cutoffs: tuple[int, ...] = ()  # the defaults of a cut measure (-m P gives P_5 ... P_1000)
    levels: tuple[float, ...] = ()  # the defaults of a float parameter, printed as %3.2f
    summed: bool = False  # the 'all' line is the sum over queries (num_*), an integer
    graded: bool = False  # reads the gains whatever -l says (ndcg: m_ndcg.c ignores the level)
    # gm_map, gm_bpref: exp of the mean log, no per-query line (m_gm_map.c, m_gm_bpref.c)
    geometric: bool = False
    # 0 for a query with nothing relevant at -l though its gains read every positive rel
    # (m_Rndcg.c returns before computing when num_rel is 0)
    needs_relevant: bool = False


# In trec_eval's own order (measures.c, te_trec_measures), the order it prints them in.
MEASURES: dict[str, Measure] = {
    m.name: m
    for m in (
        Measure("runid"),
        Measure("num_q", summed=True),
        Measure("num_ret", summed=True),
        Measure("num_rel", summed=True),
        Measure("num_rel_ret", summed=True),
        Measure("map"),
        Measure("gm_map", geometric=True),
        Measure("Rprec"),
        Measure("bpref"),
        Measure("recip_rank"),
        Measure("iprec_at_recall", levels=RECALL_LEVELS),
        Measure("P", CUTOFFS),
        Measure("recall", CUTOFFS),
        Measure("infAP"),
        Measure("gm_bpref", geometric=True),
        Measure("Rprec_mult", levels=R_MULTIPLES),
        Measure("utility"),
        Measure("11pt_avg"),
        Measure("binG"),
        Measure("G", graded=True),
        Measure("ndcg", graded=True),
        Measure("ndcg_rel", graded=True),
        Measure("Rndcg", graded=True, needs_relevant=True),
        Measure("ndcg_cut", CUTOFFS, graded=True),
        Measure("map_cut", CUTOFFS),
        Measure("relative_P", CUTOFFS),
        Measure("success", (1, 5, 10)),
        Measure("set_P"),
        Measure("set_relative_P"),
        Measure("set_recall"),
        Measure("set_map"),
        Measure("set_F"),
        Measure("num_nonrel_judged_ret", summed=True),
    )
}
# trec_eval's default ("official") measures.
OFFICIAL = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P",
)  # fmt: skip


def _split(text: str) -> tuple[Measure | None, str | None]:
    """A measure name and its parameter: ``P`` -> (P, None), ``P.5`` / ``P_5`` -> (P, "5")."""
    for name in sorted(MEASURES, key=len, reverse=True):
        if text == name:
            return MEASURES[name], None
        if text.startswith(name) and text[len(name)] in "._" and len(text) > len(name) + 1:
            return MEASURES[name], text[len(name) + 1 :]
    return None, None


def expand_measures(names: Sequence[str] | None) -> list[tuple[str, str]]:
    """(measure, printed name) pairs in trec_eval's order: ``P`` is every default cutoff,
    ``P.5`` / ``P_5`` one, ``iprec_at_recall_0.1`` one level (printed 0.10)."""
    import re

    from sqlmetrics.catalog.metrics import parse_request

    wanted: list[tuple[str, str]] = []
    for text in OFFICIAL if names is None else names:
        text = text.strip()
        measure, parameter = _split(text)
        takes = measure is not None and bool(measure.cutoffs or measure.levels)
        pattern = r"\d+" if measure is not None and measure.cutoffs else r"\d*\.?\d+"
        if measure is None or (parameter is not None and not takes):
            parse_request(text)  # the reason it is unknown or malformed, as everywhere
            raise SqlmetricsError(
                f"{text!r} is not a trec_eval measure of --format trec; it reports "
                f"{', '.join(MEASURES)} (cut measures as P or P_5)"
            )
        if parameter is not None and not re.fullmatch(pattern, parameter):
            raise SqlmetricsError(
                f"{text!r}: {measure.name} takes "
                + ("a whole number, like P_10" if measure.cutoffs else "a number, like 0.10")
            )
        if measure.cutoffs:
            cuts = measure.cutoffs if parameter is None else (int(parameter),)
            wanted += [(measure.name, f"{measure.name}_{k}") for k in cuts]
        elif measure.levels:
            levels = measure.levels if parameter is None else (float(parameter),)
            wanted += [(measure.name, f"{measure.name}_{x:3.2f}") for x in levels]
        else:
            wanted.append((measure.name, measure.name))
    order = list(MEASURES)
    return sorted(dict.fromkeys(wanted), key=lambda pair: order.index(pair[0]))


def _queries(connection: duckdb.DuckDBPyConnection, trec: TrecFile) -> dict[str, int]:
    """Each query of the file and its number of lines (a run's: num_ret, after -M; a query of
    the qrels counts with only negative rels, as trec_eval counts it)."""
    query = (
        exp.select("user_id", exp.func("COUNT", exp.Star()))
        .from_(relation(trec, unjudged=True))
        .group_by("user_id")
    )
    return {str(row[0]): int(row[1]) for row in connection.execute(query.sql("duckdb")).fetchall()}


def _runid(connection: duckdb.DuckDBPyConnection, run: TrecFile) -> str:
    """The tag of the run's first line in trec_eval's sort (qid, then docno)."""
    query = exp.select("tag").from_(relation(run)).order_by("user_id", "item_id").limit(1)
    row = connection.execute(query.sql("duckdb")).fetchone()
    return str(row[0]) if row else ""


def _per_query(
    run: TrecFile, qrels: TrecFile, labels: list[str], threshold: float, population: str
) -> dict[str, dict[str, float]]:
    """{label: {qid: value}} from evaluate under the trec_eval profile, for the queries of
    ``population`` ("judged", or "all_judged" for -c)."""
    from sqlmetrics.run import evaluate

    frame = evaluate(
        run,
        qrels,
        labels,
        profile="trec_eval",
        per_user=True,
        threshold=threshold,
        population=population,
    )
    return {
        label: {
            str(user): float(value)
            for user, value in zip(frame["user_id"], frame[label], strict=True)
            if value is not None and not (isinstance(value, float) and math.isnan(value))
        }
        for label in labels
    }


def trec_eval(
    run: TrecFile | str | os.PathLike[str],
    qrels: TrecFile | str | os.PathLike[str],
    measures: Sequence[str] | None = None,
    *,
    per_query: bool = False,
    complete: bool = False,
    max_per_query: int | None = None,
    level: int = 1,
) -> pd.DataFrame:
    """trec_eval's report on a run and qrels, as rows (measure, qid, value), 'all' last.

    ``measures``: trec_eval names (``P`` for every default cutoff, ``P_5``, ``map``...),
    trec_eval's official set when None. ``per_query``: trec_eval -q, the
    per-query rows too. ``complete``: -c, the mean over every query of the qrels (a query
    without a run scores 0) instead of the queries of the run that have judgements.
    ``max_per_query``: -M n. ``level``: -l n, relevant means rel >= n (threshold n - 1);
    ndcg and ndcg_cut read every positive rel as its gain whatever the level, as trec_eval.
    """
    import pandas as pd

    from sqlmetrics.engines.duckdb import _database

    if isinstance(level, bool) or not isinstance(level, int) or level < 1:
        # -l 0 would make rel 0 relevant, a threshold of -1, which evaluate refuses
        raise SqlmetricsError(
            f"level must be a whole number of at least 1 (trec_eval -l), not {level!r}"
        )
    run_file = run if isinstance(run, TrecFile) else read_run(run, max_per_query=max_per_query)
    if max_per_query is not None and run_file.max_per_query != max_per_query:
        run_file = read_run(run_file.path, max_per_query=max_per_query)
    qrels_file = qrels if isinstance(qrels, TrecFile) else read_qrels(qrels)
    if run_file.kind != "run" or qrels_file.kind != "qrels":
        raise SqlmetricsError("trec_eval takes a run (read_run) and qrels (read_qrels), in order")
    wanted = expand_measures(measures)
    connection = _database().cursor()
    try:
        check(connection, run_file, "run")
        check(connection, qrels_file, "qrels")
        judged = set(_queries(connection, qrels_file))
        retrieved = _queries(connection, run_file)
        runid = _runid(connection, run_file)
    finally:
        connection.close()
    counted = judged if complete else judged & set(retrieved)
    if not counted:
        raise SqlmetricsError(
            "no query of the run has judgements in the qrels (trec_eval: 'No queries with both "
            "results and relevance info'); check that both files use the same qids"
        )
    special = {"runid", "num_q"}
    population = "all_judged" if complete else "judged"
    values: dict[str, dict[str, float]] = {}
    for graded in (False, True):
        labels = [
            label
            for name, label in wanted
            if name not in special and MEASURES[name].graded == graded
        ]
        if labels:
            # The graded measures read every positive rel (threshold 0); the others rel >= level.
            threshold = 0.0 if graded else level - 1.0
            values |= _per_query(run_file, qrels_file, labels, threshold, population)
    guarded = [label for name, label in wanted if MEASURES[name].needs_relevant]
    if guarded and level > 1:  # Rndcg: 0 without a rel >= level, whatever its gains say
        relevant = _per_query(run_file, qrels_file, ["num_rel"], level - 1.0, population)
        for label in guarded:
            values[label] = {
                qid: value if relevant["num_rel"].get(qid, 0.0) > 0 else 0.0
                for qid, value in values[label].items()
            }

    def value(name: str, label: str, qid: str) -> float:
        """A query's value from evaluate. The one query trec_eval counts that evaluate cannot
        see: one whose qrels lines all have a negative rel (read_qrels leaves such lines out,
        and infap's other stages too, so it has no judgement); it has nothing relevant and no
        judged document, so it scores what a query judged with nothing relevant scores."""
        if qid in values[label]:
            return values[label][qid]
        if name == "num_ret":
            return float(retrieved.get(qid, 0))
        if name == "utility":  # 2 x relevant retrieved - retrieved, with nothing relevant
            return -float(retrieved.get(qid, 0))
        return MIN_GEO_MEAN if MEASURES[name].geometric else 0.0

    rows: list[tuple[str, str, object]] = []
    if per_query:
        for qid in sorted(counted & set(retrieved)):  # -q prints the run's queries (trec_eval 9)
            for name, label in wanted:
                if name in special or MEASURES[name].geometric:
                    continue
                number = value(name, label, qid)
                rows.append((label, qid, int(number) if MEASURES[name].summed else number))
    for name, label in wanted:
        measure = MEASURES[name]
        summary: object
        if name == "runid":
            summary = runid
        elif name == "num_q":
            summary = len(counted)
        elif name == "num_rel" and complete:
            # m_num_rel.c under -c: every qrels line with rel > 0, whatever -l says
            every = _per_query(run_file, qrels_file, [label], 0.0, population)[label]
            summary = int(sum(every.values()))
        elif measure.geometric:
            logs = [math.log(value(name, label, qid)) for qid in counted]
            summary = math.exp(math.fsum(logs) / len(counted))
        else:
            total = math.fsum(value(name, label, qid) for qid in counted)
            summary = int(total) if measure.summed else total / len(counted)
        rows.append((label, "all", summary))
    # object: integers stay integers beside the floats (trec_eval prints them as %ld)
    return pd.DataFrame(rows, columns=["measure", "qid", "value"], dtype=object)


def trec_text(frame: pd.DataFrame) -> str:
    """The rows as trec_eval prints them: ``%-22s\\t%s\\t%6.4f`` (integers as %d, runid as text)."""
    lines = []
    for measure, qid, value in frame.itertuples(index=False):
        shown = f"{value:6.4f}" if isinstance(value, float) else str(value)
        lines.append(f"{measure:<22}\t{qid}\t{shown}\n")
    return "".join(lines)


# --- every trec_eval measure -------------------------------------------------------------------

# trec_eval's measures of -m all_trec (measures.c, trec_names) in its order, each as
# (an example of its spelling, the sqlmetrics metric computing it or None, a note); the
# measures of its other rel_info formats (prefs_*, *_avgjg, yaap) close the list. docs/profiles.md
# shows it; tests/test_trec.py checks each spelling resolves to that metric under the profile.
TREC_TABLE: tuple[tuple[str, str, str | None, str], ...] = (
    ("runid", "runid", None, "the run's tag: a line of --format trec"),
    ("num_q", "num_q", None, "the queries averaged over: a line of --format trec (`users`)"),
    ("num_ret", "num_ret", "num_ret", "summed over users"),
    ("num_rel", "num_rel", "num_rel", "summed over users"),
    ("num_rel_ret", "num_rel_ret", "num_rel_ret", "summed over users (`hits` is the mean)"),
    ("map", "map", "map", ""),
    ("gm_map", "gm_map", "gm_map", "geometric mean, floor 1e-5"),
    ("Rprec", "Rprec", "r_precision", ""),
    ("bpref", "bpref", "bpref", "rel 0 judged non-relevant, rel < 0 and absent not judged"),
    ("recip_rank", "recip_rank", "mrr", ""),
    ("iprec_at_recall", "iprec_at_recall_0.10", "iprec_at_recall", "@x: the recall level"),
    ("P", "P_10", "precision", "@k"),
    ("relstring", "relstring", None, "not supported: a string of relevance values"),
    ("recall", "recall_10", "recall", "@k"),
    (
        "infAP",
        "infAP",
        "infap",
        "whole list; rel < 0 in the pool, not judged; a document outside the qrels not pooled",
    ),
    ("gm_bpref", "gm_bpref", "gm_bpref", "geometric mean, floor 1e-5"),
    (
        "utility",
        "utility",
        "utility",
        "coefficients 1, -1, 0, 0 (its default)",
    ),
    ("11pt_avg", "11pt_avg", "iprec_11pt_avg", ""),
    ("ndcg", "ndcg", "ndcg", "gain = rel; under -l the report keeps every positive rel"),
    ("relative_P", "relative_P_10", "recall_capped", "@k"),
    ("Rprec_mult", "Rprec_mult_0.20", "rprec_mult", "@x: the multiple of R"),
    ("success", "success_10", "hit_rate", "@k"),
    ("map_cut", "map_cut_10", "map", "@k"),
    ("ndcg_cut", "ndcg_cut_10", "ndcg", "@k"),
    ("ndcg_rel", "ndcg_rel", "ndcg_rel", "whole list; gain = rel, as ndcg"),
    ("Rndcg", "Rndcg", "rndcg", "whole list; gain = rel, 0 without a rel >= -l"),
    ("binG", "binG", "bin_g", "whole list; relevant means rel >= -l"),
    ("G", "G", "normalized_gain", "whole list; gain = rel, as ndcg"),
    ("set_P", "set_P", "precision", "whole list"),
    ("set_recall", "set_recall", "recall", "whole list"),
    ("set_relative_P", "set_relative_P", "recall_capped", "whole list"),
    ("set_map", "set_map", "set_map", "whole list"),
    ("set_F", "set_F", "f1", "whole list, beta 1"),
    (
        "num_nonrel_judged_ret",
        "num_nonrel_judged_ret",
        "num_nonrel_judged_ret",
        "summed over users",
    ),
    ("prefs_*, *_avgjg, yaap", "", None, "not supported: preference and jg qrels formats"),
)


def trec_table_markdown() -> list[str]:
    """The table of docs/profiles.md: every trec_eval measure and what computes it."""
    lines = [
        "| trec_eval | as written | sqlmetrics | note |",
        "|---|---|---|---|",
    ]
    for name, example, metric, note in TREC_TABLE:
        shown = f"`{example}`" if example else ""
        computed = f"`{metric}`" if metric else "-"
        lines.append(f"| `{name}` | {shown} | {computed} | {note} |")
    return lines


def looks_like(path: object) -> str | None:
    """ "run" or "qrels" when a local file's first line has that layout, for a hint in an
    error (never to read a file as TREC without being told)."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return None
    text = os.fspath(path)
    opener: Any = gzip.open if text.lower().endswith(".gz") else open
    try:
        with opener(text, "rt", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                fields = line.split()
                if fields:
                    if _why(fields, "run") is None and fields[1] == "Q0":
                        return "run"
                    return "qrels" if _why(fields, "qrels") is None else None
    except OSError:  # binary or compressed otherwise: not TREC text
        return None
    return None
