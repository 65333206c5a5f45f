"""Fuses the requested metrics into one query over the shared stages in ``sql/stages/``.

The stages rank each list once (down to the deepest cutoff requested), join it to the relevant
interactions once, and every metric is one or two aggregate expressions in ``per_user``: twenty
metrics at five cutoffs are still one scan of each input. Everything is built on sqlglot trees;
user-supplied names arrive as identifier nodes and values as literals, never as SQL text.

Which plan runs (DuckDB's per-user lists, hit rows only, the curve plan, the windows of every
other dialect, arms.py's groups) is chosen once, in plan.py (``choose_plan``, with a table of
the conditions); compose() assembles the chosen plan's stages.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from sqlglot import exp

from sqlmetrics import duckdb_plan
from sqlmetrics.catalog import MetricRequest
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.gc_paused import gc_paused
from sqlmetrics.inputs import (
    ID_TIES,
    JUDGED_POPULATIONS,
    Inputs,
    Options,
    bind_history,
    bind_items,
    input_stages,
)
from sqlmetrics.per_user import (
    MetricColumn,
    bound_source,
    deepest_cutoff,
    lists_stages,
    per_user_stages,
    per_user_union,
    requested_cutoffs,
    spread_per_user_constants,
    stable_user_sums,
    tie_averaged_sums,
    widest_population,
    with_judged_users,
)
from sqlmetrics.stages import (
    bind_placeholders,
    group_key,
    nulls_last,
    number,
    prune,
    same_group,
    stage,
    widen_keys,
    with_ctes,
)
from sqlmetrics.sums import aggregate

if TYPE_CHECKING:
    from sqlmetrics import curves
    from sqlmetrics.plan import Plan

# Dialects that rank with sql/stages/top_lists.sql (a top-k aggregate) instead of a window
# sort when it gives the same rows; tests empty it to run the portable plan on DuckDB too.
TOP_K_DIALECTS = frozenset({"duckdb"})
# Above this cutoff sql/stages/sorted_lists.sql sorts each whole list instead: the top-k
# aggregate keeps every user's k + 3 best in memory (bench/ data, k = 1..100 in one call with
# top lists up to 100: 16 GB at 1e8 rows; at k = 10 the top-k aggregate wins).
TOP_K_MAX_CUTOFF = 20


def _cutoff_literal(tree: exp.Select, cutoff: int | None) -> exp.Select:
    """Binds ``$cutoff``; without one (a metric reads the whole list) drops the QUALIFY (the
    WHERE of ranked_given.sql, which has no window to qualify)."""
    if cutoff is None:
        tree.set("qualify", None)
        where = tree.args.get("where")
        if where is not None and any(p.name == "cutoff" for p in where.find_all(exp.Placeholder)):
            tree.set("where", None)
        return tree
    return bind_placeholders(tree, cutoff=exp.Literal.number(cutoff))


@gc_paused
def compose(
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    per_user: bool = False,
    dialect: str = "duckdb",
    diagnostics: bool = False,
    user_pass: UserPass | None = None,
    score_floor: float | None = None,
    portable: bool = False,
    cross_arms: bool = False,
) -> exp.Query:
    """One query computing every request: a summary row per group, or a row per user.

    evaluate's own forms: with ``diagnostics`` the diagnostics of METRICS.md "Results" come from
    the same stages as extra rows (see ``DIAGNOSTICS``); ``user_pass`` (a UserPass) keeps the
    users of one pass and returns sums instead of means (see ``partial_columns``), for
    evaluating in passes under a memory limit; ``score_floor``
    (engines.duckdb_passes.score_floor) spares the DuckDB top-k aggregate the scores below it.
    ``portable``: none of DuckDB's own plans (TOP_K_DIALECTS) on DuckDB either (the dbt
    package templates the cutoff and the columns into the portable stages). ``cross_arms``: a
    group column only the recommendations have is crossed into the interactions even for a
    summary (the plan complement_arms replaces; tests compare them)."""
    _check_compatible(requests, inputs, options)
    # (arms.py, curves.py and plan.py compose with this module: imported here, not at the top)
    from sqlmetrics import curves
    from sqlmetrics.arms import complement_arms
    from sqlmetrics.plan import choose_plan

    plan = choose_plan(
        requests,
        inputs,
        options,
        dialect,
        per_user=per_user,
        user_pass=user_pass,
        portable=portable,
        cross_arms=cross_arms,
    )
    if plan.groups == "arms":
        return complement_arms(
            requests, inputs, options, dialect, diagnostics=diagnostics, score_floor=score_floor
        )
    over_lists = [r for r in requests if r.metric.reads == "lists"]
    if over_lists and user_pass is not None:
        raise SqlmetricsError(
            f"{', '.join(r.label for r in over_lists)} read every list at once and cannot be "
            "evaluated in passes over the users; raise DuckDB's memory_limit "
            "(connection=duckdb.connect(config={'memory_limit': ...}))"
        )
    keys = [group_key(i) for i in range(len(inputs.groups))]
    population = widest_population(requests, options)
    selects, columns = per_user_stages(requests, options, population=population)
    cutoff = deepest_cutoff(requests)
    curve = plan.curve
    if curve is not None and cutoff is not None:  # per_user_lists, then per_user per cutoff
        selects["judged"] = curves.lists_stage(selects["judged"], curve, cutoff)
    ranking = "judged" in selects

    # Prune judged -> joined -> ranked/truth to the columns the metrics (and diagnostics) read.
    needed = {"user_id"}
    for per_source in selects.values():
        needed |= {column.name for column in per_source.find_all(exp.Column)}
    needed_by_metrics = set(needed)
    judged, joined, truth = stage("judged"), stage("joined"), stage("truth")
    _hits_so_far(judged, literal=inputs.rank is not None and options.ranks == "literal")
    lists = plan.lists
    top_k = lists is not None
    ranked = _ranked_stage(plan.ranked, options)
    if options.ties == "average":
        # The tie-averaged quantities come from ranked_average instead of judged's formulas.
        for projection in judged.expressions:
            if projection.alias_or_name in ("hit", "gain", "exp_gain"):
                projection.replace(exp.column(projection.alias_or_name))
        for name in ("hit", "gain", "exp_gain", "hits_through"):
            joined.select(exp.column(name, "ranked"), copy=False)
        judged.select(exp.column("hits_through"), copy=False)
    # The diagnostics count the lists gauc skips from scored's positives and negatives.
    counted = {"positives", "negatives"} if diagnostics else set()
    scored_stages = [
        (source, bound_source(source, selects[source], counted, options, population))
        for source in ("scored", "rated", "judgements", "pool")
        if source in selects
    ]
    positives_only = plan.scored == "scored_positives"
    if positives_only:
        scored_stages = [
            (name, stage("scored_positives") if name == "scored" else source)
            for name, source in scored_stages
        ]
    if ranking:
        spread_per_user_constants(judged, selects["judged"])
        if plan.judged == "joined_hits":
            duckdb_plan.keep_hit_rows(joined)
        needed = prune(judged, needed) | {"user_id"}
        needed = prune(joined, needed) | {"user_id", "item_id"}
    else:
        needed = {"user_id", "item_id"}
    for _, source in scored_stages:
        needed |= {column.name for column in source.find_all(exp.Column)}
    diagnosis = (
        _diagnostics_stages(options, requests, keys, scored="scored" in selects)
        if diagnostics
        else []
    )
    for name, cte in diagnosis:
        if name != "counted":  # list_counts.sql's columns, not ranked's
            needed |= {column.name for column in cte.find_all(exp.Column)}
    prune(ranked, needed | {"pos"} | ({"user_id", "item_id"} if over_lists else set()))
    # list_counts.sql gives the lengths ranked no longer counts with windows over whole lists.
    list_lengths = "list_length" in needed and not top_k
    prune(truth, needed | {column.name for column in ranked.find_all(exp.Column)})
    truth = bind_placeholders(truth, threshold=number(options.threshold))
    # Diagnostics also read the position after each cutoff: a tie across it decides what is in.
    ranked_cutoff = cutoff + 1 if diagnostics and cutoff else cutoff
    ranked = _cutoff_literal(ranked, ranked_cutoff)
    if list_lengths:
        ranked = _with_list_lengths(ranked)
    top_lists = _top_lists_stage(lists, options, cutoff, ranked_cutoff, score_floor, diagnostics)
    hit_rows = plan.judged == "judged_hits"
    if ranking and plan.same_bits:
        stable_user_sums(selects["judged"])

    bound = input_stages(
        inputs,
        options,
        keys,
        user_pass,
        rating="rated" in selects,
        pool="pool" in selects,
    )
    stages: list[tuple[str, exp.Expr]] = []
    if (list_lengths or diagnostics) and not top_k:
        stages.append(("list_counts", _list_counts(plan, inputs, options, dialect, diagnostics)))
    if hit_rows:
        stages += _hit_rows_stages(
            top_lists,
            needed_by_metrics,
            cutoff,
            options,
            diagnostics,
            long_lists=lists == "sorted_lists",
        )
        if diagnostics:
            cutoffs = exp.Array(expressions=list(map(exp.convert, requested_cutoffs(requests))))
            listed = bind_placeholders(stage("listed_top_k"), cutoffs=cutoffs)
            diagnosis = duckdb_plan.diagnose_lists(diagnosis, listed)
    else:
        if ranking or "scored" in selects or _reads(ranked, "truth"):
            stages.append(("truth", truth))
        if top_k and (ranking or diagnostics):
            stages.append(("top_lists", top_lists))
        if ranking or any(_reads(cte, "ranked") for _, cte in [*diagnosis, *scored_stages]):
            stages.append(("ranked", ranked))
        if ranking:
            stages += [*_ranked_ideal(joined), ("joined", joined), ("judged", judged)]
    if ranking and population in JUDGED_POPULATIONS:
        stages = [
            (name, with_judged_users(cast(exp.Select, cte)) if name == "judged" else cte)
            for name, cte in stages
        ]
    stages += scored_stages
    if curve is not None:
        stages += [
            ("per_user_lists", selects["judged"]),
            ("per_user", curves.per_user_stage(curve, requested_cutoffs(requests))),
        ]
    else:
        stages += per_user_union(selects, columns)
    if top_k and diagnostics:  # counted by top_lists' own aggregate over the recommendations
        stages.append(("list_counts", duckdb_plan.list_counts_from("top_lists")))
    stages += diagnosis
    stages = [(name, widen_keys(cte, keys)) for name, cte in stages]
    if over_lists:
        if inputs.items is not None:
            category = any("category" in r.metric.needs_items for r in over_lists)
            bound.append(("input_items", bind_items(inputs, category)))
        if any(r.metric.needs_history for r in over_lists):
            bound.append(("input_history", bind_history(inputs)))
        stages += lists_stages(columns, inputs, keys)
    final = (
        curves.final(curve, requests, inputs, sums=user_pass is not None)
        if curve is not None
        else _final(
            columns,
            inputs,
            per_user,
            exact_sums=plan.same_bits,
            sums=user_pass is not None,
            population=ranking and len(selects) > 1,  # else COUNT(*) of per_user
        )
    )
    query = (
        _with_diagnostics_rows(final, inputs, columns, per_user, sums=user_pass is not None)
        if diagnostics
        else final
    )
    composed = with_ctes(query, [*bound, *stages])
    if top_k or (positives_only and "scored" in selects):
        duckdb_plan.read_inputs_again(
            composed, interactions=hit_rows, recommendations=options.duplicates != "first"
        )
    return composed


def plan_switches() -> tuple[object, ...]:
    """What tests switch plans with (TOP_K_DIALECTS, curves.MIN_CUTOFFS): part of the keys
    of the caches of composed SQL, so that a switched plan is composed again."""
    from sqlmetrics import curves

    return (TOP_K_DIALECTS, curves.MIN_CUTOFFS)


def curve_split(
    requests: Sequence[MetricRequest], options: Options, population: str, hit_rows: bool = False
) -> curves.Split | None:
    """The curve plan's parts (sqlmetrics/curves.py) when enough cutoffs are asked of metric
    files it can take apart; None: the window plan. ``hit_rows``: judged is judged_hits.sql's,
    whose rows with a position are all hits."""
    from sqlmetrics import curves

    if len(set(requested_cutoffs(requests))) < curves.MIN_CUTOFFS:
        return None
    prepared = [
        {
            alias: tie_averaged_sums(expression) if options.ties == "average" else expression
            for alias, expression in request.metric.expressions().items()
        }
        for request in requests
    ]
    narrowed = [
        population == "all" and (request.population or options.population) == "common"
        for request in requests
    ]
    return curves.split(requests, prepared, narrowed, hit_rows)


def _top_lists_stage(
    lists: str | None,
    options: Options,
    cutoff: int | None,
    rows: int | None,
    score_floor: float | None,
    diagnostics: bool,
) -> exp.Select:
    """plan.py's lists (top_lists.sql or sorted_lists.sql), each user's first ``rows`` items
    (the deepest cutoff, + 1 for the diagnostics) as lists; ranked_top_k.sql unnests them, the
    hit-rows plan joins them (duckdb_plan.py). Unused (and not assembled) without lists."""
    top_lists = stage(lists or "top_lists")
    duckdb_plan.bind_repeats(top_lists)
    if options.ties == "id_text":
        _order_ids_as_text(top_lists)
    if lists is not None and cutoff is not None and rows is not None:
        top_lists = bind_placeholders(
            top_lists, cutoff=exp.Literal.number(cutoff), rows=exp.Literal.number(rows)
        )
    duckdb_plan.bind_score_floor(top_lists, score_floor)
    if lists is not None and not diagnostics:
        duckdb_plan.without_list_checks(top_lists)
    return top_lists


def _list_counts(
    plan: Plan, inputs: Inputs, options: Options, dialect: str, diagnostics: bool
) -> exp.Select:
    """list_counts.sql: the lengths the metrics read, and with the diagnostics every count
    over the whole lists (on DuckDB's own plans, the repeats found in each list's items)."""
    given_ranks = inputs.rank is not None
    list_counts = list_counts_stage(given_ranks, given_ranks and options.ranks == "literal")
    if not diagnostics:  # only the diagnostics read more than the lengths
        prune(list_counts, {"user_id", "list_length"})
    if dialect == "duckdb" and diagnostics:
        duckdb_plan.count_nan_by_filter(list_counts)
    if plan.own and diagnostics:
        list_counts = duckdb_plan.count_repeats_in_lists(list_counts)
    return list_counts


def lists_stage(requests: Sequence[MetricRequest], options: Options, dialect: str) -> str | None:
    """The stage building each user's first items as lists: top_lists.sql (a top-k aggregate)
    up to TOP_K_MAX_CUTOFF, sorted_lists.sql (each whole list sorted) deeper; None: the window
    plan (other dialects and tie policies, metrics without a cutoff)."""
    cutoff = deepest_cutoff(requests)
    if options.ties not in ID_TIES or cutoff is None or dialect not in TOP_K_DIALECTS:
        return None
    return "top_lists" if cutoff <= TOP_K_MAX_CUTOFF else "sorted_lists"


def _hit_rows_stages(
    top_lists: exp.Select,
    needed: set[str],
    cutoff: int | None,
    options: Options,
    diagnostics: bool,
    long_lists: bool,
) -> list[tuple[str, exp.Expr]]:
    """DuckDB's hit-rows plan (duckdb_plan.py): judged from per-user lists and hit rows.
    ``long_lists``: sorted_lists.sql's, whose hits join the relevant pairs grouped first."""
    truth_lists, judged = stage("truth_lists"), stage("judged_hits")
    if not diagnostics:  # only the diagnostics read the other counts
        prune(truth_lists, {"user_id", "n_relevant", "top_relevances"})
    prune(judged, needed)
    if long_lists:
        duckdb_plan.join_relevant_pairs(judged)
    threshold = number(options.threshold)
    return [
        (
            "truth_lists",
            bind_placeholders(truth_lists, threshold=threshold, cutoff=exp.convert(cutoff)),
        ),
        ("top_lists", top_lists),
        ("judged", bind_placeholders(judged, threshold=threshold, cutoff=exp.convert(cutoff))),
    ]


def _check_compatible(requests: Sequence[MetricRequest], inputs: Inputs, options: Options) -> None:
    if options.ties == "average":
        refused = [r.label for r in requests if not r.metric.ties_average]
        if refused:
            raise SqlmetricsError(
                f"ties='average' has no exact closed form for {', '.join(refused)}; "
                "use ties='id', 'optimistic' or 'pessimistic' for these metrics"
            )
    needing = [r.label for r in requests if "category" in r.metric.needs_items]
    if needing and inputs.items is None:
        raise SqlmetricsError(
            f"{', '.join(needing)} need an items table with a category column: pass "
            "items=... (CLI: --items), one row per item with the item column and its category"
        )
    if needing and inputs.category is None:
        raise SqlmetricsError(
            f"{', '.join(needing)} read the category of each item, and the items table has no "
            "category column; name yours with columns={'category': ...} (CLI: --category-column)"
        )
    wanting = [r.label for r in requests if r.metric.needs_history]
    if wanting and inputs.history is None:
        raise SqlmetricsError(
            f"{', '.join(wanting)} compare each recommended item with what the user consumed "
            "before: pass history=... (CLI: --history), one row per (user, item) of the "
            "user's past, with the same user and item columns"
        )
    by_score = [r.label for r in requests if r.metric.reads in ("scored", "rated")]
    if by_score and inputs.rank is not None:
        raise SqlmetricsError(
            f"{', '.join(by_score)} read the scores, not positions: give the score column "
            "instead of the rank column"
        )
    rated = [r.label for r in requests if r.metric.reads == "rated"]
    if rated and inputs.rating is None:
        raise SqlmetricsError(
            f"{', '.join(rated)} compare the score with a rating: name the interactions' rating "
            "column with columns={'rating': ...} (CLI: --rating-column)"
        )
    if inputs.rank is not None and options.ties not in ID_TIES:
        raise SqlmetricsError(
            "a rank column fixes the order, so ties must stay 'id' (or 'id_text'); drop the "
            "rank column or ties"
        )
    walking = [r.label for r in requests if r.metric.walks_positions]
    if walking and inputs.rank is not None and options.ranks == "literal":
        raise SqlmetricsError(
            f'ranks="literal" cannot serve {", ".join(walking)}: it walks each list item by '
            "item in order, which a repeated rank leaves open; give ranks 1, 2, ..., n (the "
            'default ranks="consecutive") or a score column'
        )


def ranked_stage_name(inputs: Inputs, options: Options, top_k: bool) -> str:
    """The stage that ranks the rows (plan.py's ``ranked``)."""
    if inputs.rank is not None:
        return "ranked_given"
    if options.ties in ID_TIES:
        return "ranked_top_k" if top_k else "ranked"
    return "ranked_average" if options.ties == "average" else "ranked_by_relevance"


def _ranked_stage(name: str, options: Options) -> exp.Select:
    ranked = stage(name)
    if name in ("ranked", "ranked_top_k") and options.ties == "id_text":
        _order_ids_as_text(ranked)
    if name == "ranked_by_relevance" and options.ties == "pessimistic":
        for ordered in ranked.find_all(exp.Ordered):
            if isinstance(ordered.this, exp.Coalesce):
                ordered.set("desc", False)
    return ranked


def _order_ids_as_text(ranked: exp.Select) -> None:
    """ties="id_text": equal scores by the item id's text, descending (trec_eval compares docnos
    with strcmp, so 9 comes before 100 before 10). dialects.py makes that text compare byte by
    byte where the default collation would not."""
    for ordered in ranked.find_all(exp.Ordered):
        if isinstance(ordered.this, exp.Column) and ordered.this.name == "item_id":
            ordered.set("this", exp.cast(ordered.this.copy(), exp.DataType.build("varchar")))
    # top_lists.sql and sorted_lists.sql sort {score, item} structs: the text goes in between.
    for struct in ranked.find_all(exp.Struct):
        fields = list(struct.expressions)
        item = next((f.expression for f in fields if f.this.name == "item"), None)
        if item is None:
            continue
        text = exp.cast(item.copy(), exp.DataType.build("varchar"))
        fields.insert(1, exp.PropertyEQ(this=exp.to_identifier("item_text"), expression=text))
        struct.set("expressions", fields)


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
    "scores_outside_0_1",  # refused only for logloss, which reads scores as probabilities
)
# Exponential gain 2^rel overflows a double past rel = 1023; above this bound sums could too.
EXPONENTIAL_GAIN_BOUND = 1000
KIND = "sqlmetrics_row"  # evaluate's query marks each row as "metrics" or "diagnostics"


def _diagnostics_stages(
    options: Options, requests: Sequence[MetricRequest], keys: Sequence[str], scored: bool
) -> list[tuple[str, exp.Expr]]:
    """diagnostics.sql as CTEs, its final SELECT (one row per group) named ``diagnosed``.
    Without ``scored`` (no metric reads it) its ``single_class`` CTE is dropped and counts 0;
    without a cutoff, its ``tied`` CTE."""
    query = stage("diagnostics")
    if not scored:
        _without_cte(query, "single_class", "single_class")
    cutoffs = requested_cutoffs(requests)
    if cutoffs:
        for placeholder in list(query.find_all(exp.Placeholder)):
            if placeholder.name == "cutoffs" and isinstance(placeholder.parent, exp.In):
                placeholder.parent.set("expressions", [exp.Literal.number(k) for k in cutoffs])
    else:  # no cutoff for a tie group to straddle
        _without_cte(query, "tied", "tie_groups")
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


def _reads(tree: exp.Expr, name: str) -> bool:
    return any(table.name == name for table in tree.find_all(exp.Table))


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


IDEAL_COLUMNS = ("ideal_dcg_through", "ideal_excess_through", "level_weight_from")


def _ranked_ideal(joined: exp.Select) -> list[tuple[str, exp.Expr]]:
    """ranked_ideal.sql, when joined (pruned) reads its columns of the ideal order (only
    ndcg_rel, normalized_gain and rndcg do): pruned to what joined reads, and read by joined
    in ranked's place (as ``ranked``, so joined.sql's names stand). Else nothing."""
    reads = {column.name for column in joined.find_all(exp.Column)}
    if not reads & set(IDEAL_COLUMNS):
        return []
    ranked_ideal = stage("ranked_ideal")
    prune(ranked_ideal, reads)
    for table in joined.find_all(exp.Table):
        if table.name == "ranked":
            table.set("this", exp.to_identifier("ranked_ideal"))
            table.set("alias", exp.TableAlias(this=exp.to_identifier("ranked")))
    return [("ranked_ideal", ranked_ideal)]


def _hits_so_far(judged: exp.Select, literal: bool) -> None:
    """judged.sql's hits_so_far, or under ranks="literal" its hits_through_position (the
    relevant items at positions 1..pos, repeated positions included, carried by one relevant
    row per position); the other is dropped."""
    projections = {projection.alias_or_name: projection for projection in judged.expressions}
    by_position = projections.pop("hits_through_position")
    if literal:
        projections["hits_so_far"].set("this", by_position.this)
    judged.set("expressions", list(projections.values()))


def _with_list_lengths(ranked: exp.Select) -> exp.Select:
    """ranked with each list's length (list_counts.sql), for the metrics that read it."""
    names = [projection.alias_or_name for projection in ranked.expressions]
    return (
        exp.select(
            *[exp.column(name, "ranked_rows") for name in names],
            exp.column("list_length", "list_counts"),
        )
        .from_(exp.alias_(exp.paren(ranked), "ranked_rows"))
        .join(
            "list_counts",
            on=exp.column("user_id", "ranked_rows").eq(exp.column("user_id", "list_counts")),
            join_type="left",
        )
    )


def _with_diagnostics_rows(
    query: exp.Select, inputs: Inputs, columns: list[MetricColumn], per_user: bool, sums: bool
) -> exp.Query:
    """The metric rows, then one diagnostics row per group, in one result set."""
    groups = [exp.to_identifier(group.name, quoted=True) for group in inputs.groups]
    first = [exp.to_identifier(inputs.user.name if per_user else "users", quoted=True)]
    labels = (
        [exp.to_identifier(name) for _, name, _ in _summed_names(columns)]
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
    metrics = exp.select(
        exp.alias_(exp.Literal.string("metrics"), KIND),
        *[exp.column(name) for name in groups + first + labels],
        *[exp.alias_(exp.Null(), name) for name in counts],
    ).from_(exp.alias_(exp.paren(query), "metrics"))
    order = [exp.column(KIND), *[exp.column(name) for name in groups]]
    if per_user:
        order.append(exp.column(first[0]))
    return exp.union(metrics, diagnosed, distinct=False).order_by(*nulls_last(order))


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
    if options.duplicates == "error":
        refused.append("duplicate_recommendations")
    if any(r.metric.name == "logloss" for r in requests) and inputs.score is not None:
        refused.append("scores_outside_0_1")
    return refused


def uses_exponential_gain(request: MetricRequest) -> bool:
    return any(column.name == "exp_gain" for column in request.metric.query.find_all(exp.Column))


@gc_paused
def compose_checks(
    requests: Sequence[MetricRequest], inputs: Inputs, options: Options, dialect: str = "duckdb"
) -> exp.Query:
    """The input checks and diagnostics evaluate runs, as a query of their own for a scheduled
    job: one row per group with every count and ``refused_rows``, the sum of the counts that
    evaluate refuses (0 when the inputs are fit to evaluate with these metrics and options)."""
    full = compose(requests, inputs, options, dialect=dialect, diagnostics=True)
    ctes = {cte.alias: cte.this for cte in full.args["with_"].expressions}
    groups = [exp.to_identifier(group.name, quoted=True) for group in inputs.groups]
    counts = [exp.column(name) for name in DIAGNOSTICS + CHECKS]
    refused = exp.alias_(
        functools.reduce(
            lambda total, count: exp.Add(this=total, expression=count),
            [
                cast(exp.Expr, exp.column(name))
                for name in refused_checks(requests, inputs, options)
            ],
        ),
        "refused_rows",
    )
    query = exp.select(
        *[exp.alias_(exp.column(group_key(i)), g) for i, g in enumerate(groups)],
        *counts,
        refused,
    ).from_("diagnosed")
    if groups:
        query = query.order_by(*nulls_last([exp.column(group_key(i)) for i in range(len(groups))]))
    return with_ctes(query, [(name, ctes[name]) for name in _needed_ctes(ctes, "diagnosed")])


def _needed_ctes(ctes: Mapping[str, exp.Expr], root: str) -> list[str]:
    """The CTEs ``root`` reads, directly or not, in their order of definition."""
    needed, pending = set(), [root]
    while pending:
        name = pending.pop()
        if name in needed:
            continue
        needed.add(name)
        pending += [t.name for t in ctes[name].find_all(exp.Table) if t.name in ctes]
    return [name for name in ctes if name in needed]


def _ratio(numerator: exp.Expr, denominator: exp.Expr) -> exp.Expr:
    return exp.Div(this=numerator, expression=exp.func("NULLIF", denominator, 0))


@dataclass(frozen=True)
class UserPass:
    """The users of one of ``passes`` passes: ``hash(user) % passes = index``, or with
    ``bounds`` (numeric user ids) ``lower <= user < upper`` (None: no bound), which a file
    clustered by user answers by reading only its part; NULL users go to the first pass."""

    index: int
    passes: int
    bounds: tuple[float | None, float | None] | None = None

    def condition(self, user: exp.Expr) -> exp.Expr:
        if self.bounds is None:
            return exp.EQ(
                this=exp.Mod(
                    this=exp.func("HASH", user), expression=exp.Literal.number(self.passes)
                ),
                expression=exp.Literal.number(self.index),
            )
        lower, upper = self.bounds
        limits: list[exp.Expr] = []
        if lower is not None:
            limits.append(exp.GTE(this=user.copy(), expression=exp.convert(lower)))
        if upper is not None:
            limits.append(exp.LT(this=user.copy(), expression=exp.convert(upper)))
        inside = exp.and_(*limits) if limits else exp.true()
        if self.index == 0:
            return exp.or_(inside, exp.Is(this=user.copy(), expression=exp.Null()))
        return inside


# Columns of scored.sql and rated.sql computed over every list of a group (windows without
# user_id): a metric reading them cannot be evaluated in passes over the users.
GROUP_WIDE_COLUMNS = frozenset({"negatives_below_in_group", "negatives_in_group", "mean_rating"})


def reads_whole_group(request: MetricRequest) -> bool:
    """Whether the request compares rows across users (auc, r2), so passes cannot split it."""
    return any(
        column.name in GROUP_WIDE_COLUMNS for column in request.metric.query.find_all(exp.Column)
    )


def splits_into_passes(requests: Sequence[MetricRequest]) -> bool:
    """Whether passes over the users give every request: none compares rows across users
    (reads_whole_group) or reads the lists of a whole group (the list metrics, refused in
    compose's passes)."""
    return not any(reads_whole_group(r) or r.metric.reads == "lists" for r in requests)


def partial_columns(requests: Sequence[MetricRequest]) -> list[tuple[str, str, str | None]]:
    """Per request of a pass's summary: (label, numerator column, denominator column or None
    for a mean over ``users``). When a request has a population of its own, the means count
    their users (``m{i}_users``): they may differ from request to request."""
    counted = any(r.population is not None for r in requests)
    return [
        (r.label, f"m{i + 1}_numerator", f"m{i + 1}_denominator")
        if r.metric.micro
        else (r.label, f"m{i + 1}", f"m{i + 1}_users" if counted else None)
        for i, r in enumerate(requests)
    ]


def _summed_names(columns: Sequence[MetricColumn]) -> list[tuple[str, str, MetricColumn]]:
    """(column of per_user, its name in a pass's summary, its MetricColumn), see
    partial_columns."""
    named = partial_columns([column.request for column in columns])
    return [
        (column.names[0] if name.endswith("_users") else name, name, column)
        for column, (_, *parts) in zip(columns, named, strict=True)
        for name in parts
        if name is not None
    ]


def _final(
    columns: list[MetricColumn],
    inputs: Inputs,
    per_user: bool,
    exact_sums: bool,
    sums: bool = False,
    population: bool = False,
) -> exp.Select:
    """The result rows from per_user. ``population``: per_user also holds users outside the
    ranking population (for the other metrics), so ``users`` counts ``in_population``."""
    over_lists = [column for column in columns if column.over_lists]
    # Joined to the CTEs of the metrics over the lists, per_user's columns need their table.
    table = "per_user" if over_lists else None
    keys = [group_key(i) for i in range(len(inputs.groups))]
    groups = [
        exp.alias_(exp.column(key, table), exp.to_identifier(g.name, quoted=True))
        for key, g in zip(keys, inputs.groups, strict=True)
    ]
    order = [exp.column(key, table) for key in keys]

    def label(column: MetricColumn, value: exp.Expr) -> exp.Expr:
        if column.request.metric.square_root:
            value = exp.func("SQRT", value)
        if column.request.metric.exponential:
            value = exp.func("EXP", value)
        # exp.Alias rather than alias_, which would name a scalar subquery like a table
        # (Oracle then drops the AS, and the text no longer reads back the same).
        return exp.Alias(this=value, alias=exp.to_identifier(column.request.label, quoted=True))

    def joined(
        query: exp.Select, suffix: str, on: Sequence[str], left: str | None = table
    ) -> exp.Select:
        """``left`` (per_user) left joined to each ``m{i}{suffix}`` CTE on the ``on`` columns."""
        for column in over_lists:
            if suffix == "_users" and column.request.metric.group_level:
                continue
            other = f"{column.names[0]}{suffix}"
            if not on:  # without groups the values are scalar subqueries (see list_value)
                continue
            condition = exp.and_(
                *(
                    exp.column(name, left).eq(exp.column(name, other))
                    if name == "user_id"
                    else same_group(exp.column(name, left), exp.column(name, other))
                    for name in on
                )
            )
            query = query.join(other, on=condition, join_type="left")
        return query

    if per_user:
        # A metric over the lists shows the user's own value (NULL without a list); a
        # group-level one has no per-user value: NULL.
        values = [
            (
                exp.cast(exp.Null(), "DOUBLE")
                if column.request.metric.group_level
                else exp.column(column.names[0], f"{column.names[0]}_users")
            )
            if column.over_lists
            else _ratio(*(exp.column(name, table) for name in column.names))
            if column.request.metric.micro
            else exp.column(column.names[0], table)
            for column in columns
        ]
        user = exp.alias_(
            exp.column("user_id", table), exp.to_identifier(inputs.user.name, quoted=True)
        )
        query = exp.select(
            *groups, user, *(label(c, v) for c, v in zip(columns, values, strict=True))
        ).from_("per_user")
        query = joined(query, "_users", [*keys, "user_id"])
        return query.order_by(*nulls_last([*order, exp.column("user_id", table)]))

    def summed(function: str, name: str, integers: bool = False) -> exp.Expr:
        """``function`` of per_user's column (sums.aggregate: exact on DuckDB, the same bits
        on every run and plan)."""
        return aggregate(function, exp.column(name, table), exact_sums, integers)

    if sums:  # a pass's partial sums, combined by the caller (partial_columns names them)
        aggregates = [
            exp.alias_(
                summed("COUNT", source)
                if name != source
                else summed("SUM", source, integers=column.request.metric.summed),
                name,
            )
            for source, name, column in _summed_names(columns)
        ]
    else:

        def list_value(name: str) -> exp.Expr:
            """One row per group in m{i}_groups: MAX reads it. Without groups it is a scalar
            subquery rather than a cross join, so a population of no user (no relevant
            interaction) still gives the value, which reads only the lists."""
            value = exp.func("MAX", exp.column(name, f"{name}_groups"))
            if keys:
                return value
            return exp.select(exp.alias_(value, name)).from_(f"{name}_groups").subquery()

        aggregates = [
            label(column, list_value(column.names[0]))
            if column.over_lists
            else label(column, _ratio(*(summed("SUM", name) for name in column.names)))
            if column.request.metric.micro
            else label(
                column,
                summed(
                    _summary(column.request),
                    column.names[0],
                    integers=column.request.metric.summed,
                ),
            )
            for column in columns
        ]
    counted = exp.column("in_population", table) if population else exp.Star()
    left = table
    if over_lists and keys:
        # A group of lists without a population user still has its metrics over the lists:
        # the rows are the groups of per_user and of every m{i}_groups (_list_groups).
        counted = exp.column("in_population" if population else "user_id", table)
        order = [exp.column(key, LIST_GROUPS) for key in keys]
        groups = [
            exp.alias_(column.copy(), exp.to_identifier(g.name, quoted=True))
            for column, g in zip(order, inputs.groups, strict=True)
        ]
        left = LIST_GROUPS
    users = exp.alias_(exp.func("COUNT", counted), "users")
    query = exp.select(*groups, users, *aggregates)
    query = (
        _list_groups(query, keys, over_lists) if left == LIST_GROUPS else query.from_("per_user")
    )
    query = joined(query, "_groups", keys, left=left)
    if order:
        query = query.group_by(*order).order_by(*nulls_last(order))
    return query


LIST_GROUPS = "list_groups"


def _list_groups(
    query: exp.Select, keys: Sequence[str], over_lists: Sequence[MetricColumn]
) -> exp.Select:
    """``query`` from every group of per_user or of a metric over the lists (DISTINCT over a
    UNION ALL), per_user left joined to it on the group columns."""
    parts = [exp.select(*keys).from_("per_user")]
    parts += [exp.select(*keys).from_(f"{column.names[0]}_groups") for column in over_lists]
    union: exp.Query = parts[0]
    for part in parts[1:]:
        union = exp.union(union, part, distinct=False)
    frame = exp.select(*keys).distinct().from_(exp.alias_(exp.paren(union), "listed_groups"))
    on = exp.and_(
        *(same_group(exp.column(key, LIST_GROUPS), exp.column(key, "per_user")) for key in keys)
    )
    return query.from_(exp.alias_(exp.paren(frame), LIST_GROUPS)).join(
        "per_user", on=on, join_type="left"
    )


def _summary(request: MetricRequest) -> str:
    """The aggregate of a per-user metric over the users: AVG, or SUM for aggregate: sum."""
    return "SUM" if request.metric.summed else "AVG"


__all__ = [
    "compose",
    "compose_checks",
]
