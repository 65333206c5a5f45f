"""trec_eval's measures as ``--format trec`` names them: their order, default parameters and
the parameters of ``-m`` (``P.5,7,3``, ``iprec_at_recall..10,.25``, ``11pt_avg..25,.75``,
``utility.2,-1,0,0``, ``rbp.p=0.8``), each expanded into the lines trec_eval prints and the
sqlmetrics requests that compute them."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlmetrics.catalog.gains import parse_gains, written
from sqlmetrics.errors import SqlmetricsError

# trec_eval's default cutoffs (m_P.c, m_recall.c, m_ndcg_cut.c, m_map_cut.c, m_relative_P.c;
# m_success.c has its own) and float parameters (m_iprec_at_recall.c, m_Rprec_mult.c).
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALL_LEVELS = tuple(i / 10 for i in range(11))
R_MULTIPLES = tuple(i / 10 for i in range(2, 21, 2))
MIN_GEO_MEAN = 0.00001  # trec_eval.h: gm_map's and gm_bpref's floor (sql/gm_map.sql)
# the measures whose -m takes rel=gain pairs that sqlmetrics computes (m_ndcg.c: ndcg.1=3,2=9)
# (m_ndcg.c, m_ndcg_rel.c, m_Rndcg.c, m_G.c: ndcg.1=3,2=9), each with the sqlmetrics metric
# that takes the gains
GAIN_MEASURES = {
    "ndcg": "ndcg",
    "dcg": "dcg",
    "ideal_dcg": "ideal_dcg",
    "ndcg_rel": "ndcg_rel",
    "Rndcg": "rndcg",
    "G": "normalized_gain",
}


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
    since: int = 9  # the trec_eval version that has it


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
        Measure("dcg", graded=True, since=10),
        Measure("ideal_dcg", graded=True, since=10),
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
        # rbp ignores -l as ndcg does (m_rbp.c reads the rel levels); unj and rbp_resid read
        # only whether a document is judged
        Measure("rbp", graded=True, since=10),
        Measure("rbp_resid", graded=True, since=10),
        Measure("unj", (5, 10, 20), since=10),
    )
}
# trec_eval's default ("official") measures.
OFFICIAL = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P",
)  # fmt: skip


# trec_eval's nicknames for sets of measures (measures.c, te_trec_measure_nicknames); relstring,
# a string, is left out of all_trec (asked alone it is refused with the reason), and under
# version 9 so are 10's additions, which 9.0.8's all_trec lacks
NICKNAMES = {
    "official": OFFICIAL,
    "set": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
        "set_recall", "set_relative_P", "set_map", "set_F",
    ),
    "all_trec": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
        "bpref", "recip_rank", "iprec_at_recall", "P", "recall", "unj", "rbp", "rbp_resid",
        "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult",
        "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P",
        "set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret",
    ),
}  # fmt: skip


def _nicknamed(names: Sequence[str], version: int) -> list[str]:
    """The names with trec_eval's nicknames (``all_trec``, ``official``, ``set``) spelled out,
    the measures ``version`` lacks left out of them."""
    spelled: list[str] = []
    for text in names:
        nickname = NICKNAMES.get(text.strip())
        if nickname is None:
            spelled.append(text)
        else:
            spelled += [name for name in nickname if MEASURES[name].since <= version]
    return spelled


def _split(text: str) -> tuple[Measure | None, str | None]:
    """A measure name and its parameter: ``P`` -> (P, None), ``P.5`` / ``P_5`` -> (P, "5")."""
    for name in sorted(MEASURES, key=len, reverse=True):
        if text == name:
            return MEASURES[name], None
        if text.startswith(name) and text[len(name)] in "._" and len(text) > len(name) + 1:
            return MEASURES[name], text[len(name) + 1 :]
    return None, None


# The evaluate requests a printed line reads, and how its value comes from theirs (per query,
# in that order).
Recipe = tuple[tuple[str, ...], Callable[[Sequence[float]], float]]


def _numbers(text: str, parameter: str, whole: bool) -> list[float]:
    """A measure's comma-separated parameters, sorted: whole numbers (a cutoff, read as atol
    reads it: 23.4 is 23) or numbers of at least 0 (a level)."""
    values: set[float] = set()
    for part in parameter.split(","):
        pattern = r"\d+(\.\d*)?" if whole else r"\d+\.?\d*|\.\d+"
        if not re.fullmatch(pattern, part) or (whole and int(part.split(".")[0]) < 1):
            raise SqlmetricsError(
                f"{text!r}: {part!r} is not "
                + ("a cutoff of at least 1, like P.5,10" if whole else "a number, like .10,.25")
            )
        values.add(int(part.split(".")[0]) if whole else float(part))
    return sorted(values)


def _parameterized(text: str, measure: Measure, parameter: str) -> list[tuple[str, str]]:
    """The lines of a measure given parameters trec_eval's -m takes."""
    if measure.cutoffs:
        cuts = _numbers(text, parameter, whole=True)
        return [(measure.name, f"{measure.name}_{k:.0f}") for k in cuts]
    if measure.levels:
        levels = _numbers(text, parameter, whole=False)
        return [(measure.name, f"{measure.name}_{x:3.2f}") for x in levels]
    if measure.name == "11pt_avg":
        _numbers(text, parameter, whole=False)
        return [(measure.name, f"11pt_avg_{parameter}")]
    if measure.name == "utility":
        parts = parameter.split(",")
        if len(parts) != 4 or not all(re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)", p) for p in parts):
            raise SqlmetricsError(
                f"{text!r}: utility takes four coefficients, like utility.1,-1,0,0 (relevant "
                "retrieved, other retrieved, relevant not retrieved, other not retrieved)"
            )
        return [(measure.name, f"utility_{parameter}")]
    if measure.name in ("rbp", "rbp_resid"):
        match = re.fullmatch(r"p=(\d*\.?\d+)", parameter)
        if match is None or not float(match.group(1)) < 1:
            raise SqlmetricsError(f"{text!r}: {measure.name} takes p=x, 0 <= x < 1, like rbp.p=0.8")
        return [(measure.name, f"{measure.name}_p={match.group(1)}")]
    if "=" in parameter and measure.name in GAIN_MEASURES:
        parse_gains(text, parameter, separator="=")  # refused here when not rel=gain pairs
        return [(measure.name, f"{measure.name}_{parameter}")]
    from sqlmetrics.catalog.metrics import parse_request

    parse_request(text)  # the reason it is unknown or malformed, as everywhere
    raise SqlmetricsError(f"{text!r}: {measure.name} takes no parameter")


def recipe(name: str, label: str, num_docs: int = 0) -> Recipe | None:
    """How a parameterized line is computed (None: the label is itself an evaluate request);
    ``num_docs``: trec_eval -N, the documents in the collection (utility's fourth term)."""
    if name == "11pt_avg" and label != name:
        levels = label.removeprefix("11pt_avg_").split(",")
        requests = tuple(f"iprec_at_recall@{float(x)!r}" for x in levels)
        return requests, lambda values: sum(values) / len(values)
    if name == "utility" and label != name:
        a, b, c, d = (float(x) for x in label.removeprefix("utility_").split(","))

        def utility(values: Sequence[float]) -> float:
            hits, listed, relevant = values
            if not listed:  # a query without a run (-c): trec_eval's 0
                return 0.0
            # m_utility.c: the non-relevant documents not retrieved, of -N's collection
            return (
                a * hits
                + b * (listed - hits)
                + c * (relevant - hits)
                + d * (num_docs + hits - listed - relevant)
            )

        return ("num_rel_ret", "num_ret", "num_rel"), utility
    if name in ("rbp", "rbp_resid") and label != name:
        return (f"{name}@{label.split('=', 1)[1]}",), lambda values: values[0]
    if name in GAIN_MEASURES and label != name:
        gains = f"(gains={written(parse_gains(label, label.removeprefix(f'{name}_'), '='))})"
        if name == "Rndcg":
            return (f"rndcg{gains}", f"ideal_dcg{gains}", "num_rel"), _rndcg
        return (f"{GAIN_MEASURES[name]}{gains}",), lambda values: values[0]
    return None


def _rndcg(values: Sequence[float]) -> float:
    """Rndcg of custom gains: m_Rndcg.c divides 0 points by 0 (nan, printed -nan) for a query
    with something relevant but no positive gain (an ideal DCG of 0)."""
    value, ideal, relevant = values
    return math.nan if relevant > 0 and ideal == 0 else value


def expand_measures(names: Sequence[str] | None, version: int = 10) -> list[tuple[str, str]]:
    """(measure, printed name) pairs in trec_eval's order: ``P`` is every default cutoff,
    ``P.5,7,3`` / ``P_5`` those, ``iprec_at_recall..1,.25`` those levels (printed 0.10),
    ``11pt_avg..25,.75``, ``utility.2,-1,0,0``, ``rbp.p=0.8`` and ``ndcg.1=3,2=9`` one line
    each, as trec_eval prints them; as in trec_eval, the first ``name.parameters`` of a
    measure is the one it reads (``P.5 P.10`` is P_5, ``ndcg ndcg.1=3`` ndcg_1=3); a printed
    name (``P_10``) adds its line. A measure of trec_eval 10 is refused under ``version`` 9.
    trec_eval's nicknames ``all_trec`` (without relstring), ``official`` and ``set`` name
    their measures."""
    defaults: dict[str, list[tuple[str, str]]] = {}  # a measure named without parameters
    dotted: dict[str, list[tuple[str, str]]] = {}  # its first name.parameters
    printed: list[tuple[str, str]] = []  # printed names: P_10
    for text in _nicknamed(OFFICIAL if names is None else names, version):
        text = text.strip()
        measure, parameter = _measure(text, version)
        if parameter is None:
            defaults[measure.name] = _defaults(measure)
        elif text[len(measure.name)] == "." and measure.name not in dotted:
            dotted[measure.name] = _parameterized(text, measure, parameter)
        elif text[len(measure.name)] == ".":
            _parameterized(text, measure, parameter)  # refused when malformed, else unread
        else:
            printed += _parameterized(text, measure, parameter)
    wanted = [*(pair for name, lines in (defaults | dotted).items() for pair in lines), *printed]
    order = list(MEASURES)
    return sorted(dict.fromkeys(wanted), key=lambda pair: order.index(pair[0]))


def _measure(text: str, version: int) -> tuple[Measure, str | None]:
    """The measure a -m names and its parameter, refused when unknown or not of ``version``."""
    from sqlmetrics.catalog.metrics import parse_request

    measure, parameter = _split(text)
    if measure is None:
        parse_request(text)  # the reason it is unknown or malformed, as everywhere
        raise SqlmetricsError(
            f"{text!r} is not a trec_eval measure of --format trec; it reports "
            f"{', '.join(MEASURES)} (cut measures as P or P_5)"
        )
    if measure.since > version:
        raise SqlmetricsError(
            f"{text!r} is a measure of trec_eval 10.0, not of 9.0.8: drop --trec-version 9 "
            "(version=9) to report it"
        )
    return measure, parameter


def _defaults(measure: Measure) -> list[tuple[str, str]]:
    """The lines of a measure named without parameters: its default cutoffs or levels."""
    if measure.cutoffs:
        return [(measure.name, f"{measure.name}_{k}") for k in measure.cutoffs]
    if measure.levels:
        return [(measure.name, f"{measure.name}_{x:3.2f}") for x in measure.levels]
    return [(measure.name, measure.name)]
