"""The composed query of a call: plan.py chooses the plan, assemble.py assembles it (arms.py
for group columns only the recommendations have), and compose_checks keeps the checks alone."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import cast

from sqlglot import exp

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose.arms import complement_arms
from sqlmetrics.compose.assemble import assemble
from sqlmetrics.compose.diagnostics import CHECKS, DIAGNOSTICS, refused_checks
from sqlmetrics.compose.inputs import Inputs, Options
from sqlmetrics.compose.per_user import deepest_cutoff
from sqlmetrics.compose.plan import Plan, choose_plan
from sqlmetrics.compose.refusals import check_compatible
from sqlmetrics.compose.stages import group_key, nulls_last, with_ctes
from sqlmetrics.compose.summary import UserPass
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.gc_paused import gc_paused


@gc_paused
def compose(
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    per_user: bool = False,
    dialect: str = "duckdb",
    diagnostics: bool = False,
    user_pass: UserPass | None = None,
    score_floor: float | None = None,
    portable: bool = False,
    cross_arms: bool = False,
    curve_cutoffs: Sequence[int] | None = None,
    chained: bool = True,
) -> exp.Query:
    """One query computing every request: a summary row per group, or a row per user.

    evaluate's own forms: with ``diagnostics`` the diagnostics of METRICS.md "Results" come from
    the same stages as extra rows (see ``DIAGNOSTICS``); ``user_pass`` (a UserPass) keeps the
    users of one pass and returns sums instead of means (see ``partial_columns``), for
    evaluating in passes under a memory limit; ``score_floor``
    (engines.duckdb_passes.score_floor) spares the DuckDB top-k aggregate the scores below it.
    ``portable``: none of DuckDB's own plans (plan.TOP_K_DIALECTS) on DuckDB either (the dbt
    package templates the cutoff and the columns into the portable stages). ``cross_arms``: a
    group column only the recommendations have is crossed into the interactions even for a
    summary (the plan complement_arms replaces; tests compare them). ``curve_cutoffs``: the
    curve plan's rows per group and cutoff at these cutoffs instead of the summary (the
    report's curves: curve_sums.per_cutoff_rows), for one request per metric family at the
    deepest of them; refused where the curve plan does not take the requests (choose_plan
    with the same ``curve_cutoffs`` says whether it does). ``chained``: the diagnostics may
    ride the metrics' chain where plan.py says they can (compose_checks keeps them apart)."""
    check_compatible(requests, inputs, options)
    plan = choose_plan(
        requests,
        inputs,
        options,
        dialect,
        per_user=per_user,
        user_pass=user_pass,
        portable=portable,
        cross_arms=cross_arms,
        curve_cutoffs=curve_cutoffs,
        diagnostics=diagnostics,
        chained=chained,
    )
    if curve_cutoffs is not None:
        _check_curve_rows(plan, requests, curve_cutoffs, per_user or diagnostics or bool(user_pass))
    if plan.groups == "arms":
        return complement_arms(
            requests, inputs, options, dialect, diagnostics=diagnostics, score_floor=score_floor
        )
    return assemble(
        plan,
        requests,
        inputs,
        options,
        per_user=per_user,
        dialect=dialect,
        diagnostics=diagnostics,
        user_pass=user_pass,
        score_floor=score_floor,
        curve_cutoffs=curve_cutoffs,
    )


def _check_curve_rows(
    plan: Plan, requests: Sequence[MetricRequest], cutoffs: Sequence[int], other_rows: bool
) -> None:
    """compose's ``curve_cutoffs`` asked where they apply: the curve plan, requests at the
    deepest cutoff, and no other shape of rows asked (per user, diagnostics, a pass)."""
    if plan.curve is None or other_rows or deepest_cutoff(requests) != max(cutoffs, default=0):
        raise SqlmetricsError(
            "rows per cutoff need the curve plan, requests at the deepest cutoff and no other "
            "rows (per user, diagnostics, passes); please report this"
        )


@gc_paused
def compose_checks(
    requests: Sequence[MetricRequest], inputs: Inputs, options: Options, dialect: str = "duckdb"
) -> exp.Query:
    """The input checks and diagnostics evaluate runs, as a query of their own for a scheduled
    job: one row per group with every count and ``refused_rows``, the sum of the counts that
    evaluate refuses (0 when the inputs are fit to evaluate with these metrics and options)."""
    full = compose(requests, inputs, options, dialect=dialect, diagnostics=True, chained=False)
    ctes = {cte.alias: cte.this for cte in full.args["with_"].expressions}
    groups = [exp.to_identifier(group.name, quoted=True) for group in inputs.groups]
    counts = [exp.column(name) for name in DIAGNOSTICS + CHECKS]
    refused = exp.alias_(
        functools.reduce(
            lambda total, count: exp.Add(this=total, expression=count),
            [
                cast(exp.Expr, exp.column(name))
                for name in refused_checks(requests, inputs, options)
            ],
        ),
        "refused_rows",
    )
    query = exp.select(
        *[exp.alias_(exp.column(group_key(i)), g) for i, g in enumerate(groups)],
        *counts,
        refused,
    ).from_("diagnosed")
    if groups:
        query = query.order_by(*nulls_last([exp.column(group_key(i)) for i in range(len(groups))]))
    return with_ctes(query, [(name, ctes[name]) for name in _needed_ctes(ctes, "diagnosed")])


def _needed_ctes(ctes: Mapping[str, exp.Expr], root: str) -> list[str]:
    """The CTEs ``root`` reads, directly or not, in their order of definition."""
    needed, pending = set(), [root]
    while pending:
        name = pending.pop()
        if name in needed:
            continue
        needed.add(name)
        pending += [t.name for t in ctes[name].find_all(exp.Table) if t.name in ctes]
    return [name for name in ctes if name in needed]
