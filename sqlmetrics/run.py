"""Runs the composed SQL on DuckDB over files, DataFrames, Arrow tables or existing tables.

Files are queried in place (``read_parquet('…')`` as a string literal), never loaded into pandas.
"""

from __future__ import annotations

import difflib
import functools
import glob
import itertools
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp
from sqlglot.errors import ParseError

from sqlmetrics import compose as compose_module
from sqlmetrics.catalog import MetricRequest
from sqlmetrics.compose import (
    CHECKS,
    DIAGNOSTICS,
    EXPONENTIAL_GAIN_BOUND,
    KIND,
    Group,
    Inputs,
    Options,
    UserPass,
    bind_recommendations,
    column_names,
    compose,
    deepest_cutoff,
    group_key,
    lists_stage,
    partial_columns,
    reads_whole_group,
    splits_into_passes,
    uses_exponential_gain,
)
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.profiles import resolve

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")
CSV_SUFFIXES = (".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz", ".csv.zst")
INTEGER_TYPES = (
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "UHUGEINT",
)
NUMERIC_TYPES = (*INTEGER_TYPES, "FLOAT", "DOUBLE", "DECIMAL", "REAL")
_registered = itertools.count(1)


@dataclass(frozen=True)
class Source:
    """An input as a relation in the connection, with its column names and types."""

    role: str  # "recommendations" or "interactions", for messages
    relation: exp.Expr
    columns: dict[str, str]  # name -> DuckDB type


@functools.cache
def _database() -> duckdb.DuckDBPyConnection:
    import duckdb

    return duckdb.connect()


def connect(connection: duckdb.DuckDBPyConnection | None) -> duckdb.DuckDBPyConnection:
    """The caller's connection, or a cursor of one in-memory database per process: a new
    database costs ~10 ms, a cursor microseconds; its registrations and settings are its own."""
    return connection if connection is not None else _database().cursor()


def bind_source(
    value: object, role: str, connection: duckdb.DuckDBPyConnection, own_connection: bool
) -> Source:
    """A path, glob, directory, DataFrame, Arrow table or table name, as a relation."""
    relation: exp.Expr
    # On our own cursor (registrations and temporary views are its own) the inputs get the same
    # names on every call, so the composed SQL is reused from _query_sql's cache.
    name = f"sqlmetrics_{role}" if own_connection else f"sqlmetrics_{role}_{next(_registered)}"
    view: exp.Expr | None = None
    if isinstance(value, (str, os.PathLike)):
        relation = _path_or_table(os.fspath(value), role, connection, own_connection)
        if own_connection:
            view = exp.Create(
                this=exp.to_table(name),
                kind="VIEW",
                replace=True,
                expression=exp.select("*").from_(relation),
                properties=exp.Properties(expressions=[exp.TemporaryProperty()]),
            )
            relation = exp.to_table(name)
    else:
        try:
            connection.register(name, value)
        except Exception as error:  # duckdb raises several types for unsupported objects
            raise SqlmetricsError(
                f"{role}: cannot read a {type(value).__name__}; pass a pandas DataFrame, a pyarrow "
                "Table, a Parquet or CSV path, or a table name in `connection`"
            ) from error
        relation = exp.to_table(name)
    probe = exp.select("*").from_(relation.copy()).limit(0)
    try:
        if view is not None:
            connection.execute(view.sql("duckdb"))
        description = connection.execute(probe.sql("duckdb")).description
    except Exception as error:
        raise SqlmetricsError(f"{role}: cannot read {value!r}: {_first_line(error)}") from error
    columns = {str(name): str(kind).upper() for name, kind, *_ in description}
    return Source(role, relation, columns)


def _known_rows(
    value: object, relation: exp.Expr, connection: duckdb.DuckDBPyConnection
) -> int | None:
    """The number of rows where it costs nothing: a pandas or polars DataFrame's or an Arrow
    table's length, a local Parquet input's (from the file footers). None for CSV files, tables,
    relations and remote files, which it would mean reading."""
    if not isinstance(value, (str, os.PathLike)):
        if type(value).__module__.split(".")[0] not in ("pandas", "polars", "pyarrow"):
            return None
        try:
            return len(value)  # type: ignore[arg-type]
        except TypeError:  # a lazy frame or a stream
            return None
    path = os.fspath(value)
    if "://" in path or not (path.lower().endswith(PARQUET_SUFFIXES) or os.path.isdir(path)):
        return None
    import duckdb

    count = exp.select(exp.func("COUNT", exp.Star())).from_(relation.copy())
    try:
        row = connection.execute(count.sql("duckdb")).fetchone()
    except duckdb.Error:  # only a speed hint: the query itself reports what is wrong
        return None
    return int(row[0]) if row else None


def _first_line(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _path_or_table(
    text: str, role: str, connection: duckdb.DuckDBPyConnection, own_connection: bool
) -> exp.Expr:
    lowered = text.lower()
    # An existing path is a path, brackets and all: escaped, as DuckDB globs every path it reads.
    literal = glob.escape(text) if os.path.exists(text) else None
    is_glob = literal is None and any(char in text for char in "*?[")
    is_remote = "://" in text
    if os.path.isdir(text):
        pattern = os.path.join(literal or text, "**", "*.parquet")
        if not glob.glob(pattern, recursive=True):
            raise SqlmetricsError(f"{role}: folder {text!r} holds no .parquet files")
        return exp.func("read_parquet", exp.Literal.string(pattern))
    if lowered.endswith(PARQUET_SUFFIXES) or lowered.endswith(CSV_SUFFIXES) or is_glob:
        if not is_remote and not glob.glob(literal or text, recursive=True):
            what = "no file matches" if is_glob else "no such file"
            raise SqlmetricsError(f"{role}: {what} {text!r}")
        reader = "read_csv" if lowered.endswith(CSV_SUFFIXES) else "read_parquet"
        if not lowered.endswith(PARQUET_SUFFIXES + CSV_SUFFIXES):
            raise SqlmetricsError(
                f"{role}: {text!r} is neither Parquet ({', '.join(PARQUET_SUFFIXES)}) "
                f"nor CSV ({', '.join(CSV_SUFFIXES)})"
            )
        return exp.func(reader, exp.Literal.string(literal or text))
    if os.path.exists(text):
        raise SqlmetricsError(
            f"{role}: {text!r} is neither Parquet ({', '.join(PARQUET_SUFFIXES)}) "
            f"nor CSV ({', '.join(CSV_SUFFIXES)})"
        )
    # Not a file: a table or view in the connection, parsed strictly so junk is refused.
    try:
        table = exp.maybe_parse(text, into=exp.Table, dialect="duckdb")
    except ParseError:
        table = None
    if table is None or own_connection:
        raise SqlmetricsError(
            f"{role}: no such file {text!r}"
            + ("" if own_connection else " and it is not a table name")
            + "; pass a Parquet or CSV path, a DataFrame, or a table name with `connection=`"
        )
    return table


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


def _check_numeric(source: Source, column: exp.Identifier, role: str) -> None:
    kind = source.columns[column.name]
    if not kind.startswith(NUMERIC_TYPES):
        raise SqlmetricsError(
            f"{source.role}.{column.name} (the {role} column) is {kind}, not a number; "
            "cast it to a numeric type first"
        )


def _id_family(kind: str) -> str:
    return "number" if kind.startswith(NUMERIC_TYPES) else "text" if "CHAR" in kind else kind


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
        counterpart = _column(interactions, column.name, role)
        rec_kind = recommendations.columns[column.name]
        truth_kind = interactions.columns[counterpart.name]
        if _id_family(rec_kind) != _id_family(truth_kind):
            raise SqlmetricsError(
                f"{column.name} is {rec_kind} in recommendations but {truth_kind} in interactions; "
                "cast one so both have the same type"
            )
        if rec_kind in ("FLOAT", "DOUBLE", "REAL"):
            raise SqlmetricsError(
                f"recommendations.{column.name} (the {role} column) is {rec_kind}; ids must be "
                "integers or strings: cast it"
            )
    rank = score = None
    if names["rank"] is not None or (
        "score" not in given
        and names["score"] not in recommendations.columns
        and "rank" in recommendations.columns
    ):
        rank = _column(recommendations, str(names["rank"] or "rank"), "rank")
        _check_numeric(recommendations, rank, "rank")
    else:
        score = _column(recommendations, str(names["score"]), "score")
        _check_numeric(recommendations, score, "score")
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
    groups = []
    for name in group_by:
        if name not in recommendations.columns:
            raise SqlmetricsError(
                f"group_by column {name!r} is not in recommendations."
                f"{_suggest(name, list(recommendations.columns))} "
                f"Its columns: {', '.join(recommendations.columns)}"
            )
        if name in ("users",):
            raise SqlmetricsError(
                f"group_by column {name!r} clashes with the output column 'users'"
            )
        groups.append(
            Group(name, exp.to_identifier(name, quoted=True), name in interactions.columns)
        )
    for role, column in (("user", user), ("item", item)):
        if history is not None:
            counterpart = _column(history, column.name, role)
            if _id_family(history.columns[counterpart.name]) != _id_family(
                recommendations.columns[column.name]
            ):
                raise SqlmetricsError(
                    f"{column.name} is {recommendations.columns[column.name]} in recommendations "
                    f"but {history.columns[counterpart.name]} in history; cast one so both have "
                    "the same type"
                )
    category = None
    if items is not None:
        counterpart = _column(items, item.name, "item")
        if _id_family(items.columns[counterpart.name]) != _id_family(
            recommendations.columns[item.name]
        ):
            raise SqlmetricsError(
                f"{item.name} is {recommendations.columns[item.name]} in recommendations but "
                f"{items.columns[counterpart.name]} in items; cast one so both have the same type"
            )
        if names["category"] is not None and (
            "category" in given or names["category"] in items.columns
        ):
            category = _column(items, str(names["category"]), "category")
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
    )


def _run(
    connection: duckdb.DuckDBPyConnection,
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    per_user: bool,
    floor: float | None = None,
    rows: int | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """One query; if DuckDB runs out of memory (top-k states do not spill), passes of users.
    Returns the metrics, the diagnostics and how many passes it took. ``floor``:
    _score_floor's; ``rows``: the recommendations' _known_rows."""
    import duckdb

    query = _evaluate_sql(requests, inputs, options, per_user, None, floor)
    # Under a small limit the passes are planned first: a query that runs out of memory
    # fails late (at 1e8 rows and 1 GB, after 26 s). A large input on a plan that sorts every
    # row gets passes of WINDOW_PASS_BYTES whatever the limit: smaller sorts are faster too.
    limit = _memory_limit(connection)
    budget = 0.5 * limit
    if rows is not None and rows >= WINDOW_PASSES_FROM_ROWS and _sorts_every_row(requests, options):
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
            return (*_split_diagnostics(connection, query, inputs, per_user), 1)
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
            user_passes = _user_passes(passes, quantiles)
            parts = _run_in_passes(
                connection, requests, inputs, options, per_user, user_passes, floor
            )
            return (*parts, len(user_passes))
        except duckdb.OutOfMemoryException:
            if passes >= MAX_PASSES:
                raise SqlmetricsError(
                    f"DuckDB ran out of memory even in {passes} passes over the users; raise "
                    "its memory_limit (connection=duckdb.connect(config={'memory_limit': ...}))"
                ) from None
            passes = min(passes * 4, MAX_PASSES)


MAX_PASSES = 256
PLAN_PASSES_BELOW = 4 * 2**30  # a smaller memory limit: passes planned before the first query
# bench/ at 1e8 rows, k = 1..100 in one call (sorted_lists.sql), peak RSS of the process: one
# pass 15.0 s and 7.4 GB, passes of ~1.5 GB (4) 15.0 s and 2.2 GB (on the window plan it was
# 86 s and 19 GB against 28 s and 3.2 GB). gauc alone: 24 s and 10.8 GB in one pass, 20 s and
# 1.9 GB in passes.
WINDOW_PASS_BYTES = 1.5 * 2**30
WINDOW_PASSES_FROM_ROWS = 20_000_000


def _sorts_every_row(requests: Sequence[MetricRequest], options: Options) -> bool:
    """Whether the plan sorts every row (no top-k aggregate): ranking metrics beyond
    TOP_K_MAX_CUTOFF (sorted_lists.sql) or without a cutoff (the window), and the metrics over
    scores (gauc's own sums do not sort, but its whole-list diagnostics do, and group every
    row)."""
    reads_lists = any(request.metric.reads in ("judged", "scored") for request in requests)
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


def _memory_limit(connection: duckdb.DuckDBPyConnection) -> float:
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
FLOOR_SAMPLED_ROWS = 250_000
FLOOR_MIN_LISTS = 100
FLOOR_QUANTILE = 0.01


def _score_floor(
    connection: duckdb.DuckDBPyConnection,
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    rows: int | None,
) -> float | None:
    """A score floor for top_lists.sql, or None: the 1% quantile, over the lists in the input's
    first 250k rows, of the lowest score a list needs to pass to stay exact (its cutoff + 3rd
    best, or its lowest when shorter). On bench/'s 1e8 rows the top-k aggregate then takes 23%
    of the rows and ~1% of the users are ranked again (this query: 0.03 s).

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


def _user_passes(passes: int, quantiles: list[float] | None) -> list[UserPass]:
    """The passes: by ranges of user ids between quantiles when known, else by hash."""
    if quantiles is None:
        return [UserPass(p, passes) for p in range(passes)]
    cuts = sorted({quantiles[round(p * QUANTILES / passes) - 1] for p in range(1, passes)})
    bounds = list(zip([None, *cuts], [*cuts, None], strict=True))
    return [UserPass(p, len(bounds), bound) for p, bound in enumerate(bounds)]


def _run_in_passes(
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
        _split_diagnostics(
            connection,
            _evaluate_sql(requests, inputs, options, per_user, user_pass, floor),
            inputs,
            per_user,
        )
        for user_pass in passes
    ]
    groups = [group.name for group in inputs.groups]
    counted = pd.concat([part[1] for part in parts], ignore_index=True)
    counts = [c for c in counted.columns if c not in groups]
    if groups:
        counted = counted.groupby(groups, sort=True, as_index=False)[counts].sum()
    else:
        counted = counted[counts].sum().to_frame().T.astype("int64")
    metrics = pd.concat([part[0] for part in parts], ignore_index=True)
    if per_user:
        order = [*groups, inputs.user.name]
        return metrics.sort_values(order, kind="stable").reset_index(drop=True), counted
    rows = []
    for key, group in metrics.groupby(groups, sort=True) if groups else [((), metrics)]:
        row: dict[str, object] = dict(
            zip(groups, key if isinstance(key, tuple) else (key,), strict=True)
        )
        users = int(group["users"].sum())
        row["users"] = users
        for request, (label, numerator, denominator) in zip(
            requests, partial_columns(requests), strict=True
        ):
            total = math.fsum(group[numerator].dropna())  # exact, whatever the pass order
            divisor = math.fsum(group[denominator].dropna()) if denominator else users
            value = total / divisor if divisor else math.nan
            row[label] = math.sqrt(value) if request.metric.square_root else value
        rows.append(row)
    return pd.DataFrame(rows, columns=[*groups, "users", *(r.label for r in requests)]), counted


def _evaluate_sql(
    requests: Sequence[MetricRequest],
    inputs: Inputs,
    options: Options,
    per_user: bool,
    user_pass: UserPass | None,
    floor: float | None,
) -> str:
    plans = compose_module.TOP_K_DIALECTS
    return _query_sql(tuple(requests), inputs, options, per_user, user_pass, floor, plans)


@functools.lru_cache(maxsize=64)
def _query_sql(
    requests: tuple[MetricRequest, ...],
    inputs: Inputs,
    options: Options,
    per_user: bool,
    user_pass: UserPass | None,
    floor: float | None,
    plans: frozenset[str],
) -> str:
    """evaluate's query as DuckDB SQL. Composing and rendering cost ~30 ms, more than the query
    on small inputs; the inputs keep their names from call to call (bind_source), so a repeated
    request is served from here. ``plans`` (compose.TOP_K_DIALECTS) is part of the key because
    tests switch plans by changing it."""
    del plans
    query = compose(
        requests,
        inputs,
        options,
        per_user,
        diagnostics=True,
        user_pass=user_pass,
        score_floor=floor,
        one_sort=True,
    )
    return query.sql("duckdb")


def _split_diagnostics(
    connection: duckdb.DuckDBPyConnection, query: str, inputs: Inputs, per_user: bool
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs evaluate's query once and separates its metric rows from its diagnostics rows."""
    cursor = connection.execute(query)
    types = {str(column[0]): str(column[1]).upper() for column in cursor.description}
    frame = cursor.df()
    columns = list(types)
    groups = [group.name for group in inputs.groups]
    counts = [*DIAGNOSTICS, *CHECKS]

    def part(kind: str, wanted: list[str]) -> pd.DataFrame:
        rows = frame.loc[frame[KIND] == kind, wanted].reset_index(drop=True)
        for column in wanted:
            # The other kind's NULLs made integer columns float in the combined frame.
            if types[column] in INTEGER_TYPES and rows[column].notna().all():
                rows[column] = rows[column].astype("int64")
        return rows

    metrics = part("metrics", columns[1 : columns.index(DIAGNOSTICS[0])])
    counted = part("diagnostics", [*groups, *counts])
    counted[counts] = counted[counts].fillna(0).astype("int64")
    return metrics, counted


def _example(
    connection: duckdb.DuckDBPyConnection,
    source: exp.Expr,
    columns: Sequence[exp.Identifier | None],
    condition: exp.Expr,
) -> str:
    """One offending row, for the message (the error path only)."""
    shown = [exp.column(column) for column in columns if column is not None]
    row = connection.execute(
        exp.select(*shown).from_(source.copy()).where(condition).limit(1).sql("duckdb")
    ).fetchone()
    if row is None:
        return ""
    names = [column.name for column in columns if column is not None]
    return ", e.g. " + ", ".join(
        f"{name}={value!r}" for name, value in zip(names, row, strict=True)
    )


def _is_nan(column: exp.Expr) -> exp.Expr:
    """NaN test for a WHERE clause. DuckDB 2.0 answers ``WHERE isnan(x)`` over Parquet from
    column statistics that do not record NaN, and finds nothing; comparing text does not."""
    text = exp.cast(column, "VARCHAR")
    return exp.In(this=text, expressions=[exp.Literal.string("nan"), exp.Literal.string("-nan")])


def refuse_bad_rows(
    connection: duckdb.DuckDBPyConnection,
    inputs: Inputs,
    counted: pd.DataFrame,
    requests: Sequence[MetricRequest],
) -> None:
    """Raises on the first kind of bad row the query counted, saying where and what to do."""
    total = {name: int(counted[name].sum()) for name in (*CHECKS, *DIAGNOSTICS)}
    user, item = exp.column(inputs.user), exp.column(inputs.item)
    order = inputs.rank if inputs.rank is not None else inputs.score
    ordering = "rank" if inputs.rank is not None else "score"
    recs, truth = inputs.recommendations, inputs.interactions
    rec_columns = (inputs.user, inputs.item, order)
    truth_columns = (inputs.user, inputs.item, inputs.relevance)
    if total["bad_recommendation_user_ids"]:
        raise SqlmetricsError(
            f"recommendations: {total['bad_recommendation_user_ids']} row(s) have a NULL "
            f"{inputs.user.name}{_example(connection, recs, rec_columns, user.is_(exp.Null()))}; "
            "drop them or fill in the user"
        )
    if total["bad_recommendation_item_ids"]:
        raise SqlmetricsError(
            f"recommendations: {total['bad_recommendation_item_ids']} row(s) have a NULL "
            f"{inputs.item.name}"
            f"{_example(connection, recs, rec_columns, item.is_(exp.Null()))}; drop them"
        )
    if total["bad_scores"] and order is not None:
        nan = _is_nan(exp.column(order))
        raise SqlmetricsError(
            f"recommendations.{order.name} (the {ordering} column) is NaN in "
            f"{total['bad_scores']} row(s){_example(connection, recs, rec_columns, nan)}; NaN "
            "has no place in an order: use NULL (ranked last) or a number"
        )
    if total["bad_rank_lists"] and inputs.rank is not None:
        raise SqlmetricsError(
            f"recommendations.{inputs.rank.name} (the rank column): the ranks of "
            f"{total['bad_rank_lists']} user(s) are not 1, 2, 3, ... within the positions "
            "evaluated (a gap or a repeat); renumber them, or leave the rank column out to rank "
            "by score"
        )
    if total["bad_interaction_user_ids"]:
        raise SqlmetricsError(
            f"interactions: {total['bad_interaction_user_ids']} row(s) have a NULL "
            f"{inputs.user.name}{_example(connection, truth, truth_columns, user.is_(exp.Null()))}"
            "; drop them or fill in the user"
        )
    if total["bad_interaction_item_ids"]:
        raise SqlmetricsError(
            f"interactions: {total['bad_interaction_item_ids']} row(s) have a NULL "
            f"{inputs.item.name}{_example(connection, truth, truth_columns, item.is_(exp.Null()))}"
            "; drop them"
        )
    if total["bad_relevance"] and inputs.relevance is not None:
        relevance = exp.column(inputs.relevance)
        bad = exp.or_(relevance.is_(exp.Null()), relevance < 0, exp.func("ISNAN", relevance.copy()))
        example = _example(connection, truth, truth_columns, bad)
        raise SqlmetricsError(
            f"interactions.{inputs.relevance.name} (the relevance column) is NULL, negative or "
            f"NaN in {total['bad_relevance']} row(s){example}; relevance must be a number >= 0 "
            "(0 = not relevant)"
        )
    exponential = [r.label for r in requests if uses_exponential_gain(r)]
    if total["relevance_over_1000"] and exponential and inputs.relevance is not None:
        relevance = exp.column(inputs.relevance)
        example = _example(connection, truth, truth_columns, relevance > EXPONENTIAL_GAIN_BOUND)
        raise SqlmetricsError(
            f"interactions.{inputs.relevance.name} (the relevance column) is above "
            f"{EXPONENTIAL_GAIN_BOUND} in {total['relevance_over_1000']} row(s){example}; "
            f"{', '.join(exponential)} use the gain 2^relevance - 1, which a double cannot hold "
            "that far: rescale the grades or use the linear-gain metrics"
        )
    logloss = [r.label for r in requests if r.metric.name == "logloss"]
    if total["scores_outside_0_1"] and logloss and inputs.score is not None:
        score = exp.column(inputs.score)
        example = _example(connection, recs, rec_columns, exp.or_(score < 0, score > 1))
        raise SqlmetricsError(
            f"recommendations.{inputs.score.name} (the score column) is outside [0, 1] in "
            f"{total['scores_outside_0_1']} row(s){example}; {', '.join(logloss)} reads scores "
            "as probabilities: calibrate them (e.g. a sigmoid) or leave logloss out"
        )
    if not total["users_with_recommendations"]:
        raise SqlmetricsError("recommendations: no rows to evaluate; check the file or filter")
    if not total["users_in_interactions"]:
        raise SqlmetricsError("interactions: no rows to evaluate; check the file or filter")


def _refuse_nan_ratings(
    connection: duckdb.DuckDBPyConnection, inputs: Inputs, rating: exp.Identifier
) -> None:
    """A NaN rating would make every rating metric NaN: refused (one more scan of the
    interactions, only when a rating metric is requested). NULL ratings are left out."""
    nan = _is_nan(exp.column(rating))
    query = exp.select(exp.func("COUNT", exp.Star())).from_(inputs.interactions.copy()).where(nan)
    row = connection.execute(query.sql("duckdb")).fetchone()
    if row and row[0]:
        columns = (inputs.user, inputs.item, rating)
        raise SqlmetricsError(
            f"interactions.{rating.name} (the rating column) is NaN in {row[0]} row(s)"
            f"{_example(connection, inputs.interactions, columns, nan.copy())}; use NULL for a "
            "missing rating (such rows are left out) or a number"
        )


def _duplicate_example(
    connection: duckdb.DuckDBPyConnection, inputs: Inputs
) -> tuple[Any, ...] | None:
    user, item = exp.column(inputs.user), exp.column(inputs.item)
    query = (
        exp.select(user, item, exp.func("COUNT", exp.Star()))
        .from_(inputs.recommendations.copy())
        .group_by(user, item)
        .having(exp.func("COUNT", exp.Star()) > 1)
        .limit(1)
    )
    row = connection.execute(query.sql("duckdb")).fetchone()
    return tuple(row) if row is not None else None


def evaluate(
    recommendations: object,
    interactions: object,
    metrics: Sequence[str] | str,
    *,
    group_by: Sequence[str] | str = (),
    per_user: bool = False,
    columns: Mapping[str, str | None] | None = None,
    ties: str = "id",
    threshold: float = 0.0,
    population: str = "all",
    duplicates: str = "error",
    connection: duckdb.DuckDBPyConnection | None = None,
    progress: bool = False,
    items: object = None,
    history: object = None,
    profile: str | None = None,
) -> pd.DataFrame:
    """Evaluates recommendations against interactions on DuckDB.

    Args:
        recommendations: Parquet/CSV path, glob or folder, DataFrame, Arrow table, or a table
            name in ``connection``. Columns user_id, item_id and score (or rank).
        interactions: the ground truth, in any of the same forms. Columns user_id, item_id and
            optionally relevance (1 when absent).
        metrics: names with optional cutoffs, like ``["ndcg@10", "map@10", "recall@20"]``.
        group_by: columns to evaluate separately (see METRICS.md for the population rule).
        per_user: one row per (group, user) instead of one per group.
        columns: your column names, e.g. ``{"user": "customer_id", "score": "pred"}``.
        ties: "id" (score desc, then item id desc), "id_text" (then the item id's text desc,
            byte order, as trec_eval), "optimistic", "pessimistic" or "average".
        threshold: an interaction is relevant when its relevance is above this.
        population: "all" users with a relevant interaction, or "common" (also recommended).
        duplicates: "error" on repeated (user, item) recommendations, or "first" to keep the
            best-placed one.
        connection: a DuckDB connection holding tables named in the inputs.
        progress: show DuckDB's progress bar.
        items: optional, in any of the same forms: one row per item (item_id, and category
            for ild). When given it is the catalogue of coverage and gini.
        history: optional, in any of the same forms: what each user consumed before (user_id,
            item_id), for serendipity.
        profile: compute each metric as one library defines it ("trec_eval", "ranx",
            "sklearn", "spark", ...; see docs/profiles.md): the profile picks the metric
            variant and sets ties, population and how relevance is read.

    Returns:
        A DataFrame: the group columns, ``users``, and one column per metric named as requested.
        ``users`` counts the population; under a profile that averages some metrics over fewer
        users (MS Recommenders, LensKit: docs/profiles.md), it counts the widest of them.
        ``result.attrs["diagnostics"]`` holds the counts of METRICS.md "Results" per group;
        ``result.attrs["passes"]`` is 1, or how many passes over the users DuckDB's memory
        limit required (the numbers are the same either way).
    """
    resolved = resolve(profile, metrics, ties=ties, population=population, columns=columns)
    requests, columns = resolved.requests, resolved.columns
    options = Options(
        ties=resolved.ties,
        threshold=threshold,
        population=resolved.population,
        duplicates=duplicates,
    )
    group_by = [group_by] if isinstance(group_by, str) else list(group_by)
    own_connection = connection is None
    con = connect(connection)
    try:
        con.execute(
            "SET enable_progress_bar = true" if progress else "SET enable_progress_bar = false"
        )
        recs = bind_source(recommendations, "recommendations", con, own_connection)
        truth = bind_source(interactions, "interactions", con, own_connection)
        catalogue = None if items is None else bind_source(items, "items", con, own_connection)
        past = None if history is None else bind_source(history, "history", con, own_connection)
        rating = any(request.metric.reads == "rated" for request in requests)
        inputs = resolve_inputs(recs, truth, columns, group_by, catalogue, past, rating=rating)
        _check_labels(requests, group_by, inputs)
        _check_items(con, inputs, requests)
        # Counted (a query of its own on Parquet) only for what reads it: the score floor of
        # the top-k aggregate and the passes of a plan that sorts every row.
        top_k = lists_stage(requests, options, "duckdb") == "top_lists"
        reads_rows = top_k or _sorts_every_row(requests, options)
        rows = _known_rows(recommendations, recs.relation, con) if reads_rows else None
        floor = _score_floor(con, requests, inputs, options, rows)
        result, diagnostics, passes = _run(
            con, requests, inputs, options, per_user, floor=floor, rows=rows
        )
        refuse_bad_rows(con, inputs, diagnostics, requests)
        if inputs.rating is not None:
            _refuse_nan_ratings(con, inputs, inputs.rating)
        diagnostics = diagnostics.drop(columns=list(CHECKS))
        duplicated = int(diagnostics["duplicate_recommendations"].sum())
        if duplicated and options.duplicates == "error":
            example = _duplicate_example(con, inputs)
            raise SqlmetricsError(
                f"recommendations repeat a ({inputs.user.name}, {inputs.item.name}) pair in "
                f"{duplicated} row(s) of the positions evaluated, e.g. "
                f"{example[:2] if example else '?'} appears "
                f"{example[2] if example else 'several'} times; deduplicate them, or pass "
                "duplicates='first' (CLI: --duplicates first) to keep the best-placed row"
            )
    finally:
        if own_connection:
            con.close()
    result.attrs["diagnostics"] = diagnostics
    result.attrs["passes"] = passes  # > 1 when the memory limit made it split the users
    return result


def _check_items(
    connection: duckdb.DuckDBPyConnection, inputs: Inputs, requests: Sequence[MetricRequest]
) -> None:
    """A metric reading item categories needs one category for each recommended item: a
    repeated item would count its pairs twice, a missing one would drop silently."""
    if inputs.items is None or inputs.category is None:
        return
    if not any(r.metric.needs_items for r in requests):
        return
    item = exp.column(inputs.item)
    repeated = (
        exp.select(item, exp.func("COUNT", exp.Star()))
        .from_(inputs.items.copy())
        .group_by(item)
        .having(exp.func("COUNT", exp.Star()) > 1)
        .limit(1)
    )
    row = connection.execute(repeated.sql("duckdb")).fetchone()
    if row is not None:
        raise SqlmetricsError(
            f"items: item {row[0]!r} has {row[1]} rows; give each item one row (one "
            f"{inputs.category.name})"
        )
    missing = (
        exp.select(exp.column(inputs.item, "recs"))
        .from_(exp.alias_(inputs.recommendations.copy(), "recs"))
        .join(
            exp.alias_(inputs.items.copy(), "items"),
            on=exp.column(inputs.item, "recs").eq(exp.column(inputs.item, "items")),
            join_type="left",
        )
        .where(exp.column(inputs.category, "items").is_(exp.Null()))
        .limit(1)
    )
    row = connection.execute(missing.sql("duckdb")).fetchone()
    labels = ", ".join(r.label for r in requests if r.metric.needs_items)
    if row is not None:
        raise SqlmetricsError(
            f"items: recommended item {row[0]!r} has no {inputs.category.name} (no row in the "
            f"items table, or NULL); {labels} need the category of every recommended item"
        )
    if inputs.history is None or not any(r.metric.needs_history for r in requests):
        return
    unknown = (
        exp.select(exp.column(inputs.item, "past"))
        .from_(exp.alias_(inputs.history.copy(), "past"))
        .join(
            exp.alias_(inputs.items.copy(), "items"),
            on=exp.column(inputs.item, "past").eq(exp.column(inputs.item, "items")),
            join_type="left",
        )
        .where(exp.column(inputs.category, "items").is_(exp.Null()))
        .limit(1)
    )
    row = connection.execute(unknown.sql("duckdb")).fetchone()
    if row is not None:
        raise SqlmetricsError(
            f"items: history item {row[0]!r} has no {inputs.category.name} (no row in the items "
            f"table, or NULL); {labels} need the category of every item of the history"
        )


def _check_labels(
    requests: Sequence[MetricRequest], group_by: Sequence[str], inputs: Inputs
) -> None:
    taken = {*group_by, "users", inputs.user.name}
    for request in requests:
        if request.label in taken:
            raise SqlmetricsError(f"metric label {request.label!r} clashes with an output column")


def read_diagnostics(frame: pd.DataFrame) -> pd.DataFrame:
    """The diagnostics that ``evaluate`` attached to its result."""
    value = frame.attrs.get("diagnostics")
    if value is None:
        raise SqlmetricsError(
            "this DataFrame carries no diagnostics; it did not come from evaluate"
        )
    return value  # type: ignore[no-any-return]


__all__ = ["evaluate", "read_diagnostics"]
