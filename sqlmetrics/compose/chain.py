"""The diagnostics in the metrics' own chain (plan.py's diagnostics "chained").

diagnostics.sql counts the repeated items and the straddling tie groups over ``ranked`` and
reads the users' counts beside per_user: two readers of each stage, which an engine that inlines
a CTE at each reader (Spark) computes twice, ranking every list twice. Chained, the
ranked rows carry those counts as flags (ranked_checks.sql) through joined and judged to
per_user, which keeps every user (its population a condition, not a HAVING) and sums them; one
aggregate (diagnosed) gives the diagnostics and the means, and a two-row table makes it the
metrics row and the diagnostics row. Each list is then ranked once, by one chain from its scan
to the result.

Where no count needs a row per list (plan.py's "chained"), the recommendations' bad rows are one
aggregate over every row (list_checks.sql), the lists' lengths ranked's own rows, and diagnosed
reads per_user beside interacted (diagnostics_chained.sql); else ("chained_lists") diagnostics.sql
counts each whole list (list_counts.sql) and diagnosed joins per_user.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import cast

from sqlglot import exp

from sqlmetrics.compose.diagnostics import CHECKS, DIAGNOSTICS, KIND
from sqlmetrics.compose.per_user import MetricColumn
from sqlmetrics.compose.stages import bind_placeholders, stage

# per_user's sums of the flags, as diagnostics.sql's listed names them
FLAG_SUMS = {"repeated_row": "duplicate_rows", "straddling_tie": "tie_groups"}
# the diagnostics' counts each sum gives
FLAG_COUNTS = {"duplicate_rows": "duplicate_recommendations", "tie_groups": "tied_score_groups"}
SUM_OF_COUNT = {count: summed for summed, count in FLAG_COUNTS.items()}
IN_POPULATION = "in_population"
KINDS = "kinds"


def flag_ranked(
    ranked: exp.Select,
    flags: Sequence[str],
    cutoffs: Sequence[int],
    max_k: int | None,
    lengths: bool = False,
) -> exp.Select:
    """ranked with ranked_checks.sql's ``flags`` (those the diagnostics count here), and with
    ``lengths`` its list_length (the rows ranked keeps of each list)."""
    checks = stage("ranked_checks")
    read = ("user_id", *flags, *(["list_length"] if lengths else []))
    kept = [p for p in checks.expressions if p.alias_or_name in read]
    names = [name for name in ranked.named_selects if name != "user_id"]
    checks.set(
        "expressions",
        [kept[0], *[exp.column(name, "ranked_rows") for name in names], *kept[1:]],
    )
    checks.set("from_", exp.From(this=exp.alias_(exp.paren(ranked), "ranked_rows")))
    if "straddling_tie" in flags:
        _once_per_group(checks, cutoffs)
    for placeholder in list(checks.find_all(exp.Placeholder)):
        if placeholder.name == "cutoffs" and isinstance(placeholder.parent, exp.In):
            placeholder.parent.set("expressions", [exp.Literal.number(k) for k in cutoffs])
    return bind_placeholders(
        checks, max_k=exp.Literal.number(max_k) if max_k is not None else exp.Null()
    )


def _once_per_group(checks: exp.Select, cutoffs: Sequence[int]) -> None:
    """straddling_tie counting a group at its first straddled cutoff only: at each later cutoff
    k (the one before it k'), not when the row at k' has the same score (the scores are in
    order, so the group then holds every position from k' to k + 1 and was counted at k')."""
    later = list(pairwise(cutoffs))
    if not later:
        return
    flag = next(p for p in checks.expressions if p.alias_or_name == "straddling_tie")
    when = flag.this.args["ifs"][0]
    window = next(w for w in when.find_all(exp.Window) if isinstance(w.this, exp.Lead))
    score = exp.column("score", "ranked_rows")
    pos = exp.column("pos", "ranked_rows")
    first = exp.EQ(this=pos.copy(), expression=exp.Literal.number(cutoffs[0]))
    new_group: list[exp.Expr] = [first]
    for before, cutoff in later:
        lag = window.copy()
        lag.set("this", exp.func("LAG", score.copy(), exp.Literal.number(cutoff - before)))
        new_group.append(
            exp.and_(
                exp.EQ(this=pos.copy(), expression=exp.Literal.number(cutoff)),
                exp.or_(
                    exp.Is(this=lag.copy(), expression=exp.Null()),
                    exp.NEQ(this=score.copy(), expression=lag),
                ),
            )
        )
    when.set("this", exp.and_(when.this, exp.paren(exp.or_(*new_group))))


def carry_flags(joined: exp.Select, judged: exp.Select, flags: Sequence[str]) -> None:
    """joined and judged carrying ranked's ``flags``; joined keeps a flagged row even where it
    keeps hit rows only (duckdb_plan.keep_hit_rows), so that per_user counts it."""
    for name in flags:
        joined.select(exp.column(name, "ranked"), copy=False)
        judged.select(exp.column(name), copy=False)
    where = joined.args.get("where")
    if where is not None:
        flagged = [exp.column(name, "ranked").eq(1) for name in flags]
        where.set("this", exp.or_(where.this, *flagged))


def open_population(
    per_user: exp.Select, columns: Sequence[MetricColumn], flags: Sequence[str]
) -> None:
    """per_user.sql without its HAVING: every user of either input keeps a row (the diagnostics
    count them all), ``in_population`` 1 for a user of the population and NULL otherwise, each
    metric column NULL outside it (so that its mean is the population's), and the users' sums
    of the flags."""
    having = per_user.args.get("having")
    condition = having.this if having is not None else exp.true()
    per_user.set("having", None)
    metric_names = {name for column in columns for name in column.names}
    for projection in per_user.expressions:
        if projection.alias_or_name in metric_names:
            value = exp.Case().when(condition.copy(), projection.this)
            projection.set("this", value)
    marked = exp.Case().when(condition.copy(), exp.Literal.number(1))
    per_user.select(exp.alias_(marked, IN_POPULATION), copy=False)
    for flag in flags:
        per_user.select(exp.alias_(exp.func("SUM", exp.column(flag)), FLAG_SUMS[flag]), copy=False)


def _carry_per_user(
    users: exp.Select, aggregates: Sequence[exp.Expr], flags: Sequence[str]
) -> None:
    """diagnostics_chained.sql's users carrying the per_user columns the summary's
    ``aggregates`` read, and 0 for a flag's sum the chain does not carry."""
    uncarried = set(FLAG_SUMS.values()) - {FLAG_SUMS[flag] for flag in flags}
    for projection in users.expressions:
        if projection.alias_or_name in uncarried:
            projection.replace(exp.alias_(exp.Literal.number(0), projection.alias_or_name))
    present = set(users.named_selects)
    read = {column.name for a in aggregates for column in a.find_all(exp.Column)}
    for name in sorted(read - present):
        users.select(exp.column(name, "per_user"), copy=False)


def _join_per_user(diagnosed: exp.Select, flags: Sequence[str]) -> None:
    """diagnostics.sql's final SELECT joined to per_user, each flag's sum per_user's (for a
    listed user, as listed took ranked_counts')."""
    for column in diagnosed.find_all(exp.Column):
        if not column.table:
            column.set("table", exp.to_identifier("users"))
    carried = {FLAG_SUMS[flag] for flag in flags}
    for projection in diagnosed.expressions:
        summed = SUM_OF_COUNT.get(projection.alias_or_name)
        if summed not in carried:
            continue
        for column in projection.find_all(exp.Column):
            if column.name == summed:
                listed = exp.column("listed_user", "users").is_(exp.Null()).not_()
                column.replace(exp.Case().when(listed, exp.column(summed, "per_user")))
    diagnosed.join(
        "per_user",
        on=exp.column("user_id", "users").eq(exp.column("user_id", "per_user")),
        join_type="left",
        copy=False,
    )


def chained_rows(
    stages: list[tuple[str, exp.Expr]],
    summary: exp.Select,
    columns: Sequence[MetricColumn],
    flags: Sequence[str],
    row_checks: bool,
) -> exp.Query:
    """The metrics row and the diagnostics row from one aggregate: diagnosed (the last of
    ``stages``' diagnostics CTEs) over per_user's rows, with the summary's aggregates
    (summary.final's, from per_user) beside its counts, read twice by a two-row table.
    ``row_checks``: the stages are diagnostics_chained.sql's, whose users holds per_user's
    rows; else diagnostics.sql's, whose diagnosed joins per_user."""
    index = next(i for i, (name, _) in enumerate(stages) if name == "diagnosed")
    diagnosed = cast(exp.Select, stages[index][1])
    aggregates = [projection.copy() for projection in summary.expressions]
    if row_checks:
        _carry_per_user(cast(exp.Select, dict(stages)["users"]), aggregates, flags)
        source = "users"
    else:
        _join_per_user(diagnosed, flags)
        source = "per_user"
    for aggregate in aggregates:
        for column in aggregate.find_all(exp.Column):
            if not column.table:
                column.set("table", exp.to_identifier(source))
    diagnosed.select(*aggregates, copy=False)
    stages[index] = ("diagnosed", diagnosed)

    kind = exp.column(KIND, KINDS)
    metric_names = ["users", *(column.request.label for column in columns)]

    def only(row: str, name: str) -> exp.Expr:
        value = exp.column(exp.to_identifier(name, quoted=True), "diagnosed")
        when = kind.eq(exp.Literal.string(row))
        return exp.alias_(exp.Case().when(when, value), exp.to_identifier(name, quoted=True))

    kinds = exp.Values(
        expressions=[
            exp.Tuple(expressions=[exp.Literal.string("metrics")]),
            exp.Tuple(expressions=[exp.Literal.string("diagnostics")]),
        ],
        alias=exp.TableAlias(this=exp.to_identifier(KINDS), columns=[exp.to_identifier(KIND)]),
    )
    return (
        exp.select(
            exp.alias_(kind.copy(), KIND),
            *[only("metrics", name) for name in metric_names],
            *[only("diagnostics", name) for name in DIAGNOSTICS + CHECKS],
        )
        .from_("diagnosed")
        .join(kinds, join_type="cross")
        .order_by(exp.column(KIND))
    )
