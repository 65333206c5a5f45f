"""The curve plan: the same metrics at many cutoffs (``ndcg@1:100``) for the price of a few.

The window plan gives each (metric, cutoff) its own aggregate over judged's rows, such as
``SUM(CASE WHEN pos <= 10 THEN gain / LOG2(pos + 1) ELSE 0 END)``: 7 metrics at k = 1..100 are
~600 aggregates over every judged row (1e7 rows: 18 CPU s, three quarters of it there and in
the 700-column mean). Here each such aggregate is gathered once per user as the list of its
terms in position order (per_user_lists); curve_steps.py turns the lists into the sums over
the users at every cutoff, a row per user and *step* (a cutoff where one of its lists gains a
position) rather than per user and cutoff. The numbers have the same bits as the window
plan's: a user's running sums add its terms as the window plan's per-user sums do
(per_user.stable_user_sums: exact sums of fractional terms, the others in position order); the
sums over the users are integers (whole 2^-64ths, sums.py, and counts), added exactly in any
order, as the window plan's exact sums.

This module takes the requests' metric files apart (``split``) and gathers the lists
(DuckDB's list functions; every other dialect reads judged's rows with windows instead,
curve_windows.py). Used for the summary of ranking metrics (in one query or per pass of users)
when at least ``MIN_CUTOFFS`` cutoffs are asked (plan.py), and only when every metric file's
aggregates have the shape the plan can split (``_split``): the others keep the window plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlglot import exp

from sqlmetrics.catalog.metrics import MetricRequest, parsed
from sqlmetrics.compose.sums import is_fractional

# Below this many distinct cutoffs the window plan's few aggregates cost less than the lists
# and steps (bench/cutoffs.py; docs/benchmark.md, the curve plan).
MIN_CUTOFFS = 8
POSITIONS = ("pos", "ideal_pos", "scored_ideal_pos")
CUTOFF = "k"  # the column holding the cutoff in per_user's rows (curve_steps.py)
CONSTANTS = ("n_relevant", "list_length")  # per_user.sql's per-user columns, kept


@dataclass(frozen=True)
class Family:
    """One metric file with the same options at several cutoffs: one column (or a numerator
    and a denominator) of per_user, one value per user and cutoff."""

    name: str
    indexes: tuple[int, ...]  # of its requests in the call's requests


@dataclass(frozen=True)
class Positions:
    """Per user, the positions within the deepest cutoff where ``<position> <= $k [AND
    <condition>]`` holds, ascending (a list ``at{j}``); at a cutoff, how many are within it
    (``within{j}``)."""

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


def renamed(template: exp.Expr, names: dict[str, str]) -> exp.Expr:
    """A copy of a parsed template with its placeholder columns renamed."""
    expression = template.copy()
    for column in expression.find_all(exp.Column):
        if column.name in names:
            column.set("this", exp.to_identifier(names[column.name]))
    return expression


@dataclass
class Split:
    """The requests' metric files taken apart: per user, the lists of every Term and the
    aggregates that do not depend on the cutoff (``free``); per user and cutoff, each family's
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
    gathered = _Gathered(hit_rows)
    values: list[tuple[str, exp.Expr]] = []
    for family in grouped:
        first = family.indexes[0]
        request = requests[first]
        if request.metric.reads != "judged" or request.k is None:
            return None
        for alias, template in prepared[first].items():
            expression = gathered.at_cutoff(template.copy())
            if expression is None:
                return None
            value = _value(family.name, alias, request, expression, narrowed[first])
            if value is not None:
                values.append(value)
    return Split(
        grouped,
        list(gathered.positions.values()),
        list(gathered.terms.values()),
        list(gathered.running.values()),
        list(gathered.free.values()),
        values,
    )


@dataclass
class _Gathered:
    """What split gathers per user, each once however many expressions read it: the lists of
    positions and of terms, their running sums, the aggregates free of the cutoff."""

    hit_rows: bool
    positions: dict[tuple[str, str], Positions] = field(default_factory=dict)
    terms: dict[tuple[str, str], Terms] = field(default_factory=dict)
    running: dict[tuple[str, str], Running] = field(default_factory=dict)
    free: dict[str, tuple[str, exp.Expr]] = field(default_factory=dict)

    def at_cutoff(self, expression: exp.Expr) -> exp.Expr | None:
        """``expression`` at the cutoff in column k: each aggregate replaced by its value
        there from the lists, or by its column when free of the cutoff; None when one has
        another shape."""
        if any(p.name != "k" for p in expression.find_all(exp.Placeholder)):
            return None  # a constant of the cutoff ($ideal_dcg_of_k): the window plan
        for aggregate in list(expression.find_all(exp.AggFunc)):
            if aggregate.parent and aggregate.parent.find_ancestor(exp.AggFunc):
                continue
            replacement: exp.Expr | None
            if any(True for _ in aggregate.find_all(exp.Placeholder)):
                replacement = self._listed(aggregate)
                if replacement is None:
                    return None
            else:
                replacement = self._free(aggregate)
            if aggregate is expression:
                expression = replacement
            else:
                aggregate.replace(replacement)
        for placeholder in list(expression.find_all(exp.Placeholder)):
            placeholder.replace(exp.column(CUTOFF))
        return expression

    def _listed(self, aggregate: exp.AggFunc) -> exp.Expr | None:
        """An aggregate of the cutoff at the cutoff, from the running list of its terms at its
        positions (or, for hits where every position is one, from their count); None for
        another shape."""
        parts = _split(aggregate)
        if parts is None:
            return None
        function, position, condition, term = parts
        if self.hit_rows and position == "pos":
            condition = _without_hit_test(condition)
        where = (position, condition.sql("duckdb") if condition else "")
        at = self.positions.setdefault(
            where, Positions(f"at{len(self.positions) + 1}", position, condition)
        )
        within = f"within{at.name[2:]}"
        hits = isinstance(term, exp.Column) and term.name == "hit"
        if self.hit_rows and hits and position == "pos":
            # every listed position is a hit: the running sum of its hits is the count of
            # positions within the cutoff, no list needed
            return renamed(_AT_CUTOFF_OF_HITS[function], {"within": within})
        listed = self.terms.setdefault(
            (term.sql("duckdb"), at.name), Terms(f"terms{len(self.terms) + 1}", term, at)
        )
        # sums of hits are whole numbers: exact as they are (per_user._is_sum_of_hits)
        exact = function == "SUM" and not hits and is_fractional(term)
        summed = self.running.setdefault(
            (function, listed.name),
            Running(f"running{len(self.running) + 1}", function, listed, exact),
        )
        return renamed(_AT_CUTOFF[function], {"running": summed.name, "within": within})

    def _free(self, aggregate: exp.AggFunc) -> exp.Column:
        """An aggregate free of the cutoff: a column of per_user_lists, one per distinct one."""
        key = aggregate.sql("duckdb")
        name, _ = self.free.setdefault(key, (f"a{len(self.free) + 1}", aggregate.copy()))
        return exp.column(name)


def _value(
    family: str, alias: str, request: MetricRequest, expression: exp.Expr, narrowed: bool
) -> tuple[str, exp.Expr] | None:
    """A family's column of per_user at each cutoff: a micro metric's numerator or denominator,
    a mean's value; None for a mean's other expressions."""
    if request.metric.micro:
        name = f"{family}_{alias}"
    else:
        if alias != request.metric.name:
            return None
        name = family
        # 0 / 0 cases (no hit for map_hits, an empty ideal) are 0, as in the window plan
        expression = exp.func("COALESCE", expression, exp.Literal.number(0))
    if narrowed:
        expression = exp.Case().when(exp.column("list_length") > 0, expression)
    return name, expression


def lists_stage(per_user: exp.Select, parts: Split, deepest: int, lists: bool = True) -> exp.Select:
    """``per_user_lists``: per_user.sql's select (its population, n_relevant, list_length) with
    the lists of positions and terms and the cutoff-free aggregates instead of a column per
    request. Not ``lists``: without the lists (curve_windows.py reads judged's rows instead)."""
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

    for positions in parts.positions if lists else ():
        listed = gathered(exp.column(positions.position), positions)
        per_user.select(exp.alias_(listed, positions.name), copy=False)
    for terms in parts.terms if lists else ():
        per_user.select(exp.alias_(gathered(terms.term, terms.positions), terms.name), copy=False)
    for name, aggregate in parts.free:
        per_user.select(exp.alias_(aggregate.copy(), name), copy=False)
    per_user.select(exp.alias_(exp.Count(this=exp.Star()), "judged_rows"), copy=False)
    return per_user
