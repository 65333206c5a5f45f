"""Fuses the requested metrics into one query over the shared stages in ``sql/stages/``.

The stages rank each list once (down to the deepest cutoff requested), join it to the relevant
interactions once, and every metric is one or two aggregate expressions in ``per_user``: twenty
metrics at five cutoffs are still one scan of each input. Everything is built on sqlglot trees;
user-supplied names arrive as identifier nodes and values as literals, never as SQL text.

Which plan runs (DuckDB's per-user lists, hit rows only, the curve plan, the windows of every
other dialect, arms.py's groups) is chosen once, in plan.py (``choose_plan``, with a table of
the conditions); assemble() assembles the chosen plan's stages, and query.py's compose()
chooses the plan and hands it here (or to arms.py).

This module holds assemble(). The other parts have modules of their own: ranking.py (the
stages only it assembles: ranked, judged, the lists of DuckDB's plans), inputs.py (Inputs,
Options and the stages binding the inputs), stages.py (the stage files and the rewrites every
part makes to them), per_user.py (each request's per-user column, the
populations), diagnostics.py (the diagnostics and checks rows), summary.py (the result rows
from per_user, and a pass's partial sums), and curves.py, curve_steps.py, curve_windows.py and
curve_sums.py (the curve plan: the metric files taken apart, its rows per user and step from
DuckDB's lists or from windows, its sums per cutoff).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from sqlglot import exp

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose import chain, curve_steps, curve_sums, curve_windows, curves, duckdb_plan
from sqlmetrics.compose.diagnostics import (
    diagnostics_stages,
    with_diagnostics_rows,
)
from sqlmetrics.compose.inputs import (
    JUDGED_POPULATIONS,
    Inputs,
    Options,
    bind_history,
    bind_items,
    input_stages,
)
from sqlmetrics.compose.per_user import (
    bound_source,
    cascade_gmax,
    deepest_cutoff,
    lists_stages,
    per_user_stages,
    per_user_union,
    requested_cutoffs,
    spread_per_user_constants,
    stable_user_sums,
    widest_population,
    with_judged_users,
)
from sqlmetrics.compose.plan import Plan, repeats_depth
from sqlmetrics.compose.ranking import (
    bound_list_counts,
    cutoff_literal,
    hit_rows_stages,
    hits_so_far,
    match_within,
    ranked_ideal,
    ranked_stage,
    top_lists_stage,
    with_list_lengths,
)
from sqlmetrics.compose.stages import (
    bind_placeholders,
    group_key,
    materialize,
    number,
    prune,
    stage,
    widen_keys,
    with_ctes,
)
from sqlmetrics.compose.summary import UserPass, final
from sqlmetrics.errors import SqlmetricsError


def assemble(
    plan: Plan,
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    per_user: bool = False,
    dialect: str = "duckdb",
    diagnostics: bool = False,
    user_pass: UserPass | None = None,
    score_floor: float | None = None,
    curve_cutoffs: Sequence[int] | None = None,
) -> exp.Query:
    """The query of a chosen plan (plan.py's ``choose_plan``): a summary row per group, or a
    row per user, or (``curve_cutoffs``) the curve plan's rows per group and cutoff; the
    arguments as query.compose's."""
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
    lists = plan.lists
    top_k = lists is not None
    depth = repeats_depth(requests, options)
    # where the repeated items are counted: by the lists themselves (DuckDB's, or
    # list_counts.sql over whole lists), among ranked's first positions, or nowhere (0: the
    # input's reader refused them)
    repeats = "none" if depth == 0 else "ranked" if depth is not None and not top_k else "lists"
    chained = diagnostics and plan.diagnostics == "chained"
    flags = _chained_flags(requests, repeats) if chained else []
    if chained:
        chain.open_population(selects["judged"], columns, flags)
    curve = plan.curve
    # the curve plan's per_user: from DuckDB's lists (per_user_lists) or windows over judged
    curve_stages: list[tuple[str, exp.Expr]] = []
    if curve is not None and cutoff is not None:
        curve_at = requested_cutoffs(requests) if curve_cutoffs is None else sorted(curve_cutoffs)
        selects["judged"] = curves.lists_stage(selects["judged"], curve, cutoff, lists=plan.own)
        steps = (
            curve_steps.per_user_stage(curve, curve_at)
            if plan.own
            else curve_windows.per_user_stage(curve, selects["judged"], curve_at)
        )
        curve_stages = [("per_user", steps)]
    ranking = "judged" in selects

    # Prune judged -> joined -> ranked/truth to the columns the metrics (and diagnostics) read.
    needed = {"user_id"}
    for per_source in [*selects.values(), *(cte for _, cte in curve_stages)]:
        needed |= {column.name for column in per_source.find_all(exp.Column)}
    needed_by_metrics = set(needed)
    judged, joined, truth = stage("judged"), stage("joined"), stage("truth")
    judged = bind_placeholders(judged, gmax=cascade_gmax(requests))
    hits_so_far(judged, literal=inputs.rank is not None and options.ranks == "literal")
    ranked = ranked_stage(plan.ranked, options)
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
        (
            source,
            bound_source(
                source,
                selects[source],
                counted,
                options,
                population,
                plan.judgements if source == "judgements" else None,
            ),
        )
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
        chain.carry_flags(joined, judged, flags)
        needed = prune(judged, needed) | {"user_id"}
        needed = prune(joined, needed) | {"user_id", "item_id"}
    else:
        needed = {"user_id", "item_id"}
    for _, source in scored_stages:
        needed |= {column.name for column in source.find_all(exp.Column)}
    diagnosis = (
        diagnostics_stages(
            options, requests, keys, scored="scored" in selects, repeats=repeats, chained=chained
        )
        if diagnostics
        else []
    )
    if plan.own:
        duckdb_plan.next_score_in_ranked(ranked, diagnosis)
    for name, cte in diagnosis:
        if name != "counted":  # list_counts.sql's columns, not ranked's
            needed |= {column.name for column in cte.find_all(exp.Column)}
    flagged = {"item_id", "score"} if flags else set()
    prune(ranked, needed | {"pos"} | flagged | ({"user_id", "item_id"} if over_lists else set()))
    # list_counts.sql gives the lengths ranked no longer counts with windows over whole lists.
    list_lengths = "list_length" in needed and not top_k
    prune(truth, needed | {column.name for column in ranked.find_all(exp.Column)})
    truth = bind_placeholders(truth, threshold=number(options.threshold))
    # Diagnostics also read the position after each cutoff: a tie across it decides what is in.
    ranked_cutoff = cutoff + 1 if diagnostics and cutoff else cutoff
    ranked = cutoff_literal(ranked, ranked_cutoff)
    if ranking and cutoff is not None and ranked_cutoff != cutoff:
        match_within(joined, cutoff)
    if list_lengths:
        ranked = with_list_lengths(ranked)
    if flags:
        ranked = chain.flag_ranked(ranked, flags, requested_cutoffs(requests), cutoff)
    top_lists = top_lists_stage(
        lists,
        options,
        cutoff,
        ranked_cutoff,
        score_floor,
        diagnostics,
        depth if diagnostics else None,  # without the diagnostics no repeat is counted
    )
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
        counts = bound_list_counts(plan, inputs, options, dialect, diagnostics, repeats)
        stages.append(("list_counts", counts))
    if hit_rows:
        stages += hit_rows_stages(
            top_lists,
            needed_by_metrics,
            cutoff,
            options,
            diagnostics,
            placed_by_score=lists == "score_lists",
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
            stages += [*ranked_ideal(joined), ("joined", joined), ("judged", judged)]
    if ranking and population in JUDGED_POPULATIONS:
        stages = [
            (name, with_judged_users(cast(exp.Select, cte)) if name == "judged" else cte)
            for name, cte in stages
        ]
    stages += scored_stages
    if curve is not None:
        # (the windows' per_user reads judged itself, per_user_lists' aggregates too)
        user_lists = [("per_user_lists", selects["judged"])] if plan.own else []
        stages += [*user_lists, *curve_stages]
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
    rows = (
        curve_sums.per_cutoff_rows(curve, requests, curve_at, inputs, exact=plan.same_bits)
        if curve is not None and curve_cutoffs is not None
        else curve_sums.final(
            curve, requests, inputs, sums=user_pass is not None, exact=plan.same_bits
        )
        if curve is not None
        else final(
            columns,
            inputs,
            per_user,
            exact_sums=plan.same_bits,
            sums=user_pass is not None,
            # else COUNT(*) of per_user
            population=ranking and (len(selects) > 1 or chained),
        )
    )
    query = (
        chain.chained_rows(stages, rows, columns, flags)
        if chained
        else with_diagnostics_rows(rows, inputs, columns, per_user, sums=user_pass is not None)
        if diagnostics
        else rows
    )
    composed = with_ctes(query, [*bound, *stages])
    if curve is not None and plan.own:
        # read by the summary and, in the statistics query, by the moments and distributions:
        # computed once, where DuckDB would inline it in each reader (docs/benchmark.md)
        materialize(composed, "per_user")
    if top_k or (positives_only and "scored" in selects):
        duckdb_plan.read_inputs_again(
            composed, interactions=hit_rows, recommendations=options.duplicates != "first"
        )
    return composed


def _chained_flags(requests: Sequence[MetricRequest], repeats: str) -> list[str]:
    """The counts diagnostics.sql would take from ranked, carried by the chain instead
    (chain.py): the repeated items where ranked's first positions count them, the tie groups
    where a cutoff is requested."""
    flags = ["repeated_row"] if repeats == "ranked" else []
    return flags + (["straddling_tie"] if requested_cutoffs(requests) else [])


def _reads(tree: exp.Expr, name: str) -> bool:
    return any(table.name == name for table in tree.find_all(exp.Table))
