"""The input checks, written once for every engine: column mapping and types when the inputs
are bound, then the bad rows that evaluate's query counted, each refused with a message that
names the table, the column, how many rows, an example row and what to do."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose.diagnostics import (
    CHECKS,
    DIAGNOSTICS,
    EXPONENTIAL_GAIN_BOUND,
    uses_exponential_gain,
)
from sqlmetrics.compose.inputs import Group, Inputs, column_names
from sqlmetrics.compose.lists import counts_popularity
from sqlmetrics.engines.bad_rows import example as _example
from sqlmetrics.engines.bad_rows import not_finite as _not_finite
from sqlmetrics.engines.bad_rows import recommendation_columns as _recommendation_columns
from sqlmetrics.engines.bad_rows import refuse_bad_weights, refuse_repeated_items
from sqlmetrics.engines.base import NUMERIC_TYPES, UNKNOWN, Engine, Source
from sqlmetrics.errors import SqlmetricsError

if TYPE_CHECKING:
    import pandas as pd


def _suggest(name: str, columns: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(columns), n=1, cutoff=0.5)
    if not close:
        close = [c for c in columns if c.lower() == name.lower()]
    return f" Did you mean {close[0]!r}?" if close else ""


def _column(source: Source, name: str, role: str) -> exp.Identifier:
    if name not in source.columns:
        matches = [c for c in source.columns if c.lower() == name.lower()]
        if len(matches) == 1:
            name = matches[0]
        else:
            raise SqlmetricsError(
                f"{source.role} has no column {name!r} (the {role} column)."
                f"{_suggest(name, list(source.columns))} "
                f"Its columns: {', '.join(source.columns)}. Name yours with "
                f"columns={{{role!r}: ...}} (CLI: --{role}-column)."
            )
    return exp.to_identifier(name, quoted=True)


# A number type alone, e.g. BIGINT or DECIMAL(10, 2): not a list of one (DOUBLE[]), a struct
# or INTERVAL, whose names start the same way.
_NAMES = "|".join(sorted(NUMERIC_TYPES, key=len, reverse=True))
_NUMBER = re.compile(rf"(?:{_NAMES})(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?")
# A DECIMAL of more fraction digits than this is stored in 128 bits, and the products and sums
# of the metrics need more digits than that (DECIMAL(38,38) cannot even hold 1).
MAX_DECIMAL_SCALE = 18


def _is_number(kind: str) -> bool:
    return _NUMBER.fullmatch(kind) is not None


def _decimal_scale(kind: str) -> int:
    """The fraction digits of a DECIMAL(p,s) type; 0 for any other type."""
    match = _NUMBER.fullmatch(kind)
    return int(match.group(2)) if match and match.group(2) else 0


def _check_numeric(source: Source, column: exp.Identifier, role: str) -> None:
    kind = source.columns[column.name]
    if kind == UNKNOWN:
        return
    if not _is_number(kind):
        raise SqlmetricsError(
            f"{source.role}.{column.name} (the {role} column) is {kind}, not a number; "
            "cast it to a numeric type first (DOUBLE for scores)"
        )
    if _decimal_scale(kind) > MAX_DECIMAL_SCALE:
        raise SqlmetricsError(
            f"{source.role}.{column.name} (the {role} column) is {kind}: more than "
            f"{MAX_DECIMAL_SCALE} decimal places leave no room for the metrics' arithmetic; "
            "cast it to DOUBLE"
        )


def _id_family(kind: str) -> str:
    """What a key column can be joined or matched with: numbers with numbers, text with text,
    and other types with the same type: a naive TIMESTAMP is not a TIMESTAMP WITH TIME ZONE
    (comparing them reads the naive one in the session's time zone), nor a DATE. Timestamps of
    different precisions are one family."""
    if _is_number(kind):
        return "number"
    if "CHAR" in kind or kind in ("TEXT", "STRING"):
        return "text"
    if kind.startswith("TIMESTAMP"):
        aware = "TIME ZONE" in kind or kind == "TIMESTAMPTZ"
        return "TIMESTAMP WITH TIME ZONE" if aware else "TIMESTAMP"
    return kind


def _same_family(one: str, other: str) -> bool:
    """Whether two id or group types can be joined; a type the driver did not name is left to
    the engine."""
    return UNKNOWN in (one, other) or _id_family(one) == _id_family(other)


def _cast_hint(one: str, other: str) -> str:
    families = {_id_family(one), _id_family(other)}
    if families == {"TIMESTAMP", "TIMESTAMP WITH TIME ZONE"}:
        return (
            "cast one so both have the same type (e.g. the naive one to TIMESTAMPTZ with its "
            "time zone, or the aware one to TIMESTAMP in UTC); they are not compared silently, "
            "as the result would depend on the session's time zone"
        )
    return "cast one so both have the same type"


# A nested type, as DuckDB names it: a list or an array (INTEGER[], INTEGER[3]), a struct, a
# map or a union (Spark's ARRAY<...>, STRUCT<...> and MAP<...> are read in these names).
_NESTED = re.compile(r".*\]|(?:STRUCT|MAP|UNION|ROW|ARRAY|LIST)\b.*", re.DOTALL)


def _check_id(where: str, role: str, kind: str) -> None:
    """An id column is an integer or a string: a fraction or a nested value is refused."""
    if kind in ("FLOAT", "DOUBLE", "REAL") or _decimal_scale(kind) > 0:
        raise SqlmetricsError(
            f"{where} (the {role} column) is {kind}; ids must be integers or strings (a "
            "fraction is no id): cast it"
        )
    if _NESTED.fullmatch(kind):
        raise SqlmetricsError(
            f"{where} (the {role} column) is {kind}; ids must be integers or strings (a "
            "list, struct or map is no id): take the field that is the id, or cast it"
        )


def resolve_inputs(
    recommendations: Source,
    interactions: Source,
    columns: Mapping[str, str | None] | None,
    group_by: Sequence[str],
    items: Source | None = None,
    history: Source | None = None,
    rating: bool = False,
) -> Inputs:
    """Checks the column mapping against the inputs and returns the bound inputs; the rating
    column only when ``rating`` (a rating metric is requested)."""
    given = dict(columns or {})
    names = column_names(columns)
    user = _column(recommendations, str(names["user"]), "user")
    item = _column(recommendations, str(names["item"]), "item")
    for role, column in (("user", user), ("item", item)):
        _check_id_pair(recommendations, interactions, role, column)
    rank, score = _order_column(recommendations, names, given)
    relevance = None
    if names["relevance"] is not None and (
        "relevance" in given or names["relevance"] in interactions.columns
    ):
        relevance = _column(interactions, str(names["relevance"]), "relevance")
        _check_numeric(interactions, relevance, "relevance")
    rated = None
    if rating and names["rating"] is not None:
        rated = _column(interactions, str(names["rating"]), "rating")
        _check_numeric(interactions, rated, "rating")
    intent = None
    if names["intent"] is not None and ("intent" in given or "intent" in interactions.columns):
        intent = _column(interactions, str(names["intent"]), "intent")
    weight = None
    if names["weight"] is not None:
        weight = _column(recommendations, str(names["weight"]), "weight")
        _check_numeric(recommendations, weight, "weight")
    groups = [_group(recommendations, interactions, name) for name in group_by]
    if history is not None:
        for role, column in (("user", user), ("item", item)):
            _check_history_id(recommendations, history, role, column)
    category = None
    if items is not None:
        category = _item_category(recommendations, items, item, names, given)
    return Inputs(
        recommendations=recommendations.relation,
        interactions=interactions.relation,
        items=items.relation if items is not None else None,
        history=history.relation if history is not None else None,
        category=category,
        user=user,
        item=item,
        score=score,
        rank=rank,
        relevance=relevance,
        groups=tuple(groups),
        rating=rated,
        intent=intent,
        weight=weight,
    )


def _check_id_pair(
    recommendations: Source, interactions: Source, role: str, column: exp.Identifier
) -> None:
    """The user or item column is in the interactions too, an id on both sides, of one family."""
    counterpart = _column(interactions, column.name, role)
    rec_kind = recommendations.columns[column.name]
    truth_kind = interactions.columns[counterpart.name]
    for role_of, kind in (("recommendations", rec_kind), ("interactions", truth_kind)):
        _check_id(f"{role_of}.{column.name}", role, kind)
    if not _same_family(rec_kind, truth_kind):
        raise SqlmetricsError(
            f"{column.name} is {rec_kind} in recommendations but {truth_kind} in interactions; "
            f"{_cast_hint(rec_kind, truth_kind)}"
        )


def _order_column(
    recommendations: Source, names: Mapping[str, str | None], given: Mapping[str, str | None]
) -> tuple[exp.Identifier | None, exp.Identifier | None]:
    """The rank column (when named, or when there is no score column but a ``rank``) or else
    the score column, checked numeric: (rank, score), one of them None."""
    if names["rank"] is not None or (
        "score" not in given
        and names["score"] not in recommendations.columns
        and "rank" in recommendations.columns
    ):
        rank = _column(recommendations, str(names["rank"] or "rank"), "rank")
        _check_numeric(recommendations, rank, "rank")
        return rank, None
    score = _column(recommendations, str(names["score"]), "score")
    _check_numeric(recommendations, score, "score")
    return None, score


def _group(recommendations: Source, interactions: Source, name: str) -> Group:
    """A group_by column, checked: in the recommendations, not named like an output column,
    and of the same family in the interactions when they have it."""
    if name not in recommendations.columns:
        raise SqlmetricsError(
            f"group_by column {name!r} is not in recommendations."
            f"{_suggest(name, list(recommendations.columns))} "
            f"Its columns: {', '.join(recommendations.columns)}"
        )
    if name in ("users",):
        raise SqlmetricsError(f"group_by column {name!r} clashes with the output column 'users'")
    if name in interactions.columns:
        rec_kind, truth_kind = recommendations.columns[name], interactions.columns[name]
        if not _same_family(rec_kind, truth_kind):
            raise SqlmetricsError(
                f"group_by column {name!r} is {rec_kind} in recommendations but "
                f"{truth_kind} in interactions; {_cast_hint(rec_kind, truth_kind)}"
            )
    return Group(name, exp.to_identifier(name, quoted=True), name in interactions.columns)


def _check_history_id(
    recommendations: Source, history: Source, role: str, column: exp.Identifier
) -> None:
    """The user or item column is in the history too, of the same family."""
    counterpart = _column(history, column.name, role)
    if not _same_family(history.columns[counterpart.name], recommendations.columns[column.name]):
        raise SqlmetricsError(
            f"{column.name} is {recommendations.columns[column.name]} in recommendations "
            f"but {history.columns[counterpart.name]} in history; cast one so both have "
            "the same type"
        )


def _item_category(
    recommendations: Source,
    items: Source,
    item: exp.Identifier,
    names: Mapping[str, str | None],
    given: Mapping[str, str | None],
) -> exp.Identifier | None:
    """Checks the items table's item column; its category column, when named or present."""
    counterpart = _column(items, item.name, "item")
    if not _same_family(items.columns[counterpart.name], recommendations.columns[item.name]):
        raise SqlmetricsError(
            f"{item.name} is {recommendations.columns[item.name]} in recommendations but "
            f"{items.columns[counterpart.name]} in items; cast one so both have the same type"
        )
    if names["category"] is not None and (
        "category" in given or names["category"] in items.columns
    ):
        return _column(items, str(names["category"]), "category")
    return None


def refuse_bad_rows(
    engine: Engine,
    inputs: Inputs,
    counted: pd.DataFrame,
    requests: Sequence[MetricRequest],
    ranks: str = "consecutive",
) -> None:
    """Raises on the first kind of bad row the query counted, saying where and what to do;
    ``ranks`` is how the rank column is read (Options.ranks)."""
    names = [*CHECKS, *DIAGNOSTICS]
    # one sum over the counts' block: a pandas sum per column costs more than the rest
    sums = counted[names].to_numpy(dtype="int64").sum(axis=0)
    total = {name: int(value) for name, value in zip(names, sums, strict=True)}
    _refuse_null_recommendation_ids(engine, inputs, total)
    _refuse_bad_order(engine, inputs, total, ranks)
    _refuse_bad_interactions(engine, inputs, total)
    _refuse_out_of_range(engine, inputs, total, requests)
    refuse_bad_weights(engine, inputs, total)
    if not total["users_with_recommendations"]:
        raise SqlmetricsError("recommendations: no rows to evaluate; check the file or filter")
    if not total["users_in_interactions"]:
        raise SqlmetricsError("interactions: no rows to evaluate; check the file or filter")


def _refuse_null_recommendation_ids(engine: Engine, inputs: Inputs, total: dict[str, int]) -> None:
    user, item = exp.column(inputs.user), exp.column(inputs.item)
    recs, rec_columns = inputs.recommendations, _recommendation_columns(inputs)
    if total["bad_recommendation_user_ids"]:
        raise SqlmetricsError(
            f"recommendations: {total['bad_recommendation_user_ids']} row(s) have a NULL "
            f"{inputs.user.name}{_example(engine, recs, rec_columns, user.is_(exp.Null()))}; "
            "drop them or fill in the user"
        )
    if total["bad_recommendation_item_ids"]:
        raise SqlmetricsError(
            f"recommendations: {total['bad_recommendation_item_ids']} row(s) have a NULL "
            f"{inputs.item.name}"
            f"{_example(engine, recs, rec_columns, item.is_(exp.Null()))}; drop them"
        )


def _refuse_bad_order(engine: Engine, inputs: Inputs, total: dict[str, int], ranks: str) -> None:
    """NaN scores or ranks, and rank lists that the ``ranks`` reading cannot take."""
    order = inputs.rank if inputs.rank is not None else inputs.score
    ordering = "rank" if inputs.rank is not None else "score"
    rec_columns = _recommendation_columns(inputs)
    if total["bad_scores"] and order is not None:
        nan = engine.is_nan(exp.column(order))
        raise SqlmetricsError(
            f"recommendations.{order.name} (the {ordering} column) is NaN in "
            f"{total['bad_scores']} row(s)"
            f"{_example(engine, inputs.recommendations, rec_columns, nan)}; NaN "
            "has no place in an order: use NULL (ranked last) or a number"
        )
    if total["bad_rank_lists"] and inputs.rank is not None and ranks == "literal":
        raise SqlmetricsError(
            f"recommendations.{inputs.rank.name} (the rank column): the ranks of "
            f"{total['bad_rank_lists']} user(s) hold a NULL, a rank below 1 or a fraction; "
            'ranks="literal" reads each rank as a position 1, 2, 3, ... (gaps and repeats '
            "allowed): fix those ranks, or leave the rank column out to rank by score"
        )
    if total["bad_rank_lists"] and inputs.rank is not None:
        raise SqlmetricsError(
            f"recommendations.{inputs.rank.name} (the rank column): the ranks of "
            f"{total['bad_rank_lists']} user(s) are not 1, 2, 3, ... (a gap or a repeat); "
            'renumber them, read them as positions with ranks="literal" (CLI: --ranks '
            "literal), or leave the rank column out to rank by score"
        )


def _refuse_bad_interactions(engine: Engine, inputs: Inputs, total: dict[str, int]) -> None:
    """NULL ids, and relevance that is NULL, negative, NaN or infinite."""
    user, item = exp.column(inputs.user), exp.column(inputs.item)
    truth = inputs.interactions
    truth_columns = (inputs.user, inputs.item, inputs.relevance)
    if total["bad_interaction_user_ids"]:
        raise SqlmetricsError(
            f"interactions: {total['bad_interaction_user_ids']} row(s) have a NULL "
            f"{inputs.user.name}{_example(engine, truth, truth_columns, user.is_(exp.Null()))}"
            "; drop them or fill in the user"
        )
    if total["bad_interaction_item_ids"]:
        raise SqlmetricsError(
            f"interactions: {total['bad_interaction_item_ids']} row(s) have a NULL "
            f"{inputs.item.name}{_example(engine, truth, truth_columns, item.is_(exp.Null()))}"
            "; drop them"
        )
    if total["bad_relevance"] and inputs.relevance is not None:
        relevance = exp.column(inputs.relevance)
        bad = exp.or_(
            relevance.is_(exp.Null()),
            relevance < 0,
            engine.is_nan(relevance.copy()),
            _not_finite(relevance),
        )
        example = _example(engine, truth, truth_columns, bad)
        raise SqlmetricsError(
            f"interactions.{inputs.relevance.name} (the relevance column) is NULL, negative, "
            f"NaN or infinite in {total['bad_relevance']} row(s){example}; relevance must be a "
            "finite number >= 0 (0 = not relevant), or negative only for infap (trec_eval's "
            "infAP reads it as a document of the pool left unjudged; with infap asked every "
            "other metric leaves such rows out)"
        )


def _refuse_out_of_range(
    engine: Engine, inputs: Inputs, total: dict[str, int], requests: Sequence[MetricRequest]
) -> None:
    """Values some requested metrics cannot read: grades too high for an exponential gain,
    scores outside [0, 1] for the metrics reading them as probabilities (``probabilities: yes``
    in their headers)."""
    truth_columns = (inputs.user, inputs.item, inputs.relevance)
    exponential = [r.label for r in requests if uses_exponential_gain(r)]
    if total["relevance_over_1000"] and exponential and inputs.relevance is not None:
        relevance = exp.column(inputs.relevance)
        example = _example(
            engine, inputs.interactions, truth_columns, relevance > EXPONENTIAL_GAIN_BOUND
        )
        raise SqlmetricsError(
            f"interactions.{inputs.relevance.name} (the relevance column) is above "
            f"{EXPONENTIAL_GAIN_BOUND} in {total['relevance_over_1000']} row(s){example}; "
            f"{', '.join(exponential)} use the gain 2^relevance - 1, which a double cannot hold "
            "that far: rescale the grades or use the linear-gain metrics"
        )
    probabilities = [r.label for r in requests if r.metric.reads_probabilities]
    if total["scores_outside_0_1"] and probabilities and inputs.score is not None:
        score = exp.column(inputs.score)
        example = _example(
            engine,
            inputs.recommendations,
            _recommendation_columns(inputs),
            exp.or_(score < 0, score > 1),
        )
        raise SqlmetricsError(
            f"recommendations.{inputs.score.name} (the score column) is outside [0, 1] in "
            f"{total['scores_outside_0_1']} row(s){example}; {', '.join(probabilities)} "
            f"read{'s' if len(probabilities) == 1 else ''} scores as probabilities: calibrate them "
            f"(e.g. a sigmoid) or leave {', '.join(probabilities)} out"
        )


def refuse_nan_ratings(engine: Engine, inputs: Inputs, rating: exp.Identifier) -> None:
    """A NaN or infinite rating would make every rating metric NaN or infinite: refused (one
    more scan of the interactions, only when a rating metric is requested). NULL ratings are
    left out."""
    column = exp.column(rating)
    bad = exp.or_(
        engine.is_nan(column.copy()),
        exp.and_(exp.Not(this=column.copy().is_(exp.Null())), _not_finite(column)),
    )
    query = exp.select(exp.func("COUNT", exp.Star())).from_(inputs.interactions.copy()).where(bad)
    row = engine.first_row(query)
    if row and row[0]:
        columns = (inputs.user, inputs.item, rating)
        raise SqlmetricsError(
            f"interactions.{rating.name} (the rating column) is NaN or infinite in {row[0]} "
            f"row(s){_example(engine, inputs.interactions, columns, bad.copy())}; use NULL for "
            "a missing rating (such rows are left out) or a finite number"
        )


def duplicate_example(
    engine: Engine, inputs: Inputs, depth: int | None = None
) -> tuple[Any, ...] | None:
    """A repeated (user, item) and its number of rows: among the first ``depth`` positions of
    its list (by score, equal scores by item id; or by the rank column), or anywhere. A list is
    a user's rows within one value of the recommendations' group_by columns (one model's): a
    pair two models both recommend is no repeat."""
    user, item = exp.column(inputs.user), exp.column(inputs.item)
    lists = [exp.column(group.column) for group in inputs.groups if not group.in_interactions]
    rows: exp.Expr = inputs.recommendations.copy()
    if depth is not None:
        placed = (
            exp.column(inputs.rank)
            if inputs.rank is not None
            else exp.Ordered(this=exp.column(inputs.score or "score"), desc=True, nulls_first=False)
        )
        order = exp.Order(expressions=[placed, exp.Ordered(this=item.copy(), desc=True)])
        keys = [*lists, user, item]
        partition = [column.copy() for column in keys[:-1]]
        position = exp.Window(this=exp.func("ROW_NUMBER"), partition_by=partition, order=order)
        pos = exp.alias_(position, "sqlmetrics_pos")
        ranked = exp.select(*(key.copy() for key in keys), pos).from_(rows)
        rows = (
            exp.select(*(key.copy() for key in keys))
            .from_(ranked.subquery("ranked"))
            .where(exp.column("sqlmetrics_pos") <= depth)
            .subquery("first_rows")
        )
    query = (
        exp.select(user, item, exp.func("COUNT", exp.Star()))
        .from_(rows)
        .group_by(*lists, user, item)
        .having(exp.func("COUNT", exp.Star()) > 1)
        .limit(1)
    )
    row = engine.first_row(query)
    return tuple(row) if row is not None else None


def check_items(engine: Engine, inputs: Inputs, requests: Sequence[MetricRequest]) -> None:
    """A metric reading item categories needs one category for each recommended item: a
    repeated item would count its pairs twice, a missing one would drop silently."""
    if inputs.items is None or inputs.category is None:
        return
    if not any(r.metric.needs_items for r in requests):
        return
    refuse_repeated_items(engine, inputs.items, inputs.item, inputs.category)
    row = _item_without_category(
        engine, inputs, inputs.recommendations, inputs.items, inputs.category
    )
    labels = ", ".join(r.label for r in requests if r.metric.needs_items)
    if row is not None:
        raise SqlmetricsError(
            f"items: recommended item {row[0]!r} has no {inputs.category.name} (no row in the "
            f"items table, or NULL); {labels} need the category of every recommended item"
        )
    if inputs.history is None or not any(r.metric.needs_history for r in requests):
        return
    row = _item_without_category(engine, inputs, inputs.history, inputs.items, inputs.category)
    if row is not None:
        raise SqlmetricsError(
            f"items: history item {row[0]!r} has no {inputs.category.name} (no row in the items "
            f"table, or NULL); {labels} need the category of every item of the history"
        )


def check_history(engine: Engine, inputs: Inputs, requests: Sequence[MetricRequest]) -> None:
    """The history a metric reads (serendipity's, the popularity's) has no row without a user
    or an item: such a row says nothing of who consumed what, and would drop silently. The
    popularity needs a row at least: over an empty history, nobody consumed anything."""
    popular = [r.label for r in requests if counts_popularity(r.metric)]
    if inputs.history is None or not (popular or any(r.metric.reads_history for r in requests)):
        return
    user, item = exp.column(inputs.user), exp.column(inputs.item)
    missing = exp.or_(user.is_(exp.Null()), item.is_(exp.Null()))
    counts = exp.select(
        exp.func("COUNT", exp.Star()),
        exp.func("COUNT", exp.Case(ifs=[exp.If(this=missing, true=exp.Literal.number(1))])),
    ).from_(inputs.history.copy())
    rows, without_id = engine.first_row(counts) or (0, 0)
    if without_id:
        example = _example(engine, inputs.history, (inputs.user, inputs.item), missing)
        raise SqlmetricsError(
            f"history: {without_id} row(s) have a NULL {inputs.user.name} or {inputs.item.name}"
            f"{example}; drop them or fill them in (each row is an item a user consumed)"
        )
    if not rows and popular:
        raise SqlmetricsError(
            f"history: no row, and the popularity {', '.join(popular)} read is counted over "
            "it: give what the users consumed before, or no history to count the interactions"
        )


def _item_without_category(
    engine: Engine, inputs: Inputs, source: exp.Expr, items: exp.Expr, category: exp.Identifier
) -> tuple[Any, ...] | None:
    """One item of ``source`` (the recommendations or the history) that the items table gives
    no category, or None."""
    found = (
        exp.select(exp.column(inputs.item, "listed"))
        .from_(exp.alias_(source.copy(), "listed"))
        .join(
            exp.alias_(items.copy(), "items"),
            on=exp.column(inputs.item, "listed").eq(exp.column(inputs.item, "items")),
            join_type="left",
        )
        .where(exp.column(category, "items").is_(exp.Null()))
        .limit(1)
    )
    return engine.first_row(found)


def check_labels(
    requests: Sequence[MetricRequest], group_by: Sequence[str], inputs: Inputs
) -> None:
    taken = {*group_by, "users", inputs.user.name}
    for request in requests:
        if request.label in taken:
            raise SqlmetricsError(f"metric label {request.label!r} clashes with an output column")


def refuse_repeats(engine: Engine, inputs: Inputs, rows: int, depth: int | None) -> None:
    """The message refusing ``rows`` repeated recommendations, with an example, found among
    the first ``depth`` positions of each list (or anywhere)."""
    # an example among the first positions as ranked by score and item id (the tie policy
    # may order a tie otherwise: then one from anywhere)
    example = duplicate_example(engine, inputs, depth) or duplicate_example(engine, inputs)
    where = "" if depth is None else f" among the first {depth} positions of their lists"
    shown = f"{example[:2]} appears {example[2]} times" if example else "?"
    raise SqlmetricsError(
        f"recommendations repeat a ({inputs.user.name}, {inputs.item.name}) pair in {rows} "
        f"row(s){where}, e.g. {shown}; deduplicate them, or pass duplicates='first' (CLI: "
        "--duplicates first) to keep the best-placed row"
    )
