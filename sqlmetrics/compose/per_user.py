"""Each request's value per user, and the users it is averaged over.

``per_user_stages`` makes a per-user select of each stage the requests read (per_user.sql over
judged for the ranking metrics, a GROUP BY user over scored, rated, judgements and pool), with
a column per request (``MetricColumn``): its metric file's expressions, the cutoff bound
(``CUTOFF_CONSTANTS`` too) or the score threshold. Also here: the populations
(``widest_population``, ``population_condition``, ``with_judged_users``), ``per_user`` over
several stages (``per_user_union``), the per-user sums that give the same bits on every run
(``stable_user_sums``, ``tie_averaged_sums``), and the cutoffs the requests read
(``deepest_cutoff``, ``requested_cutoffs``). The metrics over the top-k lists are lists.py's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from sqlmetrics.catalog.gains import gain_of, parse_gains
from sqlmetrics.catalog.metrics import MAX_CUTOFF, MetricRequest
from sqlmetrics.compose.inputs import JUDGED_POPULATIONS, POPULATIONS, Options, check_choice
from sqlmetrics.compose.stages import (
    bind_placeholders,
    call,
    cast_to,
    derived_table,
    number,
    prune,
    stage,
)
from sqlmetrics.compose.sums import exact_conditional_sum, exact_sum, is_fractional
from sqlmetrics.errors import SqlmetricsError

# The column judged holds 1 on a row per user with a judgement (with_judged_users).
JUDGED_USER = "judged_user"
# Parameters of a metric file that depend only on its cutoff, bound as number literals: the
# ideal DCG of k relevant items of gain 1 (ndcg_ideal_k divides by it whatever |R_u|). Computed
# in Python, so their cutoffs are bounded (a sum of k terms at each call).
CONSTANT_MAX_CUTOFF = MAX_CUTOFF  # parse_request refuses larger cutoffs
CUTOFF_CONSTANTS = {
    "ideal_dcg_of_k": lambda k: math.fsum(1 / math.log2(i + 1) for i in range(1, k + 1)),
    # ndeval's ERR-IA normaliser per intent: k items each relevant to every intent, alpha 0.5
    "err_ia_ideal_of_k": lambda k: math.fsum(0.5 ** (i - 1) / i for i in range(1, k + 1)),
}


@dataclass(frozen=True)
class MetricColumn:
    """Where a request's per-user value lives in ``per_user``: one column for a mean metric,
    a numerator and a denominator column for a micro metric."""

    request: MetricRequest
    names: tuple[str, ...]

    @property
    def over_lists(self) -> bool:
        """Computed over the top-k lists (``reads: lists``), in CTEs of its own rather than in
        ``per_user``: ``{name}_groups`` holds its value per group, and for a per-user metric
        ``{name}_users`` its value per user with a list."""
        return self.request.metric.reads == "lists"


def cascade_gmax(requests: Sequence[MetricRequest]) -> exp.Expr:
    """judged.sql's $gmax: the one gmax the requests taking it ask (err, nerr), a number or
    each user's largest relevance (the column max_relevance); judged computes one cascade, so
    two gmax in one call are refused. 4 (unread) when no request takes it."""
    asked = {
        request.parameter("gmax"): request.label
        for request in requests
        if "gmax" in dict(request.metric.parameters)
    }
    if len(asked) > 1:
        raise SqlmetricsError(
            f"{' and '.join(asked.values())} ask for different gmax; one call computes one "
            "cascade: ask for them in separate calls"
        )
    gmax = next(iter(asked), 4.0)
    return number(gmax) if isinstance(gmax, float) else exp.column("max_relevance")


def item_gain(requests: Sequence[MetricRequest], threshold: float) -> exp.Expr:
    """judgements.sql's $gain: the gain of judged_relevance under the one gains mapping the
    requests taking gains ask (ndcg_gains); judgements computes one ideal order, so two
    mappings in one call are refused."""
    asked = {
        str(request.parameter("gains")): request.label
        for request in requests
        if "gains" in dict(request.metric.parameters)
    }
    if len(asked) > 1:
        raise SqlmetricsError(
            f"{' and '.join(asked.values())} ask for different gains; one call computes one "
            "ideal order: ask for them in separate calls"
        )
    gains = parse_gains("gains", next(iter(asked), "{}"))
    return gain_of(gains, exp.column("judged_relevance"), threshold)


def deepest_cutoff(requests: Sequence[MetricRequest]) -> int | None:
    """How far down the lists the stages read: the deepest cutoff, or None for whole lists."""
    if any(r.k is None or r.metric.reads_whole_list for r in requests):
        return None
    return max(r.k for r in requests if r.k is not None)


def requested_cutoffs(requests: Sequence[MetricRequest]) -> list[int]:
    """The distinct cutoffs requested, in order: where a tie group can change a number."""
    return sorted({r.k for r in requests if r.k is not None})


def widest_population(requests: Sequence[MetricRequest], options: Options) -> str:
    """The population per_user keeps: the narrowest holding every one asked ("all" holds
    "common"; "judged" holds "common"; "all_judged" holds them all). A request with a narrower
    one gets NULL for the users outside it, so its mean skips them (per_user_stages): each
    request is averaged over its own population (MetricRequest.population)."""
    for request in requests:
        if request.population is not None:
            check_choice(f"the population of {request.label}", request.population, POPULATIONS)
            if request.metric.reads != "judged":  # the others have no population option
                raise SqlmetricsError(
                    f"{request.label} reads {request.metric.reads}, not the ranked lists: it "
                    "cannot have a population of its own"
                )
    asked = {request.population or options.population for request in requests}
    if asked <= {"all", "common"}:
        return "all" if "all" in asked else "common"
    # common's users are in judged too; all's (unlisted users with a relevant item) are not
    return "judged" if asked <= {"judged", "common"} else "all_judged"


def _needs_relevant(population: str) -> bool:
    return population in ("all", "common")


def _needs_list(population: str) -> bool:
    return population in ("common", "judged")


def population_condition(population: str, within: str | None = None) -> exp.Expr:
    """The condition on per_user's aggregates over judged for a user of ``population``; with
    ``within`` (a wider population per_user already keeps), only the parts it does not imply.
    A relevant item: MAX(n_relevant) > 0; a list: list_length > 0; a judgement: the row
    with_judged_users adds (every user of the other populations has one too)."""
    parts: list[exp.Expr] = []
    if within is None and population in JUDGED_POPULATIONS:
        parts.append(exp.func("MAX", exp.column(JUDGED_USER)) > 0)
    if _needs_relevant(population) and (within is None or not _needs_relevant(within)):
        parts.append(exp.func("MAX", exp.column("n_relevant")) > 0)
    if _needs_list(population) and (within is None or not _needs_list(within)):
        parts.append(_per_user_constants(exp.column("list_length")) > 0)
    return exp.and_(*parts)


def bind_cutoff(expression: exp.Expr, value: int | None, name: str = "k") -> exp.Expr:
    """``x <= $k`` keeps positions within k; ``$k`` elsewhere is the list size k.

    Without a cutoff the whole list counts: ``x <= $k`` becomes ``x IS NOT NULL`` and ``$k``
    becomes the user's list length (precision without @k is hits / list length).
    """
    for placeholder in list(expression.find_all(exp.Placeholder)):
        if name == "k" and placeholder.name in CUTOFF_CONSTANTS:
            if value is None:
                raise SqlmetricsError(f"${placeholder.name} needs a cutoff (cutoff: required)")
            if value > CONSTANT_MAX_CUTOFF:
                raise SqlmetricsError(
                    f"a cutoff of {value:,} is beyond what ${placeholder.name} is computed for: "
                    f"use at most {CONSTANT_MAX_CUTOFF:,} (no list is that long)"
                )
            constant = CUTOFF_CONSTANTS[placeholder.name](value)
            placeholder.replace(exp.Literal.number(repr(constant)))
            continue
        if placeholder.name != name:
            raise SqlmetricsError(f"unknown parameter ${placeholder.name} where ${name} is bound")
        if value is not None:
            placeholder.replace(exp.Literal.number(value))
        elif isinstance(placeholder.parent, exp.LTE) and placeholder.arg_key == "expression":
            comparison = placeholder.parent
            comparison.replace(exp.Not(this=exp.Is(this=comparison.this, expression=exp.Null())))
        else:
            placeholder.replace(exp.column("list_length"))
    return expression


def _per_user_constants(expression: exp.Expr) -> exp.Expr:
    """Reads n_relevant and list_length, per-user constants to a metric file, as the per-user
    aggregates per_user.sql defines (judged carries each on one side of the join only)."""
    replacements = {
        "n_relevant": lambda: exp.func("MAX", exp.column("n_relevant")),
        "list_length": lambda: exp.func("COALESCE", exp.func("MAX", exp.column("list_length")), 0),
    }
    if isinstance(expression, exp.Column) and expression.name in replacements:
        return replacements[expression.name]()
    for column in list(expression.find_all(exp.Column)):
        if column.name in replacements and not column.find_ancestor(exp.AggFunc):
            column.replace(replacements[column.name]())
    return expression


def per_user_stages(
    requests: Sequence[MetricRequest],
    options: Options,
    population: str | None = None,
) -> tuple[dict[str, exp.Select], list[MetricColumn]]:
    """A per-user select for each stage the requests read, with one column per request (its
    file's expressions, k or the score threshold bound): per_user.sql for the ranking metrics
    over judged, a plain GROUP BY user_id for scored and rated. ``population``: the users
    per_user keeps (widest_population), options.population when None."""
    population = population or options.population
    selects: dict[str, exp.Select] = {}
    columns: list[MetricColumn] = []
    for index, request in enumerate(requests):
        source = request.metric.reads
        name = f"m{index + 1}"
        if source == "lists":  # computed by lists_stages, over per_user's population
            selects.setdefault("judged", stage("per_user"))
            columns.append(MetricColumn(request, (name,)))
            continue
        if source not in selects:
            selects[source] = (
                stage("per_user")
                if source == "judged"
                else exp.select("user_id").from_(source).group_by("user_id")
            )
        names = _select_request(selects[source], request, name, options, population)
        columns.append(MetricColumn(request, names))
    _keep_population(selects, population)
    return selects, columns


def _request_expressions(request: MetricRequest, options: Options) -> dict[str, exp.Expr]:
    """The request's file's expressions, k or the score threshold bound, per-user constants
    read as per_user.sql's aggregates (tie-averaged over judged under ties="average")."""
    threshold = request.score_threshold
    expressions = {
        alias: _per_user_constants(
            bind_cutoff(expression, request.k)
            if threshold is None
            else bind_placeholders(expression, score_threshold=number(threshold))
        )
        for alias, expression in request.metric.expressions().items()
    }
    if options.ties == "average" and request.metric.reads == "judged":
        expressions = {
            alias: tie_averaged_sums(expression) for alias, expression in expressions.items()
        }
    return expressions


def _select_request(
    per_user_stage: exp.Select,
    request: MetricRequest,
    name: str,
    options: Options,
    population: str,
) -> tuple[str, ...]:
    """Adds the request's column (a micro metric's numerator and denominator) named ``name``
    to its stage's per-user select; returns the names."""
    expressions = _request_expressions(request, options)
    own = request.population or options.population
    narrowed = request.metric.reads == "judged" and own != population

    # The expressions are this request's own copies: they are handed to the builders below.
    def own_population(value: exp.Expr) -> exp.Expr:
        """NULL for a user of per_user outside the request's own, narrower population."""
        if not narrowed:
            return value
        condition = population_condition(own, within=population)
        return exp.Case().when(condition, value, copy=False)

    if request.metric.micro:
        names = (f"{name}_numerator", f"{name}_denominator")
        for alias, part in zip(("numerator", "denominator"), names, strict=True):
            column = exp.alias_(own_population(expressions[alias]), part, copy=False)
            per_user_stage.select(column, copy=False)
        return names
    # 0 / 0 cases (no hit for map_hits, an empty ideal) are 0 by definition.
    value = call("COALESCE", expressions[request.metric.name], exp.Literal.number(0))
    per_user_stage.select(exp.alias_(own_population(value), name, copy=False), copy=False)
    return (name,)


def _keep_population(selects: dict[str, exp.Select], population: str) -> None:
    """The per-user selects' HAVING keeping the population's users."""
    if population == "common" and "judged" in selects:
        having = selects["judged"].args["having"]
        longest = _per_user_constants(exp.column("list_length"))
        having.set("this", exp.and_(having.this, longest > 0))
    if population in JUDGED_POPULATIONS and "judged" in selects:
        selects["judged"].args["having"].set("this", population_condition(population))
    for walked in ("judgements", "pool"):  # bpref, infap: the users with a list
        if _needs_list(population) and walked in selects:
            selects[walked].having(_per_user_constants(exp.column("list_length")) > 0, copy=False)


def spread_per_user_constants(judged: exp.Select, per_user_stage: exp.Select) -> None:
    """A metric that reads n_relevant or list_length row by row (inside an aggregate, like
    r_precision's ``pos <= n_relevant``) needs it on every row of the user, not only on the
    side of the join that carries it: a window spreads it, only when needed."""
    inside = {
        column.name
        for column in per_user_stage.find_all(exp.Column)
        if column.name in ("n_relevant", "list_length")
        and column.find_ancestor(exp.AggFunc)
        and not isinstance(column.parent, exp.Max)
    }
    for projection in judged.expressions:
        name = projection.alias_or_name
        if name in inside:
            window = exp.Window(
                this=exp.func("MAX", exp.column(name)), partition_by=[exp.column("user_id")]
            )
            # n_relevant stays NULL for a user judged with nothing relevant (a population of
            # judged users), as per_user's MAX reads it: 0 would be a division by zero
            spread = exp.func("COALESCE", window, 0) if name == "list_length" else window
            projection.replace(exp.alias_(spread, name))


def bound_source(
    name: str,
    per_user_stage: exp.Select,
    also: set[str],
    options: Options,
    population: str,
    file: str | None = None,
    gain: exp.Expr | None = None,
) -> exp.Select:
    """scored.sql, rated.sql or judgements.sql (or ``file``, the plan's stage for it, like
    judged_pairs.sql) with only the columns the metrics (and ``also``) read (each of their
    windows is a sort), and the threshold bound (judgements.sql's; its $gain to ``gain``).
    Under a population of judged users judgements.sql keeps every user with a judgement,
    relevant or not (its WHERE: a relevant one)."""
    source = stage(file or name)
    prune(source, {column.name for column in per_user_stage.find_all(exp.Column)} | also)
    if name in ("judgements", "pool") and population in JUDGED_POPULATIONS:
        judged = exp.or_(exp.column("n_relevant") > 0, exp.column("n_nonrelevant") > 0, copy=False)
        source.set("where", exp.Where(this=judged))
    _bind_gain(source, gain)
    return bind_placeholders(source, threshold=number(options.threshold))


def _bind_gain(source: exp.Select, gain: exp.Expr | None) -> None:
    """judgements.sql's $gain bound where its gain is read (ndcg_gains); elsewhere the gain
    and the relevance it reads are dropped, so the query is what it was without them."""
    if gain is not None and any(p.alias_or_name == "gain" for p in source.expressions):
        for placeholder in list(source.find_all(exp.Placeholder)):
            if placeholder.name == "gain":
                placeholder.replace(exp.paren(gain.copy()))
        return
    for select in list(source.find_all(exp.Select)):
        if select is not source:
            kept = [p for p in select.expressions if p.alias_or_name not in _GAIN_COLUMNS]
            select.set("expressions", kept)


_GAIN_COLUMNS = ("gain", "judged_relevance")


def with_judged_users(judged: exp.Select) -> exp.Query:
    """judged (either plan's) under a population of judged users: its rows, then one row per
    user of the interactions with ``judged_user`` 1 (0 on the others), which per_user's
    population reads, and which gives a user judged with nothing relevant (and, under
    all_judged, without a list) a row. It holds no position, no hit, no gain and no relevant
    count, so every metric file reads it as adding nothing."""
    names = judged.named_selects
    rows = exp.select(*names, exp.alias_(exp.Literal.number(0), JUDGED_USER)).from_(
        exp.alias_(exp.paren(judged), "judged_rows")
    )
    zero = {"hit", "gain", "exp_gain", "relevance"}
    marks = (
        exp.select(
            *[
                exp.column(name)
                if name == "user_id"
                else exp.alias_(exp.Literal.number(0) if name in zero else exp.Null(), name)
                for name in names
            ],
            exp.alias_(exp.Literal.number(1), JUDGED_USER),
        )
        .from_("input_interactions")
        .group_by("user_id")
    )
    return exp.union(rows, marks, distinct=False)


def per_user_union(
    selects: dict[str, exp.Select], columns: list[MetricColumn]
) -> list[tuple[str, exp.Expr]]:
    """``per_user``: one stage's per-user select, or with several one row per user of any of
    them (UNION ALL, then one row per user), where ``in_population`` is 1 for the ranking
    population and NULL otherwise; a stage's columns are NULL for users it lacks."""
    if len(selects) == 1:
        return [("per_user", next(iter(selects.values())))]
    names = [name for column in columns if not column.over_lists for name in column.names]
    ctes: list[tuple[str, exp.Expr]] = []
    branches: list[exp.Select] = []
    for source, select in selects.items():
        cte = f"per_user_{'ranking' if source == 'judged' else source}"
        ctes.append((cte, select))
        own = {name for name in select.named_selects}
        population: exp.Expr = exp.Literal.number(1) if source == "judged" else exp.Null()
        # One type in every branch (ClickHouse makes a Variant of integer and double). Every
        # node below is made here: the builders need not copy them (nor parse "user_id").
        values = [
            exp.alias_(
                cast_to(exp.column(name) if name in own else exp.Null(), "double"), name, copy=False
            )
            for name in names
        ]
        in_population = exp.alias_(population, "in_population", copy=False)
        branches.append(
            exp.select(exp.column("user_id"), in_population, *values, copy=False).from_(
                cte, copy=False
            )
        )
    union: exp.Query = branches[0]
    for branch in branches[1:]:
        union = exp.union(union, branch, distinct=False, copy=False)
    maxima = [
        exp.alias_(call("MAX", exp.column(name)), name, copy=False)
        for name in ["in_population", *names]
    ]
    combined = (
        exp.select(exp.column("user_id"), *maxima, copy=False)
        .from_(derived_table(union, "per_stage"), copy=False)
        .group_by(exp.column("user_id"), copy=False)
    )
    return [*ctes, ("per_user", combined)]


def _is_sum_of_hits(node: exp.Expr) -> bool:
    """``SUM(CASE WHEN <a prefix of the list> THEN hit ELSE 0 END)``, the prefix being
    ``pos <= x`` or, without a cutoff, ``pos IS NOT NULL``: the hits within a prefix."""
    case = node.this if isinstance(node, exp.Sum) else None
    if not isinstance(case, exp.Case) or len(case.args.get("ifs") or []) != 1:
        return False
    when, default = case.args["ifs"][0], case.args.get("default")
    condition, value = when.this, when.args.get("true")
    if isinstance(condition, exp.Not) and isinstance(condition.this, exp.Is):
        condition = condition.this  # pos IS NOT NULL: the whole list
    elif not isinstance(condition, exp.LTE):
        return False
    return (
        isinstance(condition.this, exp.Column)
        and condition.this.name == "pos"
        and isinstance(value, exp.Column)
        and value.name == "hit"
        and isinstance(default, exp.Literal)
        and default.to_py() == 0
    )


def tie_averaged_sums(expression: exp.Expr) -> exp.Expr:
    """ties="average": sums of hits read ranked_average's closed form ``hits_through`` (the
    largest position within x holds the expected hits up to x), so they are exact (the other
    sums: stable_user_sums)."""
    for node in list(expression.find_all(exp.Sum)):
        if _is_sum_of_hits(node):
            case = node.this.copy()
            case.args["ifs"][0].set("true", exp.column("hits_through"))
            if node is expression:
                return exp.Max(this=case)
            node.replace(exp.Max(this=case))
    return expression


POSITIONS = ("pos", "ideal_pos", "scored_ideal_pos")


def stable_user_sums(per_user: exp.Select) -> None:
    """per_user's sums over a user's positions, the same bits on every run: DuckDB adds a
    user's rows in whatever order its threads deliver them (out of a window, or out of the
    hit-rows plan's joins and groupings), so a plain SUM's last bits could change between runs
    (seen at 1e6 rows, and on the bundled example).
    - A fractional term (DCG's, AP's, ties="average"'s shares: sums.is_fractional) is added as
      an exact sum (sums.py): whole numbers of 2^-64ths in a HUGEINT, rounded once, the same in
      any order and cheaper than sorting each user's terms.
    - Another term (cg's gain) is added in position order: over whole numbers its sum keeps
      their integer type, as on the other engines.
    Sums of hits are whole numbers, exact in any order (ties="average": tie_averaged_sums made
    them MAXes). The curve plan's running sums do the same with the same terms
    (curve_steps.py), so both plans give the same bits."""
    for node in list(per_user.find_all(exp.Sum)):
        read = {column.name for column in node.find_all(exp.Column)}
        if not read & set(POSITIONS) or _is_sum_of_hits(node):
            continue
        case = node.this
        ifs = case.args.get("ifs") or [] if isinstance(case, exp.Case) else []
        default = case.args.get("default") if isinstance(case, exp.Case) else None
        conditional = len(ifs) == 1 and isinstance(default, exp.Literal) and default.to_py() == 0
        term = ifs[0].args["true"] if conditional else case
        if not is_fractional(term):
            keys = [
                exp.Ordered(this=exp.column(name), nulls_first=False)
                for name in POSITIONS
                if name in read
            ]
            node.set("this", exp.Order(this=case, expressions=keys))
        elif conditional:
            # SUM(CASE WHEN pos <= k THEN term ELSE 0 END): the cutoffs of a term share a test
            node.replace(exact_conditional_sum(ifs[0].this, term))
        else:
            node.replace(exact_sum(case))
