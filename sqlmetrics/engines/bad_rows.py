"""What the input checks show and share: an offending row for a message, the columns a
recommendations row is shown by, the finiteness test every engine reads alike, and the refusal
of bad weights (the recommendations' weight column, columns={"weight": ...})."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlmetrics.compose.inputs import Inputs
from sqlmetrics.engines.base import Engine
from sqlmetrics.errors import SqlmetricsError


def example(
    engine: Engine,
    source: exp.Expr,
    columns: Sequence[exp.Identifier | None],
    condition: exp.Expr,
) -> str:
    """One offending row, for the message (the error path only)."""
    shown = [exp.column(column) for column in columns if column is not None]
    row = engine.first_row(exp.select(*shown).from_(source.copy()).where(condition).limit(1))
    if row is None:
        return ""
    names = [column.name for column in columns if column is not None]
    return ", e.g. " + ", ".join(
        f"{name}={value!r}" for name, value in zip(names, row, strict=True)
    )


def recommendation_columns(inputs: Inputs) -> tuple[exp.Identifier | None, ...]:
    """The columns of a recommendations row shown in a message: user, item and its order."""
    order = inputs.rank if inputs.rank is not None else inputs.score
    return (inputs.user, inputs.item, order)


def not_finite(column: exp.Expr) -> exp.Expr:
    """True for NaN and ±infinity, on every engine: x * 0 = 0 holds for every finite number,
    not for NaN or infinity (whose product with 0 is NaN, or NULL in SQLite). True for NULL
    too: callers that allow NULL test it apart."""
    product = exp.Mul(this=column.copy(), expression=exp.Literal.number(0))
    flag = exp.case().when(product.eq(0), exp.Literal.number(0)).else_(exp.Literal.number(1))
    return flag.eq(1)


def refuse_bad_weights(engine: Engine, inputs: Inputs, total: dict[str, int]) -> None:
    """Weights the metrics over scored rows cannot read: NULL, negative, NaN or infinite (the
    scored rows' only: a row without a score is left out, its weight unread)."""
    if not total["bad_weights"] or inputs.weight is None or inputs.score is None:
        return
    weight, score = exp.column(inputs.weight), exp.column(inputs.score)
    bad = exp.and_(
        exp.Not(this=score.is_(exp.Null())),
        exp.or_(
            weight.copy().is_(exp.Null()),
            weight.copy() < 0,
            engine.is_nan(weight.copy()),
            not_finite(weight),
        ),
    )
    columns = (*recommendation_columns(inputs), inputs.weight)
    raise SqlmetricsError(
        f"recommendations.{inputs.weight.name} (the weight column) is NULL, negative, NaN or "
        f"infinite in {total['bad_weights']} scored row(s)"
        f"{example(engine, inputs.recommendations, columns, bad)}; a weight must be a finite "
        "number >= 0 (0 leaves the row out): fill in or drop those rows"
    )


def refuse_repeated_items(
    engine: Engine, items: exp.Expr, item: exp.Identifier, column: exp.Identifier
) -> None:
    """An item of two rows in the items table would count twice for its ``column`` (a
    category, an item group): refused, naming one."""
    key = exp.column(item)
    repeated = (
        exp.select(key, exp.func("COUNT", exp.Star()))
        .from_(items.copy())
        .group_by(key)
        .having(exp.func("COUNT", exp.Star()) > 1)
        .limit(1)
    )
    row = engine.first_row(repeated)
    if row is not None:
        raise SqlmetricsError(
            f"items: item {row[0]!r} has {row[1]} rows; give each item one row (one {column.name})"
        )
