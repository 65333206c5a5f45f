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
from dataclasses import dataclass
from typing import cast

from sqlglot import exp

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose import chain, curve_steps, curve_sums, curve_windows, curves, duckdb_plan
from sqlmetrics.compose.diagnostics import (
    diagnostics_stages,
    row_checks_stages,
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
from sqlmetrics.compose.lists import counts_popularity, lists_stages
from sqlmetrics.compose.per_user import (
    MetricColumn,
    bound_source,
    cascade_gmax,
    deepest_cutoff,
    item_gain,
    per_user_stages,
    per_user_union,
    requested_cutoffs,
    spread_per_user_constants,
    stable_user_sums,
    widest_population,
    with_judged_users,
)
from sqlmetrics.compose.plan import Plan
from sqlmetrics.compose.ranking import (
    bound_list_counts,
    cutoff_literal,
    hit_rows_stages,
    hits_so_far,
    judgements_ideal,
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
from sqlmetrics.compose.weights import weigh_scored
from sqlmetrics.errors import SqlmetricsError


@dataclass(frozen=True)
class _Call:
    """What assemble() derives from its arguments once, read by each of its parts."""

    plan: Plan
    requests: Sequence[MetricRequest]
    inputs: Inputs
    options: Options
    dialect: str
    per_user: bool
    diagnostics: bool
    user_pass: UserPass | None
    keys: tuple[str, ...]  # the group columns' names in the stages
    population: str  # per_user's users (widest_population)
    cutoff: int | None  # the deepest requested
    chained: bool  # the diagnostics ride the metrics' chain (chain.py)
    # chained, the recommendations' bad rows one aggregate over every row (list_checks.sql)
    # and the lists' lengths ranked's own, where no count needs a row per list
    row_checks: bool
    flags: tuple[str, ...]  # the counts the chain carries (_chained_flags)
    over_lists: tuple[MetricRequest, ...]  # the requests reading every list at once

    @property
    def top_k(self) -> bool:
        """DuckDB's lists (plan.lists) rank the rows."""
        return self.plan.lists is not None

    @property
    def repeats(self) -> str:
        """Where the diagnostics count the repeated items (plan.repeats)."""
        return self.plan.repeats or "none"

    @property
    def ranked_cutoff(self) -> int | None:
        """How deep ranked ranks: the deepest cutoff; with the diagnostics the position after
        it too, as a tie across it decides what is in."""
        return self.cutoff + 1 if self.diagnostics and self.cutoff else self.cutoff


def _call(
    plan: Plan,
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    dialect: str,
    per_user: bool,
    diagnostics: bool,
    user_pass: UserPass | None,
) -> _Call:
    """The call's facts; refuses the metrics over the lists in passes over the users."""
    over_lists = tuple(r for r in requests if r.metric.reads == "lists")
    if over_lists and user_pass is not None:
        raise SqlmetricsError(
            f"{', '.join(r.label for r in over_lists)} read every list at once and cannot be "
            "evaluated in passes over the users; raise DuckDB's memory_limit "
            "(connection=duckdb.connect(config={'memory_limit': ...}))"
        )
    chained = diagnostics and plan.diagnostics in ("chained", "chained_lists")
    return _Call(
        plan=plan,
        requests=requests,
        inputs=inputs,
        options=options,
        dialect=dialect,
        per_user=per_user,
        diagnostics=diagnostics,
        user_pass=user_pass,
        keys=tuple(group_key(i) for i in range(len(inputs.groups))),
        population=widest_population(requests, options),
        cutoff=deepest_cutoff(requests),
        chained=chained,
        row_checks=diagnostics and plan.diagnostics == "chained",
        flags=tuple(_chained_flags(requests, plan.repeats)) if chained else (),
        over_lists=over_lists,
    )


@dataclass(frozen=True)
class _PerUser:
    """per_user's selects (per_user_stages: one per stage the requests read), their columns,
    the curve plan's per_user (empty outside it) and the columns all of them read."""

    selects: dict[str, exp.Select]
    columns: list[MetricColumn]
    curve: list[tuple[str, exp.Expr]]
    read: set[str]

    @property
    def ranking(self) -> bool:
        """A ranking metric reads judged."""
        return "judged" in self.selects


@dataclass
class _Ranking:
    """The ranking's stages, pruned and bound in place by the parts that read them."""

    judged: exp.Select
    joined: exp.Select
    truth: exp.Select
    ranked: exp.Select


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
    call = _call(plan, requests, inputs, options, dialect, per_user, diagnostics, user_pass)
    curve_at = requested_cutoffs(requests) if curve_cutoffs is None else sorted(curve_cutoffs)
    users = _per_user(call, curve_at)
    ranking = _ranking(call)
    scored = _scored_stages(call, users.selects)
    diagnosis = _diagnosis(call, scored="scored" in users.selects)
    needed = _prune_ranking(call, ranking, users, scored, diagnosis)
    list_lengths = "list_length" in needed and plan.lengths == "list_counts"
    _bind_ranking(call, ranking, users.ranking, list_lengths)
    top_lists = top_lists_stage(
        plan.lists,
        options,
        call.cutoff,
        call.ranked_cutoff,
        score_floor,
        diagnostics,
        call.plan.repeats_depth,
    )
    if users.ranking and plan.same_bits:
        stable_user_sums(users.selects["judged"])
    if plan.judged == "judged_hits" and diagnostics:
        diagnosis = _diagnosed_lists(call, diagnosis)
    stages = _stages(call, ranking, users, scored, diagnosis, top_lists, list_lengths)
    rows = _rows(call, users, curve_at, per_cutoff=curve_cutoffs is not None)
    query = _with_diagnostics(call, rows, stages, users.columns)
    composed = with_ctes(query, [*_bound_inputs(call, users.selects), *stages])
    _read_on_duckdb(call, composed, scored="scored" in users.selects)
    return composed


def _per_user(call: _Call, curve_at: Sequence[int]) -> _PerUser:
    """per_user's selects (open to every user under the chain) and, in the curve plan, its
    per_user built from the lists judged's select becomes."""
    selects, columns = per_user_stages(call.requests, call.options, population=call.population)
    if call.chained:
        chain.open_population(selects["judged"], columns, call.flags)
    curve = _curve_per_user(call, selects, curve_at)
    read = {"user_id"}
    for per_source in [*selects.values(), *(cte for _, cte in curve)]:
        read |= {column.name for column in per_source.find_all(exp.Column)}
    return _PerUser(selects, columns, curve, read)


def _curve_per_user(
    call: _Call, selects: dict[str, exp.Select], curve_at: Sequence[int]
) -> list[tuple[str, exp.Expr]]:
    """The curve plan's per_user: from DuckDB's lists (per_user_lists) or windows over judged,
    whose per-user select becomes the curve plan's lists; nothing outside the curve plan."""
    curve, cutoff = call.plan.curve, call.cutoff
    if curve is None or cutoff is None:
        return []
    selects["judged"] = curves.lists_stage(selects["judged"], curve, cutoff, lists=call.plan.own)
    steps = (
        curve_steps.per_user_stage(curve, curve_at)
        if call.plan.own
        else curve_windows.per_user_stage(curve, selects["judged"], curve_at)
    )
    return [("per_user", steps)]


def _ranking(call: _Call) -> _Ranking:
    """judged, joined, truth and the plan's ranked, bound to the call's tie policy and ranks."""
    judged = bind_placeholders(stage("judged"), gmax=cascade_gmax(call.requests))
    joined = stage("joined")
    hits_so_far(judged, literal=call.inputs.rank is not None and call.options.ranks == "literal")
    if call.options.ties == "average":
        _tie_averaged(judged, joined)
    return _Ranking(judged, joined, stage("truth"), ranked_stage(call.plan.ranked, call.options))


def _tie_averaged(judged: exp.Select, joined: exp.Select) -> None:
    """The tie-averaged quantities come from ranked_average instead of judged's formulas."""
    for projection in judged.expressions:
        if projection.alias_or_name in ("hit", "gain", "exp_gain"):
            projection.replace(exp.column(projection.alias_or_name))
    for name in ("hit", "gain", "exp_gain", "hits_through"):
        joined.select(exp.column(name, "ranked"), copy=False)
    judged.select(exp.column("hits_through"), copy=False)


def _scored_stages(call: _Call, selects: dict[str, exp.Select]) -> list[tuple[str, exp.Expr]]:
    """The stages of the metrics over scores, ratings, judgements and the pool, bound and
    pruned to what they read; scored_positives.sql where the plan says."""
    # The diagnostics count the lists gauc skips from scored's positives and negatives.
    counted = {"positives", "negatives"} if call.diagnostics else set()
    ideal, ideal_reads = (
        judgements_ideal(selects["judgements"]) if "judgements" in selects else ([], set())
    )
    scored_stages: list[tuple[str, exp.Expr]] = [
        (
            source,
            bound_source(
                source,
                selects[source],
                counted | ideal_reads if source == "judgements" else counted,
                call.options,
                call.population,
                call.plan.judgements if source == "judgements" else None,
                item_gain(call.requests, call.options.threshold)
                if source == "judgements"
                else None,
            ),
        )
        for source in ("scored", "rated", "judgements", "pool")
        if source in selects
    ]
    scored_stages = [
        (name, weigh_scored(source, call.inputs.weight is not None, call.diagnostics))
        if name == "scored"
        else (name, source)
        for name, source in scored_stages
    ]
    scored_stages += ideal
    if call.plan.scored != "scored_positives":
        return scored_stages
    return [
        (name, stage("scored_positives") if name == "scored" else source)
        for name, source in scored_stages
    ]


def _diagnosis(call: _Call, scored: bool) -> list[tuple[str, exp.Expr]]:
    """diagnostics.sql's CTEs with the diagnostics, else none."""
    if not call.diagnostics:
        return []
    if call.row_checks:
        return row_checks_stages(call.options, call.requests, call.dialect)
    return diagnostics_stages(
        call.options,
        call.requests,
        call.keys,
        scored=scored,
        repeats=call.repeats,
        chained=call.chained,
        weighted=call.inputs.weight is not None,
    )


def _prune_ranking(
    call: _Call,
    ranking: _Ranking,
    users: _PerUser,
    scored: list[tuple[str, exp.Expr]],
    diagnosis: list[tuple[str, exp.Expr]],
) -> set[str]:
    """Prunes judged -> joined -> ranked/truth to the columns the metrics (and diagnostics)
    read; returns the columns ranked's readers read."""
    if users.ranking:
        needed = _prune_judged(call, ranking, users.selects["judged"], users.read)
    else:
        needed = {"user_id", "item_id"}
    for _, source in scored:
        needed |= {column.name for column in source.find_all(exp.Column)}
    if call.plan.own:
        duckdb_plan.next_score_in_ranked(ranking.ranked, diagnosis)
    for _, cte in diagnosis:
        if _reads(cte, "ranked"):
            needed |= {column.name for column in cte.find_all(exp.Column)}
    flagged = {"item_id", "score"} if call.flags else set()
    lists = {"user_id", "item_id"} if call.over_lists else set()
    prune(ranking.ranked, needed | {"pos"} | flagged | lists)
    prune(ranking.truth, needed | {column.name for column in ranking.ranked.find_all(exp.Column)})
    return needed


def _prune_judged(
    call: _Call, ranking: _Ranking, per_user_judged: exp.Select, read: set[str]
) -> set[str]:
    """judged and joined pruned to what per_user (``read``) reads, carrying what it needs
    besides; returns the columns joined reads."""
    spread_per_user_constants(ranking.judged, per_user_judged)
    if call.plan.judged == "joined_hits":
        duckdb_plan.keep_hit_rows(ranking.joined)
    chain.carry_flags(ranking.joined, ranking.judged, call.flags)
    needed = prune(ranking.judged, read) | {"user_id"}
    if duckdb_plan.judges_ranked_hits(call.plan.ranked, ranking.judged):
        ranking.judged = duckdb_plan.ranked_hits(ranking.judged, call.options.threshold)
        return {"user_id", "item_id", "pos", "list_length"}
    return prune(ranking.joined, needed) | {"user_id", "item_id"}


def _bind_ranking(call: _Call, ranking: _Ranking, ranks: bool, list_lengths: bool) -> None:
    """truth's threshold and ranked's depth bound; ranked with the lists' lengths and the
    chain's flags where they are read. ``ranks``: a ranking metric reads joined."""
    ranking.truth = bind_placeholders(ranking.truth, threshold=number(call.options.threshold))
    ranked = cutoff_literal(ranking.ranked, call.ranked_cutoff)
    if ranks and call.cutoff is not None and call.ranked_cutoff != call.cutoff:
        match_within(ranking.joined, call.cutoff)
    if list_lengths:
        ranked = with_list_lengths(ranked)
    if call.flags:
        ranked = chain.flag_ranked(
            ranked,
            call.flags,
            requested_cutoffs(call.requests),
            call.cutoff,
            lengths=call.row_checks,
        )
    ranking.ranked = ranked


def _diagnosed_lists(
    call: _Call, diagnosis: list[tuple[str, exp.Expr]]
) -> list[tuple[str, exp.Expr]]:
    """The hit-rows plan's diagnostics: the tie groups counted in DuckDB's lists."""
    cutoffs = exp.Array(expressions=list(map(exp.convert, requested_cutoffs(call.requests))))
    listed = bind_placeholders(stage("listed_top_k"), cutoffs=cutoffs)
    return duckdb_plan.diagnose_lists(diagnosis, listed)


def _stages(
    call: _Call,
    ranking: _Ranking,
    users: _PerUser,
    scored: list[tuple[str, exp.Expr]],
    diagnosis: list[tuple[str, exp.Expr]],
    top_lists: exp.Select,
    list_lengths: bool,
) -> list[tuple[str, exp.Expr]]:
    """The stages in the order they are read: the ranking's, the scored ones, per_user, the
    diagnostics', all widened to the group keys, then those of the metrics over the lists."""
    stages = _ranking_stages(call, ranking, users, [*diagnosis, *scored], top_lists, list_lengths)
    stages += scored
    if call.plan.curve is not None:
        # (the windows' per_user reads judged itself, per_user_lists' aggregates too)
        user_lists = [("per_user_lists", users.selects["judged"])] if call.plan.own else []
        stages += [*user_lists, *users.curve]
    else:
        stages += per_user_union(users.selects, users.columns)
    if call.top_k and call.diagnostics:  # counted by top_lists' own aggregate over the lists
        stages.append(("list_counts", duckdb_plan.list_counts_from("top_lists")))
    stages += diagnosis
    stages = [(name, widen_keys(cte, call.keys)) for name, cte in stages]
    if call.over_lists:
        stages += lists_stages(users.columns, call.inputs, call.keys, call.options.threshold)
    return stages


def _ranking_stages(
    call: _Call,
    ranking: _Ranking,
    users: _PerUser,
    readers: list[tuple[str, exp.Expr]],
    top_lists: exp.Select,
    list_lengths: bool,
) -> list[tuple[str, exp.Expr]]:
    """list_counts where it is read, then the hit-rows plan's stages or truth, the lists,
    ranked, joined and judged where read (``readers``: the diagnostics' and scored stages)."""
    stages: list[tuple[str, exp.Expr]] = []
    if (list_lengths or call.diagnostics) and call.plan.lengths == "list_counts":
        counts = bound_list_counts(
            call.plan, call.inputs, call.options, call.dialect, call.diagnostics, call.repeats
        )
        stages.append(("list_counts", counts))
    if call.plan.judged == "judged_hits":
        stages += hit_rows_stages(
            top_lists,
            users.read,
            call.cutoff,
            call.options,
            call.diagnostics,
            placed_by_score=call.plan.lists == "score_lists",
        )
    else:
        stages += _window_stages(call, ranking, users, readers, top_lists)
    if users.ranking and call.population in JUDGED_POPULATIONS:
        stages = [
            (name, with_judged_users(cast(exp.Select, cte)) if name == "judged" else cte)
            for name, cte in stages
        ]
    return stages


def _window_stages(
    call: _Call,
    ranking: _Ranking,
    users: _PerUser,
    readers: list[tuple[str, exp.Expr]],
    top_lists: exp.Select,
) -> list[tuple[str, exp.Expr]]:
    """truth, DuckDB's lists, ranked, joined and judged, each where it is read."""
    ranks = users.ranking
    stages: list[tuple[str, exp.Expr]] = []
    if ranks or "scored" in users.selects or _reads(ranking.ranked, "truth"):
        stages.append(("truth", ranking.truth))
    if call.top_k and (ranks or call.diagnostics):
        stages.append(("top_lists", top_lists))
    if ranks or any(_reads(cte, "ranked") for _, cte in readers):
        stages.append(("ranked", ranking.ranked))
    if ranks and _reads(ranking.judged, "joined"):
        stages += [*ranked_ideal(ranking.joined), ("joined", ranking.joined)]
    if ranks:
        stages.append(("judged", ranking.judged))
    return stages


def _bound_inputs(call: _Call, selects: dict[str, exp.Select]) -> list[tuple[str, exp.Expr]]:
    """The inputs bound to the stages' names, with the items and history the metrics over the
    lists read."""
    inputs = call.inputs
    bound = input_stages(
        inputs,
        call.options,
        call.keys,
        call.user_pass,
        rating="rated" in selects,
        pool="pool" in selects,
        intent=any(r.metric.needs_intent for r in call.over_lists),
    )
    if call.over_lists:
        if inputs.items is not None:
            category = any("category" in r.metric.needs_items for r in call.over_lists)
            bound.append(("input_items", bind_items(inputs, category)))
        if any(
            r.metric.reads_history or (inputs.history is not None and counts_popularity(r.metric))
            for r in call.over_lists
        ):
            bound.append(("input_history", bind_history(inputs)))
    return bound


def _rows(call: _Call, users: _PerUser, curve_at: Sequence[int], per_cutoff: bool) -> exp.Select:
    """The result rows from per_user: the curve plan's per cutoff (``per_cutoff``) or its
    summary, else summary.final's."""
    plan, sums = call.plan, call.user_pass is not None
    if plan.curve is not None and per_cutoff:
        return curve_sums.per_cutoff_rows(
            plan.curve, call.requests, curve_at, call.inputs, exact=plan.same_bits
        )
    if plan.curve is not None:
        return curve_sums.final(
            plan.curve, call.requests, call.inputs, sums=sums, exact=plan.same_bits
        )
    return final(
        users.columns,
        call.inputs,
        call.per_user,
        exact_sums=plan.same_bits,
        sums=sums,
        # else COUNT(*) of per_user
        population=users.ranking and (len(users.selects) > 1 or call.chained),
    )


def _with_diagnostics(
    call: _Call, rows: exp.Select, stages: list[tuple[str, exp.Expr]], columns: list[MetricColumn]
) -> exp.Query:
    """The result rows, with the diagnostics row from the chain's aggregate or beside them."""
    if call.chained:
        return chain.chained_rows(stages, rows, columns, call.flags, call.row_checks)
    if call.diagnostics:
        sums = call.user_pass is not None
        return with_diagnostics_rows(rows, call.inputs, columns, call.per_user, sums=sums)
    return rows


def _read_on_duckdb(call: _Call, composed: exp.Query, scored: bool) -> None:
    """How DuckDB reads the CTEs its own plans share (duckdb_plan.py). ``scored``: a metric
    reads scored."""
    plan = call.plan
    if plan.curve is not None and plan.own:
        # read by the summary and, in the statistics query, by the moments and distributions:
        # computed once, where DuckDB would inline it in each reader (docs/benchmark.md)
        materialize(composed, "per_user")
    if call.top_k or (plan.scored == "scored_positives" and scored):
        duckdb_plan.read_inputs_again(
            composed,
            interactions=plan.judged == "judged_hits",
            recommendations=call.options.duplicates != "first",
        )


def _chained_flags(requests: Sequence[MetricRequest], repeats: str | None) -> list[str]:
    """The counts diagnostics.sql would take from ranked, carried by the chain instead
    (chain.py): the repeated items where ranked's first positions count them, the tie groups
    where a cutoff is requested."""
    flags = ["repeated_row"] if repeats == "ranked" else []
    return flags + (["straddling_tie"] if requested_cutoffs(requests) else [])


def _reads(tree: exp.Expr, name: str) -> bool:
    return any(table.name == name for table in tree.find_all(exp.Table))
