"""The inputs of a call, the choices that shape it, and the stages that bind them.

``Inputs`` (the two relations, the optional items and history tables, and the identifiers of
their columns), ``Group`` (a group_by column), ``Options`` (ties, threshold, population,
duplicates, ranks, checks) with the choices each takes (``TIES``, ``POPULATIONS``,
``DUPLICATES``, ``RANKS``, ``CHECK_DEPTHS``), and the user's column names over the defaults
(``column_names``). The ``bind_*``
functions and ``input_stages`` rename the inputs' columns to what the stage files read
(``input_recommendations``, ``input_interactions``, ...): assemble() puts them first in its
WITH clause, and every other stage reads the inputs only through them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from sqlglot import exp

from sqlmetrics.compose.stages import derived_table, group_key, stage, widen_keys
from sqlmetrics.errors import SqlmetricsError

if TYPE_CHECKING:
    from sqlmetrics.compose.summary import UserPass


TIES = ("id", "id_text", "optimistic", "pessimistic", "average")
# The policies ordering equal scores by item id alone: a rank column or the top-k plan serves them.
ID_TIES = ("id", "id_text")
POPULATIONS = ("all", "common", "judged", "all_judged")
# trec_eval's populations: the users with a judgement (any interaction row, relevant or not;
# "judged" also needs a list, as trec_eval without -c; "all_judged" does not, as -c). A user
# judged with nothing relevant is in them and scores what the metric files give with no
# relevant item (0, num_ret its list length, the geometric means their floor).
JUDGED_POPULATIONS = ("judged", "all_judged")
DUPLICATES = ("error", "first")
# How a rank column is read: "consecutive" wants each list's ranks to be 1, 2, ..., n (a gap or
# a repeat is refused); "literal" takes the values as the positions, gaps and repeats included
# (RecTools' reading: a cutoff k keeps the rows ranked <= k, discounts read the value).
RANKS = ("consecutive", "literal")
# How deep the checks look for a repeated (user, item) in a list: "read", within what the
# requested metrics read (a deeper repeat cannot change a number; plan.repeats_depth); "full",
# anywhere in each list (the whole-list audit, which gathers every list).
CHECK_DEPTHS = ("read", "full")
# Internal: the input's reader refused every repeat already (a TREC run's, while parsing), so
# the query counts none.
READ_CHECKED = "reader"


COLUMN_ROLES = (
    "user",
    "item",
    "score",
    "rank",
    "relevance",
    "rating",
    "category",
    "item_group",
    "intent",
    "weight",
)
DEFAULT_COLUMNS: dict[str, str | None] = {
    "user": "user_id",
    "item": "item_id",
    "score": "score",
    "rank": None,
    "relevance": "relevance",
    "rating": "rating",  # read only by the rating metrics (rmse, mae, mse, r2)
    "category": "category",  # of the items table
    "item_group": "item_group",  # of the items table: the exposure table's item groups
    "intent": "intent",  # of the interactions: read only by the intent-aware metrics
    "weight": None,  # the recommendations' row weight, read by the metrics over scored rows
}


def column_names(columns: Mapping[str, str | None] | None) -> dict[str, str | None]:
    """The user's column names over the defaults; unknown roles are refused."""
    unknown = set(columns or {}) - set(COLUMN_ROLES)
    if unknown:
        raise SqlmetricsError(
            f"unknown column role(s) {', '.join(sorted(unknown))}; use {', '.join(COLUMN_ROLES)}"
        )
    return {**DEFAULT_COLUMNS, **dict(columns or {})}


@dataclass(frozen=True)
class Group:
    """A group_by column: its output name, its identifier in the inputs, where it lives."""

    name: str
    column: exp.Identifier
    in_interactions: bool


@dataclass(frozen=True)
class Inputs:
    """The two inputs as relations to select from, and the identifiers of their columns."""

    recommendations: exp.Expr
    interactions: exp.Expr
    user: exp.Identifier
    item: exp.Identifier
    score: exp.Identifier | None = None  # one of score and rank orders the lists
    rank: exp.Identifier | None = None
    relevance: exp.Identifier | None = None  # None: every interaction has relevance 1
    groups: tuple[Group, ...] = field(default_factory=tuple)
    items: exp.Expr | None = None  # the optional items table: the catalogue, item categories
    category: exp.Identifier | None = None  # its category column, when it has one
    item_group: exp.Identifier | None = None  # its item group column (exposure), when it has one
    history: exp.Expr | None = None  # the optional history table: what users consumed before
    rating: exp.Identifier | None = None  # the interactions' rating, for the rating metrics
    intent: exp.Identifier | None = None  # the interactions' intent, for the intent-aware ones
    # the model (a value of the first group column) the overlap metrics compare the others with
    baseline: str | None = None
    weight: exp.Identifier | None = None  # the recommendations' row weight (scored rows)


@dataclass(frozen=True)
class Options:
    ties: str = "id"
    threshold: float = 0.0
    population: str = "all"
    duplicates: str = "error"  # "error": evaluate refuses them, counted by the diagnostics
    ranks: str = "consecutive"  # how a rank column is read (RANKS); scores are ranked 1..n
    checks: str = "read"  # how deep repeated recommendations are looked for (CHECK_DEPTHS)

    def __post_init__(self) -> None:
        check_choice("ties", self.ties, TIES)
        check_choice("ranks", self.ranks, RANKS)
        check_choice("population", self.population, POPULATIONS)
        check_choice("duplicates", self.duplicates, DUPLICATES)
        check_choice("checks", self.checks, (*CHECK_DEPTHS, READ_CHECKED))
        threshold = self.threshold
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise SqlmetricsError(f"threshold must be a number >= 0, got {threshold!r}")
        if not (threshold >= 0 and math.isfinite(threshold)):  # NaN, inf and 1e400 too
            raise SqlmetricsError(f"threshold must be a number >= 0 and finite, got {threshold!r}")


def check_choice(name: str, value: object, choices: Sequence[str]) -> None:
    if value not in choices:
        raise SqlmetricsError(f"{name} must be one of {', '.join(choices)}; got {value!r}")


def refuse_unknown_baseline(
    result: Iterable[Any] | Mapping[str, Any], baseline: str | None, group_by: Sequence[str]
) -> None:
    """The overlap metrics read the baseline model's lists: a name that is no model of the
    first group column (in evaluate's result) would leave every model without them, refused
    rather than scored 0."""
    if baseline is None or not group_by:
        return
    column = cast("Mapping[str, Iterable[Any]]", result)[group_by[0]]
    models = sorted({str(value) for value in column if value is not None})
    if baseline not in models:
        raise SqlmetricsError(
            f"baseline {baseline!r} is not one of the models ({', '.join(models)}); "
            f"name a value of the group_by column {group_by[0]}"
        )


def bind_recommendations(inputs: Inputs) -> exp.Select:
    columns: list[exp.Expr] = [
        exp.alias_(exp.column(group.column), group_key(i)) for i, group in enumerate(inputs.groups)
    ]
    columns += [
        exp.alias_(exp.column(inputs.user), "user_id"),
        exp.alias_(exp.column(inputs.item), "item_id"),
    ]
    if inputs.rank is not None:
        columns.append(exp.alias_(exp.column(inputs.rank), "pos"))
    elif inputs.score is not None:
        columns.append(exp.alias_(exp.column(inputs.score), "score"))
    else:
        raise SqlmetricsError("recommendations need a score column or a rank column")
    if inputs.weight is not None:
        columns.append(exp.alias_(exp.column(inputs.weight), "weight"))
    return exp.select(*columns).from_(inputs.recommendations.copy())


def bind_interactions(inputs: Inputs, rating: bool = False, intent: bool = False) -> exp.Select:
    """The interactions as user_id, item_id, relevance (and ``rating``, ``intent`` when a
    metric reads it)."""
    columns: list[exp.Expr] = []
    arms: list[str] = []
    for i, group in enumerate(inputs.groups):
        if group.in_interactions:
            columns.append(exp.alias_(exp.column(group.column), group_key(i)))
        else:
            columns.append(exp.column(group_key(i), "arms"))
            arms.append(group_key(i))
    relevance: exp.Expr = (
        exp.column(inputs.relevance) if inputs.relevance is not None else exp.Literal.number(1)
    )
    columns += [
        exp.alias_(exp.column(inputs.user), "user_id"),
        exp.alias_(exp.column(inputs.item), "item_id"),
        exp.alias_(relevance, "relevance"),
    ]
    if rating and inputs.rating is not None:
        columns.append(exp.alias_(exp.column(inputs.rating), "rating"))
    if intent and inputs.intent is not None:
        columns.append(exp.alias_(exp.column(inputs.intent), "intent"))
    bound = exp.select(*columns).from_(exp.alias_(inputs.interactions.copy(), "interactions"))
    if arms:
        # A column only the recommendations have (a model, an experiment arm): each of its
        # values is evaluated against the whole population of the interactions.
        values = exp.select(*arms).distinct().from_("input_recommendations")
        bound = bound.join(derived_table(values, "arms"), join_type="cross")
    # Qualify the interaction columns: the arms subquery must not capture them.
    for column in bound.selects:
        target = column.this if isinstance(column, exp.Alias) else column
        if isinstance(target, exp.Column) and not target.table:
            target.set("table", exp.to_identifier("interactions"))
    return bound


def bind_items(inputs: Inputs, category: bool) -> exp.Select:
    """The items table as input_items: item_id, and category when a metric reads it."""
    if inputs.items is None:
        raise SqlmetricsError("no items table to bind")
    columns = [exp.alias_(exp.column(inputs.item), "item_id")]
    if category and inputs.category is not None:
        columns.append(exp.alias_(exp.column(inputs.category), "category"))
    return exp.select(*columns).from_(inputs.items.copy())


def bind_history(inputs: Inputs) -> exp.Select:
    """The history table as input_history: user_id, item_id (the same column names); without
    one, no row (nobody consumed anything before), of the interactions' types."""
    if inputs.history is None:
        nothing = exp.EQ(this=exp.Literal.number(1), expression=exp.Literal.number(0))
        return exp.select("user_id", "item_id").from_("input_interactions").where(nothing)
    return exp.select(
        exp.alias_(exp.column(inputs.user), "user_id"),
        exp.alias_(exp.column(inputs.item), "item_id"),
    ).from_(inputs.history.copy())


def input_stages(
    inputs: Inputs,
    options: Options,
    keys: Sequence[str],
    user_pass: UserPass | None,
    rating: bool,
    pool: bool = False,
    intent: bool = False,
) -> list[tuple[str, exp.Expr]]:
    """The inputs bound to the stages' names (they already carry the group columns; the
    stages get them by widening), one pass's users only, and duplicates="first"'s
    de-duplicated recommendations. With ``pool`` (infap reads pool.sql) the interactions are
    bound twice: input_pool with every row, input_interactions without the rows of a negative
    relevance (the pool's unjudged documents), so every other stage reads what it reads
    without infap."""
    recommendations = bind_recommendations(inputs)
    interactions = bind_interactions(inputs, rating=rating, intent=intent)
    pooled = bind_interactions(inputs, rating=rating, intent=intent) if pool else None
    if user_pass is not None:
        for binding in (recommendations, interactions, pooled):
            if binding is not None:
                binding.where(user_pass.condition(exp.column(inputs.user)), copy=False)
    bound: list[tuple[str, exp.Expr]] = [
        ("input_recommendations", recommendations),
        ("input_interactions", interactions),
    ]
    if pooled is not None:
        if inputs.relevance is not None:
            # Only a finite negative number is a pool row (x * 0 = 0 holds for finite numbers
            # only): NULL, NaN and -infinity stay, for the checks to refuse. The input read
            # again rather than input_pool's rows (SELECT * over it): Spark cannot resolve
            # truth.sql's MAX(relevance) over such a CTE.
            relevance = exp.column(inputs.relevance, "interactions")
            finite = exp.EQ(this=relevance.copy() * 0, expression=exp.Literal.number(0))
            unjudged = exp.and_(relevance.copy() < 0, finite)
            # a CASE, not a boolean value: T-SQL has none, and unknown (NULL) must keep the row
            pooled_row = (
                exp.case().when(unjudged, exp.Literal.number(1)).else_(exp.Literal.number(0))
            )
            judged = exp.EQ(this=pooled_row, expression=exp.Literal.number(0))
            interactions.where(judged, copy=False)
        bound.insert(1, ("input_pool", pooled))
    if options.duplicates == "first":
        first = stage("first_recommendations")
        if inputs.rank is not None:
            for window in first.find_all(exp.Window):
                window.set("order", exp.Order(expressions=[exp.column("pos")]))
        bound[0] = ("all_recommendations", bound[0][1])
        bound.insert(1, ("input_recommendations", widen_keys(first, keys)))
    return bound
