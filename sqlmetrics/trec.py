"""TREC files in, trec_eval's report out.

The files are read by ``sqlmetrics.io.trec_reader`` (as trec_eval 10 reads them, once per
call). A file is never guessed to be TREC: ``read_run``/``read_qrels`` (CLI
``--input-format trec``) say so.

``trec_eval()`` reproduces trec_eval 9's report (``measure<TAB>qid<TAB>value``) from the
per-query values of ``evaluate(profile="trec_eval")`` over trec_eval's own population:
``population="judged"`` (the queries of the run with any judgement, a query judged with
nothing relevant scoring 0) or, for ``-c``, ``"all_judged"`` (every query of the qrels, those
without a run as 0). It adds the summaries: num_* summed, gm_* geometric, num_q.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.io.trec_lines import QRELS_LAYOUT, RUN_LAYOUT
from sqlmetrics.io.trec_reader import (
    TrecFile,
    load,
    looks_like,
    read_qrels,
    read_run,
    relation,
)
from sqlmetrics.trec_measures import MEASURES, MIN_GEO_MEAN, Recipe, expand_measures, recipe

if TYPE_CHECKING:
    import pandas as pd

# --- trec_eval's report ------------------------------------------------------------------------


def _queries(trec: TrecFile) -> dict[str, int]:
    """Each query of the file and its number of lines (a run's: num_ret, after -M; a query of
    the qrels counts with only negative rels, as trec_eval counts it), as the reader counted
    them."""
    if trec.parsed is None:
        raise SqlmetricsError(f"TREC {trec.kind} file {trec.path!r} was not read (load it)")
    most = trec.max_per_query
    return {
        qid: lines if most is None else min(lines, most)
        for qid, lines in trec.parsed.queries.items()
    }


def _per_query(
    run: TrecFile,
    qrels: TrecFile,
    labels: list[str],
    threshold: float,
    population: str,
    profile: str,
) -> dict[str, dict[str, float]]:
    """{label: {qid: value}} from evaluate's query under the trec_eval profile, for the
    queries of ``population`` ("judged", or "all_judged" for -c)."""
    from sqlmetrics.engines.duckdb import DuckDBEngine
    from sqlmetrics.options import EvaluateOptions, filled
    from sqlmetrics.run import Bound, bound_call

    def values(bound: Bound) -> tuple[list[str], list[tuple[Any, ...]]]:
        """The query without evaluate's diagnostics: the report prints none, and the reader
        checked every row."""
        engine = bound.engine
        if not isinstance(engine, DuckDBEngine):  # bound_call refuses TREC files elsewhere
            raise SqlmetricsError(f"TREC files are read by DuckDB, not {engine.name}")
        # the one refusal of evaluate's that the reader leaves: qrels of negative rels only
        judged = exp.select(exp.Literal.number(1)).from_(bound.inputs.interactions.copy())
        if not engine.fetch(judged.limit(1).sql("duckdb"))[1]:
            raise SqlmetricsError("interactions: no rows to evaluate; check the file or filter")
        return engine.metrics_only(bound.requests, bound.inputs, bound.options, per_user=True)

    options = {"profile": profile, "threshold": threshold, "population": population}
    given = filled(EvaluateOptions, {**options, "per_user": True}, "evaluate")
    (names, rows), _ = bound_call(run, qrels, labels, given, values)
    columns = dict(zip(names, zip(*rows, strict=True), strict=True)) if rows else {}
    users = [str(user) for user in columns.get("user_id", ())]
    return {
        # a NULL (None, or NaN from evaluate's passes) is a query the measure has no value for
        label: {
            user: float(value)
            for user, value in zip(users, columns.get(label, ()), strict=True)
            if value is not None and value == value
        }
        for label in labels
    }


VERSIONS = {10: "trec_eval", 9: "trec_eval_9"}  # trec_eval's version -> its profile


@dataclass(frozen=True)
class _Setting:
    """What the report computes with: trec_eval's options."""

    run: TrecFile
    qrels: TrecFile
    complete: bool
    level: int
    version: int
    num_docs: int = 0  # trec_eval -N

    @property
    def population(self) -> str:
        return "all_judged" if self.complete else "judged"

    def per_query(self, labels: list[str], threshold: float) -> dict[str, dict[str, float]]:
        # ideal_dcg of custom gains (the Rndcg recipe's test for no positive gain) is 10's
        # measure, the same number in 9.0.8's arithmetic
        version = 10 if any(label.startswith("ideal_dcg(gains=") for label in labels) else None
        return _per_query(
            self.run,
            self.qrels,
            labels,
            threshold,
            self.population,
            VERSIONS[version or self.version],
        )


def _setting(
    run: TrecFile | str | os.PathLike[str],
    qrels: TrecFile | str | os.PathLike[str],
    options: tuple[bool, int | None, int, int, int],
) -> _Setting:
    """The files (parsed once: every evaluate of the report reads the same tables) and the
    options, refused when they are not trec_eval's."""
    complete, max_per_query, level, version, num_docs = options
    if isinstance(level, bool) or not isinstance(level, int) or level < 1:
        # -l 0 would make rel 0 relevant, a threshold of -1, which evaluate refuses
        raise SqlmetricsError(
            f"level must be a whole number of at least 1 (trec_eval -l), not {level!r}"
        )
    if isinstance(num_docs, bool) or not isinstance(num_docs, int) or num_docs < 0:
        raise SqlmetricsError(
            f"num_docs must be a whole number of at least 0 (trec_eval -N), not {num_docs!r}"
        )
    if isinstance(version, bool) or version not in VERSIONS:
        raise SqlmetricsError(
            f"version must be 10 (trec_eval 10.0) or 9 (trec_eval 9.0.8), not {version!r}"
        )
    run_file = run if isinstance(run, TrecFile) else read_run(run, max_per_query=max_per_query)
    if max_per_query is not None and run_file.max_per_query != max_per_query:
        run_file = read_run(run_file.path, max_per_query=max_per_query)
    qrels_file = qrels if isinstance(qrels, TrecFile) else read_qrels(qrels)
    if run_file.kind != "run" or qrels_file.kind != "qrels":
        raise SqlmetricsError("trec_eval takes a run (read_run) and qrels (read_qrels), in order")
    # trec_eval 9 keeps scores as 32-bit floats: scores equal as floats tie
    run_file = dataclasses.replace(run_file, single_precision=version == 9)
    run_file, qrels_file = (load(_read_as(file, version)) for file in (run_file, qrels_file))
    if all(file.parsed is not None and file.parsed.numeric_qids for file in (run_file, qrels_file)):
        # both files' qids are numbers written one way: equal as numbers is equal as text
        run_file, qrels_file = (
            dataclasses.replace(file, numeric_qids=True) for file in (run_file, qrels_file)
        )
    return _Setting(run_file, qrels_file, complete, level, version, num_docs)


def _read_as(trec: TrecFile, version: int) -> TrecFile:
    """The file read by ``version``'s rules (its comments), parsed again if it was not."""
    if trec.version == version:
        return trec
    return dataclasses.replace(trec, version=version, parsed=None)


def _values(setting: _Setting, wanted: list[tuple[str, str]]) -> dict[str, dict[str, float]]:
    """Every wanted line's per-query values, from evaluate (a parameterized line from the
    requests its recipe names)."""
    recipes = {
        label: recipe(name, label, setting.num_docs) or ((label,), _first) for name, label in wanted
    }
    values: dict[str, dict[str, float]] = {}
    for (threshold, _), labels in _by_threshold(setting, wanted, recipes).items():
        if "set_F" in labels:  # recomputed below from its counts, in trec_eval's arithmetic
            labels += SET_F_COUNTS
        values |= setting.per_query(list(dict.fromkeys(labels)), threshold)
    if "set_F" in values:
        values["set_F"] = {qid: _set_f(values, qid) for qid in values["set_F"]}
    for name, label in wanted:
        requests, combine = recipes[label]
        if name not in SPECIAL and requests != (label,):
            queries = set().union(*(values[request] for request in requests))
            values[label] = {
                qid: combine([values[request].get(qid, 0.0) for request in requests])
                for qid in queries
            }
    _guard(setting, wanted, values)
    return values


def _by_threshold(
    setting: _Setting, wanted: list[tuple[str, str]], recipes: dict[str, Recipe]
) -> dict[tuple[float, str], list[str]]:
    """The requests of each threshold: the graded measures read every positive rel
    (threshold 0), the others rel >= level; one evaluate (one query) per threshold, so one for
    the whole report at -l 1. Lines of custom gains (ndcg.1=3) go with the others of their
    gains: an evaluate computes one mapping's ideal order."""
    by_threshold: dict[tuple[float, str], list[str]] = {}
    for name, label in wanted:
        if name not in SPECIAL:
            threshold = 0.0 if MEASURES[name].graded else setting.level - 1.0
            requests = recipes[label][0]
            gains = "".join(request for request in requests if "(gains=" in request)
            by_threshold.setdefault((threshold, gains), []).extend(requests)
    return by_threshold


def _guard(
    setting: _Setting, wanted: list[tuple[str, str]], values: dict[str, dict[str, float]]
) -> None:
    """Rndcg is 0 for a query without a rel >= level, whatever its gains say."""
    guarded = [label for name, label in wanted if MEASURES[name].needs_relevant]
    if not guarded or setting.level <= 1:
        return
    relevant = setting.per_query(["num_rel"], setting.level - 1.0)
    for label in guarded:
        values[label] = {
            qid: value if relevant["num_rel"].get(qid, 0.0) > 0 else 0.0
            for qid, value in values[label].items()
        }


def _first(values: Sequence[float]) -> float:
    return values[0]


SPECIAL = {"runid", "num_q"}
SET_F_COUNTS = ("num_rel_ret", "num_ret", "num_rel")


def _set_f(values: dict[str, dict[str, float]], qid: str) -> float:
    """set_F as m_set_F.c computes it, (1 + 1) P R / (1 P + R) in doubles: 2H / (n + |R|) is
    the same number, but its last bit differs, and with it a value like 42/64 = 0.65625
    prints 0.6563 in trec_eval and 0.6562 from the exact quotient."""
    hits = values["num_rel_ret"].get(qid, 0.0)
    if not hits:
        return 0.0
    precision = hits / values["num_ret"][qid]
    recall = hits / values["num_rel"][qid]
    return (1.0 + 1.0) * precision * recall / (1.0 * precision + recall)


def trec_eval(
    run: TrecFile | str | os.PathLike[str],
    qrels: TrecFile | str | os.PathLike[str],
    measures: Sequence[str] | None = None,
    *,
    per_query: bool = False,
    complete: bool = False,
    max_per_query: int | None = None,
    level: int = 1,
    version: int = 10,
    num_docs: int = 0,
) -> pd.DataFrame:
    """trec_eval's report on a run and qrels, as rows (measure, qid, value), 'all' last.

    ``measures``: trec_eval names (``P`` for every default cutoff, ``P_5``, ``map``...),
    trec_eval's official set when None. ``per_query``: trec_eval -q, the
    per-query rows too. ``complete``: -c, the mean over every query of the qrels (a query
    without a run scores 0) instead of the queries of the run that have judgements.
    ``max_per_query``: -M n. ``level``: -l n, relevant means rel >= n (threshold n - 1);
    ndcg and ndcg_cut read every positive rel as its gain whatever the level, as trec_eval.
    ``version``: 10 (trec_eval 10.0) or 9 (9.0.8: the recall cutoffs of iprec_at_recall
    and 11pt_avg, scores as 32-bit floats, no -c -q line for a query without a run).
    ``num_docs``: -N, the documents in the collection, which ``utility.a,b,c,d``'s d weighs
    (the non-relevant documents not retrieved: num_docs - retrieved - relevant + relevant
    retrieved); 0 as trec_eval's default.
    """
    import pandas as pd

    report = trec_report(
        run,
        qrels,
        measures,
        per_query=per_query,
        complete=complete,
        max_per_query=max_per_query,
        level=level,
        version=version,
        num_docs=num_docs,
    )
    # object: integers stay integers beside the floats (trec_eval prints them as %ld)
    frame = pd.DataFrame(report.lines, columns=["measure", "qid", "value"], dtype=object)
    if report.notes is not None:
        frame.attrs["notes"] = report.notes
    return frame


@dataclass(frozen=True)
class TrecReport:
    """trec_eval's report: its lines (measure, qid, value), 'all' last, and the qrels' notes
    (None for qrels not parsed)."""

    lines: list[tuple[str, str, object]]
    notes: list[str] | None

    def text(self) -> str:
        """The lines as trec_eval prints them (trec_text)."""
        return _lines_text(self.lines)


def trec_report(
    run: TrecFile | str | os.PathLike[str],
    qrels: TrecFile | str | os.PathLike[str],
    measures: Sequence[str] | None = None,
    *,
    per_query: bool = False,
    complete: bool = False,
    max_per_query: int | None = None,
    level: int = 1,
    version: int = 10,
    num_docs: int = 0,
) -> TrecReport:
    """trec_eval()'s report as its lines, without pandas (the command line's, which prints
    them: importing pandas costs a third of a second)."""
    setting = _setting(run, qrels, (complete, max_per_query, level, version, num_docs))
    wanted = expand_measures(measures, version)
    judged = set(_queries(setting.qrels))
    retrieved = _queries(setting.run)
    counted = judged if complete else judged & set(retrieved)
    if not counted:
        raise SqlmetricsError(
            "no query of the run has judgements in the qrels (trec_eval: 'No queries with both "
            "results and relevance info'); check that both files use the same qids"
        )
    values = _values(setting, wanted)

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
        # -c -q: trec_eval 10 prints every query it averages over, 9 those of the run only
        printed = counted if version == 10 else counted & set(retrieved)
        for qid in sorted(printed):
            for name, label in wanted:
                if name in SPECIAL or MEASURES[name].geometric:
                    continue
                number = value(name, label, qid)
                rows.append((label, qid, int(number) if MEASURES[name].summed else number))
    ordered = sorted(counted)
    for name, label in wanted:
        rows.append((label, "all", _summary(setting, name, label, ordered, value)))
    parsed = setting.qrels.parsed
    return TrecReport(rows, parsed.notes(setting.qrels.path) if parsed is not None else None)


def _summary(
    setting: _Setting,
    name: str,
    label: str,
    counted: Sequence[str],
    value: Callable[[str, str, str], float],
) -> object:
    """The 'all' line's value: runid, num_q, sums, geometric or arithmetic means, over the
    ``counted`` queries in qid order."""
    measure = MEASURES[name]
    if name == "runid":
        return setting.run.parsed.runid if setting.run.parsed is not None else ""
    if name == "num_q":
        return len(counted)
    if name == "num_rel" and setting.complete and setting.level > 1:
        # m_num_rel.c under -c: every qrels line with rel > 0, whatever -l says (at -l 1 the
        # per-query values below count those already)
        every = setting.per_query([label], 0.0)[label]
        return int(sum(every.values()))
    # summed one query after another in qid order, as trec_eval accumulates (a correctly
    # rounded sum can differ in the last bit, and so in the fourth decimal of a half)
    total = 0.0
    for qid in counted:
        number = value(name, label, qid)
        total += math.log(number) if measure.geometric else number
    if measure.geometric:
        return math.exp(total / len(counted))
    return int(total) if measure.summed else total / len(counted)


def trec_text(frame: pd.DataFrame) -> str:
    """The rows as trec_eval prints them: ``%-22s\\t%s\\t%6.4f`` (integers as %d, runid as text)."""
    return _lines_text(frame.itertuples(index=False))


def _lines_text(rows: Iterable[tuple[Any, ...]]) -> str:
    lines = []
    for measure, qid, value in rows:
        shown = f"{value:6.4f}" if isinstance(value, float) else str(value)
        if isinstance(value, float) and math.isnan(value):
            shown = "  -nan"  # glibc's %6.4f of 0.0 / 0, whose sign bit x86 sets
        lines.append(f"{measure:<22}\t{qid}\t{shown}\n")
    return "".join(lines)


# --- every trec_eval measure -------------------------------------------------------------------

# trec_eval 10's measures of -m all_trec (measures.c, trec_names) in its order, each as
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
    (
        "relstring",
        "relstring",
        None,
        "not supported: a string of relevance values (`-m all_trec` leaves it out)",
    ),
    ("recall", "recall_10", "recall", "@k"),
    ("unj", "unj_10", "unj", "@k (trec_eval 10): not judged in the first k, over k"),
    (
        "rbp",
        "rbp",
        "rbp_scaled",
        "trec_eval 10; p = 0.9 (`rbp.p=0.8` for p = 0.8); gain rel / the query's largest "
        "rel when above 1 (binary qrels: `rbp`)",
    ),
    ("rbp_resid", "rbp_resid", "rbp_resid", "trec_eval 10; 0 when every listed item is judged"),
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
    (
        "ndcg",
        "ndcg",
        "ndcg",
        "gain = rel; under -l the report keeps every positive rel; `ndcg.1=3,2=9` (custom "
        "gains): `ndcg_gains`",
    ),
    ("relative_P", "relative_P_10", "recall_capped", "@k"),
    ("Rprec_mult", "Rprec_mult_0.20", "rprec_mult", "@x: the multiple of R"),
    ("success", "success_10", "hit_rate", "@k"),
    ("map_cut", "map_cut_10", "map", "@k"),
    ("ndcg_cut", "ndcg_cut_10", "ndcg", "@k"),
    (
        "ndcg_rel",
        "ndcg_rel",
        "ndcg_rel",
        "whole list; gain = rel, as ndcg; `ndcg_rel.1=3,2=9` (custom gains): `ndcg_rel_gains`",
    ),
    (
        "Rndcg",
        "Rndcg",
        "rndcg",
        "whole list; gain = rel, 0 without a rel >= -l; `Rndcg.1=3,2=9` (custom gains): "
        "`rndcg_gains` (-nan for a query with no positive gain, as trec_eval)",
    ),
    ("binG", "binG", "bin_g", "whole list; relevant means rel >= -l"),
    (
        "G",
        "G",
        "normalized_gain",
        "whole list; gain = rel, as ndcg; `G.1=3,2=9` (custom gains): `normalized_gain_gains`",
    ),
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
    (
        "dcg",
        "dcg",
        "dcg",
        "trec_eval 10, not in all_trec; whole list, gain = rel; `dcg.1=3`: `dcg_gains`",
    ),
    (
        "ideal_dcg",
        "ideal_dcg",
        "ideal_dcg",
        "trec_eval 10, not in all_trec; gain = rel; `ideal_dcg.1=3`: `ideal_dcg_gains`",
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


__all__ = [
    "QRELS_LAYOUT",
    "RUN_LAYOUT",
    "TrecFile",
    "load",
    "looks_like",
    "read_qrels",
    "read_run",
    "relation",
    "trec_eval",
    "trec_text",
]
