"""Which SQL runs for a call, and why: every choice of plan, made here once.

``choose_plan`` reads the call (dialect, tie policy, cutoffs, a rank column, what each metric
reads, per-user rows or a summary, passes) and returns a ``Plan``; assemble.py then assembles
that plan's stages without deciding anything. The choices, in the order they are made:

================  ==========================================================================
groups            ``arms`` (arms.py) when every group column is one only the recommendations
                  have and the call is a summary (complements_arms); else ``crossed``:
                  the groups are crossed into the interactions.
lists             DuckDB's own plans (``TOP_K_DIALECTS``, not ``portable``), ties "id" or
                  "id_text", no rank column, every metric with a cutoff: ``top_lists`` (a
                  top-k aggregate per user) up to ``TOP_K_MAX_CUTOFF``; deeper
                  ``score_lists`` (a top-k aggregate of the scores alone, each hit placed
                  by its score: placed_hits.sql) when every metric reads hit rows only
                  (judged_hits below), else ``sorted_lists`` (each whole list sorted);
                  else none.
ranked            the stage ranking the rows: ``ranked_given`` (a rank column),
                  ``ranked_top_k`` (unnests the lists above), ``ranked_judged`` (DuckDB's own
                  plans without lists, inputs its reader checked (TREC files), judged
                  ``joined_hits`` and judgements none or ``judged_pairs``, no diagnostics, no
                  groups: the judged items' positions placed by their scores, every list's
                  length; duckdb_plan.places_judged_items), ``ranked`` (a window; ties "id"
                  and "id_text"), ``ranked_average`` or ``ranked_by_relevance`` (the other tie
                  policies).
judged            for the ranking metrics: ``judged_hits`` (lists + hit rows only, when every
                  metric reads hit rows only: duckdb_plan.HIT_ROWS_METRICS), ``joined_hits``
                  (the window plan keeping hit rows and each user's first, on every dialect;
                  ties "id" or "id_text", no rank column, every metric reading judged at hit
                  rows only, with or without a cutoff: judged_at_hit_rows_only; under ranked
                  ``ranked_judged``, judged reading hits and counts only is built from ranked's
                  hits alone at assembly: duckdb_plan.judges_ranked_hits), ``joined``
                  (every row); none without a ranking metric.
per_user          ``curves`` (curves.py; a row per user and step from DuckDB's lists,
                  curve_steps.py, or from windows elsewhere, curve_windows.py; summed by
                  curve_sums.py) for a summary of ranking metrics at ``curves.MIN_CUTOFFS`` or
                  more distinct cutoffs (in one query or per pass of users),
                  when every metric file's aggregates can be split and the population is not
                  one of judged users (trec_eval's); else ``columns``: a column per request.
                  compose's ``curve_cutoffs`` (the report's curves, a row per cutoff) cross
                  the groups and count those cutoffs instead of the requests'.
scored            ``scored_positives`` on DuckDB when gauc and user_auc are all that read the
                  scores (duckdb_plan.sums_scored_only); else ``scored``; none when unread.
judgements        ``judged_pairs`` (the judged pairs only, every dialect) when bpref, gm_bpref
                  and num_nonrel_judged_ret are all that read judgements (JUDGED_PAIRS_METRICS),
                  ``judged_pairs_ranked`` under ranked ``ranked_judged``; else ``judgements``
                  (every recommended item too: unj, rbp_resid); none when unread.
diagnostics       with evaluate's diagnostics, ``chained`` (chain.py: the ranked rows carry the
                  counts diagnostics.sql takes from ranked to per_user, which keeps every
                  user, and one aggregate gives both rows: each list ranked once, where an
                  engine inlining a CTE at each reader would rank it twice) for a summary
                  without groups of ranking metrics on the portable plan, per_user a
                  column per request, a population not of judged users; its bad rows of
                  the recommendations one aggregate over every row (list_checks.sql,
                  diagnostics_chained.sql: no row per list beside the ranking), or
                  ``chained_lists`` where a count needs each whole list (a rank column's
                  broken ranks, repeats counted anywhere: list_counts.sql); else ``apart``
                  (diagnostics.sql's own readers of the stages); none without them.
lengths           which stage gives each list's length, where a metric or the diagnostics read
                  it: ``lists`` (DuckDB's lists count them), ``ranked_judged`` (its row per
                  list), ``ranked`` (the chained diagnostics without a row per list: ranked's
                  own window, chain.flag_ranked), else ``list_counts`` (list_counts.sql).
repeats           with evaluate's diagnostics, where the repeated (user, item) rows are counted
                  (repeats_depth: as deep as the metrics read, or anywhere): ``lists`` by
                  the lists themselves (DuckDB's lists, or list_counts.sql's whole lists),
                  ``ranked`` among ranked's first positions, ``none`` where the input's
                  reader refused them; none without the diagnostics.
same_bits         DuckDB (any plan): a user's sums of fractional terms exact (sums.py), its
                  other sums in position order, the sums over users exact, so that every
                  run and every plan gives the same bits.
================  ==========================================================================

Under a DuckDB memory limit too small for one query, engines/duckdb_passes.py runs the chosen
plan per pass of users (compose's ``user_pass``) and adds the partial sums.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose import curves, duckdb_plan
from sqlmetrics.compose.inputs import ID_TIES, JUDGED_POPULATIONS, READ_CHECKED, Inputs, Options
from sqlmetrics.compose.per_user import (
    deepest_cutoff,
    requested_cutoffs,
    tie_averaged_sums,
    widest_population,
)
from sqlmetrics.compose.summary import UserPass

# Dialects that rank with sql/stages/top_lists.sql (a top-k aggregate) instead of a window
# sort when it gives the same rows; tests empty it to run the portable plan on DuckDB too.
TOP_K_DIALECTS = frozenset({"duckdb"})
# Above this cutoff each whole list is ranked instead, by sql/stages/score_lists.sql (its scores
# alone, when every metric reads hit rows only: lists_stage) or sorted_lists.sql: top_lists.sql's
# aggregate keeps every user's k + 3 best items and scores in memory, which wins at small k and
# exhausts memory at large ones (docs/benchmark.md, deep cutoffs).
TOP_K_MAX_CUTOFF = 20
# Metrics reading judgements.sql only at its judged pairs (an unjudged recommended item adds
# nothing to them): sql/stages/judged_pairs.sql serves them. A metric joins this list only with
# a test in tests/test_plans.py showing both stages agree.
JUDGED_PAIRS_METRICS = frozenset({"bpref", "gm_bpref", "num_nonrel_judged_ret"})
# Whether evaluate's diagnostics may ride the metrics' chain (chain.py); tests turn it off to
# compare the two forms.
CHAIN_DIAGNOSTICS = True
# score_lists.sql keeps each list's first cutoff + 1 scores in DuckDB's MAX(score, n), which
# takes n below 1,000,000: deeper, sorted_lists.sql.
SCORE_LISTS_MAX_CUTOFF = 999_998


@dataclass(frozen=True)
class Plan:
    """The stages assemble() assembles for a call (see the module's table), and why."""

    own: bool  # DuckDB's own plans: TOP_K_DIALECTS and not portable
    groups: str  # "crossed" | "arms"
    lists: str | None  # "top_lists" | "score_lists" | "sorted_lists" | None
    ranked: str  # the ranking stage's file
    judged: str | None  # "judged_hits" | "joined_hits" | "joined" | None
    per_user: str  # "columns" | "curves"
    scored: str | None  # "scored" | "scored_positives" | None
    judgements: str | None  # "judgements" | "judged_pairs" | "judged_pairs_ranked" | None
    diagnostics: str | None  # "chained" | "chained_lists" | "apart" | None
    lengths: str  # the lists' lengths from: "lists" | "ranked" | "ranked_judged" | "list_counts"
    repeats: str | None  # "lists" | "ranked" | "none" | None
    repeats_depth: int | None  # how deep (repeats_depth); None: anywhere, or not counted
    same_bits: bool
    curve: curves.Split | None  # the curve plan's parts, for per_user "curves"
    why: tuple[str, ...]

    def describe(self) -> str:
        """One line per choice with its reason, as a newcomer would ask for it."""
        return "\n".join(self.why)


@dataclass(frozen=True)
class _Call:
    """choose_plan's arguments, and the facts every choice reads."""

    requests: Sequence[MetricRequest]
    inputs: Inputs
    options: Options
    dialect: str
    per_user: bool
    user_pass: UserPass | None
    portable: bool
    cross_arms: bool
    curve_cutoffs: Sequence[int] | None
    diagnostics: bool
    chained: bool  # the caller lets the diagnostics ride the metrics' chain

    @property
    def reads(self) -> set[str]:
        """The stages the metrics read."""
        return {request.metric.reads for request in self.requests}

    @property
    def duckdb_own(self) -> bool:
        """DuckDB's own plans: TOP_K_DIALECTS and not portable."""
        return self.dialect in TOP_K_DIALECTS and not self.portable

    @property
    def own(self) -> str:
        """The plans, as the reasons name them."""
        return "DuckDB's own plans" if self.duckdb_own else f"the portable plan ({self.dialect})"


# A choice and its reason line (None: the field is not chosen, nothing to say).
_Choice = tuple[str | None, str | None]


def choose_plan(
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    dialect: str = "duckdb",
    *,
    per_user: bool = False,
    user_pass: UserPass | None = None,
    portable: bool = False,
    cross_arms: bool = False,
    curve_cutoffs: Sequence[int] | None = None,
    diagnostics: bool = False,
    chained: bool = True,
) -> Plan:
    """The Plan for these requests (query.compose()'s arguments of the same names)."""
    call = _Call(
        requests,
        inputs,
        options,
        dialect,
        per_user,
        user_pass,
        portable,
        cross_arms,
        curve_cutoffs,
        diagnostics,
        chained,
    )
    groups, groups_why = _groups(call)
    lists, lists_why = _lists(call)
    judged, judged_why = _judged(call, lists)
    judgements, judgements_why = _judgements(requests)
    placed = (
        call.duckdb_own
        and lists is None
        and duckdb_plan.places_judged_items(
            options, judged, judgements, diagnostics or bool(inputs.groups), call.reads
        )
    )
    ranked = "ranked_judged" if placed else ranked_stage_name(inputs, options, lists is not None)
    if placed and judgements == "judged_pairs":  # its judged pairs are all ranked_judged holds
        judgements, judgements_why = "judged_pairs_ranked", f"{judgements_why}, as ranked's"
    curve, per_user_why = _per_user(call, arms=groups == "arms", judged=judged)
    scored, scored_why = _scored(call)
    diagnosed, diagnostics_why = _diagnostics(call, curve_plan=curve is not None)
    repeats, depth, repeats_why = _repeats(call, lists)
    lengths = _lengths(lists, ranked, diagnosed)
    same_bits = dialect == "duckdb"
    # the same bits on every run and every plan
    sums_why = "sums: per user exact or in position order, over users exact (the same bits)"
    why = (
        groups_why,
        lists_why,
        f"ranked: {ranked}" + (duckdb_plan.PLACED_WHY if placed else ""),
        judged_why,
        per_user_why,
        scored_why,
        judgements_why,
        diagnostics_why,
        repeats_why,
        f"lengths: {lengths}",
        sums_why if same_bits else None,
    )
    return Plan(
        own=call.duckdb_own,
        groups=groups,
        lists=lists,
        ranked=ranked,
        judged=judged,
        per_user="curves" if curve is not None else "columns",
        scored=scored,
        judgements=judgements,
        diagnostics=diagnosed,
        lengths=lengths,
        repeats=repeats,
        repeats_depth=depth,
        same_bits=same_bits,
        curve=curve,
        why=tuple(line for line in why if line is not None),
    )


def _groups(call: _Call) -> tuple[str, str]:
    """``arms`` when complement_arms computes the summary, else ``crossed``."""
    # rows per cutoff need the groups crossed: arms.py sums a column per request
    arms = (
        not call.cross_arms
        and call.curve_cutoffs is None
        and complements_arms(
            call.requests, call.inputs, call.per_user, call.user_pass, call.portable
        )
    )
    if arms:
        return "arms", "groups: arms, a summary by columns only the recommendations have"
    none_asked = " (none asked)" if not call.inputs.groups else ""
    return "crossed", "groups: crossed into the interactions" + none_asked


def _lists(call: _Call) -> _Choice:
    """DuckDB's lists (lists_stage) on its own plans without a rank column, else none."""
    options = call.options
    lists = None
    if call.duckdb_own and call.inputs.rank is None:
        lists = lists_stage(call.requests, options, call.dialect)
    if lists is None:
        return None, f"lists: none ({_why_no_lists(call)})"
    return lists, (
        f"lists: {lists}, {call.own}, ties {options.ties!r}, "
        f"deepest cutoff {deepest_cutoff(call.requests)} "
        + ("<=" if lists == "top_lists" else ">")
        + f" {TOP_K_MAX_CUTOFF}"
        + (", every metric reads hit rows only" if lists == "score_lists" else "")
    )


def _why_no_lists(call: _Call) -> str:
    if call.inputs.rank is not None:
        return "a rank column"
    if not call.duckdb_own:
        return call.own
    if call.options.ties not in ID_TIES:
        return f"ties {call.options.ties!r}"
    return "a metric without a cutoff"


def _judged(call: _Call, lists: str | None) -> _Choice:
    """How the ranking metrics' rows are judged; none without a ranking metric."""
    if not call.reads & {"judged", "lists"}:
        return None, None
    if lists is not None and duckdb_plan.reads_hit_rows_only(call.requests):
        judged = "judged_hits"
    elif call.options.ties in ID_TIES and call.inputs.rank is None:
        hit_rows = duckdb_plan.judged_at_hit_rows_only(call.requests)
        judged = "joined_hits" if hit_rows else "joined"
    else:
        judged = "joined"
    hit_rows_only = ", every metric reading judged reads hit rows only"
    return judged, f"judged: {judged}" + (hit_rows_only if judged != "joined" else "")


def _distinct_cutoffs(call: _Call) -> int:
    cutoffs = requested_cutoffs(call.requests) if call.curve_cutoffs is None else call.curve_cutoffs
    return len(set(cutoffs))


def _per_user(call: _Call, arms: bool, judged: str | None) -> tuple[curves.Split | None, str]:
    """The curve plan's parts where it takes the requests (else None: a column per request)."""
    why_not = _why_not_curves(call, arms)
    population = widest_population(call.requests, call.options)
    curve = None
    if why_not is None:
        hit_rows = judged == "judged_hits"
        curve = curve_split(call.requests, call.options, population, hit_rows, call.curve_cutoffs)
    if curve is None:
        unsplit = "a metric file whose sums the curve plan cannot split"
        return None, f"per_user: a column per request ({why_not or unsplit})"
    source = "lists" if call.duckdb_own else "windows"
    return curve, f"per_user: curves from {source}, {_distinct_cutoffs(call)} distinct cutoffs"


def _why_not_curves(call: _Call, arms: bool) -> str | None:
    """Why the curve plan does not serve the call, before asking the metric files; None when
    it may."""
    population = widest_population(call.requests, call.options)
    distinct = _distinct_cutoffs(call)
    if call.per_user:
        return "per-user rows asked"
    # arms.py composes its own parts, and reads per_user's column per request (cross_arms)
    if arms or call.cross_arms:
        return "groups by arms.py"
    if deepest_cutoff(call.requests) is None:
        return "a metric without a cutoff"
    if call.reads != {"judged"}:
        return "metrics over scores, lists or judgements too"
    # a row per judged user (per_user.with_judged_users): not in the curve plan's lists
    if population in JUDGED_POPULATIONS:
        return f"population {population!r}, a row per judged user"
    if distinct < curves.MIN_CUTOFFS:
        return f"{distinct} distinct cutoffs, fewer than {curves.MIN_CUTOFFS}"
    return None


def _scored(call: _Call) -> _Choice:
    """The stage of the metrics over scores; none when unread."""
    if "scored" not in call.reads:
        return None, None
    # scored_positives counts rows, not weights
    positives = (
        call.duckdb_own
        and call.inputs.weight is None
        and duckdb_plan.sums_scored_only(call.requests)
    )
    scored = "scored_positives" if positives else "scored"
    return scored, f"scored: {scored}"


def _judgements(requests: Sequence[MetricRequest]) -> _Choice:
    """The stage of the metrics over judgements (judgements_stage); none when unread."""
    judgements = judgements_stage(requests)
    if judgements is None:
        return None, None
    pairs = ", every metric reading them reads judged pairs only"
    return judgements, f"judgements: {judgements}" + (pairs if judgements == "judged_pairs" else "")


def _diagnostics(call: _Call, curve_plan: bool) -> _Choice:
    """``chained`` or ``apart`` with the diagnostics, else none. ``curve_plan``: the curve
    plan runs."""
    if not call.diagnostics:
        return None, None
    why_apart = diagnostics_apart(
        call.inputs,
        widest_population(call.requests, call.options),
        only_judged=call.reads == {"judged"},
        own_or_passes=call.duckdb_own or call.user_pass is not None,
        per_user=call.per_user or curve_plan,
    )
    if not CHAIN_DIAGNOSTICS:
        why_apart = "turned off"
    if not call.chained:
        why_apart = "kept apart by the caller"
    if why_apart:
        return "apart", f"diagnostics: apart ({why_apart})"
    why_lists = per_list_checks(call.inputs, call.requests, call.options)
    if why_lists:
        return "chained_lists", f"diagnostics: chained_lists ({why_lists})"
    return "chained", "diagnostics: chained"


def _lengths(lists: str | None, ranked: str, diagnosed: str | None) -> str:
    """Which stage gives each list's length where a metric or the diagnostics read it (the
    module's table)."""
    if lists is not None:
        return "lists"
    if ranked == "ranked_judged":
        return "ranked_judged"
    return "ranked" if diagnosed == "chained" else "list_counts"


def _repeats(call: _Call, lists: str | None) -> tuple[str | None, int | None, str | None]:
    """Where the diagnostics count the repeated items, how deep, and why (the module's table)."""
    if not call.diagnostics:
        return None, None, None
    depth = repeats_depth(call.requests, call.options)
    if depth == 0:
        return "none", 0, "repeats: none counted (the input's reader refused them)"
    where = "ranked" if depth is not None and lists is None else "lists"
    deep = "anywhere in a list" if depth is None else f"in the first {depth} positions"
    return where, depth, f"repeats: {where} ({deep})"


def per_list_checks(
    inputs: Inputs, requests: Sequence[MetricRequest], options: Options
) -> str | None:
    """Why the chained diagnostics count each whole list (list_counts.sql) rather than every
    row at once (list_checks.sql); None when they need not."""
    if inputs.rank is not None:
        return "a rank column: each list's ranks checked"
    if repeats_depth(requests, options) is None:
        return "repeats counted anywhere in a list"
    return None


def diagnostics_apart(
    inputs: Inputs, population: str, *, only_judged: bool, own_or_passes: bool, per_user: bool
) -> str | None:
    """Why the diagnostics are not chained (see the module's table); None when they are."""
    return (
        "DuckDB's own plans or passes"
        if own_or_passes
        else "metrics over scores, lists or judgements too"
        if not only_judged
        else "per-user rows or the curve plan"
        if per_user
        else "groups"
        if inputs.groups
        else f"population {population!r}, a row per judged user"
        if population in JUDGED_POPULATIONS
        else None
    )


def judgements_stage(requests: Sequence[MetricRequest]) -> str | None:
    """The stage the metrics reading judgements read: judged_pairs.sql when each is one of
    JUDGED_PAIRS_METRICS, else judgements.sql; None when none reads them."""
    names = {r.metric.name for r in requests if r.metric.reads == "judgements"}
    if not names:
        return None
    return "judged_pairs" if names <= JUDGED_PAIRS_METRICS else "judgements"


def plan_switches() -> tuple[object, ...]:
    """What tests switch plans with (TOP_K_DIALECTS, curves.MIN_CUTOFFS,
    duckdb_plan.WHOLE_LIST_HIT_ROWS_METRICS, JUDGED_PAIRS_METRICS, CHAIN_DIAGNOSTICS,
    duckdb_plan.PLACED_RANKING): part of the keys of the caches of composed SQL, so that a
    switched plan is composed again."""
    return (
        TOP_K_DIALECTS,
        CHAIN_DIAGNOSTICS,
        duckdb_plan.PLACED_RANKING,
        curves.MIN_CUTOFFS,
        duckdb_plan.WHOLE_LIST_HIT_ROWS_METRICS,
        JUDGED_PAIRS_METRICS,
    )


def curve_split(
    requests: Sequence[MetricRequest],
    options: Options,
    population: str,
    hit_rows: bool = False,
    cutoffs: Sequence[int] | None = None,
) -> curves.Split | None:
    """The curve plan's parts (sqlmetrics/compose/curves.py) when enough cutoffs are asked of metric
    files it can take apart; None: the window plan. ``hit_rows``: judged is judged_hits.sql's,
    whose rows with a position are all hits. ``cutoffs``: compose's ``curve_cutoffs``, when
    given (else the requests' own)."""
    if len(set(requested_cutoffs(requests) if cutoffs is None else cutoffs)) < curves.MIN_CUTOFFS:
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


def repeats_depth(requests: Sequence[MetricRequest], options: Options) -> int | None:
    """How deep into each list a repeated (user, item) is counted (the diagnostics'
    duplicate_recommendations, which evaluate refuses): the deepest cutoff, where every metric
    has one; None for anywhere in the list. A repeat below the first k positions cannot change a
    number when the order of a tie is fixed: the best-placed copy is all the metrics read, and
    dropping a later one moves nothing above k. Anywhere: checks="full" (the audit), a metric
    reading whole lists, ties="average" (a gain averages its whole tie group, which may reach
    past k), and duplicates="first" (its window reads every row already). 0: none is counted,
    the input's reader refused them (inputs.READ_CHECKED)."""
    if options.checks == READ_CHECKED:
        return 0  # its reader refused them
    if options.checks == "full" or options.duplicates == "first" or options.ties == "average":
        return None
    return deepest_cutoff(requests)


def lists_stage(requests: Sequence[MetricRequest], options: Options, dialect: str) -> str | None:
    """The stage building each user's first items as lists: top_lists.sql (a top-k aggregate)
    up to TOP_K_MAX_CUTOFF; deeper score_lists.sql (the scores alone, each hit placed by its
    score) when every metric reads hit rows only (judged_hits.sql), else sorted_lists.sql (each
    whole list sorted); None: the window plan (other dialects and tie policies, metrics without
    a cutoff)."""
    cutoff = deepest_cutoff(requests)
    if options.ties not in ID_TIES or cutoff is None or dialect not in TOP_K_DIALECTS:
        return None
    if cutoff <= TOP_K_MAX_CUTOFF:
        return "top_lists"
    hit_rows_only = duckdb_plan.reads_hit_rows_only(requests)
    return "score_lists" if hit_rows_only and cutoff <= SCORE_LISTS_MAX_CUTOFF else "sorted_lists"


def ranked_stage_name(inputs: Inputs, options: Options, top_k: bool) -> str:
    """The stage that ranks the rows (plan.py's ``ranked``)."""
    if inputs.rank is not None:
        return "ranked_given"
    if options.ties in ID_TIES:
        return "ranked_top_k" if top_k else "ranked"
    return "ranked_average" if options.ties == "average" else "ranked_by_relevance"


def complements_arms(
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    per_user: bool,
    user_pass: UserPass | None,
    portable: bool,
) -> bool:
    """Whether complement_arms computes the summary: every group column is one only the
    recommendations have. The rest keep crossing the arms into the interactions: groups in both
    tables too, per-user rows (groups x users rows by definition), passes, the dbt package's
    portable stages, the metrics over the lists (their catalogue and popularity), and trec_eval's
    sums and geometric means."""
    return (
        bool(inputs.groups)
        and not any(group.in_interactions for group in inputs.groups)
        and not per_user
        and user_pass is None
        and not portable
        and not any(r.metric.reads in ("lists", "judgements", "pool") for r in requests)
        # a user without a list scores 0 only for plain means: gm_map floors the log at 1e-5,
        # num_rel counts the relevant items of every user
        and not any(r.metric.summed or r.metric.exponential for r in requests)
        # a user without a list scores 0 only on a metric that reads the list (ideal_dcg does not)
        and all(r.metric.reads_the_list for r in requests if r.metric.reads == "judged")
    )
