"""DuckDB's own way to run evaluate's query: one query, or passes over the users when the memory
limit calls for them (the numbers are the same either way), and the score floor that spares the
top-k aggregate the scores below it."""

from __future__ import annotations

import decimal
import functools
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, SupportsInt, cast

from sqlglot import exp

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.compose import plan
from sqlmetrics.compose.diagnostics import CHECKS, DIAGNOSTICS, KIND
from sqlmetrics.compose.duckdb_plan import read_inputs_again
from sqlmetrics.compose.inputs import Inputs, Options, bind_recommendations
from sqlmetrics.compose.per_user import deepest_cutoff
from sqlmetrics.compose.plan import lists_stage
from sqlmetrics.compose.query import compose
from sqlmetrics.compose.stages import group_key
from sqlmetrics.compose.summary import (
    UserPass,
    partial_columns,
    reads_whole_group,
    splits_into_passes,
)
from sqlmetrics.engines.base import INTEGER_TYPES
from sqlmetrics.engines.duckdb_limits import refuse_too_wide
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.gc_paused import gc_paused
from sqlmetrics.io.trec_reader import scans_parsed_tables

if TYPE_CHECKING:
    import duckdb
    import pandas as pd


def run(
    connection: duckdb.DuckDBPyConnection,
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    per_user: bool,
    floor: float | None = None,
    rows: int | None = None,
    limit: float | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """One query; if DuckDB runs out of memory (top-k states do not spill), passes of users.
    Returns the metrics, the diagnostics and how many passes it took. ``floor``:
    score_floor's; ``rows``: the recommendations' known_rows (duckdb.py); ``limit``: the
    connection's memory limit in bytes when known (else read from it)."""
    import duckdb

    query = _evaluate_sql(requests, inputs, options, per_user, None, floor)
    # Under a small limit the passes are planned first: a query that runs out of memory fails
    # late, after most of its work (docs/benchmark.md, memory limits). A large input on a plan
    # that sorts every row gets passes of WINDOW_PASS_BYTES whatever the limit: smaller sorts
    # are faster too.
    limit = memory_limit(connection) if limit is None else limit
    budget = 0.5 * limit
    if rows is not None and rows >= WINDOW_PASSES_FROM_ROWS and sorts_every_row(requests, options):
        budget = min(budget, WINDOW_PASS_BYTES)
    planned = (
        _passes_for(connection, requests, inputs, options, budget)
        if splits_into_passes(requests) and (limit < PLAN_PASSES_BELOW or budget < 0.5 * limit)
        else None
    )
    if planned is not None and planned > 1:
        passes = planned
    else:
        try:
            return (*split_diagnostics(connection, query, inputs, per_user), 1)
        except duckdb.OutOfMemoryException:
            spanning = [r.label for r in requests if reads_whole_group(r)]
            if spanning:
                raise SqlmetricsError(
                    f"DuckDB ran out of memory, and {', '.join(spanning)} compare rows across "
                    "all users of a group, so they cannot be split into passes over the users; "
                    "raise its memory_limit "
                    "(connection=duckdb.connect(config={'memory_limit': ...}))"
                ) from None
            passes = max(2, planned or _passes_for(connection, requests, inputs, options, budget))
    quantiles = _user_quantiles(connection, inputs)
    while True:
        try:
            chosen = user_passes(passes, quantiles)
            parts = run_in_passes(connection, requests, inputs, options, per_user, chosen, floor)
            return (*parts, len(chosen))
        except duckdb.OutOfMemoryException:
            if passes >= MAX_PASSES:
                raise SqlmetricsError(
                    f"DuckDB ran out of memory even in {passes} passes over the users; raise "
                    "its memory_limit (connection=duckdb.connect(config={'memory_limit': ...}))"
                ) from None
            passes = min(passes * 4, MAX_PASSES)


MAX_PASSES = 256
PLAN_PASSES_BELOW = 4 * 2**30  # a smaller memory limit: passes planned before the first query
# A plan that sorts every row takes passes of about this many bytes whatever the limit: as
# fast as one pass and a fraction of its peak memory (docs/benchmark.md, passes).
WINDOW_PASS_BYTES = 1.5 * 2**30
WINDOW_PASSES_FROM_ROWS = 20_000_000


def sorts_every_row(requests: Sequence[MetricRequest], options: Options) -> bool:
    """Whether the plan sorts every row (no top-k aggregate): ranking metrics beyond
    TOP_K_MAX_CUTOFF (score_lists.sql or sorted_lists.sql: every row grouped, and every score
    kept or sorted) or without a cutoff (the window), and the metrics over
    scores (gauc's own sums do not sort, but its whole-list diagnostics do, and group every
    row)."""
    reads_lists = any(
        request.metric.reads in ("judged", "scored", "judgements") for request in requests
    )
    return reads_lists and lists_stage(requests, options, "duckdb") != "top_lists"


UNITS = {
    "bytes": 1,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
    "pib": 2**50,  # memory_limit='-1' (no limit) reads '16383.9 PiB'
    "eib": 2**60,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
}


def memory_limit(connection: duckdb.DuckDBPyConnection) -> float:
    """DuckDB's memory_limit in bytes; a form this does not read counts as no limit (passes are
    then only made after running out of memory, never planned from a misread limit)."""
    row = connection.execute("SELECT current_setting('memory_limit')").fetchone()
    number, _, unit = str(row[0] if row else "").partition(" ")
    try:
        return float(number) * UNITS[unit.lower()]
    except (KeyError, ValueError):
        return math.inf


QUANTILES = 256  # cut points read once, for any number of passes up to MAX_PASSES
SAMPLED_ROWS = 100_000


def _passes_for(
    connection: duckdb.DuckDBPyConnection,
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    budget: float,
) -> int:
    """Enough passes for each to need ``budget`` bytes (1 if one query fits). Peak memory
    per user, measured on bench/ data with DuckDB 2.0: ~2 KB plus ~0.3 KB per top-k entry
    (score-keyed top-k: 1e8 rows, k = 10, 11 passes under 1 GB, peak RSS 1.1 GB), ~6 KB when
    every row is sorted (the window, or sorted_lists.sql: 7.4 GB at 1e6 users of 100 rows)."""
    count = exp.select(exp.func("APPROX_COUNT_DISTINCT", exp.column(inputs.user)))
    row = connection.execute(count.from_(inputs.recommendations.copy()).sql("duckdb")).fetchone()
    users = int(row[0]) if row else 0
    cutoff = deepest_cutoff(requests)
    top_k = lists_stage(requests, options, "duckdb") == "top_lists"
    per_user = 2000 + 300 * (cutoff + 3) if top_k and cutoff else 6000
    passes = math.ceil(users * per_user / budget)
    return max(1, min(MAX_PASSES, passes))


def _user_quantiles(connection: duckdb.DuckDBPyConnection, inputs: Inputs) -> list[float] | None:
    """For numeric user ids the 1/256 quantiles of the users, to cut passes by range; None
    (passes by hash) for ids APPROX_QUANTILE cannot order. From a sample (the quantiles of every
    row would cost a scan of 4 s at 1e8 rows): uneven passes only cost time, every user still
    falls in exactly one."""
    import duckdb

    user = exp.column(inputs.user)
    sample = exp.select(user.copy()).from_(inputs.recommendations.copy())
    sample.set(
        "sample",
        exp.TableSample(
            method=exp.var("RESERVOIR"),
            size=exp.Literal.number(SAMPLED_ROWS),
            seed=exp.Literal.number(1),
        ),
    )
    fractions = exp.Array(expressions=[exp.convert(i / QUANTILES) for i in range(1, QUANTILES)])
    spread = exp.select(exp.func("APPROX_QUANTILE", user, fractions)).from_(
        sample.subquery("sampled")
    )
    try:
        row = connection.execute(spread.sql("duckdb")).fetchone()
    except duckdb.Error:
        return None
    return list(row[0]) if row and row[0] is not None else None


FLOOR_MIN_ROWS = 5_000_000
FLOOR_SAMPLED_ROWS = 100_000  # 1,000 lists of 100: a steady 1% quantile (docs/benchmark.md)
FLOOR_MIN_LISTS = 100
FLOOR_QUANTILE = 0.01


def score_floor(
    connection: duckdb.DuckDBPyConnection,
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    rows: int | None,
) -> float | None:
    """A score floor for top_lists.sql, or None: the 1% quantile, over the lists in the input's
    first FLOOR_SAMPLED_ROWS rows, of the lowest score a list needs to pass to stay exact (its
    cutoff + 3rd best, or its lowest when shorter). On bench/'s 1e8 rows the top-k aggregate
    then takes 23% of the rows and ~1% of the users are ranked again.

    A guess from a prefix, so a poor one only costs time: a list is ranked again exactly when it
    falls short. None below 5M recommendation rows or when their number is not known (``rows``,
    _known_rows): there the guess (10 ms at 1e6 rows) and composing a query of its own (~30 ms)
    cost more than they save. None also when fewer than half of the prefix's lists (or 100)
    have cutoff + 3 scores: then the input is not grouped by list, or its lists are short, and
    a guess could send most users to the window."""
    import duckdb

    cutoff = deepest_cutoff(requests)
    if rows is None or rows < FLOOR_MIN_ROWS or cutoff is None or inputs.rank is not None:
        return None
    if lists_stage(requests, options, "duckdb") != "top_lists":
        return None
    kept = exp.Literal.number(cutoff + 3)
    score = exp.column("score")
    prefix = bind_recommendations(inputs).limit(FLOOR_SAMPLED_ROWS)
    keys = [exp.column(group_key(i)) for i in range(len(inputs.groups))]
    needs = (
        exp.case()
        .when(
            exp.func("COUNT", score.copy()) >= kept,
            exp.func("LIST_EXTRACT", exp.func("MAX", score.copy(), kept), kept.copy()),
        )
        .else_(exp.func("MIN", score.copy()))
    )
    lists = (
        exp.select(
            exp.alias_(needs, "needs"),
            exp.alias_(exp.func("COUNT", exp.Star()), "list_rows"),
            exp.alias_(exp.func("COUNT", score.copy()) >= kept, "is_long"),
        )
        .from_(prefix.subquery("prefix"))
        .group_by(*keys, exp.column("user_id"))
    )
    floor = exp.select(
        exp.func("QUANTILE_DISC", exp.column("needs"), exp.convert(FLOOR_QUANTILE)),
        exp.func("SUM", exp.column("list_rows")),
        exp.func("COUNT_IF", exp.column("is_long")),
        exp.func("COUNT", exp.Star()),
    ).from_(lists.subquery("lists"))
    try:
        row = connection.execute(floor.sql("duckdb")).fetchone()
    except duckdb.Error:
        return None
    if row is None or row[0] is None or row[1] < FLOOR_SAMPLED_ROWS:
        return None
    if row[2] < max(FLOOR_MIN_LISTS, row[3] / 2):
        return None
    value = float(row[0])
    return value if math.isfinite(value) else None


def user_passes(passes: int, quantiles: list[float] | None) -> list[UserPass]:
    """The passes: by ranges of user ids between quantiles when known, else by hash."""
    if quantiles is None:
        return [UserPass(p, passes) for p in range(passes)]
    cuts = sorted({quantiles[round(p * QUANTILES / passes) - 1] for p in range(1, passes)})
    bounds = list(zip([None, *cuts], [*cuts, None], strict=True))
    return [UserPass(p, len(bounds), bound) for p, bound in enumerate(bounds)]


def run_in_passes(
    connection: duckdb.DuckDBPyConnection,
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    per_user: bool,
    passes: list[UserPass],
    floor: float | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each pass evaluates its users (see UserPass); sums combine exactly."""
    import pandas as pd

    parts = [
        split_diagnostics(
            connection,
            _evaluate_sql(requests, inputs, options, per_user, user_pass, floor),
            inputs,
            per_user,
        )
        for user_pass in passes
    ]
    groups = [group.name for group in inputs.groups]
    counted = _settled_keys(pd.concat([part[1] for part in parts], ignore_index=True), groups)
    counts = [c for c in counted.columns if c not in groups]
    if groups:
        counted = counted.groupby(groups, sort=True, as_index=False, dropna=False)[counts].sum()
        counted = _settled_keys(counted, groups)  # the groupby infers uint64 where it can
    else:
        counted = counted[counts].sum().to_frame().T.astype("int64")
    metrics = pd.concat([part[0] for part in parts], ignore_index=True)
    metrics = _settled_keys(metrics, [*groups, inputs.user.name] if per_user else groups)
    if per_user:
        order = [*groups, inputs.user.name]
        return metrics.sort_values(order, kind="stable").reset_index(drop=True), counted
    rows = []
    grouped = metrics.groupby(groups, sort=True, dropna=False) if groups else [((), metrics)]
    for key, group in grouped:
        row: dict[str, object] = dict(
            zip(groups, key if isinstance(key, tuple) else (key,), strict=True)
        )
        users = int(group["users"].sum())
        row["users"] = users
        row.update(_summary_values(requests, group, users))
        rows.append(row)
    summary = pd.DataFrame(rows, columns=[*groups, "users", *(r.label for r in requests)])
    return _settled_keys(summary, groups), counted


def _summary_values(
    requests: Sequence[MetricRequest], group: pd.DataFrame, users: int
) -> dict[str, object]:
    """Each request's value for one group, from the passes' partial sums of its rows."""
    import pandas as pd

    values: dict[str, object] = {}
    for request, (label, numerator, denominator) in zip(
        requests, partial_columns(requests), strict=True
    ):
        total = math.fsum(group[numerator].dropna())  # exact, whatever the pass order
        divisor = math.fsum(group[denominator].dropna()) if denominator else users
        value: float | int = total / divisor if divisor else math.nan
        if request.metric.summed:  # aggregate: sum (NULL, as SUM, without users)
            summed = group[numerator].dropna()
            # an integer sum stays an integer, as the single query's SUM gives it
            whole = pd.api.types.is_integer_dtype(summed) and divisor
            value = int(summed.sum()) if whole else total if divisor else math.nan
        if request.metric.exponential:
            value = math.exp(value)
        values[label] = math.sqrt(value) if request.metric.square_root else value
    return values


def _evaluate_sql(
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    per_user: bool,
    user_pass: UserPass | None,
    floor: float | None,
) -> str:
    plans = plan.plan_switches()
    return _query_sql(tuple(requests), inputs, options, per_user, user_pass, floor, plans)


@functools.lru_cache(maxsize=64)
@gc_paused
def _query_sql(
    requests: tuple[MetricRequest, ...],
    inputs: Inputs,
    options: Options,
    per_user: bool,
    user_pass: UserPass | None,
    floor: float | None,
    plans: tuple[object, ...],
    diagnostics: bool = True,
) -> str:
    """evaluate's query as DuckDB SQL. Composing and rendering cost ~30 ms, more than the query
    on small inputs; the inputs keep their names from call to call (bind_source), so a repeated
    request is served from here. ``plans`` (compose.plan_switches) is part of the key because
    tests switch plans by changing them. ``diagnostics``: with the diagnostics rows."""
    del plans
    query = compose(
        requests,
        inputs,
        options,
        per_user,
        diagnostics=diagnostics,
        user_pass=user_pass,
        score_floor=floor,
    )
    # a TREC file's table: each reader scans it again where DuckDB would store a copy
    recommendations = options.duplicates != "first" and scans_parsed_tables(inputs.recommendations)
    interactions = scans_parsed_tables(inputs.interactions)
    if recommendations or interactions:
        read_inputs_again(query, interactions, recommendations)
    refuse_too_wide(query)
    # composed for this call alone: the generator need not copy it first
    return query.sql("duckdb", copy=False)


def metrics_only(
    connection: duckdb.DuckDBPyConnection,
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    per_user: bool,
) -> tuple[list[str], list[tuple[Any, ...]]] | None:
    """evaluate's values without its diagnostics (their counts and the checks among them), in
    one query, for inputs whose reader checked every row (trec_eval's report), as column names
    and rows (no DataFrame: the command line's report has no use for pandas, a third of a
    second to import); None when DuckDB runs out of memory (evaluate's passes over the users
    then take over)."""
    import duckdb

    query = _query_sql(
        tuple(requests), inputs, options, per_user, None, None, plan.plan_switches(), False
    )
    try:
        cursor = connection.execute(query)
        names = [str(column[0]) for column in cursor.description or ()]
        return names, cursor.fetchall()
    except duckdb.OutOfMemoryException:
        return None


def split_diagnostics(
    connection: duckdb.DuckDBPyConnection, query: str, inputs: Inputs, per_user: bool
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs evaluate's query once and separates its metric rows from its diagnostics rows."""
    import numpy as np
    import pandas as pd

    cursor = connection.execute(query)
    types = {str(column[0]): str(column[1]).upper() for column in cursor.description}
    groups = [group.name for group in inputs.groups]
    keys = [*groups, inputs.user.name] if per_user else groups
    # pandas reads HUGEINT as a float and cannot read UHUGEINT at all, DECIMAL as a float:
    # such keys come as text, read back exactly (the query again, in this rare case).
    as_text = [key for key in keys if _reads_as_text(types[key])]
    if as_text:
        query = _keys_as_text(query, as_text)
        cursor = connection.execute(query)
    frame = cursor.df()
    columns = list(types)
    counts = [*DIAGNOSTICS, *CHECKS]
    kinds = frame[KIND].to_numpy(dtype=object)

    def part(kind: str, wanted: list[str]) -> pd.DataFrame:
        rows = frame.take(np.flatnonzero(kinds == kind))
        data: dict[str, object] = {}
        for column in wanted:
            values = rows[column]
            if column in keys and (column in as_text or types[column] in WIDE_INTEGERS):
                data[column] = exact_keys(values, fraction=_decimal_scale(types[column]) > 0)
            elif column in counts:
                data[column] = _counts(values)
            # The other kind's NULLs made integer columns float in the combined frame.
            elif types[column] in INTEGER_TYPES:
                data[column] = _whole(values)
            else:
                data[column] = values.array
        return pd.DataFrame(data, index=pd.RangeIndex(len(rows)))

    metrics = part("metrics", columns[1 : columns.index(DIAGNOSTICS[0])])
    return metrics, part("diagnostics", [*groups, *counts])


def _counts(values: pd.Series) -> object:
    """A diagnostics count as int64, 0 where the engine gave NULL."""
    import numpy as np

    found = values.to_numpy(dtype="float64", na_value=np.nan)
    return np.where(np.isnan(found), 0.0, found).astype("int64")


def _whole(values: pd.Series) -> object:
    """An integer column that the other kind's NULLs read as floats: int64 again when none of
    its values is missing."""
    return values.array if values.isna().to_numpy().any() else values.to_numpy().astype("int64")


# Integer types whose values may not fit pandas' int64.
WIDE_INTEGERS = ("UBIGINT", "HUGEINT", "UHUGEINT")


def _reads_as_text(kind: str) -> bool:
    return kind in ("HUGEINT", "UHUGEINT") or kind.startswith("DECIMAL")


def _keys_as_text(query: str, columns: Sequence[str]) -> str:
    """The query with these columns cast to text (exact for any integer or decimal)."""
    replaced = [
        exp.alias_(exp.cast(exp.column(name, quoted=True), "VARCHAR"), name, quoted=True)
        for name in columns
    ]
    outer = exp.select(exp.Star(**{"replace": replaced})).from_(
        exp.paren(sqlglot_parse(query)).as_("keyed")
    )
    return outer.sql("duckdb")


def sqlglot_parse(query: str) -> exp.Expr:
    import sqlglot

    return sqlglot.parse_one(query, read="duckdb")


def _decimal_scale(kind: str) -> int:
    match = re.fullmatch(r"DECIMAL\((\d+),\s*(\d+)\)", kind)
    return int(match.group(2)) if match else 0


def exact_keys(column: pd.Series, fraction: bool = False) -> pd.Series:
    """Group or user keys exactly: int64 when every value is an integer within int64 and none is
    missing (as DuckDB's BIGINT), else Python ints in an object column, None where missing.
    ``fraction``: a DECIMAL with fraction digits, read as Decimals."""
    import pandas as pd

    values = [_exact(value, fraction) for value in column.tolist()]
    if values and all(_fits_int64(v) for v in values):
        return pd.Series(values, dtype="int64", name=column.name)
    return pd.Series(values, dtype=object, name=column.name)


def _fits_int64(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


def _exact(value: object, fraction: bool) -> object:
    import pandas as pd

    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, str):
        return decimal.Decimal(value) if fraction else int(value)
    if isinstance(value, decimal.Decimal):
        return value if fraction else int(value)
    return int(cast(SupportsInt, value))


def _settled_keys(frame: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Keys of passes put together: an object column of integers that all fit int64 (one
    pass's int64 next to another's Python ints) becomes int64, as in one query."""
    import pandas as pd

    for key in keys:
        if frame[key].dtype == object or frame[key].dtype.kind == "u":  # uint64 as inferred
            values = [_plain(v) for v in frame[key].tolist()]
            exact = bool(values) and all(_fits_int64(v) for v in values)
            frame[key] = pd.Series(values, dtype="int64" if exact else object, index=frame.index)
    return frame


def _plain(value: object) -> object:
    """numpy integers as Python ints (exact, and alike in an object column)."""
    item = getattr(value, "item", None)
    return item() if item is not None and not isinstance(value, decimal.Decimal) else value
