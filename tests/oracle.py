"""Independent pure-Python oracle for the ranking metrics of METRICS.md.

Why it exists: the SQL engine is checked against something that shares none of its code or
structure. Everything here is plain loops over small lists; speed is not a goal, readability is.
Tie averaging (``ties="average"``) is computed by brute force over the orderings of each tie group,
so it does not rely on any closed form the SQL may use.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from sqlmetrics.catalog.metrics import Metric
from sqlmetrics.catalog.metrics import metrics as catalogue


class NoFormula(ValueError):
    """The oracle has no formula for this metric: a metric file is newer than its oracle. The
    golden tests then skip the comparison for it, naming it (CONTRIBUTING.md)."""

    def __init__(self, metric: str) -> None:
        super().__init__(
            f"tests/oracle.py has no formula for {metric!r}: its fixture's values are checked "
            "against the SQL only; write its formula here to check them independently"
        )


# The ranking metrics this oracle computes, each by a formula of its own: _trec's trec_eval
# measures (issue 22, written from trec_eval's descriptions and loops), and _num_den's,
# _judgement_value's and _infap's.
TREC_METRICS = frozenset(
    {"num_ret", "num_rel", "num_rel_ret", "gm_map", "iprec_11pt_avg", "iprec_11pt_avg_trec9"}
    | {
        "iprec_at_recall",
        "iprec_at_recall_trec9",
        "rprec_mult",
        "bpref",
        "gm_bpref",
        "set_map",
        "utility",
    }
    | {"num_nonrel_judged_ret", "bin_g", "ndcg_rel", "normalized_gain", "rndcg", "infap"}
    | {"rbp", "rbp_resid", "rbp_graded", "rbp_scaled"}
)
ALL_METRICS = TREC_METRICS | frozenset(
    {"hits", "hit_rate", "precision", "recall", "f1", "r_precision", "mrr", "map", "cg", "dcg"}
    | {"ndcg", "dcg_exp", "ndcg_exp", "ndcg_scored", "ndcg_exp_scored", "recall_scored"}
    | {"r_precision_scored", "ndcg_ideal_k", "precision_listed", "recall_capped"}
    | {"ndcg_clipped", "map_min", "map_hits", "map_listed", "micro_hit_ratio", "micro_mrr"}
    | {"ideal_dcg", "unj", "judged_share", "err", "nerr", "q_measure"}
    | {"ndcg_gains", "dcg_gains", "ideal_dcg_gains"}
    | {"ndcg_rel_gains", "normalized_gain_gains", "rndcg_gains"}
)


def _declared(declares: Callable[[Metric], bool]) -> frozenset[str]:
    """The metrics whose header (sql/<name>.sql) declares a property. Which cutoffs and tie
    policies a metric takes, which rows it reads and how its users' values aggregate are
    declared there, so the oracle reads them instead of keeping copies; its values it computes
    itself."""
    return frozenset(name for name, metric in catalogue().items() if declares(metric))


# Metrics whose expectation over tie orderings is supported (ties="average").
AVERAGE_CAPABLE = ALL_METRICS & _declared(lambda metric: metric.ties_average)
# trec_eval's measures over the judged non-relevant items too (every interaction is a judgement).
JUDGEMENT_METRICS = _declared(lambda metric: metric.reads == "judgements")
# trec_eval's infAP: the pool's unjudged documents (a negative relevance) too (m_infap.c).
POOL_METRICS = _declared(lambda metric: metric.reads == "pool")
INFAP_EPSILON = 0.00001  # trec_eval.h
# Metrics whose "k" is a level (a float, the @x of iprec_at_recall@0.1), and its default.
LEVEL_METRICS = {
    name: metric.default_level for name, metric in catalogue().items() if metric.takes_level
}
SUMMED_METRICS = _declared(lambda metric: metric.summed)  # aggregated as a sum
# aggregated as exp of the mean log
GEOMETRIC_METRICS = _declared(lambda metric: metric.exponential)
# Metrics without a cutoff, and metrics that need one.
WITHOUT_CUTOFF = ALL_METRICS & _declared(lambda metric: not metric.takes_cutoff)
CUTOFF_REQUIRED = ALL_METRICS & _declared(lambda metric: metric.requires_cutoff)
# Micro metrics aggregate as sum of numerators / sum of denominators.
MICRO_METRICS = ALL_METRICS & _declared(lambda metric: metric.micro)
TIE_POLICIES = ("id", "id_text", "optimistic", "pessimistic", "average")
# all: the users with a relevant item; common: those with a list too. judged: the users with a
# list and any interaction (trec_eval's default), all_judged: with any interaction (trec_eval -c);
# a user judged with nothing relevant has |R_u| = 0: every division by it is 0 here.
POPULATIONS = ("all", "common", "judged", "all_judged")

# Above this many joint orderings of a user's tie groups, the expectation is taken group by group
# (valid because every average-capable metric is affine in per-position terms). A developer's run
# takes every user group by group (each group's orderings still enumerated), CI
# (SQLMETRICS_FULL_MATRIX=1) the joint orderings up to this many, most of the oracle's cost in
# test_crosscheck's tied cells: test_oracle_average_decomposition_equals_full_enumeration holds
# the two ways equal for every average-capable metric in every run.
_MAX_JOINT_ORDERINGS = 5000 if os.environ.get("SQLMETRICS_FULL_MATRIX", "").strip() == "1" else 0
_MAX_TIE_GROUP = 7


@dataclass(frozen=True)
class UserList:
    """One user's ranked list, reduced to what the metrics need.

    ``rels[i]`` is the gain-relevance of the item at ``positions[i]`` (0 when not relevant);
    ``ideal`` holds the user's relevant relevances from the interactions, sorted descending.
    """

    positions: tuple[int, ...]
    rels: tuple[float, ...]
    ideal: tuple[float, ...]


# ----------------------------------------------------------------------------------------------
# Input preparation
# ----------------------------------------------------------------------------------------------


def _truth_by_user(interactions: Iterable[dict], threshold: float) -> dict[object, dict]:
    """Map user -> {item: relevance} of relevant items, dedup keeping the max relevance."""
    best: dict[object, dict[object, float]] = {}
    for row in interactions:
        rel = float(row.get("relevance", 1))
        items = best.setdefault(row["user_id"], {})
        item = row["item_id"]
        if item not in items or rel > items[item]:
            items[item] = rel
    return {
        user: {item: rel for item, rel in items.items() if rel > threshold}
        for user, items in best.items()
    }


def _judged_by_user(interactions: Iterable[dict], pool: bool = False) -> dict[object, dict]:
    """Map user -> {item: relevance} of every interaction (each a judgement), max relevance;
    a negative relevance (in the pool, not judged: read only by infap) only with ``pool``."""
    best: dict[object, dict[object, float]] = {}
    for row in interactions:
        rel = float(row.get("relevance", 1))
        if rel < 0 and not pool:
            continue
        items = best.setdefault(row["user_id"], {})
        items[row["item_id"]] = max(rel, items.get(row["item_id"], rel))
    return best


def _recs_by_user(recommendations: Iterable[dict]) -> dict[object, list[dict]]:
    out: dict[object, list[dict]] = {}
    for row in recommendations:
        out.setdefault(row["user_id"], []).append(row)
    return out


def _score_key(row: dict) -> tuple[int, float]:
    """Sort key for 'score DESC, NULL last' used with reverse=True: NULL sorts lowest."""
    score = row.get("score")
    if score is None or (isinstance(score, float) and math.isnan(score)):
        return (0, 0.0)
    return (1, float(score))


def _tie_groups_by_score(rows: list[dict]) -> list[list[dict]]:
    """Split rows into groups of equal score (NULL scores form one group), best group first."""
    groups: dict[tuple[int, float], list[dict]] = {}
    for row in rows:
        groups.setdefault(_score_key(row), []).append(row)
    return [groups[key] for key in sorted(groups, reverse=True)]


def _order_rows(rows: list[dict], relevant: dict, ties: str) -> list[list[dict]]:
    """Order one user's rows into tie groups, each group ordered by the policy's in-group key.

    For ``ties="average"`` the in-group order returned is the id order; the caller permutes it.
    """
    ordered_groups = []
    for group in _tie_groups_by_score(rows):
        # item_id DESC first (stable sorts), then the relevance key on top for the policies.
        if ties == "id_text":  # trec_eval's strcmp: the ids' UTF-8 bytes, descending
            group = sorted(group, key=lambda r: str(r["item_id"]).encode(), reverse=True)
        else:
            group = sorted(group, key=lambda r: r["item_id"], reverse=True)
        if ties == "optimistic":
            group = sorted(group, key=lambda r: relevant.get(r["item_id"], 0.0), reverse=True)
        elif ties == "pessimistic":
            group = sorted(group, key=lambda r: relevant.get(r["item_id"], 0.0))
        ordered_groups.append(group)
    return ordered_groups


# ----------------------------------------------------------------------------------------------
# Per-user metric values on a fixed ordering
# ----------------------------------------------------------------------------------------------


def _log_discount(position: int) -> float:
    return math.log2(position + 1)


def _clipped_discount(position: int) -> float:
    """log2(max(i, 2)): LensKit's default, positions 1 and 2 undiscounted."""
    return math.log2(max(position, 2))


def _exp_gain(rel: float) -> float:
    return 2.0**rel - 1.0


def _dcg(pairs: Sequence[tuple[int, float]], gain: Callable[[float], float]) -> float:
    return sum(gain(rel) / _log_discount(pos) for pos, rel in pairs if rel > 0)


def _ideal_dcg(rels: Sequence[float], cut: int | None, gain: Callable[[float], float]) -> float:
    best = sorted(rels, reverse=True)
    if cut is not None:
        best = best[:cut]
    return sum(gain(rel) / _log_discount(i) for i, rel in enumerate(best, start=1) if rel > 0)


def _linear(rel: float) -> float:
    return rel


def _ap_sum(top: Sequence[tuple[int, float]]) -> float:
    """Sum over hit positions of precision at that position (ranks as given). A position that
    several items share (a repeated rank read literally) is one position: its precision counts
    the hits at it and above, once, as RecTools' MAP sums its precisions per rank."""
    total = 0.0
    hits = 0
    for position in sorted({pos for pos, _ in top}):
        here = sum(1 for pos, rel in top if pos == position and rel > 0)
        if here:
            hits += here
            total += hits / position
    return total


def _num_den(metric: str, ul: UserList, k: int | None) -> tuple[float, float]:
    """Per-user value as (numerator, denominator); the value is num/den (0 when den is 0).

    Only the micro metrics need the split for aggregation; the other metrics return (value, 1).
    """
    pairs = list(zip(ul.positions, ul.rels, strict=True))
    top = [(pos, rel) for pos, rel in pairs if k is None or pos <= k]
    n_list = len(pairs)
    n_rel = len(ul.ideal)
    hits = sum(1 for _, rel in top if rel > 0)

    if metric == "ideal_dcg":
        return _ideal_dcg(list(ul.ideal), k, _linear), 1.0
    if metric.partition("/")[0] in ("err", "nerr"):
        return _cascade(metric, ul, k), 1.0
    if metric == "q_measure":
        return _q_measure(ul, k), 1.0
    if metric == "micro_hit_ratio":
        return float(hits), float(n_rel)
    if metric == "micro_mrr":
        return sum(1.0 / pos for pos, rel in top if rel > 0), float(n_rel)

    value: float
    if metric in TREC_METRICS:
        return _trec(metric, ul, k), 1.0
    if metric == "hits":
        value = float(hits)
    elif metric == "hit_rate":
        value = 1.0 if hits > 0 else 0.0
    elif metric in ("precision", "recall", "f1"):
        p_den = k if k is not None else n_list
        precision = hits / p_den if p_den > 0 else 0.0
        recall = hits / n_rel if n_rel else 0.0
        if metric == "precision":
            value = precision
        elif metric == "recall":
            value = recall
        else:
            both = precision + recall
            value = 0.0 if both == 0 else 2 * precision * recall / both
    elif metric == "precision_listed":
        den = min(k, n_list) if k is not None else n_list
        value = hits / den if den > 0 else 0.0
    elif metric == "recall_capped":
        den = min(n_rel, k if k is not None else n_list)
        value = hits / den if den > 0 else 0.0
    elif metric == "map_listed":
        den = min(n_rel, n_list, k if k is not None else n_list)
        value = _ap_sum(top) / den if den > 0 else 0.0
    elif metric == "ndcg_clipped":
        best = sorted(ul.ideal, reverse=True)[:k]
        ideal = sum(rel / _clipped_discount(i) for i, rel in enumerate(best, start=1))
        dcg = sum(rel / _clipped_discount(pos) for pos, rel in top if rel > 0)
        value = dcg / ideal if ideal > 0 else 0.0
    elif metric == "recall_scored":
        listed = sum(1 for _, rel in pairs if rel > 0)
        value = hits / listed if listed > 0 else 0.0
    elif metric == "r_precision":
        within = sum(1 for pos, rel in pairs if pos <= n_rel and rel > 0)
        value = within / n_rel if n_rel else 0.0
    elif metric == "r_precision_scored":
        listed = sum(1 for _, rel in pairs if rel > 0)
        within = sum(1 for pos, rel in pairs if pos <= listed and rel > 0)
        value = within / listed if listed > 0 else 0.0
    elif metric == "ndcg_ideal_k":
        assert k is not None
        binary = sum(1.0 / _log_discount(pos) for pos, rel in top if rel > 0)
        value = binary / sum(1.0 / _log_discount(i) for i in range(1, k + 1))
    elif metric == "mrr":
        first = min((pos for pos, rel in top if rel > 0), default=None)
        value = 0.0 if first is None else 1.0 / first
    elif metric == "map":
        value = _ap_sum(top) / n_rel if n_rel else 0.0
    elif metric == "map_min":
        den = min(n_rel, k if k is not None else n_list)
        value = _ap_sum(top) / den if den > 0 else 0.0
    elif metric == "map_hits":
        value = _ap_sum(top) / hits if hits > 0 else 0.0
    elif metric == "cg":
        value = sum(rel for _, rel in top)
    elif metric in ("dcg", "dcg_exp"):
        value = _dcg(top, _linear if metric == "dcg" else _exp_gain)
    elif metric in ("ndcg", "ndcg_exp"):
        gain = _linear if metric == "ndcg" else _exp_gain
        ideal = _ideal_dcg(ul.ideal, k, gain)
        value = _dcg(top, gain) / ideal if ideal > 0 else 0.0
    elif metric in ("ndcg_scored", "ndcg_exp_scored"):
        gain = _linear if metric == "ndcg_scored" else _exp_gain
        ideal = _ideal_dcg(ul.rels, k, gain)
        value = _dcg(top, gain) / ideal if ideal > 0 else 0.0
    else:  # pragma: no cover - guarded by _check_args
        raise ValueError(f"unknown metric {metric!r}")
    return value, 1.0


def _err(rels: Sequence[float], gmax: float) -> float:
    """Chapelle et al.'s cascade walked down the list: at each position the user stops with
    probability (2^min(g, gmax) - 1) / 2^gmax and scores 1 / position."""
    total, going_on = 0.0, 1.0
    for position, rel in enumerate(rels, start=1):
        stop = (2 ** min(rel, gmax) - 1) / 2**gmax if rel > 0 else 0.0
        total += going_on * stop / position
        going_on *= 1 - stop
    return total


def _cascade(metric: str, ul: UserList, k: int | None) -> float:
    """err or nerr at k; ``err/gmax=3`` or ``err/gmax=query`` (the user's largest relevance)
    for a gmax other than 4."""
    name, _, parameter = metric.partition("/")
    given = parameter.partition("=")[2] or "4"
    gmax = max(ul.ideal, default=0.0) if given == "query" else float(given)
    depth = max(ul.positions, default=0) if k is None else k
    listed = [0.0] * depth
    for position, rel in zip(ul.positions, ul.rels, strict=True):
        if position <= depth:
            listed[position - 1] = rel
    value = _err(listed, gmax)
    if name == "err":
        return value
    ideal = _err(list(ul.ideal)[:k], gmax)
    return value / ideal if ideal > 0 else 0.0


def _q_measure(ul: UserList, k: int | None) -> float:
    """Sakai's Q (beta 1) walked down the list: at each relevant item, the relevant items so
    far plus their gain, over the position plus the ideal list's gain there; the sum over
    min(|R_u|, k) (every relevant item without a cutoff)."""
    listed = sorted((pos, rel) for pos, rel in zip(ul.positions, ul.rels, strict=True))
    found, gain, total = 0, 0.0, 0.0
    for position, rel in listed:
        if k is not None and position > k:
            break
        gain += rel
        if rel > 0:
            found += 1
            total += (found + gain) / (position + sum(ul.ideal[:position]))
    counted = len(ul.ideal) if k is None else min(len(ul.ideal), k)
    return total / counted if counted else 0.0


def _interpolated(rels: Sequence[float], n_rel: int, level: float, nine: bool = False) -> float:
    """trec_eval's interpolated precision at a recall level, by its own walk: from the list's
    end backwards, keeping the best precision seen, read when the relevant item that brings
    the count down to the level's cutoff is passed: round(level * |R|) (trec_eval 10's
    lround, halves away from 0), or floor(level * |R| + 0.9) with ``nine`` (9.0.8)."""
    exact = level * n_rel
    cut = int(exact + 0.9) if nine else int(math.floor(exact) + (exact % 1 >= 0.5))
    retrieved = sum(1 for rel in rels if rel > 0)
    if cut > retrieved or not rels:
        return 0.0
    best = retrieved / len(rels)
    so_far = retrieved
    for i in range(len(rels), 0, -1):
        if so_far == 0:
            break
        best = max(best, so_far / i)
        if rels[i - 1] > 0:
            if so_far == max(cut, 1):
                return best
            so_far -= 1
    return best


def _trec(metric: str, ul: UserList, level: float | None) -> float:
    """The trec_eval measures, per user, over the whole list."""
    rels = [rel for _, rel in sorted(zip(ul.positions, ul.rels, strict=True))]
    n_rel = len(ul.ideal)
    hits = sum(1 for rel in rels if rel > 0)
    if metric == "num_ret":
        return float(len(rels))
    if metric == "num_rel":
        return float(n_rel)
    if metric == "num_rel_ret":
        return float(hits)
    if metric == "gm_map":  # per user max(AP, 1e-5); the aggregate is geometric
        found, total = 0, 0.0
        for i, rel in enumerate(rels, start=1):
            if rel > 0:
                found += 1
                total += found / i
        return max(total / n_rel if n_rel else 0.0, 1e-5)
    if metric in ("iprec_11pt_avg", "iprec_11pt_avg_trec9"):
        nine = metric.endswith("_trec9")
        return sum(_interpolated(rels, n_rel, i / 10, nine) for i in range(11)) / 11
    if metric == "set_map":  # m_set_map.c: set precision x set recall, 0 without a list
        return hits * hits / (len(rels) * n_rel) if rels and n_rel else 0.0
    if metric == "utility":  # m_utility.c, coefficients 1, -1, 0, 0 (its defaults)
        return 1.0 * hits - 1.0 * (len(rels) - hits) + 0.0 * (n_rel - hits)
    if metric == "bin_g":  # m_binG.c: 1 / log2(2 + non-relevant items above), over |R|
        found, total = 0, 0.0
        for i, rel in enumerate(rels, start=1):
            if rel > 0:
                found += 1
                total += 1 / math.log2(2 + (i - found))
        return total / n_rel if n_rel else 0.0
    if metric in ("ndcg_rel", "normalized_gain", "rndcg"):
        return _against_the_ideal(metric, rels, list(ul.ideal))
    x = LEVEL_METRICS[metric] if level is None else float(level)
    if metric == "rbp":  # (1 - p) sum over relevant positions of p^(i - 1), the whole list
        return (1 - x) * sum(x ** (i - 1) for i, rel in enumerate(rels, start=1) if rel > 0)
    if metric in ("rbp_graded", "rbp_scaled"):  # the grade as the gain (scaled: by the largest)
        graded = (1 - x) * sum(rel * x ** (i - 1) for i, rel in enumerate(rels, start=1) if rel > 0)
        return graded / max(max(ul.ideal, default=1.0), 1.0) if metric == "rbp_scaled" else graded
    if metric in ("iprec_at_recall", "iprec_at_recall_trec9"):
        return _interpolated(rels, n_rel, x, metric.endswith("_trec9"))
    if metric == "rprec_mult":  # precision at the first floor(x * |R| + 0.9) positions
        cut = int(x * n_rel + 0.9)
        return sum(1 for rel in rels[:cut] if rel > 0) / cut if cut else 0.0
    raise ValueError(f"unknown trec metric {metric!r}")


def _against_the_ideal(metric: str, rels: list[float], ideal: list[float]) -> float:
    """trec_eval's measures that walk the list beside its ideal order (gain = relevance):
    ndcg_rel (m_ndcg_rel.c), G (m_G.c) and Rndcg (m_Rndcg.c), from their loops."""
    n, n_rel = len(rels), len(ideal)
    if not n_rel:
        return 0.0
    depth = max(n, n_rel)
    listed = rels + [0.0] * (depth - n)
    best = ideal + [0.0] * (depth - n_rel)
    dcg, idcg = [0.0], [0.0]
    for i in range(1, depth + 1):
        dcg.append(dcg[-1] + listed[i - 1] / math.log2(i + 1))
        idcg.append(idcg[-1] + best[i - 1] / math.log2(i + 1))
    if metric == "ndcg_rel":  # each relevant item: ndcg where it is, or at the list's end
        found = [dcg[i] / idcg[min(i, n_rel)] for i in range(1, n + 1) if rels[i - 1] > 0]
        return (sum(found) + (n_rel - len(found)) * dcg[n] / idcg[n_rel]) / n_rel
    if metric == "normalized_gain":  # each position costs max(ideal gain, 1)
        cost, gained, total = 0.0, 0.0, 0.0
        for i in range(1, n + 1):
            cost += max(best[i - 1], 1.0)
            gained += rels[i - 1]
            if rels[i - 1] != 0:
                total += rels[i - 1] / math.log2(2 + cost - gained)
        return total / sum(ideal)
    # rndcg: ndcg at the end of each ideal gain level, and at n when n > |R| + 1
    ends = [b for b in range(1, n_rel + 1) if b == n_rel or ideal[b] != ideal[b - 1]]
    points = [dcg[min(b, n)] / idcg[b] for b in ends]
    if n > n_rel + 1:
        points.append(dcg[n] / idcg[n_rel])
    return sum(points) / len(points)


def _bpref(order: Sequence[object], judged: dict[object, float], threshold: float) -> float:
    """trec_eval's bpref (m_bpref.c) on one ranked list of item ids: walk the list, skip what is
    not judged; count the judged non-relevant seen so far; each relevant item scores 1 - min(seen,
    R) / min(N, R) (1 when none was seen), R relevant and N non-relevant judgements in all; the
    sum over R."""
    n_rel = sum(1 for rel in judged.values() if rel > threshold)
    n_nonrel = len(judged) - n_rel
    seen, total = 0, 0.0
    for item in order:
        if item not in judged:
            continue
        if judged[item] > threshold:
            total += 1.0 if seen == 0 else 1.0 - min(seen, n_rel) / min(n_nonrel, n_rel)
        else:
            seen += 1
    return total / n_rel if n_rel else 0.0


def _infap(order: Sequence[object], pool: dict[object, float], threshold: float) -> float:
    """trec_eval's infAP (m_infap.c) on one ranked list of item ids: walk the list at 0-based
    rank j; an item outside the pool is skipped (it only moves j), an unjudged one (negative)
    and a judged non-relevant one are counted; a relevant one scores 1 at j = 0, else 1/(j+1)
    + (j/(j+1)) ((rel - 1 + nonrel + unjudged)/j) (rel - 1 + e)/(rel - 1 + nonrel + 2e), rel
    counting itself; the sum over the relevant judgements."""
    n_rel = sum(1 for rel in pool.values() if rel > threshold)
    rel_so_far = nonrel_so_far = unjudged_so_far = 0
    total = 0.0
    for j, item in enumerate(order):
        if item not in pool:
            continue
        if pool[item] < 0:
            unjudged_so_far += 1
        elif pool[item] <= threshold:
            nonrel_so_far += 1
        else:
            rel_so_far += 1
            if j == 0:
                total += 1.0
            else:
                seen = rel_so_far - 1 + nonrel_so_far + unjudged_so_far
                total += 1.0 / (j + 1) + (j / (j + 1)) * (seen / j) * (
                    (rel_so_far - 1 + INFAP_EPSILON)
                    / (rel_so_far - 1 + nonrel_so_far + 2 * INFAP_EPSILON)
                )
    return total / n_rel if n_rel else 0.0


def _judged_share(order: Sequence[object], pool: dict[object, float], k: int | None) -> float:
    """ir_measures' Judged@k: the judged items (any interaction, a negative one too) among the
    first min(k, list length), over that number; 0 without a list."""
    top = list(order if k is None else order[:k])
    return sum(1 for item in top if item in pool) / len(top) if top else 0.0


def _judgement_value(
    metric: str,
    order: Sequence[object],
    judged: dict[object, float],
    threshold: float,
    k: float | None = None,
) -> tuple[float, float]:
    if metric == "unj":  # m_unjudged.c: unjudged in the first k, over k (the list without k)
        cut = len(order) if k is None else int(k)
        unjudged = sum(1 for item in order[:cut] if item not in judged)
        return (unjudged / cut if cut else 0.0), 1.0
    if metric == "rbp_resid":  # m_rbp_resid.c: p^n + (1 - p) x unjudged p^(i - 1); 0 if none
        p = LEVEL_METRICS[metric] if k is None else float(k)
        missing = [i for i, item in enumerate(order, start=1) if item not in judged]
        return (p ** len(order) + (1 - p) * sum(p ** (i - 1) for i in missing)) if missing else (
            0.0
        ), 1.0
    if metric.partition("/")[0] in GAIN_METRICS:
        return _custom_gains(metric, order, judged, threshold, k), 1.0
    if metric == "num_nonrel_judged_ret":  # the listed items judged at or below the threshold
        return float(sum(1 for item in order if item in judged and judged[item] <= threshold)), 1.0
    value = _bpref(order, judged, threshold)
    return (max(value, 1e-5) if metric == "gm_bpref" else value), 1.0


GAIN_METRICS = (
    "ndcg_gains",
    "dcg_gains",
    "ideal_dcg_gains",
    "ndcg_rel_gains",
    "normalized_gain_gains",
    "rndcg_gains",
)


def _custom_gains(
    metric: str,
    order: Sequence[object],
    judged: dict[object, float],
    threshold: float,
    k: float | None,
) -> float:
    """m_ndcg.c with rel=gain pairs (``ndcg_gains/gains={1:3,2:9}``): a listed level's gain,
    another level's own value when relevant, else 0, an item not judged 0; the ideal walks
    the judged items by gain while the gain is positive."""
    name, _, given = metric.partition("/gains=")
    pairs = (part.split(":") for part in given.strip("{}").split(",") if part)
    gains = {float(level): float(gain) for level, gain in pairs}

    def gain(rel: float | None) -> float:
        if rel is None:
            return 0.0
        return gains.get(rel, rel if rel > threshold else 0.0)

    cut = None if k is None else int(k)
    best = sorted((gain(rel) for rel in judged.values()), reverse=True)
    if name in ("ndcg_rel_gains", "normalized_gain_gains", "rndcg_gains"):
        # m_ndcg_rel.c, m_G.c, m_Rndcg.c with the gains: relevant is a positive gain, the
        # ideal the positive gains; ndcg_rel's sum of 0 or less and Rndcg without a relevant
        # rel stay 0
        if name == "rndcg_gains" and not any(rel > threshold for rel in judged.values()):
            return 0.0
        rels = [gain(judged.get(item)) for item in order]
        value = _against_the_ideal(name[: -len("_gains")], rels, [g for g in best if g > 0])
        return max(value, 0.0) if name == "ndcg_rel_gains" else value
    dcg = sum(gain(judged.get(item)) / math.log2(i + 2) for i, item in enumerate(order[:cut]))
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(best[:cut]) if g > 0)
    if name == "dcg_gains":
        return dcg
    if name == "ideal_dcg_gains":
        return ideal
    return dcg / ideal if ideal else 0.0


# ----------------------------------------------------------------------------------------------
# Tie averaging by brute force
# ----------------------------------------------------------------------------------------------


def _distinct_orderings(rels: Sequence[float]) -> Counter[tuple[float, ...]]:
    """Every ordering of a tie group's relevances, with how many permutations give it."""
    if len(rels) > _MAX_TIE_GROUP:
        raise ValueError(f"tie group of {len(rels)} items is too large to enumerate")
    return Counter(itertools.permutations(rels))


def _expected_num_den(
    specs: Sequence[tuple[str, int | None]],
    groups: list[list[float]],
    ideal: tuple[float, ...],
) -> list[tuple[float, float]]:
    """Expected (numerator, denominator) per spec over uniform orderings inside each tie group.

    A pure function of its arguments (and of _MAX_JOINT_ORDERINGS, which chooses the method),
    so it is remembered: the cross-checks ask it the same users' tie groups under each
    population, and the enumeration is the oracle's one costly step."""
    return list(
        _expected_num_den_of(
            tuple(specs), tuple(tuple(group) for group in groups), ideal, _MAX_JOINT_ORDERINGS
        )
    )


@functools.lru_cache(maxsize=8192)
def _expected_num_den_of(
    specs: tuple[tuple[str, int | None], ...],
    groups: tuple[tuple[float, ...], ...],
    ideal: tuple[float, ...],
    max_joint_orderings: int,
) -> tuple[tuple[float, float], ...]:
    return tuple(_enumerated_num_den(specs, groups, ideal, max_joint_orderings))


def _enumerated_num_den(
    specs: Sequence[tuple[str, int | None]],
    groups: Sequence[Sequence[float]],
    ideal: tuple[float, ...],
    max_joint_orderings: int,
) -> list[tuple[float, float]]:
    base = [rel for group in groups for rel in group]
    positions = tuple(range(1, len(base) + 1))

    def evaluate(rels: Sequence[float]) -> list[float]:
        ul = UserList(positions, tuple(rels), ideal)
        return [_num_den(metric, ul, k)[0] for metric, k in specs]

    starts = list(itertools.accumulate([0] + [len(g) for g in groups]))
    # Groups whose items all share one relevance cannot change anything: skip them.
    varying = [(starts[i], _distinct_orderings(g)) for i, g in enumerate(groups) if len(set(g)) > 1]
    base_ul = UserList(positions, tuple(base), ideal)
    base_pairs = [_num_den(metric, base_ul, k) for metric, k in specs]
    dens = [den for _, den in base_pairs]  # denominators do not depend on the order
    base_nums = [num for num, _ in base_pairs]
    if not varying:
        return base_pairs

    joint = math.prod(sum(c.values()) for _, c in varying)
    if joint <= max_joint_orderings:
        # Exact: enumerate every joint ordering of all tie groups.
        totals = [0.0] * len(specs)
        count = 0
        for combo in itertools.product(*(c.items() for _, c in varying)):
            rels = list(base)
            weight = 1
            for (start, _), (ordering, mult) in zip(varying, combo, strict=True):
                rels[start : start + len(ordering)] = ordering
                weight *= mult
            for j, num in enumerate(evaluate(rels)):
                totals[j] += weight * num
            count += weight
        return [(total / count, den) for total, den in zip(totals, dens, strict=True)]

    # Group by group: E[f] = f(base) + sum_g (E_g[f] - f(base)), exact for affine metrics.
    expected = list(base_nums)
    for start, orderings in varying:
        totals = [0.0] * len(specs)
        count = 0
        for ordering, mult in orderings.items():
            rels = list(base)
            rels[start : start + len(ordering)] = ordering
            for j, num in enumerate(evaluate(rels)):
                totals[j] += mult * num
            count += mult
        for j in range(len(specs)):
            expected[j] += totals[j] / count - base_nums[j]
    return list(zip(expected, dens, strict=True))


# ----------------------------------------------------------------------------------------------
# Public API
# ----------------------------------------------------------------------------------------------


def _check_args(metric: str, k: int | None, ties: str, population: str) -> None:
    if metric.partition("/")[0] not in ALL_METRICS:
        raise NoFormula(metric)
    if metric in LEVEL_METRICS:
        if k is not None and not k >= 0:
            raise ValueError(f"{metric}'s level must be >= 0, got {k!r}")
        k = None
    if k is not None and (not isinstance(k, int) or k < 1):
        raise ValueError(f"k must be a positive int or None, got {k!r}")
    if metric in WITHOUT_CUTOFF and k is not None:
        raise ValueError(f"{metric} takes no cutoff")
    if metric in CUTOFF_REQUIRED and k is None:
        raise ValueError(f"{metric} needs a cutoff")
    if ties not in TIE_POLICIES:
        raise ValueError(f"unknown tie policy {ties!r}")
    if ties == "average" and metric not in AVERAGE_CAPABLE:
        raise ValueError(f"{metric} has no tie-averaged form")
    if population not in POPULATIONS:
        raise ValueError(f"unknown population {population!r}")


def _per_user_num_den(
    recommendations: list[dict],
    interactions: list[dict],
    specs: Sequence[tuple[str, int | None]],
    *,
    ties: str,
    threshold: float,
    population: str,
    rank_column: bool,
    ranks: str = "consecutive",
) -> dict[object, list[tuple[float, float]]]:
    """user -> [(numerator, denominator) per spec] for the population users. With a rank
    column, ``ranks="consecutive"`` wants each list ranked 1..n; "literal" takes the ranks as
    the positions, gaps and repeats included."""
    for metric, k in specs:
        _check_args(metric, k, ties, population)
    truth = _truth_by_user(interactions, threshold)
    judged = _judged_by_user(interactions)
    pool = _judged_by_user(interactions, pool=True)
    recs = _recs_by_user(recommendations)

    def values(order: Sequence[object], ul: UserList, user: object) -> list[tuple[float, float]]:
        return [
            _judgement_value(metric, order, judged.get(user, {}), threshold, k)
            if metric.partition("/")[0] in JUDGEMENT_METRICS
            else (_judged_share(order, pool.get(user, {}), k), 1.0)
            if metric == "judged_share"
            else (_infap(order, pool[user], threshold), 1.0)
            if metric in POOL_METRICS
            else _num_den(metric, ul, k)
            for metric, k in specs
        ]

    out: dict[object, list[tuple[float, float]]] = {}
    judged_population = population in ("judged", "all_judged")
    for user in judged if judged_population else truth:
        relevant = truth.get(user, {})
        if not relevant and not judged_population:
            continue  # not in the population
        ideal = tuple(sorted(relevant.values(), reverse=True))
        rows = recs.get(user, [])
        if not rows and population in ("common", "judged"):
            continue
        if rank_column:
            ranked = sorted(rows, key=lambda r: r["rank"])
            given = [r["rank"] for r in ranked]
            if ranks == "consecutive" and given != list(range(1, len(given) + 1)):
                raise ValueError(f"user {user!r}: ranks {given} are not 1..n")
            ul = UserList(
                tuple(int(r["rank"]) for r in ranked),
                tuple(relevant.get(r["item_id"], 0.0) for r in ranked),
                ideal,
            )
            out[user] = values([r["item_id"] for r in ranked], ul, user)
            continue
        groups = _order_rows(rows, relevant, ties)
        rel_groups = [[relevant.get(r["item_id"], 0.0) for r in g] for g in groups]
        if ties == "average":
            out[user] = _expected_num_den(specs, rel_groups, ideal)
        else:
            flat = tuple(rel for g in rel_groups for rel in g)
            ul = UserList(tuple(range(1, len(flat) + 1)), flat, ideal)
            out[user] = values([r["item_id"] for g in groups for r in g], ul, user)
    return out


@dataclass(frozen=True)
class OracleResult:
    """One metric's per-user values and its aggregate over the population."""

    per_user: dict[object, float]
    mean: float


def oracle_evaluate(
    recommendations: list[dict],
    interactions: list[dict],
    specs: Sequence[tuple[str, int | None]],
    *,
    ties: str = "id",
    threshold: float = 0.0,
    population: str = "all",
    rank_column: bool = False,
    ranks: str = "consecutive",
) -> dict[tuple[str, int | None], OracleResult]:
    """Many (metric, k) at once, sharing the input preparation and the tie enumeration.

    The aggregate is the mean of per-user values, or sum num / sum den for the micro metrics;
    NaN when the population is empty.
    """
    num_den = _per_user_num_den(
        recommendations,
        interactions,
        specs,
        ties=ties,
        threshold=threshold,
        population=population,
        rank_column=rank_column,
        ranks=ranks,
    )
    results = {}
    for j, (metric, k) in enumerate(specs):
        pairs = {user: values[j] for user, values in num_den.items()}
        # A micro metric has no per-user value where the user adds 0 / 0 to its ratio of
        # sums (|R_u| = 0: a user judged with nothing relevant); every other 0 / 0 is 0.
        per_user = {
            user: num / den if den > 0 else math.nan if metric in MICRO_METRICS else 0.0
            for user, (num, den) in pairs.items()
        }
        mean: float
        if not pairs:
            mean = math.nan
        elif metric in SUMMED_METRICS:
            mean = sum(per_user.values())
        elif metric in GEOMETRIC_METRICS:
            mean = math.exp(sum(math.log(v) for v in per_user.values()) / len(per_user))
        elif metric in MICRO_METRICS:
            num = sum(n for n, _ in pairs.values())
            den = sum(d for _, d in pairs.values())
            mean = num / den if den > 0 else 0.0
        else:
            mean = sum(per_user.values()) / len(per_user)
        results[(metric, k)] = OracleResult(per_user, mean)
    return results


def oracle_per_user(
    recommendations: list[dict],
    interactions: list[dict],
    metric: str,
    k: int | None,
    *,
    ties: str = "id",
    threshold: float = 0.0,
    population: str = "all",
    rank_column: bool = False,
    ranks: str = "consecutive",
) -> dict[object, float]:
    """Per-user metric values for the population users (see METRICS.md)."""
    result = oracle_evaluate(
        recommendations,
        interactions,
        [(metric, k)],
        ties=ties,
        threshold=threshold,
        population=population,
        rank_column=rank_column,
        ranks=ranks,
    )
    return result[(metric, k)].per_user


def oracle_mean(
    recommendations: list[dict],
    interactions: list[dict],
    metric: str,
    k: int | None,
    *,
    ties: str = "id",
    threshold: float = 0.0,
    population: str = "all",
    rank_column: bool = False,
    ranks: str = "consecutive",
) -> float:
    """Aggregate over the population: mean of per-user values, or sum num / sum den for micro.

    NaN when the population is empty.
    """
    result = oracle_evaluate(
        recommendations,
        interactions,
        [(metric, k)],
        ties=ties,
        threshold=threshold,
        population=population,
        rank_column=rank_column,
        ranks=ranks,
    )
    return result[(metric, k)].mean


# ----------------------------------------------------------------------------------------------
# Metrics over scored rows (auc, classification) and rated rows (rating metrics)
# ----------------------------------------------------------------------------------------------
#
# Written from METRICS.md "Rating and classification metrics" without the SQL's shape: AUC counts
# every (positive, negative) pair one by one (seed 003's first formula, m / (n0 * n1)) instead of
# the rank sums and windows of sql/stages/scored.sql.

SCORED_METRICS = _declared(lambda metric: metric.reads == "scored")
RATED_METRICS = _declared(lambda metric: metric.reads == "rated")
# The ones this oracle has a formula for.
_CLASSIFICATION = frozenset({"accuracy", "logloss", "score_precision", "score_recall", "score_f1"})
_CURVES = frozenset({"average_precision", "user_average_precision", "pr_auc"})
_SCORED_FORMULAS = _CLASSIFICATION | _CURVES | {"auc", "ne", "calibration"}
_SCORED_FORMULAS |= {"gauc", "gauc_positives", "user_auc"}
_RATED_FORMULAS = frozenset({"mse", "rmse", "mae", "r2"})
LOGLOSS_CLIP = 1e-15
NE_ETA = 1e-12  # TorchRec's clamp of the predictions in NE


def _pair_wins(
    positives: Sequence[tuple[float, float]], negatives: Sequence[tuple[float, float]]
) -> float:
    """(score, weight) pairs where the positive scores higher, ties counting 1/2, each pair
    weighted by the product of its two weights (scikit-learn's sample_weight)."""
    return sum(
        wp * wn * (1.0 if p > n else 0.5 if p == n else 0.0)
        for p, wp in positives
        for n, wn in negatives
    )


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else math.nan


# (user, score, relevant 0/1, weight)
ScoredRow = tuple[object, float, int, float]


def scored_rows(
    recommendations: Iterable[dict],
    interactions: Iterable[dict],
    threshold: float = 0.0,
    weight: str | None = None,
) -> list[ScoredRow]:
    """(user, score, relevant 0/1, weight) for every recommendation row with a score; the
    weight is the row's ``weight`` column, 1 without one."""
    truth = _truth_by_user(interactions, threshold)
    return [
        (
            row["user_id"],
            float(row["score"]),
            int(row["item_id"] in truth.get(row["user_id"], {})),
            float(row[weight]) if weight else 1.0,
        )
        for row in recommendations
        if row.get("score") is not None and not math.isnan(float(row["score"]))
    ]


def rated_rows(
    recommendations: Iterable[dict], interactions: Iterable[dict]
) -> list[tuple[object, float, float]]:
    """(user, score, rating) for each scored recommendation the interactions rate (the largest
    rating of repeated interactions)."""
    ratings: dict[tuple[object, object], float] = {}
    for row in interactions:
        if row.get("rating") is None:
            continue
        key = (row["user_id"], row["item_id"])
        ratings[key] = max(ratings.get(key, -math.inf), float(row["rating"]))
    return [
        (row["user_id"], float(row["score"]), ratings[(row["user_id"], row["item_id"])])
        for row in recommendations
        if row.get("score") is not None and (row["user_id"], row["item_id"]) in ratings
    ]


def _classification(
    metric: str, rows: Sequence[tuple[float, int, float]], score_threshold: float
) -> float:
    """A classification metric over (score, label, weight) rows: every count a sum of weights."""
    total = sum(w for _, _, w in rows)
    guessed = [(int(score >= score_threshold), label, w) for score, label, w in rows]
    true_positives = sum(w for guess, label, w in guessed if guess and label)
    predicted_positive = sum(w for guess, _, w in guessed if guess)
    actual_positive = sum(w for _, label, w in guessed if label)
    if metric == "accuracy":
        return _ratio(sum(w for guess, label, w in guessed if guess == label), total)
    if metric == "score_precision":
        return _ratio(true_positives, predicted_positive)
    if metric == "score_recall":
        return _ratio(true_positives, actual_positive)
    if metric == "score_f1":
        if predicted_positive + actual_positive == 0:
            return math.nan
        if true_positives == 0:
            return 0.0
        precision = true_positives / predicted_positive
        recall = true_positives / actual_positive
        return 2 * precision * recall / (precision + recall)
    if metric == "logloss":
        loss = 0.0
        for score, label, w in rows:
            p = min(max(score, LOGLOSS_CLIP), 1 - LOGLOSS_CLIP)
            loss -= w * (math.log(p) if label else math.log(1 - p))
        return _ratio(loss, total)
    raise ValueError(f"unknown metric {metric!r}")


def _precision_steps(rows: Sequence[tuple[float, int, float]]) -> dict[float, tuple[float, float]]:
    """Each distinct score s: (precision among the rows scored >= s, the same among those
    scored > s, 1 where none is): the precision-recall curve's points, walked from the top."""
    steps: dict[float, tuple[float, float]] = {}
    true_positives = false_positives = 0.0
    before = 1.0
    for score in sorted({score for score, _, _ in rows}, reverse=True):
        true_positives += sum(w for s, label, w in rows if s == score and label)
        false_positives += sum(w for s, label, w in rows if s == score and not label)
        here = _ratio(true_positives, true_positives + false_positives)
        steps[score] = (here, before)
        if true_positives + false_positives:
            before = here
    return steps


def _curve(
    metric: str, own: Sequence[tuple[float, int, float]], steps: dict[float, tuple[float, float]]
) -> float:
    """average_precision or pr_auc's share of ``own``'s positives, read on ``steps`` (the
    curve of ``own`` or of its whole group), divided by ``own``'s positives."""
    total = 0.0
    for score, label, w in own:
        if label and w:
            here, before = steps[score]
            total += w * (
                here
                if metric in ("average_precision", "user_average_precision")
                else (here + before) / 2
            )
    return _ratio(total, sum(w for _, label, w in own if label))


def _entropy_parts(
    own: Sequence[tuple[float, int, float]], base_rate: float
) -> tuple[float, float]:
    """ne's numerator (the log loss sum, clipped at TorchRec's eta) and denominator (the same
    rows' loss if every score were the group's base rate)."""
    loss = norm = 0.0
    for score, label, w in own:
        p = min(max(score, NE_ETA), 1 - NE_ETA)
        loss -= w * (math.log(p) if label else math.log(1 - p))
        if w:
            norm -= w * (math.log(base_rate) if label else math.log(1 - base_rate))
    return loss, norm


def oracle_scored(
    recommendations: list[dict],
    interactions: list[dict],
    metric: str,
    *,
    threshold: float = 0.0,
    score_threshold: float = 0.5,
    weight: str | None = None,
) -> OracleResult:
    """A scored or rated metric over one group: per-user values (NaN where undefined) and the
    group's value; ``weight`` names the recommendations' weight column."""
    if metric not in _SCORED_FORMULAS | _RATED_FORMULAS:
        raise NoFormula(metric)
    if metric in RATED_METRICS:
        return _oracle_rated(rated_rows(recommendations, interactions), metric)
    rows = scored_rows(recommendations, interactions, threshold, weight)
    by_user: dict[object, list[tuple[float, int, float]]] = {}
    for user, score, label, w in rows:
        by_user.setdefault(user, []).append((score, label, w))
    everything = [(score, label, w) for _, score, label, w in rows]
    negatives = [(score, w) for score, label, w in everything if not label]
    negative_weight = sum(w for _, w in negatives)
    if metric == "auc":
        positives = [(score, w) for score, label, w in everything if label]
        per_user = {
            user: _ratio(
                _pair_wins([(s, w) for s, label, w in own if label], negatives),
                sum(w for _, label, w in own if label) * negative_weight,
            )
            for user, own in by_user.items()
        }
        return OracleResult(
            per_user,
            _ratio(
                _pair_wins(positives, negatives), sum(w for _, w in positives) * negative_weight
            ),
        )
    if metric in ("gauc", "user_auc", "gauc_positives"):
        per_user = {}
        for user, own in by_user.items():
            pos = [(s, w) for s, label, w in own if label]
            neg = [(s, w) for s, label, w in own if not label]
            per_user[user] = _ratio(
                _pair_wins(pos, neg), sum(w for _, w in pos) * sum(w for _, w in neg)
            )
        both = {user: value for user, value in per_user.items() if not math.isnan(value)}
        weights = {
            user: {
                "gauc": sum(w for _, _, w in by_user[user]),
                "gauc_positives": sum(w for _, label, w in by_user[user] if label),
                "user_auc": 1.0,
            }[metric]
            for user in both
        }
        mean = _ratio(
            sum(weights[user] * value for user, value in both.items()), sum(weights.values())
        )
        return OracleResult(per_user, mean)
    if metric in ("average_precision", "pr_auc"):
        steps = _precision_steps(everything)
        per_user = {user: _curve(metric, own, steps) for user, own in by_user.items()}
        return OracleResult(per_user, _curve(metric, everything, steps))
    if metric == "user_average_precision":
        per_user = {
            user: _curve(metric, own, _precision_steps(own)) for user, own in by_user.items()
        }
        defined = [value for value in per_user.values() if not math.isnan(value)]
        return OracleResult(per_user, _ratio(sum(defined), len(defined)))
    if metric == "ne":
        positive_weight = sum(w for _, label, w in everything if label)
        base_rate = _ratio(positive_weight, positive_weight + negative_weight)
        if math.isnan(base_rate) or base_rate in (0.0, 1.0):  # no entropy to normalise by
            return OracleResult({user: math.nan for user in by_user}, math.nan)
        per_user = {user: _ratio(*_entropy_parts(own, base_rate)) for user, own in by_user.items()}
        return OracleResult(per_user, _ratio(*_entropy_parts(everything, base_rate)))
    if metric == "calibration":

        def calibration(own: Sequence[tuple[float, int, float]]) -> float:
            return _ratio(sum(s * w for s, _, w in own), sum(w for _, label, w in own if label))

        per_user = {user: calibration(own) for user, own in by_user.items()}
        return OracleResult(per_user, calibration(everything))
    if metric in _CLASSIFICATION:
        per_user = {
            user: _classification(metric, own, score_threshold) for user, own in by_user.items()
        }
        return OracleResult(per_user, _classification(metric, everything, score_threshold))
    raise ValueError(f"unknown metric {metric!r}")


def _oracle_rated(rows: Sequence[tuple[object, float, float]], metric: str) -> OracleResult:
    mean_rating = _ratio(sum(rating for _, _, rating in rows), len(rows))

    def value(own: Sequence[tuple[float, float]]) -> float:
        errors = [score - rating for score, rating in own]
        if metric == "mae":
            return _ratio(sum(abs(e) for e in errors), len(errors))
        mse = _ratio(sum(e * e for e in errors), len(errors))
        if metric == "mse":
            return mse
        if metric == "rmse":
            return math.sqrt(mse)
        total = sum((rating - mean_rating) ** 2 for _, rating in own)
        return 1 - _ratio(sum(e * e for e in errors), total)

    by_user: dict[object, list[tuple[float, float]]] = {}
    for user, score, rating in rows:
        by_user.setdefault(user, []).append((score, rating))
    per_user = {user: value(own) for user, own in by_user.items()}
    return OracleResult(per_user, value([(score, rating) for _, score, rating in rows]))
