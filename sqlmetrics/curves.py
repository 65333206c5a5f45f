"""The curve plan: the same metrics at many cutoffs (``ndcg@1:100``) for the price of a few.

The window plan gives each (metric, cutoff) its own aggregate over judged's rows, such as
``SUM(CASE WHEN pos <= 10 THEN gain / LOG2(pos + 1) ELSE 0 END)``: 7 metrics at k = 1..100 are
~600 aggregates over every judged row (1e7 rows: 18 CPU s, three quarters of it there and in
the 700-column mean). Here each such aggregate is gathered once per user as the list of its
terms in position order, with their running sums; one row per (user, cutoff) then reads the
running sum at the last of its positions within the cutoff; the means are taken per cutoff
and turned into the usual one-column-per-label row at the end. The work is per (user, cutoff)
rather than per (judged row, cutoff), and the numbers have the same bits: a user's running
sums add its terms as the window plan's per-user sums do (compose._stable_user_sums: exact sums
of fractional terms, the others in position order), and the means over the users are exact
sums (sums.py), as the window plan's.

DuckDB only (its list functions); used for the summary of ranking metrics (in one query or per
pass of users) when at least ``MIN_CUTOFFS`` cutoffs are asked (plan.py), and only when every
metric file's aggregates have the shape the plan can split (``_split``): the others keep the
window plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from sqlmetrics.catalog import MetricRequest, parsed
from sqlmetrics.compose import (
    Inputs,
    _nulls_last,
    _ratio,
    _summary,
    group_key,
    partial_columns,
)
from sqlmetrics.sums import BOUND_BITS, SCALE_BITS, is_fractional
from sqlmetrics.sums import aggregate as over_users

# Below this many distinct cutoffs the window plan's few aggregates cost less than a row per
# (user, cutoff): bench/data/1e7, 7 metrics, CPU s window / curves: 6 cutoffs 2.7-2.8 / 3.0-3.1,
# 10 cutoffs 2.9-3.0 / 3.1-3.3, 20 cutoffs 3.9 / 3.5-3.6, 100 cutoffs 18.1 / 7.5.
MIN_CUTOFFS = 16
POSITIONS = ("pos", "ideal_pos", "scored_ideal_pos")
CUTOFF = "k"  # the column holding the cutoff in per_user's rows (one per user and cutoff)
CONSTANTS = ("n_relevant", "list_length")  # per_user.sql's per-user columns, kept


@dataclass(frozen=True)
class Family:
    """One metric file with the same options at several cutoffs: one column (or a numerator
    and a denominator) of per_user, one value per (user, cutoff)."""

    name: str
    indexes: tuple[int, ...]  # of its requests in the call's requests


@dataclass(frozen=True)
class Positions:
    """Per user, the positions within the deepest cutoff where ``<position> <= $k [AND
    <condition>]`` holds, ascending (a list ``at{j}``); per (user, cutoff), how many are within
    the cutoff (``within{j}``)."""

    name: str
    position: str
    condition: exp.Expr | None


@dataclass(frozen=True)
class Terms:
    """Per user, a metric file's terms at those positions, in position order (``terms{j}``)."""

    name: str
    term: exp.Expr
    positions: Positions


def families(requests: Sequence[MetricRequest]) -> list[Family]:
    """The requests grouped by everything but their cutoff, in order of first appearance."""
    grouped: dict[tuple[object, ...], list[int]] = {}
    for index, request in enumerate(requests):
        key = (request.metric.name, request.score_threshold, request.population)
        grouped.setdefault(key, []).append(index)
    return [
        Family(f"curve{number + 1}", tuple(indexes))
        for number, indexes in enumerate(grouped.values())
    ]


def requests_at_cutoffs(
    requests: Sequence[MetricRequest], grouped: Sequence[Family]
) -> list[tuple[MetricRequest, Family, exp.Expr]]:
    """Each request with its family and the pivot that reads its cutoff's row of a per-cutoff
    result: ``MAX(CASE WHEN k = <its k> THEN <column> END)`` with ``column`` to fill in."""
    family_of = {index: family for family in grouped for index in family.indexes}
    return [
        (request, family_of[index], exp.column(CUTOFF).eq(exp.Literal.number(request.k)))
        for index, request in enumerate(requests)
    ]


def _picked(condition: exp.Expr, column: str) -> exp.Expr:
    return exp.func("MAX", exp.Case().when(condition.copy(), exp.column(column)))


def _cutoff_condition(condition: exp.Expr) -> tuple[str, exp.Expr | None] | None:
    """(position, the rest) of ``<position> <= $k [AND <rest>]``; None for another shape."""
    rest: exp.Expr | None = None
    if isinstance(condition, exp.And) and isinstance(condition.this, exp.LTE):
        condition, rest = condition.this, condition.expression
    if not (
        isinstance(condition, exp.LTE)
        and isinstance(condition.this, exp.Column)
        and condition.this.name in POSITIONS
        and isinstance(condition.expression, exp.Placeholder)
        and condition.expression.name == "k"
    ):
        return None
    if rest is not None and any(True for _ in rest.find_all(exp.Placeholder)):
        return None
    return condition.this.name, rest


def _split(aggregate: exp.AggFunc) -> tuple[str, str, exp.Expr | None, exp.Expr] | None:
    """(SUM or MAX, position, condition, term) of ``SUM|MAX(CASE WHEN <position> <= $k [AND
    <condition>] THEN <term> ELSE 0 END)``; None for an aggregate of another shape."""
    if not isinstance(aggregate, (exp.Sum, exp.Max)) or not isinstance(aggregate.this, exp.Case):
        return None
    case = aggregate.this
    ifs, default = case.args.get("ifs") or [], case.args.get("default")
    if len(ifs) != 1 or not (isinstance(default, exp.Literal) and default.to_py() == 0):
        return None
    split = _cutoff_condition(ifs[0].this)
    term = ifs[0].args.get("true")
    if split is None or term is None or any(True for _ in term.find_all(exp.Placeholder)):
        return None
    position, condition = split
    return ("SUM" if isinstance(aggregate, exp.Sum) else "MAX"), position, condition, term


# Per user, the running SUM or MAX of a list of terms: element i adds (or maxes) the first i.
# Lists are a user's hits or ideal positions: short. A fractional sum is the window plan's exact
# sum (compose._stable_user_sums, sums.py) of the same terms: whole numbers of 2^-64ths
# (``fixed``, NULL for a term too large) added in a HUGEINT, rounded once; the same bits. A list
# with a term of 2^32 or more is added as doubles in position order, as the window plan's plain
# SUM (whose order is DuckDB's: such sums are not the same bits from run to run). Another sum
# (cg's gains) adds in position order, as the window plan's.
_RUNNING = {
    function: parsed(
        f"LIST_TRANSFORM(RANGE(1, LEN(terms) + 1), lambda i: LIST_{function}(terms[1:i]))"
    )
    for function in ("SUM", "MAX")
}
_FIXED = parsed(
    f"LIST_TRANSFORM(terms, lambda t: CASE WHEN ABS(t) < POWER(2, {BOUND_BITS})"
    f" THEN CAST(t * POWER(2, {SCALE_BITS}) AS HUGEINT) END)"
)
_EXACT_RUNNING = parsed(
    "CASE WHEN LIST_AGGREGATE(fixed, 'count') = LEN(fixed) THEN LIST_TRANSFORM("
    "RANGE(1, LEN(fixed) + 1),"
    f" lambda i: CAST(LIST_SUM(fixed[1:i]) AS DOUBLE) / POWER(2, {SCALE_BITS}))"
    " ELSE LIST_TRANSFORM(RANGE(1, LEN(terms) + 1), lambda i: LIST_SUM(terms[1:i])) END"
)
# The aggregate at the cutoff of a row, from the running list and the count of its positions
# within the cutoff. The window plan's MAX also meets the ELSE 0 of each row outside the
# cutoff: here, the user's judged rows its positions leave out.
_AT_CUTOFF = {
    "SUM": parsed("COALESCE(running[within], 0)"),
    "MAX": parsed(
        "CASE WHEN within < judged_rows THEN GREATEST(COALESCE(running[within], 0), 0)"
        " ELSE running[within] END"
    ),
}


# _AT_CUTOFF over the hits of judged_hits.sql, where every position is a hit (hit = 1): the
# running sum at ``within`` is ``within``, the running MAX 1 from the first hit on.
_AT_CUTOFF_OF_HITS = {
    "SUM": parsed("within"),
    "MAX": parsed(
        "CASE WHEN within < judged_rows THEN LEAST(within, 1)"
        " ELSE CASE WHEN within > 0 THEN 1 END END"
    ),
}


@dataclass(frozen=True)
class Running:
    """Per user, the running SUM or MAX of a Terms list (``running{j}``); ``exact``: a sum of
    fractional terms, added as whole numbers of 2^-64ths (``fixed{j}``, _EXACT_RUNNING)."""

    name: str
    function: str
    terms: Terms
    exact: bool


def _renamed(template: exp.Expr, names: dict[str, str]) -> exp.Expr:
    """A copy of a parsed template with its placeholder columns renamed."""
    expression = template.copy()
    for column in expression.find_all(exp.Column):
        if column.name in names:
            column.set("this", exp.to_identifier(names[column.name]))
    return expression


@dataclass
class Split:
    """The requests' metric files taken apart: per user, the lists of every Term and the
    aggregates that do not depend on the cutoff (``free``); per (user, cutoff), each family's
    value from them (``values``: column name -> expression over per_user_lists' columns)."""

    families: list[Family]
    positions: list[Positions]
    terms: list[Terms]
    running: list[Running]
    free: list[tuple[str, exp.Expr]]
    values: list[tuple[str, exp.Expr]]


def _without_hit_test(condition: exp.Expr | None) -> exp.Expr | None:
    """A condition without its ``hit = 1`` conjuncts (None when nothing is left)."""
    if condition is None:
        return None
    parts = list(condition.flatten()) if isinstance(condition, exp.And) else [condition]
    kept = [
        part
        for part in parts
        if not (
            isinstance(part, exp.EQ)
            and isinstance(part.this, exp.Column)
            and part.this.name == "hit"
            and isinstance(part.expression, exp.Literal)
            and part.expression.to_py() == 1
        )
    ]
    return exp.and_(*kept) if kept else None


def split(
    requests: Sequence[MetricRequest],
    prepared: Sequence[dict[str, exp.Expr]],
    narrowed: Sequence[bool],
    hit_rows: bool = False,
) -> Split | None:
    """The Split of ``requests`` (``prepared``: each request's expressions as the window plan
    reads them before its cutoff is bound; ``narrowed``: NULL for a user without a list),
    or None when a metric file has an aggregate of another shape. ``hit_rows``: every judged
    row with a position is a hit (judged_hits.sql), so ``pos <= k AND hit = 1`` lists the
    same positions as ``pos <= k`` and shares its list (map's and mrr's with ndcg's)."""
    grouped = families(requests)
    positions: dict[tuple[str, str], Positions] = {}
    terms: dict[tuple[str, str], Terms] = {}
    running: dict[tuple[str, str], Running] = {}
    free: dict[str, tuple[str, exp.Expr]] = {}
    values: list[tuple[str, exp.Expr]] = []
    for family in grouped:
        first = family.indexes[0]
        request = requests[first]
        if request.metric.reads != "judged" or request.k is None:
            return None
        for alias, template in prepared[first].items():
            expression = template.copy()
            if any(p.name != "k" for p in expression.find_all(exp.Placeholder)):
                return None  # a constant of the cutoff ($ideal_dcg_of_k): the window plan
            for aggregate in list(expression.find_all(exp.AggFunc)):
                if aggregate.parent and aggregate.parent.find_ancestor(exp.AggFunc):
                    continue
                key = aggregate.sql("duckdb")
                if any(True for _ in aggregate.find_all(exp.Placeholder)):
                    parts = _split(aggregate)
                    if parts is None:
                        return None
                    function, position, condition, term = parts
                    if hit_rows and position == "pos":
                        condition = _without_hit_test(condition)
                    where = (position, condition.sql("duckdb") if condition else "")
                    at = positions.setdefault(
                        where, Positions(f"at{len(positions) + 1}", position, condition)
                    )
                    within = f"within{at.name[2:]}"
                    hits = isinstance(term, exp.Column) and term.name == "hit"
                    if hit_rows and hits and position == "pos":
                        # every listed position is a hit: the running sum of its hits is
                        # the count of positions within the cutoff, no list needed
                        replacement = _renamed(_AT_CUTOFF_OF_HITS[function], {"within": within})
                    else:
                        listed = terms.setdefault(
                            (term.sql("duckdb"), at.name),
                            Terms(f"terms{len(terms) + 1}", term, at),
                        )
                        # sums of hits are whole numbers: exact as they are
                        # (compose._is_sum_of_hits)
                        exact = function == "SUM" and not hits and is_fractional(term)
                        summed = running.setdefault(
                            (function, listed.name),
                            Running(f"running{len(running) + 1}", function, listed, exact),
                        )
                        names = {"running": summed.name, "within": within}
                        replacement = _renamed(_AT_CUTOFF[function], names)
                else:
                    name, _ = free.setdefault(key, (f"a{len(free) + 1}", aggregate.copy()))
                    replacement = exp.column(name)
                if aggregate is expression:
                    expression = replacement
                else:
                    aggregate.replace(replacement)
            for placeholder in list(expression.find_all(exp.Placeholder)):
                placeholder.replace(exp.column(CUTOFF))
            if request.metric.micro:
                name = f"{family.name}_{alias}"
            else:
                if alias != request.metric.name:
                    continue
                name = family.name
                # 0 / 0 cases (no hit for map_hits, an empty ideal) are 0, as in the window plan
                expression = exp.func("COALESCE", expression, exp.Literal.number(0))
            if narrowed[first]:
                expression = exp.Case().when(exp.column("list_length") > 0, expression)
            values.append((name, expression))
    return Split(
        grouped,
        list(positions.values()),
        list(terms.values()),
        list(running.values()),
        list(free.values()),
        values,
    )


def lists_stage(per_user: exp.Select, parts: Split, deepest: int) -> exp.Select:
    """``per_user_lists``: per_user.sql's select (its population, n_relevant, list_length) with
    the lists of positions and terms and the cutoff-free aggregates instead of a column per
    request."""
    kept = [p for p in per_user.expressions if p.alias_or_name in ("user_id", *CONSTANTS)]
    per_user.set("expressions", kept)

    def gathered(value: exp.Expr, positions: Positions) -> exp.Expr:
        position = exp.column(positions.position)
        within: exp.Expr = position <= exp.Literal.number(deepest)
        if positions.condition is not None:
            within = exp.and_(within, positions.condition.copy())
        ordered = exp.Order(
            this=value.copy(), expressions=[exp.Ordered(this=position.copy(), nulls_first=False)]
        )
        return exp.Filter(this=exp.ArrayAgg(this=ordered), expression=exp.Where(this=within))

    for positions in parts.positions:
        listed = gathered(exp.column(positions.position), positions)
        per_user.select(exp.alias_(listed, positions.name), copy=False)
    for terms in parts.terms:
        per_user.select(exp.alias_(gathered(terms.term, terms.positions), terms.name), copy=False)
    for name, aggregate in parts.free:
        per_user.select(exp.alias_(aggregate.copy(), name), copy=False)
    per_user.select(exp.alias_(exp.Count(this=exp.Star()), "judged_rows"), copy=False)
    return per_user


# How many of a user's positions (ascending) are within the cutoff. Counting them is a walk of
# the list per (user, cutoff) row; a list that is exactly 1, 2, .., n (every listed position,
# ties "id") has min(k, n) of them (1e7, k = 1..100: 4.07 -> 3.64 CPU s for the query).
_DENSE = parsed("COALESCE(at = RANGE(1, LEN(at) + 1), FALSE)")
_WITHIN = parsed(
    "CASE WHEN dense THEN LEAST(k, LEN(at)) ELSE COALESCE(LEN(LIST_FILTER(at, x -> x <= k)), 0) END"
)


def per_user_stage(parts: Split, cutoffs: Sequence[int]) -> exp.Select:
    """``per_user``: one row per user and requested cutoff, a column per family."""
    values = exp.Array(expressions=[exp.Literal.number(k) for k in cutoffs])
    unnested = exp.Unnest(
        expressions=[values],
        alias=exp.TableAlias(
            this=exp.to_identifier("cutoffs"), columns=[exp.to_identifier(CUTOFF)]
        ),
    )
    fixed = exp.select("*").from_("per_user_lists")
    for summed in parts.running:
        if summed.exact:
            value = _renamed(_FIXED, {"terms": summed.terms.name})
            fixed.select(exp.alias_(value, f"fixed{summed.name[7:]}"), copy=False)
    sums = exp.select("*").from_(exp.alias_(exp.paren(fixed), "per_user_fixed"))
    for summed in parts.running:
        names = {"terms": summed.terms.name, "fixed": f"fixed{summed.name[7:]}"}
        template = _EXACT_RUNNING if summed.exact else _RUNNING[summed.function]
        sums.select(exp.alias_(_renamed(template, names), summed.name), copy=False)
    for positions in parts.positions:
        dense = _renamed(_DENSE, {"at": positions.name})
        sums.select(exp.alias_(dense, f"dense{positions.name[2:]}"), copy=False)
    counted = (
        exp.select("*")
        .from_(exp.alias_(exp.paren(sums), "per_user_sums"))
        .join(unnested, join_type="cross")
    )
    for positions in parts.positions:
        number = positions.name[2:]
        within = _renamed(_WITHIN, {"at": positions.name, "dense": f"dense{number}"})
        counted.select(exp.alias_(within, f"within{number}"), copy=False)
    return exp.select(
        "user_id", CUTOFF, *(exp.alias_(value, name) for name, value in parts.values)
    ).from_(exp.alias_(exp.paren(counted), "per_cutoff_lists"))


def final(
    parts: Split, requests: Sequence[MetricRequest], inputs: Inputs, sums: bool = False
) -> exp.Select:
    """The summary row per group, as compose._final writes it: each family's mean (or sum, or
    micro ratio) per cutoff, summed exactly (sums.py: the window plan's bits), then one column
    per request's label. ``sums``: a pass's partial sums instead, in compose.partial_columns'
    columns (duckdb_passes adds them up)."""
    keys = [group_key(i) for i in range(len(inputs.groups))]

    def summed(function: str, name: str, integers: bool = False) -> exp.Expr:
        return over_users(function, exp.column(name), exact=True, integers=integers)

    per_cutoff = exp.select(
        *keys, CUTOFF, exp.alias_(exp.func("COUNT", exp.Star()), "users")
    ).from_("per_user")
    for family in parts.families:
        request = requests[family.indexes[0]]
        micro = [f"{family.name}_{part}" for part in ("numerator", "denominator")]
        values: list[tuple[str, exp.Expr]]
        integers = request.metric.summed
        if sums and request.metric.micro:
            values = [(name, summed("SUM", name)) for name in micro]
        elif sums:
            counted = exp.func("COUNT", exp.column(family.name))
            values = [
                (family.name, summed("SUM", family.name, integers)),
                (f"{family.name}_users", counted),
            ]
        elif request.metric.micro:
            values = [(family.name, _ratio(*(summed("SUM", name) for name in micro)))]
        else:
            values = [(family.name, summed(_summary(request), family.name, integers))]
        for name, value in values:
            per_cutoff.select(exp.alias_(value, name), copy=False)
    per_cutoff = per_cutoff.group_by(*keys, CUTOFF)

    labels: list[exp.Expr] = []
    picked = zip(
        requests_at_cutoffs(requests, parts.families), partial_columns(requests), strict=True
    )
    for (request, family, at_cutoff), (_, numerator, denominator) in picked:
        if sums:  # m{i} (with m{i}_users) or m{i}_numerator and m{i}_denominator
            columns = (
                [f"{family.name}_numerator", f"{family.name}_denominator"]
                if request.metric.micro
                else [family.name, f"{family.name}_users"]
            )
            for column, partial in zip(columns, (numerator, denominator), strict=True):
                if partial is not None:
                    labels.append(exp.alias_(_picked(at_cutoff, column), partial))
            continue
        label = _picked(at_cutoff, family.name)
        if request.metric.square_root:
            label = exp.func("SQRT", label)
        if request.metric.exponential:
            label = exp.func("EXP", label)
        labels.append(exp.Alias(this=label, alias=exp.to_identifier(request.label, quoted=True)))
    groups = [
        exp.alias_(exp.column(key), exp.to_identifier(group.name, quoted=True))
        for key, group in zip(keys, inputs.groups, strict=True)
    ]
    users = exp.func("COALESCE", exp.func("MAX", exp.column("users")), exp.Literal.number(0))
    query = exp.select(*groups, exp.alias_(users, "users"), *labels).from_(
        exp.alias_(exp.paren(per_cutoff), "per_cutoff")
    )
    if keys:
        order = [exp.column(key) for key in keys]
        query = query.group_by(*order).order_by(*_nulls_last(order))
    return query


def moments(
    requests: Sequence[MetricRequest], groups: int, distributions: Sequence[int] = ()
) -> exp.Select:
    """The t-interval's moments (sqlmetrics/stats.py's ``stats_moments``) from the curve
    plan's per_user: per group (``g0``..), ``users`` and per request ``n{i}`` (users with a
    value), ``s{i}`` (their sum, exact as the summary's) and ``q{i}`` (their sum of
    squares); per request of ``distributions``, distributions.spread_aggregates' columns, from the
    same pass over per_user's rows. Every request is a mean (stats.has_interval), never a
    micro ratio."""
    from sqlmetrics.distributions import spread_aggregates

    keys = [group_key(i) for i in range(groups)]
    per_cutoff = exp.select(*keys, CUTOFF, exp.alias_(exp.func("COUNT", exp.Star()), "users"))
    per_cutoff = per_cutoff.from_("per_user").group_by(*keys, CUTOFF)
    grouped = families(requests)
    pivots = requests_at_cutoffs(requests, grouped)
    for index in distributions:  # counted at the request's cutoff only
        _, family, at_cutoff = pivots[index]
        aggregates = spread_aggregates(index, exp.column(family.name), at_cutoff)
        per_cutoff.select(*aggregates, copy=False)
    for family in grouped:
        value = exp.column(family.name)
        for slot, moment in (
            ("n", exp.func("COUNT", value.copy())),
            ("s", over_users("SUM", value.copy(), exact=True)),
            ("q", exp.func("SUM", exp.Mul(this=value.copy(), expression=value.copy()))),
        ):
            per_cutoff.select(exp.alias_(moment, f"{family.name}_{slot}"), copy=False)
    users = exp.func("COALESCE", exp.func("MAX", exp.column("users")), exp.Literal.number(0))
    query = exp.select(
        *(exp.alias_(exp.column(key), f"g{i}") for i, key in enumerate(keys)),
        exp.alias_(users, "users"),
    ).from_(exp.alias_(exp.paren(per_cutoff), "per_cutoff"))
    for index, (_, family, at_cutoff) in enumerate(pivots):
        for slot in ("n", "s", "q"):
            picked = _picked(at_cutoff, f"{family.name}_{slot}")
            query.select(exp.alias_(picked, f"{slot}{index}"), copy=False)
    for index in distributions:
        at_cutoff = pivots[index][2]
        for slot in ("d", "z", "c"):
            picked = _picked(at_cutoff, f"{slot}{index}")
            query.select(exp.alias_(picked, f"{slot}{index}"), copy=False)
    return query.group_by(*keys) if keys else query
