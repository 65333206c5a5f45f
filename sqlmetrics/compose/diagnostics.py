"""The diagnostics and the input checks, counted by the same query as the metrics.

``DIAGNOSTICS`` (the counts beside the numbers: METRICS.md "Results") and ``CHECKS`` (the
bad rows, of which evaluate refuses ``refused_checks``) come from diagnostics.sql and
list_counts.sql: ``diagnostics_stages`` binds them as CTEs ending in ``diagnosed`` (one row per
group), and ``with_diagnostics_rows`` puts those rows after the metric rows, each marked in
the ``KIND`` column. compose.compose_checks makes them a query of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from sqlglot import exp

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose import duckdb_plan
from sqlmetrics.compose.inputs import Inputs, Options
from sqlmetrics.compose.per_user import MetricColumn, requested_cutoffs
from sqlmetrics.compose.stages import (
    bind_placeholders,
    derived_table,
    group_key,
    nulls_last,
    number,
    stage,
)
from sqlmetrics.compose.summary import summed_names

DIAGNOSTICS = (
    "users_in_interactions",
    "users_with_recommendations",
    "population_without_recommendations",
    "recommended_without_relevant",
    "lists_shorter_than_k",
    "duplicate_recommendations",
    "duplicate_interactions",
    "null_scores",
    "tied_score_groups",
    "single_class_users",  # lists gauc and user_auc skip: every scored row relevant, or none
)
# Counts of rows evaluate refuses (see checks.refuse_bad_rows); computed by the same query.
CHECKS = (
    "bad_recommendation_user_ids",
    "bad_recommendation_item_ids",
    "bad_scores",
    "bad_rank_lists",
    "bad_interaction_user_ids",
    "bad_interaction_item_ids",
    "bad_relevance",
    "relevance_over_1000",  # refused only for exponential gains: 2^1000 leaves room for sums
    "scores_outside_0_1",  # refused only for a metric reading probabilities (its header)
    "bad_weights",  # the scored rows' weights (compose/weights.py), with a weight column
)
# Exponential gain 2^rel overflows a double past rel = 1023; above this bound sums could too.
EXPONENTIAL_GAIN_BOUND = 1000
KIND = "sqlmetrics_row"  # evaluate's query marks each row as "metrics" or "diagnostics"


def diagnostics_stages(
    options: Options,
    requests: Sequence[MetricRequest],
    keys: Sequence[str],
    scored: bool,
    repeats: str = "lists",
    chained: bool = False,
    weighted: bool = False,
) -> list[tuple[str, exp.Expr]]:
    """diagnostics.sql as CTEs, its final SELECT (one row per group) named ``diagnosed``.
    Without ``scored`` (no metric reads it) its ``single_class`` CTE is dropped and counts 0;
    without ``weighted`` (a weight column) its bad_weights count 0.
    ``ranked_counts`` counts, in one pass over ranked's rows, the tie groups (0 without a
    cutoff) and the repeated items. ``repeats``: where those are counted: "ranked", among
    ranked's first positions (ranked_counts); "lists", list_counts' (over whole lists, or
    DuckDB's lists' own count); "none", nowhere (0). Without either count ranked_counts is
    dropped; ``chained`` drops it too, its counts 0 in listed (chain.py counts them in the
    metrics' chain)."""
    query = stage("diagnostics")
    if not scored:
        _without_cte(query, "single_class", "single_class")
        _without_cte(query, "single_class", "bad_weights")
    elif not weighted:
        single_class = _cte(query, "single_class")
        kept = [p for p in single_class.expressions if p.alias_or_name != "bad_weights"]
        single_class.set("expressions", kept)
        for projection in _cte(query, "listed").expressions:
            if projection.alias_or_name == "bad_weights":
                projection.set("this", exp.Literal.number(0))
    _count_repeats(query, repeats)
    cutoffs = requested_cutoffs(requests)
    _count_ties(query, cutoffs)
    if chained and any(cte.alias == "ranked_counts" for cte in query.args["with_"].expressions):
        for count in ("duplicate_rows", "tie_groups"):
            _without_cte(query, "ranked_counts", count)
    max_k = max(cutoffs, default=None)
    query = bind_placeholders(
        query,
        threshold=number(options.threshold),
        max_k=exp.Literal.number(max_k) if max_k is not None else exp.Null(),
    )
    ctes = [(cte.alias, cte.this) for cte in query.args["with_"].expressions]
    query.set("with_", None)
    if keys:
        # One row per group: users holds the group columns once widened.
        groups = [exp.column(key) for key in keys]
        query.set("expressions", groups + query.expressions)
        query = query.group_by(*[exp.Literal.number(i + 1) for i in range(len(keys))])
    return [*ctes, ("diagnosed", query)]


def row_checks_stages(
    options: Options, requests: Sequence[MetricRequest], dialect: str
) -> list[tuple[str, exp.Expr]]:
    """The chained diagnostics without a row per list (plan.py's diagnostics "chained"):
    list_checks.sql's one aggregate over every recommendation, diagnostics.sql's interacted,
    and diagnostics_chained.sql's users (per_user beside interacted) and final SELECT, named
    ``diagnosed``."""
    checks = stage("list_checks")
    if dialect == "duckdb":
        duckdb_plan.count_nan_by_filter(checks)
    interacted = bind_placeholders(
        _cte(stage("diagnostics"), "interacted"), threshold=number(options.threshold)
    )
    max_k = max(requested_cutoffs(requests), default=None)
    chained = bind_placeholders(
        stage("diagnostics_chained"),
        max_k=exp.Literal.number(max_k) if max_k is not None else exp.Null(),
    )
    ctes = [(cte.alias, cte.this) for cte in chained.args["with_"].expressions]
    chained.set("with_", None)
    return [("list_checks", checks), ("interacted", interacted), *ctes, ("diagnosed", chained)]


def _count_repeats(query: exp.Select, repeats: str) -> None:
    """The repeated items counted where ``repeats`` says (diagnostics_stages)."""
    if repeats != "lists":
        counted = _cte(query, "counted")
        kept = [p for p in counted.expressions if p.alias_or_name != "duplicate_rows"]
        counted.set("expressions", kept)
    if repeats == "lists":
        _without_count(query, "duplicate_rows", exp.column("duplicate_rows", "counted"))
    elif repeats == "none":
        _without_count(query, "duplicate_rows", exp.Literal.number(0))


def _count_ties(query: exp.Select, cutoffs: Sequence[int]) -> None:
    """The tie groups straddling one of ``cutoffs`` counted; none without a cutoff."""
    if not cutoffs:  # no cutoff for a tie group to straddle
        _without_count(query, "tie_groups", exp.Literal.number(0))
        return
    for placeholder in list(query.find_all(exp.Placeholder)):
        if placeholder.name == "cutoffs" and isinstance(placeholder.parent, exp.In):
            placeholder.parent.set("expressions", [exp.Literal.number(k) for k in cutoffs])


def _cte(query: exp.Select, name: str) -> exp.Select:
    found = next(cte.this for cte in query.args["with_"].expressions if cte.alias == name)
    return cast(exp.Select, found)


def _without_count(query: exp.Select, count: str, instead: exp.Expr) -> None:
    """diagnostics.sql without ranked_counts' ``count``: listed reads ``instead``; the CTE
    goes when it has no count left, and the item ids when no count reads them."""
    ranked_counts = _cte(query, "ranked_counts")
    kept = [p for p in ranked_counts.expressions if p.alias_or_name != count]
    ranked_counts.set("expressions", kept)
    for projection in _cte(query, "listed").expressions:
        if projection.alias_or_name == count:
            projection.set("this", instead.copy())
    if len(kept) == 1:  # user_id alone
        _without_cte(query, "ranked_counts", count)
        return
    neighbours = ranked_counts.args["from_"].this.this
    if not any(c.name == "item_id" for p in kept for c in p.find_all(exp.Column)):
        neighbours.set(
            "expressions", [p for p in neighbours.expressions if p.alias_or_name != "item_id"]
        )


def _without_cte(query: exp.Select, name: str, count: str) -> None:
    """diagnostics.sql without its CTE ``name``, and the count it gives (``count``) 0."""
    with_ = query.args["with_"]
    with_.set("expressions", [c for c in with_.expressions if c.alias != name])
    for select in query.find_all(exp.Select):
        joins = [j for j in select.args.get("joins") or [] if j.this.name != name]
        select.set("joins", joins)
    for projection in query.find_all(exp.Alias):
        if projection.alias == count and any(
            column.table == name for column in projection.find_all(exp.Column)
        ):
            projection.set("this", exp.Literal.number(0))


def list_counts_stage(given_ranks: bool, literal: bool = False) -> exp.Select:
    """list_counts.sql: with a rank column the ranks are the "scores" it counts (as in
    ranked_given.sql); without one, lists the stages number themselves have no broken ranks.
    Under ranks="literal" a list's ranks are broken when one is below 1 or not whole
    (broken_literal_ranks); otherwise when they are not 1..n (broken_ranks)."""
    counts = stage("list_counts")
    for column in list(counts.find_all(exp.Column)):
        if given_ranks and column.name == "score":
            column.set("this", exp.to_identifier("pos"))
    projections = {projection.alias_or_name: projection for projection in counts.expressions}
    rule = projections.pop("broken_literal_ranks")
    if literal:
        projections["broken_ranks"].set("this", rule.this)
    if not given_ranks:
        projections["broken_ranks"].set("this", exp.Literal.number(0))
    counts.set("expressions", list(projections.values()))
    return counts


def with_diagnostics_rows(
    query: exp.Select, inputs: Inputs, columns: list[MetricColumn], per_user: bool, sums: bool
) -> exp.Query:
    """The metric rows, then one diagnostics row per group, in one result set."""
    groups = [exp.to_identifier(group.name, quoted=True) for group in inputs.groups]
    first = [exp.to_identifier(inputs.user.name if per_user else "users", quoted=True)]
    labels = (
        [exp.to_identifier(name) for _, name, _ in summed_names(columns)]
        if sums and not per_user
        else [exp.to_identifier(column.request.label, quoted=True) for column in columns]
    )
    counts = [exp.to_identifier(name) for name in DIAGNOSTICS + CHECKS]
    keys = [exp.column(group_key(i)) for i in range(len(groups))]
    diagnosed = exp.select(
        exp.alias_(exp.Literal.string("diagnostics"), KIND),
        *[exp.alias_(key, group) for key, group in zip(keys, groups, strict=True)],
        *[exp.alias_(exp.Null(), name) for name in first + labels],
        *[exp.column(name) for name in counts],
    ).from_("diagnosed")
    query.set("order", None)  # the caller orders each kind of row
    # ``query`` is handed over: wrapped without a copy of the whole tree at each step
    metrics = exp.select(
        exp.alias_(exp.Literal.string("metrics"), KIND),
        *[exp.column(name) for name in groups + first + labels],
        *[exp.alias_(exp.Null(), name) for name in counts],
    ).from_(derived_table(query, "metrics"), copy=False)
    order = [exp.column(KIND), *[exp.column(name) for name in groups]]
    if per_user:
        order.append(exp.column(first[0]))
    rows = exp.union(metrics, diagnosed, distinct=False, copy=False)
    return rows.order_by(*nulls_last(order), copy=False)


def refused_checks(
    requests: Sequence[MetricRequest], inputs: Inputs, options: Options
) -> list[str]:
    """The counts of DIAGNOSTICS and CHECKS that evaluate refuses to go on with (any nonzero)."""
    refused = ["bad_recommendation_user_ids", "bad_recommendation_item_ids"]
    refused += ["bad_scores", "bad_interaction_user_ids", "bad_interaction_item_ids"]
    if inputs.rank is not None:
        refused.append("bad_rank_lists")
    if inputs.relevance is not None:
        refused.append("bad_relevance")
        if any(uses_exponential_gain(r) for r in requests):
            refused.append("relevance_over_1000")
    if inputs.weight is not None:
        refused.append("bad_weights")
    if options.duplicates == "error":
        refused.append("duplicate_recommendations")
    if any(r.metric.reads_probabilities for r in requests) and inputs.score is not None:
        refused.append("scores_outside_0_1")
    return refused


def uses_exponential_gain(request: MetricRequest) -> bool:
    return any(column.name == "exp_gain" for column in request.metric.query.find_all(exp.Column))
