"""Rewrites of the composed query that only DuckDB gets (see compose.TOP_K_DIALECTS).

Each gives the same numbers as the portable plan (tests/test_plans.py runs both on data full of
ties); they only spare DuckDB work it would do for nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from sqlglot import exp

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose.inputs import READ_CHECKED, Options
from sqlmetrics.compose.stages import bind_placeholders, derived_table, number, prune, stage

# Metrics whose per-user value is a sum or maximum of per-row terms that are 0 on a recommended
# row without a relevant item (hit = 0, gain = 0), reading such rows for nothing else, and that
# read relevance only at positions within a cutoff or ideal positions, and n_relevant and
# list_length as per-user counts: what judged_hits.sql gives. A metric joins this list only with
# a test in tests/test_plans.py showing both plans agree.
HIT_ROWS_METRICS = frozenset(
    {
        "hits",
        "hit_rate",
        "precision",
        "recall",
        "f1",
        "mrr",
        "map",
        "map_min",
        "map_hits",
        "cg",
        "dcg",
        "ndcg",
        "dcg_exp",
        "ndcg_exp",
        "micro_hit_ratio",
        "micro_mrr",
        "ndcg_ideal_k",
    }
)

# Metrics without a rank cutoff that read judged as those above do (per-row terms 0 on a row
# without a hit, per-user counts): no top-k plan serves them (no cutoff), but the window plan
# keeps hit rows only for them too (joined_hits). A metric joins this list only with a test in
# tests/test_plans.py showing both window plans agree.
WHOLE_LIST_HIT_ROWS_METRICS = frozenset(
    {
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "gm_map",
        "r_precision",
        "iprec_at_recall",
        "iprec_at_recall_trec9",
    }
)

# Metrics reading scored.sql only through per-user sums of positives, negatives and positives *
# negatives_below_in_list: what scored_positives.sql gives (tests/test_plans.py compares both).
SCORED_SUM_METRICS = frozenset({"gauc", "gauc_positives", "user_auc"})


# Whether sql/stages/ranked_judged.sql may rank the judged items only (places_judged_items);
# tests turn it off to compare it with the window.
PLACED_RANKING = True
PLACED_WHY = (
    ", the judged items placed by their scores (inputs checked by their reader, metrics reading"
    " positions at judged items only)"
)


def places_judged_items(
    options: Options, judged: str | None, judgements: str | None, reads_all: bool, reads: set[str]
) -> bool:
    """Whether ranked_judged.sql ranks the rows on DuckDB's own plans without lists (a metric
    without a cutoff): inputs whose reader refused NULL ids and scores, NaN and repeats (a TREC
    run: checks READ_CHECKED), judged ``joined_hits`` (which reads ranked at relevant items
    and each list's first position only), judgements none or ``judged_pairs`` (judged pairs
    only), and nothing else read (``reads``: the stages the metrics read). ``reads_all``: the
    diagnostics or groups read every ranked row."""
    return (
        PLACED_RANKING
        and options.checks == READ_CHECKED
        and options.duplicates != "first"
        and not reads_all
        and judged == "joined_hits"
        and judgements in (None, "judged_pairs")
        and reads <= {"judged", "judgements"}
    )


# judged's columns that sql/stages/judged_ranked_hits.sql gives as judged.sql's window plan does
# for every metric reading them (at hit rows and as per-user counts; tests/test_trec_plans.py
# compares both)
RANKED_HITS_COLUMNS = frozenset(
    {"user_id", "pos", "hit", "hits_so_far", "n_relevant", "list_length"}
)


def judges_ranked_hits(ranked: str | None, judged: exp.Select) -> bool:
    """Whether judged (pruned to what per_user reads) may be judged_ranked_hits.sql's: under
    ranked_judged.sql (its rows are judged items and lists only), judged reading none of the
    relevance, gains or ideal positions that need the relevant items never recommended."""
    return (
        PLACED_RANKING
        and ranked == "ranked_judged"
        and set(judged.named_selects) <= RANKED_HITS_COLUMNS
    )


def ranked_hits(judged: exp.Select, threshold: float) -> exp.Select:
    """judged_ranked_hits.sql with judged's columns (judges_ranked_hits)."""
    hits = bind_placeholders(stage("judged_ranked_hits"), threshold=number(threshold))
    prune(hits, set(judged.named_selects))
    return hits


def sums_scored_only(requests: Sequence[MetricRequest]) -> bool:
    """Whether every metric that reads scored.sql is one of SCORED_SUM_METRICS: then DuckDB
    takes sql/stages/scored_positives.sql for scored."""
    return all(
        request.metric.name in SCORED_SUM_METRICS
        for request in requests
        if request.metric.reads == "scored"
    )


def keep_hit_rows(joined: exp.Select) -> None:
    """joined.sql without the recommended rows that are not relevant, except each user's first
    (it carries list_length and keeps the user in per_user): at k = 100 that is 9 rows in 10 the
    metrics would read as zeros, and hits_so_far's window would sort. For metrics that read
    hit rows only (reads_hit_rows_only; plan.py's judged "joined_hits"), on every dialect:
    plain SQL, kept here beside HIT_ROWS_METRICS."""
    relevant = exp.column("user_id", "truth").is_(exp.Null()).not_()
    first = exp.EQ(this=exp.column("pos", "ranked"), expression=exp.Literal.number(1))
    joined.where(exp.or_(relevant, first), copy=False)


def reads_hit_rows_only(requests: Sequence[MetricRequest]) -> bool:
    """Whether every metric reads judged only at hit rows, ideal positions and per-user counts
    (HIT_ROWS_METRICS): then sql/stages/judged_hits.sql builds judged from top_lists.sql and
    truth_lists.sql, without truth's windows, the full join or judged's window over every row.
    Each of these metrics reads judged and nothing else (tests/test_plans.py checks it)."""
    return all(request.metric.name in HIT_ROWS_METRICS for request in requests)


def judged_at_hit_rows_only(requests: Sequence[MetricRequest]) -> bool:
    """Whether every request reads judged at hit rows only (HIT_ROWS_METRICS or
    WHOLE_LIST_HIT_ROWS_METRICS) or reads judgements (bpref's stage, which reads ranked, the
    same in either plan): then the window plan's judged keeps the hit rows and each user's
    first (joined_hits)."""
    names = HIT_ROWS_METRICS | WHOLE_LIST_HIT_ROWS_METRICS
    return all(
        r.metric.name in names if r.metric.reads == "judged" else r.metric.reads == "judgements"
        for r in requests
    )


def diagnose_lists(
    diagnosis: list[tuple[str, exp.Expr]], listed: exp.Select
) -> list[tuple[str, exp.Expr]]:
    """diagnostics.sql's CTEs with ranked_counts' tie groups (its one count: the lists count
    their own repeats) taken per list of top_lists.sql (``listed``: listed_top_k.sql) and
    interacted per user of truth_lists.sql, instead of group-bys over ranked's rows and the
    interactions."""
    ctes = dict(diagnosis)
    # Columns built rather than parsed from their names (a parse at each call).
    ctes["ranked_counts"] = (
        exp.select(exp.column("user_id"), exp.column("tie_groups"))
        .from_(derived_table(listed, "listed"), copy=False)
        .where(exp.column("tie_groups") > 0, copy=False)
    )
    counts = [projection.alias_or_name for projection in ctes["interacted"].expressions]
    ctes["interacted"] = exp.select(*map(exp.column, counts)).from_("truth_lists", copy=False)
    return [(name, ctes[name]) for name, _ in diagnosis]


def count_nan_by_filter(list_counts: exp.Select) -> None:
    """list_counts.sql's nan_scores as COUNT(*) FILTER (WHERE ISNAN(score)). DuckDB folds
    ``SUM(CASE WHEN ISNAN(score) ...)`` over a Parquet scan to 0 when the file's statistics
    (which leave NaN out) put every score in a finite range; the FILTER is not folded."""
    for projection in list_counts.expressions:
        if projection.alias_or_name == "nan_scores":
            is_nan = projection.find(exp.IsNan)
            if is_nan is None:
                raise ValueError("list_counts.sql: nan_scores counts ISNAN(score)")
            count = exp.Filter(
                this=exp.func("COUNT", exp.Star()), expression=exp.Where(this=is_nan.copy())
            )
            projection.set("this", count)


# top_lists.sql's and sorted_lists.sql's counts for the diagnostics (list_counts.sql's).
LIST_CHECKS = ("duplicate_rows", "nan_scores", "outside_unit_scores", "listed_items")


def without_list_checks(lists: exp.Select) -> None:
    """top_lists.sql or sorted_lists.sql without the diagnostics' counts (LIST_CHECKS)."""
    for select in lists.find_all(exp.Select):
        kept = [p for p in select.expressions if p.alias_or_name not in LIST_CHECKS]
        select.set("expressions", kept)
        group = select.args.get("group")
        if group is not None:
            kept = [e for e in group.expressions if e.alias_or_name not in LIST_CHECKS]
            group.set("expressions", kept)


def list_counts_from(lists_name: str) -> exp.Select:
    """list_counts.sql's columns read from top_lists.sql (or sorted_lists.sql), which counts
    them in its own aggregate over the recommendations instead of a second one."""
    names = ["user_id", "list_length", "scored_length", "named_length", *LIST_CHECKS[:3]]
    broken = exp.alias_(exp.Literal.number(0), "broken_ranks", copy=False)
    # Columns built rather than parsed from their names (a parse at each call).
    return exp.select(*map(exp.column, names), broken, copy=False).from_(lists_name, copy=False)


# Lists up to this long find their repeats by each item's first position (quadratic, but
# faster than COUNT(DISTINCT) on lists of a hundred: docs/benchmark.md); longer ones through
# LIST_DISTINCT, whose cost grows with the length only.
QUADRATIC_REPEATS_MAX = 256


def repeated_items() -> exp.Expr:
    """The rows of a list repeating an item found earlier in it, from ``listed_items`` (the
    list's items gathered as a list) and ``named_length`` (its non-NULL items): each item's
    first position up to QUADRATIC_REPEATS_MAX items, LIST_DISTINCT above."""
    items = exp.column("listed_items")
    item, index = exp.to_identifier("item"), exp.to_identifier("i")
    earlier = exp.and_(
        exp.column("item").is_(exp.Null()).not_(),
        exp.func("LIST_POSITION", items.copy(), exp.column("item")) < exp.column("i"),
    )
    quadratic = exp.func(
        "LEN",
        exp.func("LIST_FILTER", items.copy(), exp.Lambda(this=earlier, expressions=[item, index])),
    )
    distinct = exp.column("named_length") - exp.func("LEN", exp.func("LIST_DISTINCT", items.copy()))
    return (
        exp.Case()
        .when(exp.func("LEN", items.copy()) <= QUADRATIC_REPEATS_MAX, quadratic)
        .else_(distinct)
    )


def repeats_among(items: exp.Expr, depth: int) -> exp.Expr:
    """The items among the first ``depth`` of the list ``items`` that repeat one before them:
    its non-NULL items there less its distinct ones (LIST_DISTINCT drops NULLs)."""
    first = exp.Bracket(
        this=items,
        expressions=[exp.Slice(this=exp.Literal.number(1), expression=exp.Literal.number(depth))],
    )
    named = exp.func("LIST_AGGREGATE", first, exp.Literal.string("count"))
    return named - exp.func("LEN", exp.func("LIST_DISTINCT", first.copy()))


def bind_repeats(lists: exp.Select, depth: int | None) -> None:
    """The repeated items of top_lists.sql, sorted_lists.sql and score_lists.sql: among each
    list's first ``depth`` items, or with ``depth`` None anywhere in it ($repeats:
    repeated_items() over the list of every item). top_lists.sql and sorted_lists.sql count
    the first ``depth`` among the items they keep ($listed_repeats: repeats_among), and gather
    every item only for the whole list; score_lists.sql, which keeps no items, finds them in
    the whole list and sends a list with one to its window, which counts its first ``depth``
    ($again_if_repeated, $again_repeats)."""
    keeps_items = any(p.name == "listed_repeats" for p in lists.find_all(exp.Placeholder))
    if depth == 0:  # none counted: the input's reader refused them (plan.repeats_depth)
        _bind_no_repeats(lists)
        return
    if depth is not None and keeps_items:
        for select in lists.find_all(exp.Select):
            kept = [p for p in select.expressions if p.alias_or_name != "listed_items"]
            select.set("expressions", kept)
    within = exp.column("pos") <= exp.Literal.number(depth or 0)
    bound: dict[str, exp.Expr] = {
        "repeats": exp.Literal.number(0) if depth is not None and keeps_items else repeated_items(),
        "listed_repeats": exp.column("duplicate_rows")
        if depth is None
        else repeats_among(exp.column("items"), depth),
        "again_if_repeated": exp.false()
        if depth is None
        else exp.column("duplicate_rows") > exp.Literal.number(0),
        "again_repeats": exp.column("duplicate_rows")
        if depth is None
        else _filtered(exp.func("COUNT", exp.column("item_id")), within)
        - _filtered(exp.Count(this=exp.Distinct(expressions=[exp.column("item_id")])), within),
    }
    for placeholder in list(lists.find_all(exp.Placeholder)):
        if placeholder.name in bound:
            placeholder.replace(bound[placeholder.name].copy())


def _bind_no_repeats(lists: exp.Select) -> None:
    """The lists stages counting no repeated item: every count 0, no list of items."""
    for select in lists.find_all(exp.Select):
        kept = [p for p in select.expressions if p.alias_or_name != "listed_items"]
        select.set("expressions", kept)
    for placeholder in list(lists.find_all(exp.Placeholder)):
        if placeholder.name == "again_if_repeated":
            placeholder.replace(exp.false())
        elif placeholder.name in ("repeats", "listed_repeats", "again_repeats"):
            placeholder.replace(exp.Literal.number(0))


def _filtered(aggregate: exp.Expr, condition: exp.Expr) -> exp.Filter:
    return exp.Filter(this=aggregate, expression=exp.Where(this=condition.copy()))


def count_repeats_in_lists(list_counts: exp.Select) -> exp.Select:
    """list_counts.sql with duplicate_rows found in each list's items gathered as a list,
    instead of COUNT(DISTINCT item_id), which hashes every (user, item) pair once more."""
    counts = list_counts.copy()
    for projection in counts.expressions:
        if projection.alias_or_name == "duplicate_rows":
            projection.set("this", exp.func("LIST", exp.column("item_id")))
            projection.set("alias", exp.to_identifier("listed_items"))
    names = [p.alias_or_name for p in counts.expressions if p.alias_or_name != "listed_items"]
    return exp.select(
        *[exp.column(name) for name in names], exp.alias_(repeated_items(), "duplicate_rows")
    ).from_(derived_table(counts, "listed"))


def bind_score_floor(top_lists: exp.Select, floor: float | None) -> None:
    """top_lists.sql's ``$score_floor``: a number literal, or without a (finite) floor no FILTER
    at all (then floored_length counts every score)."""
    finite = floor is not None and math.isfinite(floor)
    for placeholder in list(top_lists.find_all(exp.Placeholder)):
        if placeholder.name != "score_floor":
            continue
        clause = placeholder.find_ancestor(exp.Filter)
        if clause is None:
            raise ValueError("top_lists.sql: $score_floor belongs in FILTER clauses only")
        if finite:
            placeholder.replace(exp.Literal.number(repr(float(floor))))  # type: ignore[arg-type]
        else:
            clause.replace(clause.this)


def read_inputs_again(query: exp.Query, interactions: bool, recommendations: bool = True) -> None:
    """top_lists.sql reads input_recommendations twice (the second time only the few users it
    ranks again), scored_positives.sql four times, and the hit-rows plan reads
    input_interactions twice: DuckDB would store the whole input to share it, where reading it
    again costs far less (at 1e7 rows, 2 s against 0.1 s). Not ``recommendations`` when they
    are first_recommendations.sql's window (duplicates="first"): that is worth storing."""
    again = {"input_interactions"} if interactions else set()
    if recommendations:
        again.add("input_recommendations")
    for cte in query.args["with_"].expressions:
        if cte.alias in again:
            cte.set("materialized", False)


def place_hits(judged: exp.Select, placed: exp.Select) -> None:
    """judged_hits.sql's hits from placed_hits.sql: score_lists.sql's lists carry scores, not
    items, so each recommended relevant item is placed by its score."""
    hits = next(cte for cte in judged.find_all(exp.CTE) if cte.alias == "hits")
    hits.set("this", placed)


def next_score_in_ranked(ranked: exp.Select, diagnosis: list[tuple[str, exp.Expr]]) -> None:
    """diagnostics.sql's ``ranked_counts`` reading each row's next score from ranked's own
    window (``next_score``: a LEAD with the partition and order of its ROW_NUMBER, which shares
    its sort) instead of a LEAD over ranked's rows, a second sort of every row when whole lists
    are ranked. Nothing changes where ranked has no such window (a rank column, top-k lists)."""
    tied = dict(diagnosis).get("ranked_counts")
    numbered = next(
        (
            window
            for window in ranked.find_all(exp.Window)
            if isinstance(window.this, exp.RowNumber)
            and window.parent is not None
            and isinstance(window.parent, exp.Alias)
            and window.parent.alias == "pos"
        ),
        None,
    )
    if tied is None or numbered is None:
        return
    lead = next((w for w in tied.find_all(exp.Window) if isinstance(w.this, exp.Lead)), None)
    if lead is None:
        raise ValueError("diagnostics.sql: ranked_counts reads the next score with a LEAD")
    shared = numbered.copy()
    shared.set("this", lead.this.copy())
    ranked.select(exp.alias_(shared, "next_score"), copy=False)
    lead.replace(exp.column("next_score"))
