"""Discovers the metric files in ``sql/`` and parses their headers.

A metric file is a per-user query over a shared stage (``judged`` for the ranking metrics,
``scored`` or ``rated`` for the score and rating metrics; see ``per_user.py``), or with
``reads: lists`` a query over every user's top-k list (``ranked``), preceded by ``-- key: value``
header lines. Dropping a new file into ``sql/`` is all it takes to add a
metric: nothing here lists them.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import sqlglot
from sqlglot import exp

from sqlmetrics.catalog.gains import GAINS_VALUES, parse_gains, written
from sqlmetrics.catalog.spellings import unknown_metric
from sqlmetrics.errors import SqlmetricsError

HEADER_LINE = re.compile(r"^--\s*([a-z_]+):\s*(.*)$")
REQUIRED_KEYS = (
    "name",
    "title",
    "definition",
    "cutoff",
    "aggregate",
    "better",
    "ties_average",
    "references",
)
# The stages a metric file may read (``reads:``, judged when absent); see sql/stages/README.md.
SOURCES = ("judged", "lists", "scored", "rated", "judgements", "pool")
# ``better:``, which value of the metric is the better one: the larger, the
# smaller (an error, a loss, a concentration), the nearer to 1 (calibration), or none (a
# description of the lists or the judgements, such as the overlap with a baseline).
BETTER = ("higher", "lower", "one", "none")
# ``accuracy@0.7``: the value after @ of a ``cutoff: threshold`` metric is a score threshold.
DEFAULT_SCORE_THRESHOLD = 0.5
# The largest cutoff: DuckDB's top-n aggregate takes n < 1,000,000, and no list is that long.
MAX_CUTOFF = 999_999
# Cutoffs one range label (ndcg@1:100) may expand to: each is a column of the query.
MAX_CUTOFF_RANGE = 1_000


# judged.sql's columns that the user's list sets (the rest come from the interactions alone)
LIST_COLUMNS = frozenset(
    {
        "pos",
        "hit",
        "gain",
        "exp_gain",
        "list_length",
        "hits_so_far",
        "hits_through",
        "score",
        "err_stop",
    }
)
# A metric's named parameters (header ``parameters: gmax=4``, asked as ``err(gmax=3)@10``): each
# name's values, read from the text given, and what the refusal says they may be.
PARAMETER_VALUES = {
    "gmax": "a number above 0 (the grade R = (2^g - 1) / 2^gmax reaches 1 at) or 'query' "
    "(each user's largest relevance)",
    "gains": GAINS_VALUES,
    "p": "a persistence between 0 and 1 (rbo's weight of depth d is p^(d - 1))",
}


@dataclass(frozen=True)
class Metric:
    """One metric file: its header and its per-user expressions over its stage."""

    name: str
    title: str
    definition: str
    references: str
    aliases: tuple[str, ...]
    takes_cutoff: bool
    micro: bool  # aggregate: sum of numerators / sum of denominators instead of a mean of users
    ties_average: bool  # has an exact closed form under ties="average"
    reads_whole_list: bool  # needs every position, whatever the cutoff
    # walks each list item by item in position order (a running sum), which a repeated literal
    # rank leaves open: refused under ranks="literal" (walks_positions: yes; and every file over
    # the judgements stage, bpref's walk)
    walks_positions: bool
    query: exp.Select  # the file's SQL, header stripped
    # The stage it reads, one of SOURCES: "judged" (a per-user query over the population),
    # "scored"/"rated" (score and rating rows), or "lists" (over the top-k lists of every user
    # with a list: per user with aggregate mean, or one value per group with aggregate group)
    reads: str = "judged"
    group_level: bool = False  # aggregate: group
    requires_cutoff: bool = False  # cutoff: required
    needs_items: tuple[str, ...] = ()  # columns of the items table it reads, besides the item
    needs_history: bool = False  # needs the history table, refused without (needs_history: yes)
    # reads it when given, as if nobody had consumed anything before otherwise
    # (needs_history: optional)
    reads_history: bool = False
    needs_intent: bool = False  # reads the interactions' intent column (needs_intent: yes)
    takes_score_threshold: bool = False  # cutoff: threshold (`@t` is a score threshold)
    # cutoff: level, `@x` a number >= 0 bound like a score threshold: a recall level
    # (iprec_at_recall@0.1) or a multiple of |R_u| (rprec_mult@0.2), trec_eval's float
    # parameters; without `@x` the header's default_level
    takes_level: bool = False
    default_level: float = 0.0
    # level_below: the level must be below this (rbp's persistence p < 1)
    level_below: float | None = None
    # level_name: the level's name in a parenthesised spelling (rbp(p=0.8) is rbp@0.8)
    level_name: str = ""
    # parameters: (name, default text) of the named parameters it takes besides k
    parameters: tuple[tuple[str, str], ...] = ()
    # asked_as: the metric whose name asks for this one when given this one's parameters
    # (ndcg(gains={1:3})@10 is ndcg_gains)
    asked_as: str = ""
    square_root: bool = False  # finish: sqrt (the square root of the micro ratio, like rmse)
    # aggregate: sum, the sum over users (trec_eval's num_ret, num_rel, num_rel_ret,
    # num_nonrel_judged_ret)
    summed: bool = False
    # finish: exp, the exponential of the mean of a per-user logarithm: a geometric mean
    # (trec_eval's gm_map, whose per-query value is already the log)
    exponential: bool = False
    averaged: str = ""  # what the mean runs over, for the listing; derived when the header lacks it
    # formula: the definition in LaTeX, which the metric's page of the documentation site draws
    formula: str = ""
    better: str = "higher"  # one of BETTER (required in the header)
    # probabilities: yes, reads the scores as probabilities: a score outside [0, 1] is refused
    reads_probabilities: bool = False

    def averaged_over(self) -> str:
        if self.averaged:
            return self.averaged
        if self.reads in ("scored", "rated"):
            return f"over {self.reads} rows"
        if self.group_level:
            return "one value per group, over every list"
        if self.summed:
            return "summed over users"
        if self.reads == "lists":
            return "over users with a list"
        return "over interactions" if self.micro else "over users"

    @property
    def reads_the_list(self) -> bool:
        """Whether its value depends on the user's list (a column of judged.sql that a list
        sets); ideal_dcg's does not: a user without a list has the same value."""
        return any(
            column.name in LIST_COLUMNS
            for projection in self.query.expressions
            for column in projection.find_all(exp.Column)
        )

    def expressions(self) -> dict[str, exp.Expr]:
        """The per-user projections by alias: {name} or {numerator, denominator}; copies."""
        return {
            projection.alias_or_name: projection.unalias().copy()
            for projection in self.query.expressions
            if projection.alias_or_name != "user_id"
        }


def parsed(sql: str) -> exp.Expr:
    """``sql`` (DuckDB) parsed without the parser's token positions.

    sqlglot records each identifier's and literal's line and columns in its ``meta``, a dict
    that every copy of the node deep-copies in Python (the rest of a copy is compiled). The
    templates are copied for every query composed from them and nothing reads the positions
    of SQL the user never wrote; without them to_sql costs less CPU (docs/benchmark.md,
    "Cost per call").
    """
    tree = sqlglot.parse_one(sql, read="duckdb")
    for node in tree.walk():
        meta = node._meta
        if meta is not None:
            for key in _POSITIONS:
                meta.pop(key, None)
            if not meta:
                node._meta = None
    return tree


_POSITIONS = ("line", "col", "start", "end")


def sql_folder() -> Path:
    """The metric files: packaged inside the wheel, or the repository's ``sql/`` in a checkout."""
    packaged = Path(str(resources.files("sqlmetrics"))) / "sql"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "sql"


def _split_header(path: Path) -> tuple[dict[str, str], list[str]]:
    """The ``-- key: value`` lines at the top of a metric file, and the SQL after them."""
    header: dict[str, str] = {}
    body: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        match = HEADER_LINE.match(line)
        if match and not body:
            header[match.group(1)] = match.group(2).strip()
        else:
            body.append(line)
    return header, body


def _check_header(file: str, stem: str, header: dict[str, str]) -> None:
    """Refuses a header whose keys are missing, unknown or do not go together."""
    missing = [key for key in REQUIRED_KEYS if key not in header]
    if missing:
        raise SqlmetricsError(f"{file}: header is missing {', '.join(missing)}")
    if header["aggregate"] == "group" and header.get("reads") != "lists":
        raise SqlmetricsError(f"{file}: aggregate: group needs reads: lists")
    if header.get("needs_intent") == "yes" and header.get("reads") != "lists":
        raise SqlmetricsError(f"{file}: needs_intent: yes needs reads: lists")
    if header["name"] != stem:
        raise SqlmetricsError(f"{file}: header name {header['name']!r} differs from the file")
    reads = header.get("reads", "judged")
    if reads not in SOURCES:
        raise SqlmetricsError(f"{file}: reads: {reads!r} is not one of {', '.join(SOURCES)}")
    finishes = {"sqrt": "micro", "exp": "mean"}  # finish -> the aggregate it applies to
    if "finish" in header and finishes.get(header["finish"]) != header["aggregate"]:
        raise SqlmetricsError(
            f"{file}: finish: sqrt applies to a micro metric, finish: exp to a mean"
        )
    if (header["cutoff"] == "level") != ("default_level" in header):
        raise SqlmetricsError(f"{file}: cutoff: level and default_level go together")
    if header["aggregate"] not in ("mean", "micro", "group", "sum"):
        raise SqlmetricsError(
            f"{file}: aggregate: {header['aggregate']!r} is not mean, micro, sum or group"
        )
    if header["better"] not in BETTER:
        raise SqlmetricsError(
            f"{file}: better: {header['better']!r} is not one of {', '.join(BETTER)}"
        )
    if header.get("probabilities") == "yes" and reads != "scored":
        raise SqlmetricsError(f"{file}: probabilities: yes needs reads: scored")
    if header["aggregate"] == "sum" and reads not in ("judged", "judgements"):
        raise SqlmetricsError(
            f"{file}: aggregate: sum applies to a metric over judged or judgements"
        )


def _declared_parameters(file: str, text: str) -> tuple[tuple[str, str], ...]:
    """The header's ``parameters: name=default, ...``, each name one of PARAMETER_VALUES."""
    declared = []
    for part in filter(None, (piece.strip() for piece in text.split(","))):
        name, equals, default = (side.strip() for side in part.partition("="))
        if not equals or name not in PARAMETER_VALUES:
            raise SqlmetricsError(
                f"{file}: parameters: {part!r} is not name=default with a name of "
                f"{', '.join(PARAMETER_VALUES)}"
            )
        _parameter_value(file, name, default)
        declared.append((name, default))
    return tuple(declared)


def _parameter_value(label: str, name: str, text: str) -> float | str:
    """A parameter's value from its text: gmax a number above 0 or 'query'; gains in their
    one written form ({1:3,2:9})."""
    if name == "gains":
        return written(parse_gains(label, text))
    if name == "gmax" and text.lower() == "query":
        return "query"
    number = re.fullmatch(r"\d+\.?\d*|\.\d+", text)
    if number is None or not 0 < float(text) < (1 if name == "p" else math.inf):
        raise SqlmetricsError(f"{name} in {label!r} must be {PARAMETER_VALUES[name]}, not {text!r}")
    return float(text)


def parse_metric_file(path: Path) -> Metric:
    header, body = _split_header(path)
    _check_header(path.name, path.stem, header)
    reads = header.get("reads", "judged")
    # The header is stripped before parsing, or sqlglot would carry it into every output.
    query = parsed("\n".join(body))
    if not isinstance(query, exp.Select):
        raise SqlmetricsError(f"{path.name}: expected exactly one query over {reads}")
    return Metric(
        name=header["name"],
        title=header["title"],
        definition=header["definition"],
        references=header["references"],
        aliases=tuple(a.strip().lower() for a in header.get("aliases", "").split(",") if a.strip()),
        takes_cutoff=header["cutoff"] in ("optional", "required"),
        requires_cutoff=header["cutoff"] == "required",
        micro=header["aggregate"] == "micro",
        group_level=header["aggregate"] == "group",
        needs_items=tuple(c.strip() for c in header.get("needs_items", "").split(",") if c.strip()),
        needs_history=header.get("needs_history") == "yes",
        reads_history=header.get("needs_history") in ("yes", "optional"),
        needs_intent=header.get("needs_intent") == "yes",
        ties_average=header["ties_average"] == "yes",
        # Score and rating rows are whole lists; top-k lists stop at the cutoff like rankings.
        reads_whole_list=header.get("reads_whole_list") == "yes" or reads in ("scored", "rated"),
        walks_positions=header.get("walks_positions") == "yes" or reads == "judgements",
        query=query,
        reads=reads,
        takes_score_threshold=header["cutoff"] in ("threshold", "level"),
        takes_level=header["cutoff"] == "level",
        default_level=float(header.get("default_level", "0")),
        level_below=float(header["level_below"]) if "level_below" in header else None,
        level_name=header.get("level_name", ""),
        parameters=_declared_parameters(path.name, header.get("parameters", "")),
        asked_as=header.get("asked_as", ""),
        square_root=header.get("finish") == "sqrt",
        summed=header["aggregate"] == "sum",
        exponential=header.get("finish") == "exp",
        averaged=header.get("averaged", ""),
        formula=header.get("formula", ""),
        better=header["better"],
        reads_probabilities=header.get("probabilities") == "yes",
    )


@functools.cache
def metrics() -> dict[str, Metric]:
    """Every metric by canonical name, in name order."""
    found = (parse_metric_file(path) for path in sorted(sql_folder().glob("*.sql")))
    return {metric.name: metric for metric in found}


@functools.cache
def _names() -> dict[str, Metric]:
    names: dict[str, Metric] = {}
    for metric in metrics().values():
        for name in (metric.name, *metric.aliases):
            names[name] = metric
    return names


# trec_eval's set measures (m_set_P.c, m_set_recall.c, m_set_F.c with beta 1) read the whole
# retrieved list: they are the metric without a cutoff, so set_P@5 is refused rather than read
# as P@5. ir_measures writes trec_eval's names in CamelCase (NumRelRet); names are lowercased.
WHOLE_LIST_SPELLINGS = {
    "set_p": "precision",
    "set_recall": "recall",
    "set_f": "f1",
    "set_relative_p": "recall_capped",  # m_set_rel_P.c: H / min(list length, |R|)
}


@dataclass(frozen=True)
class MetricRequest:
    """One requested metric: ``ndcg@10`` is ndcg with k=10, ``accuracy@0.7`` accuracy at the
    score threshold 0.7, each labelled as the user typed it."""

    metric: Metric
    k: int | None
    label: str
    score_threshold: float | None = None  # for cutoff: threshold metrics, 0.5 by default
    # The users its mean runs over when it differs from the query's (a profile sets it: MS
    # Recommenders' ndcg_at_k counts every user, its other functions the common ones); None:
    # Options.population.
    population: str | None = None
    # The named parameters asked in parentheses (err(gmax=3)@10); the others take the
    # header's defaults (parameter()).
    parameters: tuple[tuple[str, float | str], ...] = ()

    def parameter(self, name: str) -> float | str:
        """The value of one of the metric's parameters: as asked, else the header's default."""
        given = dict(self.parameters)
        if name in given:
            return given[name]
        default = dict(self.metric.parameters)[name]
        return _parameter_value(self.metric.name, name, default)


def parse_request(text: str) -> MetricRequest:
    """Parses ``name@k`` (or a trec_eval spelling) into a metric and its cutoff."""
    label = text.strip()
    bare, given = _parenthesised(label)
    name, sep, cutoff = _spelled(bare.lower())
    metric = _names().get(name)
    if metric is None:
        raise unknown_metric(label, name, [*_names(), *WHOLE_LIST_SPELLINGS])
    metric = _asked(metric, given)
    parameters, level = _named_parameters(metric, label, given)
    if level is not None:
        if sep:
            raise SqlmetricsError(
                f"{label!r} gives {metric.name}'s {metric.level_name} twice: write "
                f"{metric.name}({metric.level_name}={level}) or {metric.name}@{level}"
            )
        sep, cutoff = "@", level
    if metric.takes_score_threshold:
        threshold = _score_threshold(metric, label, cutoff, sep)
        return MetricRequest(metric, None, label, threshold, parameters=parameters)
    if not cutoff and not sep:
        if metric.requires_cutoff:
            raise SqlmetricsError(
                f"metric {metric.name!r} needs a cutoff: write it like {metric.name}@10"
            )
        return MetricRequest(metric, None, label, parameters=parameters)
    return MetricRequest(metric, _cutoff(metric, label, cutoff), label, parameters=parameters)


def _parenthesised(label: str) -> tuple[str, list[tuple[str, str]]]:
    """``err(gmax=3)@10`` as ("err@10", [("gmax", "3")]), ir_measures' spelling of a
    measure's parameters (RBP(p=0.8)); a label without parentheses as it is."""
    match = re.fullmatch(r"(?P<name>[^()@]+)\((?P<given>[^()]*)\)(?P<rest>@.*)?", label)
    if match is None:
        if "(" in label or ")" in label:
            raise SqlmetricsError(
                f"{label!r}: write a metric's parameters in one pair of parentheses after its "
                "name, like err(gmax=3)@10 or rbp(p=0.8)"
            )
        return label, []
    given = []
    # a comma inside braces is the gains' own (ndcg(gains={1:3,2:9})@10)
    pieces = re.split(r",(?![^{}]*\})", match.group("given"))
    for part in filter(None, (piece.strip() for piece in pieces)):
        key, equals, value = (side.strip() for side in part.partition("="))
        if not equals or not key or not value:
            raise SqlmetricsError(
                f"{label!r}: each parameter is name=value, like err(gmax=3)@10, not {part!r}"
            )
        given.append((key.lower(), value))
    return match.group("name").strip() + (match.group("rest") or ""), given


def _asked(metric: Metric, given: list[tuple[str, str]]) -> Metric:
    """The metric a name asks for with these parameters: itself, or the one whose header says
    it is asked as this name and which takes a parameter given that this one does not."""
    own = {name for name, _ in metric.parameters} | {metric.level_name}
    extra = {key for key, _ in given} - own
    for other in metrics().values():
        if other.asked_as == metric.name and extra <= {name for name, _ in other.parameters}:
            return other if extra else metric
    return metric


def _named_parameters(
    metric: Metric, label: str, given: list[tuple[str, str]]
) -> tuple[tuple[tuple[str, float | str], ...], str | None]:
    """The parameters given in parentheses, checked against the metric's header, and the
    level when one of them names it (rbp(p=0.8): "0.8")."""
    known = dict(metric.parameters)
    parameters: dict[str, float | str] = {}
    level = None
    for key, value in given:
        if key in parameters or (key == metric.level_name and level is not None):
            raise SqlmetricsError(f"{label!r} gives {key} twice")
        if metric.level_name and key == metric.level_name:
            level = value
        elif key in known:
            parameters[key] = _parameter_value(label, key, value)
        else:
            names = [*known, *([metric.level_name] if metric.level_name else [])]
            takes = f"it takes {', '.join(names)}" if names else "it takes none"
            raise SqlmetricsError(
                f"{label!r}: {metric.name} has no parameter {key!r} ({takes}); what counts as "
                "relevant is the threshold option (threshold=), not a parameter"
                if key == "rel"
                else f"{label!r}: {metric.name} has no parameter {key!r} ({takes})"
            )
    return tuple(parameters.items()), level


def _spelled(lowered: str) -> tuple[str, str, str]:
    """(name, "@" or "", cutoff text) of a lower-cased request, trec_eval's spellings read as
    sqlmetrics' (P_10 is precision@10, iprec_at_recall_0.10 iprec_at_recall@0.10)."""
    name, sep, cutoff = lowered.partition("@")
    if not sep:
        # trec_eval spellings: P_10, P.10, ndcg_cut_10, map_cut.10, success_5
        match = re.fullmatch(r"(?P<name>.+?)[._](?P<k>\d+)", lowered)
        known = _names().get(match.group("name")) if match else None
        if match and known and not known.takes_score_threshold and lowered not in _names():
            name, cutoff = match.group("name"), match.group("k")
        # trec_eval's float parameters: iprec_at_recall_0.10, Rprec_mult_0.20
        level = re.fullmatch(r"(?P<name>.+?)[._](?P<x>\d+(\.\d+)?)", lowered)
        leveled = _names().get(level.group("name")) if level else None
        if level and leveled and leveled.takes_level and lowered not in _names():
            name, sep, cutoff = level.group("name"), "@", level.group("x")
    if name in WHOLE_LIST_SPELLINGS and name not in _names():
        if sep:
            raise SqlmetricsError(
                f"{name} is a whole-list measure and takes no cutoff: write {name!r} "
                f"(the same as {WHOLE_LIST_SPELLINGS[name]!r})"
            )
        name = WHOLE_LIST_SPELLINGS[name]
    return name, sep, cutoff


def _cutoff(metric: Metric, label: str, cutoff: str) -> int:
    """The cutoff of ``label``, a whole number from 1 to MAX_CUTOFF, for a metric that takes one."""
    if not metric.takes_cutoff:
        raise SqlmetricsError(f"metric {metric.name!r} takes no cutoff: write {metric.name!r}")
    if not re.fullmatch(r"\d+", cutoff) or int(cutoff) <= 0:
        raise SqlmetricsError(
            f"cutoff in {label!r} must be a whole number of at least 1, like {metric.name}@10"
        )
    if int(cutoff) > MAX_CUTOFF:
        raise SqlmetricsError(
            f"cutoff in {label!r} is above the largest supported, {MAX_CUTOFF:,}; to "
            f"evaluate whole lists write {metric.name!r} without @k"
            if not metric.requires_cutoff
            else f"cutoff in {label!r} is above the largest supported, {MAX_CUTOFF:,}"
        )
    return int(cutoff)


def _score_threshold(metric: Metric, label: str, text: str, sep: str) -> float:
    """The t of ``accuracy@t``: a finite number (0.5 when there is no ``@``)."""
    if metric.takes_level:
        if not sep:
            return metric.default_level
        below = metric.level_below
        if not re.fullmatch(r"\d+\.?\d*|\.\d+", text) or (
            below is not None and float(text) >= below
        ):
            bound = "of at least 0" if below is None else f"from 0 to below {below:g}"
            raise SqlmetricsError(
                f"the level in {label!r} must be a number {bound}, like "
                f"{metric.name}@0.5 (trec_eval: {metric.name}_0.50)"
            )
        return float(text)
    if not sep:
        return DEFAULT_SCORE_THRESHOLD
    number = re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?", text)
    value = float(text) if number else math.nan
    if not math.isfinite(value):
        raise SqlmetricsError(
            f"the score threshold in {label!r} must be a finite number, like {metric.name}@0.5 "
            f"(without @ it is {DEFAULT_SCORE_THRESHOLD})"
        )
    return value


def better(label: str) -> str:
    """Which value of the metric a label asks for is the better one (one of BETTER)."""
    return parse_request(label).metric.better


def parse_requests(texts: Sequence[str] | str) -> list[MetricRequest]:
    """Requests in order, a label asked twice kept once; ``ndcg@1:100`` is ndcg@1 ... ndcg@100."""
    if isinstance(texts, str):
        texts = [texts]
    if not texts:
        raise SqlmetricsError("no metrics requested: pass at least one, like ndcg@10")
    requests: dict[str, MetricRequest] = {}
    for text in texts:
        for label in expand_cutoff_range(text):
            request = parse_request(label)
            requests.setdefault(request.label, request)
    return list(requests.values())


def expand_cutoff_range(text: str) -> list[str]:
    """``name@first:last`` as the labels of every cutoff from first to last (both included);
    any other label as it is."""
    name, sep, cutoffs = text.strip().partition("@")
    first, colon, last = cutoffs.partition(":")
    if not sep or not colon:
        return [text]
    if not (re.fullmatch(r"\d+", first) and re.fullmatch(r"\d+", last)):
        raise SqlmetricsError(
            f"the cutoff range in {text.strip()!r} must be two whole numbers, like {name}@1:100"
        )
    if not 1 <= int(first) <= int(last):
        raise SqlmetricsError(
            f"the cutoff range in {text.strip()!r} must go up from at least 1, like {name}@1:100"
        )
    if int(last) - int(first) >= MAX_CUTOFF_RANGE:
        raise SqlmetricsError(
            f"the cutoff range in {text.strip()!r} has more than {MAX_CUTOFF_RANGE:,} cutoffs: "
            "ask for fewer, or for the ones you need by name (ndcg@1,ndcg@10,ndcg@100)"
        )
    return [f"{name}@{k}" for k in range(int(first), int(last) + 1)]
