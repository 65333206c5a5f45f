"""The metrics over the top-k lists (``reads: lists``): each one's CTEs (its per-user values and
their mean per group, or its one value per group) and the global stages they read (the
catalogue; what users consumed, the items' popularity over it and the short head), over
``ranked``, the top-k lists of every user with a list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from sqlglot import exp

from sqlmetrics.catalog.metrics import Metric
from sqlmetrics.compose.inputs import Inputs
from sqlmetrics.compose.per_user import MetricColumn, bind_cutoff
from sqlmetrics.compose.stages import (
    bind_placeholders,
    cast_to,
    number,
    numbers_table,
    renamed,
    same_group,
    same_users,
    stage,
    widen_keys,
)
from sqlmetrics.errors import SqlmetricsError

# The stages whose rows belong to a group (the lists, the relevant items); the others are global.
GROUPED_STAGES = frozenset({"ranked", "truth"})
# The judgements per intent and their greedy ideal list: a user's rows, widened like ranked's
INTENT_STAGES = frozenset({"intents", "intent_ideal"})
# The stages over what users consumed (sql/stages/consumed.sql): the history when given
POPULARITY_STAGES = frozenset({"consumed", "popularity", "short_head"})


def counts_popularity(metric: Metric) -> bool:
    """Whether a metric reads the items' popularity, which a history table, when given,
    replaces the interactions in."""
    return any(table.name in POPULARITY_STAGES for table in metric.query.find_all(exp.Table))


def reads_baseline(metric: Metric) -> bool:
    """Whether a metric compares each model's lists with a baseline model's (baseline_lists:
    the overlap metrics), which needs group_by and baseline."""
    return any(table.name == "baseline_lists" for table in metric.query.find_all(exp.Table))


def lists_stages(
    columns: Sequence[MetricColumn], inputs: Inputs, keys: Sequence[str], threshold: float = 0.0
) -> list[tuple[str, exp.Expr]]:
    """The CTEs of the metrics over the lists: ``m{i}_groups`` (group columns, value ``m{i}``)
    for each, ``m{i}_users`` before it for a per-user one (its mean over users with a list),
    and the global stages (catalogue, consumed, popularity, short_head) they read; the
    judgements per intent (``intents``) and their greedy ideal list (``intent_ideal``, as deep
    as the deepest cutoff of the metrics reading it) for the intent-aware metrics."""
    stages: list[tuple[str, exp.Expr]] = []
    read: set[str] = set()
    ideal_depth = 0
    for column in columns:
        if not column.over_lists:
            continue
        name, metric = column.names[0], column.request.metric
        query = cast(exp.Select, bind_cutoff(metric.query.copy(), column.request.k))
        for node in query.walk():
            node.comments = None
        for projection in query.expressions:
            if projection.alias_or_name == metric.name:
                projection.set("alias", exp.to_identifier(name))
        tables = {table.name for table in query.find_all(exp.Table)}
        if "intent_ideal" in tables:
            ideal_depth = max(ideal_depth, column.request.k or 0)
        read |= tables
        _join_baseline_groups(query, keys[1:])
        if metric.group_level:
            stages.append((f"{name}_groups", widen_groups(query, keys)))
            continue
        stages.append((f"{name}_users", _widen_lists_keys(query, keys)))
        mean = exp.select(
            *map(exp.column, keys), exp.alias_(exp.func("AVG", exp.column(name)), name)
        ).from_(f"{name}_users")
        stages.append((f"{name}_groups", mean.group_by(*map(exp.column, keys)) if keys else mean))
    shared: list[tuple[str, exp.Expr]] = []
    if "catalogue" in read:  # the items table's items when given, else the interactions'
        shared.append(("catalogue", _over("catalogue", inputs.items is not None, "input_items")))
    if read & POPULARITY_STAGES:  # the history when given, else the interactions
        shared.append(("consumed", _over("consumed", inputs.history is not None, "input_history")))
    if read & {"popularity", "short_head"}:
        shared.append(("popularity", stage("popularity")))
    if "short_head" in read:  # popularity's most popular items (the long-tail metrics)
        shared.append(("short_head", stage("short_head")))
    if read & INTENT_STAGES:
        intents = bind_placeholders(stage("intents"), threshold=number(threshold))
        shared.append(("intents", widen_keys(intents, keys)))
    if "intent_ideal" in read:
        shared += [(name, widen_keys(cte, keys)) for name, cte in greedy_ideal(ideal_depth)]
    if "baseline_lists" in read:  # the overlap metrics: the baseline model's lists
        shared.append(("baseline_lists", _baseline_lists(inputs.baseline, keys)))
    if "depths" in read:  # rbo's depths 1..k and their weights p^(d - 1)
        shared.append(("depths", _depths(columns)))
    return shared + stages


def _baseline_lists(baseline: str | None, keys: Sequence[str]) -> exp.Select:
    """ranked's rows of the baseline model (its first group column's value, compared as
    text, as compare pairs it), the user as baseline_user (so that no group condition is
    added to its joins) and the other group columns as they are."""
    if baseline is None or not keys:
        raise SqlmetricsError(
            "the overlap metrics (intersection, rbo, unexpectedness) compare each model's "
            "lists with a baseline model's: give the model column as group_by and the "
            "baseline's name as baseline (CLI: --group-by model --baseline NAME)"
        )
    model = cast_to(exp.column(keys[0]), "VARCHAR")
    return (
        exp.select(
            exp.alias_(exp.column("user_id"), "baseline_user"),
            *map(exp.column, keys[1:]),
            "item_id",
            "pos",
        )
        .from_("ranked")
        .where(exp.EQ(this=model, expression=exp.Literal.string(baseline)))
    )


def _join_baseline_groups(query: exp.Expr, others: Sequence[str]) -> None:
    """A join of a user's rows with the baseline's (``x.user_id = y.baseline_user``) also
    matches the group columns past the model's (a fold, a segment)."""
    if not others:
        return
    for join in list(query.find_all(exp.EQ)):
        sides = (join.this, join.expression)
        if not all(isinstance(side, exp.Column) for side in sides):
            continue
        names = {side.name: side for side in sides}
        if set(names) != {"user_id", "baseline_user"}:
            continue
        user, base = names["user_id"].table, names["baseline_user"].table
        groups = [same_group(exp.column(k, table=user), exp.column(k, table=base)) for k in others]
        join.replace(exp.and_(*groups, join.copy()))


def _depths(columns: Sequence[MetricColumn]) -> exp.Select:
    """Depths 1..the deepest cutoff of the requests reading them, each with p^(d - 1): one
    p per call (one weight column), as judged computes one cascade for err's gmax."""
    asked = {
        float(column.request.parameter("p")): column.request.label
        for column in columns
        if column.over_lists and "p" in dict(column.request.metric.parameters)
    }
    if len(asked) > 1:
        raise SqlmetricsError(
            f"{' and '.join(asked.values())} ask for different p; one call weighs the depths "
            "once: ask for them in separate calls"
        )
    persistence = next(iter(asked), 0.9)
    deepest = max(
        column.request.k or 1
        for column in columns
        if column.over_lists and "p" in dict(column.request.metric.parameters)
    )
    weight = exp.Pow(this=number(persistence), expression=exp.column("depth") - 1)
    numbers = numbers_table("numbers", "depth", range(1, deepest + 1))
    return exp.select("depth", exp.alias_(weight, "weight")).from_(numbers)


# ndeval's alpha: how much a second item relevant to an intent gains less than the first
ALPHA = 0.5


def greedy_ideal(depth: int) -> list[tuple[str, exp.Expr]]:
    """ndeval's greedy ideal list (idealResult) to ``depth`` positions, a CTE per position:
    each ``intent_greedy_{i}`` is the user's relevant (intent, item) rows, each with the
    position its item took (``placed``, NULL while unplaced) and the gain it took it with; at
    position i the unplaced item of the largest gain, sum over its intents of (1 - alpha)^c
    (c: the placed items relevant to that intent), equal gains by the greater item id, takes
    it. ``intent_ideal`` is one row per placed position: (user_id, pos, gain). Each step
    reads the one before once (no recursion: not every engine has it)."""
    rows = (
        exp.select(
            "user_id",
            "intent",
            "item_id",
            exp.alias_(exp.cast(exp.Null(), "INT"), "placed"),
            exp.alias_(exp.cast(exp.Null(), "DOUBLE"), "gain"),
        )
        .from_("intents")
        .where("relevant = 1")
    )
    ctes: list[tuple[str, exp.Expr]] = [("intent_greedy_0", rows)]
    for position in range(1, depth + 1):
        ctes.append(
            (f"intent_greedy_{position}", _greedy_step(f"intent_greedy_{position - 1}", position))
        )
    placed = (
        exp.select(
            "user_id",
            exp.alias_(exp.column("placed"), "pos"),
            exp.alias_(exp.func("MAX", exp.column("gain")), "gain"),
        )
        .from_(f"intent_greedy_{depth}")
        .where("placed IS NOT NULL")
        .group_by("user_id", "placed")
    )
    ctes.append(("intent_ideal", placed))
    return ctes


def _greedy_step(previous: str, position: int) -> exp.Select:
    """One position of the greedy ideal list over the rows of ``previous``."""
    unplaced = exp.Is(this=exp.column("placed"), expression=exp.Null())
    base = ["user_id", "intent", "item_id", "placed", "gain"]
    covered = exp.select(
        *base,
        exp.alias_(
            exp.Window(
                this=exp.func(
                    "SUM",
                    exp.case()
                    .when(unplaced.copy(), exp.Literal.number(0))
                    .else_(exp.Literal.number(1)),
                ),
                partition_by=[exp.column("user_id"), exp.column("intent")],
            ),
            "covered",
        ),
    ).from_(previous)
    power = exp.func(
        "POWER", exp.cast(exp.Literal.number(1 - ALPHA), "DOUBLE"), exp.column("covered")
    )
    gains = exp.select(
        *base,
        exp.alias_(
            exp.Window(
                this=exp.func("SUM", power),
                partition_by=[exp.column("user_id"), exp.column("item_id")],
            ),
            "item_gain",
        ),
    ).from_(covered.subquery("covered_intents"))
    order = exp.Order(
        expressions=[
            exp.Ordered(
                this=exp.case()
                .when(unplaced.copy(), exp.Literal.number(0))
                .else_(exp.Literal.number(1))
            ),
            exp.Ordered(this=exp.column("item_gain"), desc=True),
            exp.Ordered(this=exp.column("item_id"), desc=True),
        ]
    )
    ranked = exp.select(
        *base,
        "item_gain",
        exp.alias_(
            exp.Window(this=exp.func("RANK"), partition_by=[exp.column("user_id")], order=order),
            "choice",
        ),
    ).from_(gains.subquery("item_gains"))
    chosen = exp.and_(
        unplaced.copy(), exp.EQ(this=exp.column("choice"), expression=exp.Literal.number(1))
    )
    return exp.select(
        "user_id",
        "intent",
        "item_id",
        exp.alias_(
            exp.case()
            .when(chosen.copy(), exp.Literal.number(position))
            .else_(exp.column("placed")),
            "placed",
        ),
        exp.alias_(
            exp.case().when(chosen, exp.column("item_gain")).else_(exp.column("gain")), "gain"
        ),
    ).from_(ranked.subquery("choices"))


def _over(name: str, given: bool, table: str) -> exp.Select:
    """Stage ``name``, reading the optional input ``table`` in input_interactions' place when
    it is ``given``."""
    tree = stage(name)
    if given:
        for read in tree.find_all(exp.Table):
            if read.name == "input_interactions":
                read.set("this", exp.to_identifier(table))
    return tree


def _widen_lists_keys(query: exp.Select, keys: Sequence[str]) -> exp.Select:
    """widen_keys for a per-user metric over the lists, leaving alone its subqueries that do
    not read the lists (over the history or the interactions: the same for every group)."""
    grouped = INTENT_STAGES | {"ranked"}
    global_selects = [
        select
        for select in query.find_all(exp.Select)
        if select is not query and not any(t.name in grouped for t in select.find_all(exp.Table))
    ]
    held = {}
    for index, select in enumerate(global_selects):
        marker = exp.Placeholder(this=f"global_{index}")
        held[marker.name] = select
        select.replace(marker)
    widen_keys(query, keys)
    for marker in list(query.find_all(exp.Placeholder)):
        if marker.name in held:
            marker.replace(held[marker.name])
    return query


def widen_groups(tree: exp.Expr, keys: Sequence[str]) -> exp.Expr:
    """Makes the group columns the key of a group-level metric (``aggregate: group``): every
    SELECT that reads the lists or the relevant items (``truth``, whose rows belong to a
    group) projects them, groups by them, partitions its windows by them, and joins two such
    sources' rows of a user within a group; a SELECT over a global stage only (the catalogue
    size, the history) is left as it is."""
    if not keys:
        return tree
    for select in list(tree.find_all(exp.Select)):
        if not any(table.name in GROUPED_STAGES for table in select.find_all(exp.Table)):
            continue

        def own(node: exp.Expr, select: exp.Select = select) -> bool:
            return node.find_ancestor(exp.Select) is select

        grouped = _grouped_sources(select)
        for join in [j for j in select.find_all(exp.EQ) if own(j) and same_users(j)]:
            if {join.this.table, join.expression.table} <= set(grouped):
                groups = [
                    same_group(renamed(join.this, k), renamed(join.expression, k)) for k in keys
                ]
                join.replace(exp.and_(*groups, join.copy()))

        # the first grouped source gives the group columns where two have them
        source = grouped[0] if len(grouped) > 1 else None

        def key_columns(source: str | None = source) -> list[exp.Column]:
            return [exp.column(key, table=source) for key in keys]

        for window in [w for w in select.find_all(exp.Window) if own(w)]:
            partition = window.args.get("partition_by") or []
            window.set("partition_by", [*key_columns(), *partition])
        aggregates = any(
            own(node) and not node.find_ancestor(exp.Window)
            for node in select.find_all(exp.AggFunc)
        )
        group = select.args.get("group")
        if group is not None:
            group.set("expressions", [*key_columns(), *group.expressions])
        elif aggregates:
            select.group_by(*key_columns(), copy=False)
        select.set("expressions", [*key_columns(), *select.expressions])
    return tree


def _grouped_sources(select: exp.Select) -> list[str]:
    """The names a SELECT reads a grouped stage under: the lists or the relevant items, or a
    derived table over them (a join of two keeps a user's rows within a group)."""
    sources = [select.args["from_"].this, *(join.this for join in select.args.get("joins") or [])]
    return [
        source.alias_or_name
        for source in sources
        if (isinstance(source, exp.Table) and source.name in GROUPED_STAGES)
        or (
            isinstance(source, exp.Subquery)
            and any(table.name in GROUPED_STAGES for table in source.find_all(exp.Table))
        )
    ]
