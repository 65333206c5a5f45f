"""The exposure table (compose/exposure.py) run in a call's engine, after its checks."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol, TypeVar

from sqlglot import exp

from sqlmetrics.attrs import Table
from sqlmetrics.compose.exposure import check_exposure, compose_exposure
from sqlmetrics.compose.inputs import Inputs, Options, column_names
from sqlmetrics.engines.bad_rows import refuse_repeated_items
from sqlmetrics.engines.base import Engine, Source
from sqlmetrics.errors import SqlmetricsError

if TYPE_CHECKING:
    import pandas as pd


class Bound(Protocol):
    """A call's inputs bound in its engine (run.Bound), as far as the exposure reads it."""

    @property
    def engine(self) -> Engine: ...
    @property
    def inputs(self) -> Inputs: ...
    @property
    def options(self) -> Options: ...


B = TypeVar("B", bound=Bound)
Ran = tuple["pd.DataFrame", "pd.DataFrame", int]


def with_exposure(run: Callable[[B], Ran], k: int, patience: float) -> Callable[[B], Ran]:
    """``run`` (evaluate's queries), checked first for the exposure table and followed by it,
    in the result's ``attrs["exposure"]`` (``read_exposure``)."""

    def exposed(bound: B) -> Ran:
        check_exposure(bound.inputs, bound.options, k, patience)  # before the metrics run
        result, diagnostics, passes = run(bound)
        table = exposure_table(bound.engine, bound.inputs, bound.options, k, patience)
        result.attrs["exposure"] = Table.of(table)
        return result, diagnostics, passes

    return exposed


def exposure_table(
    engine: Engine, inputs: Inputs, options: Options, k: int, patience: float
) -> pd.DataFrame:
    """One row per group and item group: its items, exposure and relevant items, each with its
    share within the group (``read_exposure``)."""
    check_exposure(inputs, options, k, patience)
    if inputs.items is not None and inputs.item_group is not None:
        refuse_repeated_items(engine, inputs.items, inputs.item, inputs.item_group)
    frame = engine._frame(compose_exposure(inputs, options, k, patience, engine.dialect))
    # the same dtypes from every engine (SQLite's 0 of a group never shown is an integer)
    counts = {"items": "int64", "relevant": "int64"}
    shares = {name: "float64" for name in ("catalogue_share", "exposure", "exposure_share")}
    return frame.astype({**counts, **shares, "relevant_share": "float64"})


def item_group_column(
    items: Source | None, columns: Mapping[str, str | None] | None
) -> exp.Identifier | None:
    """The items table's item group column: ``columns["item_group"]`` (which must be there),
    else a column named ``item_group`` when it has one (its case aside, as the other columns)."""
    if items is None:
        return None
    name = column_names(columns)["item_group"]
    if name is None:
        return None
    found = [column for column in items.columns if column.lower() == name.lower()]
    if name in items.columns:
        return exp.to_identifier(name, quoted=True)
    if len(found) == 1:
        return exp.to_identifier(found[0], quoted=True)
    if "item_group" in (columns or {}):
        raise SqlmetricsError(
            f"items has no column {name!r} (the item group column). Its columns: "
            f"{', '.join(items.columns)}. Name yours with columns={{'item_group': ...}} (CLI: "
            "--item-group-column)."
        )
    return None
