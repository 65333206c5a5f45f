"""A plan for group columns only the recommendations have (a model, an experiment arm):
each group is evaluated against the whole population of the interactions without crossing
every group value into them (groups x interaction rows). query.compose() hands such
a summary to complement_arms, which assembles its parts as plans that cross the arms."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from sqlglot import exp

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose.assemble import assemble
from sqlmetrics.compose.diagnostics import CHECKS, DIAGNOSTICS, with_diagnostics_rows
from sqlmetrics.compose.inputs import Inputs, Options
from sqlmetrics.compose.per_user import MetricColumn, per_user_stages, widest_population
from sqlmetrics.compose.plan import choose_plan
from sqlmetrics.compose.stages import group_key, nulls_last, same_group, with_ctes
from sqlmetrics.compose.summary import ratio
from sqlmetrics.compose.sums import aggregate


def _crossed(
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    dialect: str,
    diagnostics: bool,
    score_floor: float | None = None,
) -> exp.Query:
    """A part of the arms' query: the plan that crosses the group columns into the interactions.
    Its plan knows of the diagnostics (where the repeated items are counted: without, none),
    which stay in their own stages, for _diagnosed_ctes to combine the parts'."""
    plan = choose_plan(
        requests,
        inputs,
        options,
        dialect,
        cross_arms=True,
        diagnostics=diagnostics,
        chained=False,
    )
    return assemble(
        plan,
        requests,
        inputs,
        options,
        dialect=dialect,
        diagnostics=diagnostics,
        score_floor=score_floor,
    )


UNLISTED = "_unlisted"  # suffix of the CTEs computed as if no user had a list
Cte = tuple[str, exp.Expr]  # a CTE's name and body


def complement_arms(
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    dialect: str,
    diagnostics: bool,
    score_floor: float | None = None,
) -> exp.Query:
    """The summary per value of group columns only the recommendations have (a model, an
    experiment arm) without crossing every value with every interaction: that costs groups x
    interaction rows (docs/benchmark.md, many models).

    Each group's population is every user of the interactions with a relevant item, and a user
    without a list in the group has the same per_user row (and diagnostics row) in every
    group. So each sum or count over a group's rows is taken as: over the users the group lists
    (the stages over only their interactions, _join_arms_by_user), plus over every user as if
    without a list (the stages once, without groups, over no recommendations: the ``_unlisted``
    CTEs), minus that over the users the group lists (``covered``). Every metric's value for a
    user without a list is 0 or NULL (test_complement_arms checks the catalogue) and the
    diagnostics are counts: the correction is 0 or a whole number, so the means have the same
    bits as summing every user's row (x + 0.0 is x; whole numbers add exactly)."""
    keys = [group_key(i) for i in range(len(inputs.groups))]
    listed = _crossed(requests, inputs, options, dialect, diagnostics, score_floor)
    _join_arms_by_user(listed, inputs)
    unlisted = _crossed(requests, _without_lists(inputs), options, dialect, diagnostics)
    ctes = _parts(listed, unlisted, keys)
    stages, columns = per_user_stages(
        requests, options, population=widest_population(requests, options)
    )
    in_population = "judged" in stages and len(stages) > 1  # see summary.final's population
    names = [name for column in columns for name in column.names]
    # exact on DuckDB, as summary.final's sums, for the same bits on every run
    ctes += _sums_ctes(keys, names, in_population, exact=dialect == "duckdb")
    final = _final(keys, inputs, columns)
    materialized = _materialized_flags(listed, unlisted)
    if not diagnostics:
        return _materialized(with_ctes(final, ctes), materialized)
    ctes += _diagnosed_ctes(keys, ctes)
    query = with_diagnostics_rows(final, inputs, columns, per_user=False, sums=False)
    return _materialized(with_ctes(query, ctes), materialized)


def _without_lists(inputs: Inputs) -> Inputs:
    """``inputs`` with no recommendation and no group: every user as one without a list."""
    # 1 = 0 rather than FALSE, which Oracle (before 23) and SQL Server do not read as a condition
    never = exp.EQ(this=exp.Literal.number(1), expression=exp.Literal.number(0))
    nothing = exp.select("*").from_(inputs.recommendations.copy()).where(never)
    return replace(inputs, recommendations=nothing.subquery("recommendations"), groups=())


def _parts(listed: exp.Query, unlisted: exp.Query, keys: Sequence[str]) -> list[Cte]:
    """The CTEs of both plans, the unlisted ones suffixed, and ``listed_pairs``: the (group,
    user) pairs of the lists."""
    # The unlisted CTEs first: the inputs' bindings read the user's tables by name, which must
    # not be taken for a CTE defined before them (a table named truth, like truth.sql).
    ctes = _suffixed_ctes(unlisted, UNLISTED)
    ctes += [
        ("diagnosed_listed" if cte.alias == "diagnosed" else cte.alias, cte.this)
        for cte in listed.args["with_"].expressions
    ]
    pairs = exp.select(*map(exp.column, keys), "user_id").distinct().from_("input_recommendations")
    ctes.append(("listed_pairs", pairs))
    return ctes


def _covered(source: str, keys: Sequence[str]) -> exp.Select:
    """``source`` (an unlisted CTE) joined to the (group, user) pairs of the lists, the NULL
    user too (_join_arms_by_user), each group's rows as ``covered``."""
    user, listed_user = exp.column("user_id", source), exp.column("user_id", "listed_pairs")
    branches = [
        user.eq(listed_user),
        exp.and_(user.copy().is_(exp.null()), listed_user.copy().is_(exp.null())),
    ]
    rows = exp.union(
        *[
            exp.select(*[exp.column(key, "listed_pairs") for key in keys], f"{source}.*")
            .from_(source)
            .join("listed_pairs", on=on)
            for on in branches
        ],
        distinct=False,
    )
    return (
        exp.select(*map(exp.column, keys))
        .from_(exp.alias_(exp.paren(rows), "covered"))
        .group_by(*map(exp.column, keys))
    )


def _total(name: str, parts: Sequence[str]) -> exp.Expr:
    """listed + (unlisted - covered): the correction first, exact in whole numbers."""
    listed_part, unlisted_part, covered_part = (
        exp.func("COALESCE", exp.column(name, part), exp.Literal.number(0)) for part in parts
    )
    return exp.Add(
        this=listed_part,
        expression=exp.paren(exp.Sub(this=unlisted_part, expression=covered_part)),
    )


def _same_groups(left: str, right: str, keys: Sequence[str]) -> exp.Expr:
    return exp.and_(*(same_group(exp.column(k, left), exp.column(k, right)) for k in keys))


SUMS = ("listed_sums", "unlisted_sums", "covered_sums")  # the parts of each total


def _sums_ctes(
    keys: Sequence[str], names: Sequence[str], in_population: bool, exact: bool
) -> list[Cte]:
    """The per_user rows' counts and sums (SUMS): per group over the users it lists, over
    every user without a list, and per group over those of them it lists."""
    per_user_unlisted = f"per_user{UNLISTED}"
    listed = exp.select(*map(exp.column, keys)).from_("per_user").group_by(*keys)
    unlisted = exp.select().from_(per_user_unlisted)
    covered = _covered(per_user_unlisted, keys)
    return [
        (name, _sums(select, table, names, in_population, exact))
        for name, select, table in zip(
            SUMS,
            (listed, unlisted, covered),
            ("per_user", per_user_unlisted, "covered"),
            strict=True,
        )
    ]


def _sums(
    select: exp.Select, table: str, names: Sequence[str], in_population: bool, exact: bool
) -> exp.Select:
    """``select`` with the rows of ``table``, its users and each column's sum and count."""
    counted = exp.column("in_population", table) if in_population else exp.Star()
    select.select(
        exp.alias_(exp.func("COUNT", exp.Star()), "per_user_rows"),
        exp.alias_(exp.func("COUNT", counted), "users"),
        copy=False,
    )
    for name in names:
        value = exp.column(name, table)
        select.select(
            exp.alias_(aggregate("SUM", value, exact=exact), f"{name}_sum"),
            exp.alias_(exp.func("COUNT", exp.column(name, table)), f"{name}_count"),
            copy=False,
        )
    return select


def _summed(name: str) -> exp.Expr:
    """A column's sum over a group's users, NULL where none has a value."""
    value = exp.Case().when(_total(f"{name}_count", SUMS) > 0, _total(f"{name}_sum", SUMS))
    return exp.cast(value, "DOUBLE")  # no integer division (AVG's own type)


def _label(column: MetricColumn) -> exp.Expr:
    """A request's value over a group's users, as summary.final computes it."""
    value = (
        ratio(*map(_summed, column.names))
        if column.request.metric.micro
        else ratio(_summed(column.names[0]), _total(f"{column.names[0]}_count", SUMS))
    )
    if column.request.metric.square_root:
        value = exp.func("SQRT", value)
    return exp.Alias(this=value, alias=exp.to_identifier(column.request.label, quoted=True))


def _final(keys: Sequence[str], inputs: Inputs, columns: Sequence[MetricColumn]) -> exp.Select:
    """A row per group: its users and each request's value, from the three SUMS."""
    arms = exp.select(*map(exp.column, keys)).distinct().from_("listed_pairs")
    return (
        exp.select(
            *[
                exp.alias_(exp.column(key, "arms"), exp.to_identifier(group.name, quoted=True))
                for key, group in zip(keys, inputs.groups, strict=True)
            ],
            exp.alias_(_total("users", SUMS), "users"),
            *map(_label, columns),
        )
        .from_(exp.alias_(exp.paren(arms), "arms"))
        .join("listed_sums", on=_same_groups("arms", "listed_sums", keys), join_type="left")
        .join("unlisted_sums", join_type="cross")
        .join("covered_sums", on=_same_groups("arms", "covered_sums", keys), join_type="left")
        .where(_total("per_user_rows", SUMS) > 0)  # a group with no per_user row has no row
        .order_by(*nulls_last([exp.column(key, "arms") for key in keys]))
    )


def _materialized_flags(listed: exp.Query, unlisted: exp.Query) -> dict[str, object]:
    """Each CTE's MATERIALIZED flag in its plan, by its name in the combined query:
    read_inputs_again's choices (NOT MATERIALIZED inputs) hold there too."""
    return {
        f"{cte.alias}{UNLISTED}" if query is unlisted else cte.alias: cte.args.get("materialized")
        for query in (listed, unlisted)
        for cte in query.args["with_"].expressions
    }


def _diagnosed_ctes(keys: Sequence[str], ctes: Sequence[Cte]) -> list[Cte]:
    """``diagnosed`` per group as the sums are: its listed users' counts, plus every user's
    without a list, minus those of them it lists (``covered_diagnosed``)."""
    unlisted_diagnosed = f"diagnosed{UNLISTED}"
    counted = _covered(f"users{UNLISTED}", keys)
    body = next(body for name, body in ctes if name == unlisted_diagnosed)
    counted.select(*[p.copy() for p in body.expressions], copy=False)
    diagnosis = ("diagnosed_listed", unlisted_diagnosed, "covered_diagnosed")
    diagnosed = (
        exp.select(
            *[exp.column(key, "diagnosed_listed") for key in keys],
            *[exp.alias_(_total(name, diagnosis), name) for name in DIAGNOSTICS + CHECKS],
        )
        .from_("diagnosed_listed")
        .join(unlisted_diagnosed, join_type="cross")
        .join(
            "covered_diagnosed",
            on=_same_groups("diagnosed_listed", "covered_diagnosed", keys),
            join_type="left",
        )
    )
    return [("covered_diagnosed", counted), ("diagnosed", diagnosed)]


def _materialized(query: exp.Query, flags: Mapping[str, object]) -> exp.Query:
    for cte in query.args["with_"].expressions:
        cte.set("materialized", flags.get(cte.alias))
    return query


def _join_arms_by_user(query: exp.Query, inputs: Inputs) -> None:
    """bind_interactions' arms, crossed into the interactions, joined by user instead: each
    group gets the interactions of the users it lists only (complement_arms adds the rest).
    The NULL user, which no equality matches, by a join of its own (as GROUP BY user_id puts
    its rows of both inputs together), so that the numbers stay those of crossing even there."""
    keys = [group_key(i) for i in range(len(inputs.groups))]
    user = exp.column(inputs.user.copy(), "interactions")
    listed = exp.select(*map(exp.column, keys), exp.alias_("user_id", "listed_user"))
    listed = listed.distinct().from_("input_recommendations")
    without_user = exp.select(*map(exp.column, keys)).distinct().from_("input_recommendations")
    without_user = without_user.where(exp.column("user_id").is_(exp.null()))
    branches = [
        (listed, user.eq(exp.column("listed_user", "arms"))),
        (without_user, user.copy().is_(exp.null())),
    ]
    for cte in query.args["with_"].expressions:
        if cte.alias != "input_interactions":
            continue
        selects: list[exp.Select] = []
        for arms, on in branches:
            select = cte.this.copy()
            joined = exp.select("*").join(exp.alias_(exp.paren(arms), "arms"), on=on)
            for join in select.args.get("joins") or []:
                if join.alias_or_name == "arms":
                    join.replace(joined.args["joins"][0])
            selects.append(select)
        cte.set("this", exp.union(*selects, distinct=False))


def _suffixed_ctes(query: exp.Query, suffix: str) -> list[Cte]:
    """The CTEs of ``query`` named with ``suffix``, each reference to one renamed and aliased
    by its old name (so that qualified columns still read it). A CTE reads only those defined
    before it: a table of the same name as a later one is the user's."""
    ctes = [(cte.alias, cte.this) for cte in query.args["with_"].expressions]
    names: set[str] = set()
    for name, body in ctes:
        for table in list(body.find_all(exp.Table)):
            if table.name in names and not table.args.get("db"):
                alias = table.alias or table.name
                table.set("this", exp.to_identifier(f"{table.name}{suffix}"))
                table.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
        names.add(name)
    return [(f"{name}{suffix}", body) for name, body in ctes]
