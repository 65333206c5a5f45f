"""Exposure between groups of items (``evaluate(..., exposure_k=...)``, ``read_exposure``): per
group of the call (a model) and item group (a provider, a category: the items table's
``columns["item_group"]``), the group's share of the position-discounted exposure in the top k
of every list, against its share of the catalogue and of the relevant items.

The discount is LensKit's default for its exposure metrics (``ExposureGini``'s
``GeometricRankWeight``): position p weighs patience^(p - 1), patience 0.85. The lists and the
relevant items are the metrics' own stages (``ranked``, ``truth``), taken from the query of
``coverage@k`` and ``recall@k`` composed with the call's inputs and options; the item groups
are a table of their own, one row per (group, item group) with every item group of the
catalogue, 0 where a model never shows one.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlmetrics.catalog.metrics import parse_requests
from sqlmetrics.compose.inputs import Inputs, Options
from sqlmetrics.compose.query import compose
from sqlmetrics.compose.stages import (
    cast_to,
    derived_table,
    group_key,
    nulls_last,
    number,
    same_group,
    with_ctes,
)
from sqlmetrics.errors import SqlmetricsError

# LensKit's GeometricRankWeight default (ExposureGini, RBP's patience)
PATIENCE = 0.85
# the table's own columns, beside the group columns
EXPOSURE_COLUMNS = (
    "item_group",
    "items",
    "catalogue_share",
    "exposure",
    "exposure_share",
    "relevant",
    "relevant_share",
)


def check_exposure(inputs: Inputs, options: Options, k: int, patience: float) -> None:
    """Refuses what the exposure table cannot be computed for, saying what to pass."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise SqlmetricsError(f"exposure_k must be a whole number >= 1 (the cutoff), not {k!r}")
    if isinstance(patience, bool) or not isinstance(patience, (int, float)):
        raise SqlmetricsError(f"exposure_patience must be a number in (0, 1), not {patience!r}")
    if not 0 < patience < 1:
        raise SqlmetricsError(f"exposure_patience must be in (0, 1), like 0.85, not {patience!r}")
    if inputs.items is None:
        raise SqlmetricsError(
            "exposure_k compares item groups: pass items=... (CLI: --items), one row per item "
            "with the item column and its group (columns={'item_group': ...})"
        )
    if inputs.item_group is None:
        raise SqlmetricsError(
            "exposure_k reads the group of each item, and the items table has no item_group "
            "column; name yours with columns={'item_group': ...} (CLI: --item-group-column)"
        )
    if options.ties == "average":
        raise SqlmetricsError(
            "ties='average' has no single position for a tied item, which the exposure "
            "discount reads; use ties='id', 'optimistic' or 'pessimistic'"
        )
    for group in inputs.groups:
        if group.name in EXPOSURE_COLUMNS:
            raise SqlmetricsError(
                f"group_by column {group.name!r} is also a column of read_exposure's rows: "
                "rename it in the inputs (like 'model_name')"
            )


def compose_exposure(
    inputs: Inputs, options: Options, k: int, patience: float = PATIENCE, dialect: str = "duckdb"
) -> exp.Query:
    """The exposure table's query, in DuckDB's semantics (``render`` writes it in a dialect):
    one row per group and item group, ordered by them (NULL last)."""
    check_exposure(inputs, options, k, patience)
    stages = compose(
        parse_requests([f"coverage@{k}", f"recall@{k}"]),
        inputs,
        options,
        dialect=dialect,
        portable=True,
        cross_arms=True,  # a model column only the recommendations have: every arm's truth
    )
    ctes = {cte.alias: cte.this for cte in stages.args["with_"].expressions}
    ctes["input_items"] = exp.select(
        exp.alias_(exp.column(inputs.item), "item_id"),
        exp.alias_(exp.column(inputs.item_group), "item_group"),  # type: ignore[arg-type]
    ).from_(inputs.items.copy())  # type: ignore[union-attr]
    keys = [group_key(i) for i in range(len(inputs.groups))]
    ours = _exposure_ctes(keys, k, patience)
    names = [name for name in ctes if name in _read(ours, ctes)]
    query = _final(keys, [group.name for group in inputs.groups])
    return with_ctes(query, [(name, ctes[name]) for name in names] + ours)


def _read(ours: Sequence[tuple[str, exp.Expr]], ctes: dict[str, exp.Expr]) -> set[str]:
    """The stages our CTEs read, directly or through another stage."""
    needed: set[str] = set()
    pending = [t.name for _, body in ours for t in body.find_all(exp.Table) if t.name in ctes]
    while pending:
        name = pending.pop()
        if name not in needed:
            needed.add(name)
            pending += [t.name for t in ctes[name].find_all(exp.Table) if t.name in ctes]
    return needed


def _columns(keys: Sequence[str], table: str | None = None) -> list[exp.Expr]:
    """The columns ``keys`` of ``table``, each under its own name (every projection aliased)."""
    return [exp.alias_(exp.column(key, table=table), key) for key in keys]


def _exposure_ctes(keys: Sequence[str], k: int, patience: float) -> list[tuple[str, exp.Expr]]:
    """item_groups (every item of the items table, the lists and the relevant items, with its
    group: NULL where the items table has none), their sizes, each group's exposure and
    relevant items per item group, and their rows side by side for every item group."""
    item = _columns(["item_id"])
    universe = (
        exp.select(*item)
        .from_("input_items")
        .union(exp.select(*item).from_("input_recommendations"), distinct=False)
        .union(exp.select(*item).from_("truth"), distinct=False)
    )
    all_items = exp.select(*item).distinct().from_(derived_table(universe, "items"))
    item_groups = (
        exp.select(
            exp.alias_(exp.column("item_id", "all_items"), "item_id"),
            exp.alias_(exp.column("item_group", "input_items"), "item_group"),
        )
        .from_(derived_table(all_items, "all_items"))
        .join(
            "input_items",
            on=exp.EQ(
                this=exp.column("item_id", "all_items"),
                expression=exp.column("item_id", "input_items"),
            ),
            join_type="left",
        )
    )
    sizes = (
        exp.select(*_columns(["item_group"]), exp.alias_(exp.func("COUNT", exp.Star()), "items"))
        .from_("item_groups")
        .group_by("item_group")
    )
    weight = exp.Pow(
        this=cast_to(number(patience), "DOUBLE"),
        expression=exp.column("pos", "ranked") - exp.Literal.number(1),
    )
    exposed = _per_item_group("ranked", keys, exp.alias_(exp.func("SUM", weight), "exposure"))
    exposed.where(
        exp.LTE(this=exp.column("pos", "ranked"), expression=exp.Literal.number(k)), copy=False
    )
    relevant = _per_item_group("truth", keys, exp.alias_(exp.func("COUNT", exp.Star()), "relevant"))
    ctes: list[tuple[str, exp.Expr]] = [
        ("item_groups", item_groups),
        ("item_group_sizes", sizes),
        ("exposed", exposed),
        ("relevant_items", relevant),
    ]
    if keys:
        both = (
            exp.select(*_columns(keys))
            .from_("ranked")
            .union(exp.select(*_columns(keys)).from_("truth"), distinct=False)
        )
        models = exp.select(*_columns(keys)).distinct().from_(derived_table(both, "grouped"))
        ctes.append(("model_groups", models))
    return [*ctes, ("exposure_rows", _rows(keys))]


def _per_item_group(source: str, keys: Sequence[str], value: exp.Expr) -> exp.Select:
    """``value`` over ``source``'s rows per group and item group."""
    on = exp.EQ(this=exp.column("item_id", source), expression=exp.column("item_id", "item_groups"))
    group = [*(exp.column(key, source) for key in keys), exp.column("item_group", "item_groups")]
    return (
        exp.select(
            *_columns(keys, source),
            exp.alias_(exp.column("item_group", "item_groups"), "item_group"),
            value,
        )
        .from_(source)
        .join("item_groups", on=on, join_type="inner")
        .group_by(*group)
    )


def _rows(keys: Sequence[str]) -> exp.Select:
    """Every group crossed with every item group, its exposure and relevant items (0 where it
    has none)."""
    query = exp.select(
        *_columns(keys, "model_groups"),
        exp.alias_(exp.column("item_group", "item_group_sizes"), "item_group"),
        exp.alias_(exp.column("items", "item_group_sizes"), "items"),
        exp.alias_(
            exp.func("COALESCE", exp.column("exposure", "exposed"), exp.Literal.number(0)),
            "exposure",
        ),
        exp.alias_(
            exp.func("COALESCE", exp.column("relevant", "relevant_items"), exp.Literal.number(0)),
            "relevant",
        ),
    )
    if keys:
        query = query.from_("model_groups").join("item_group_sizes", join_type="cross")
    else:
        query = query.from_("item_group_sizes")
    for table in ("exposed", "relevant_items"):
        conditions = [
            same_group(exp.column(key, table), exp.column(key, "model_groups")) for key in keys
        ]
        conditions.append(
            same_group(
                exp.column("item_group", table), exp.column("item_group", "item_group_sizes")
            )
        )
        query = query.join(table, on=exp.and_(*conditions), join_type="left")
    return query


def _share(column: str, keys: Sequence[str]) -> exp.Expr:
    """``column`` over its sum within the group (NULL where the sum is 0)."""
    total = exp.Window(
        this=exp.func("SUM", exp.column(column)),
        partition_by=[exp.column(key) for key in keys],
    )
    return exp.Div(
        this=cast_to(exp.column(column), "DOUBLE"),
        expression=exp.Nullif(this=total, expression=exp.Literal.number(0)),
    )


def _final(keys: Sequence[str], names: Sequence[str]) -> exp.Select:
    """The rows under the group columns' names, each count beside its share."""
    quoted = [exp.to_identifier(name, quoted=True) for name in names]
    return (
        exp.select(
            *(exp.alias_(exp.column(key), name) for key, name in zip(keys, quoted, strict=True)),
            *_columns(["item_group", "items"]),
            exp.alias_(_share("items", keys), "catalogue_share"),
            *_columns(["exposure"]),
            exp.alias_(_share("exposure", keys), "exposure_share"),
            *_columns(["relevant"]),
            exp.alias_(_share("relevant", keys), "relevant_share"),
        )
        .from_("exposure_rows")
        .order_by(*nulls_last([*map(exp.column, keys), exp.column("item_group")]))
    )
