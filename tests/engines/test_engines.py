"""Every golden fixture on every engine: the SQL of ``to_sql(dialect=...)`` run for real.

For each target (a dialect and the engine that runs it) and each fixture:

- ``golden``: the fixture's metrics, rendered for the dialect, give its hand-derived values;
- ``every``: every metric at the fixture's cutoffs (and without one) gives DuckDB's values
  for the same query; ``per_user`` does the same with one row per user;
- ``checks``: the input checks and diagnostics (``to_sql(checks=True)``) give DuckDB's counts,
  on the extra cases (NULL scores, duplicates, ranks, arms) and one full of bad rows;
- ``curves``: ten metrics at k = 1..8 (the curve plan: windows here, DuckDB's lists in the
  reference) give DuckDB's values, on the extra cases and fixtures with groups and grades.

The dialects without a local engine (and, as a second check, every other one) are verified by
round trip: the SQL re-parses in its dialect to itself, translates back to DuckDB and gives the
same values there. Known gaps are strict xfails with their reason (see KNOWN_GAPS).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import pytest
import sqlglot
from sqlglot import exp

import sqlmetrics
from sqlmetrics.render.dialects import DIALECTS
from tests.engines.cases import (
    BAD_ROWS,
    REPEATS,
    Case,
    as_expect,
    bad_rows_case,
    compare,
    extra_cases,
    load_cases,
    repeats_case,
)
from tests.engines.conftest import SHARED_ENGINES, EnginePool
from tests.engines.engines import DuckDBEngine, Engine


@dataclass(frozen=True)
class Target:
    """A dialect and the engine that runs its SQL (``roundtrip``: translated back to DuckDB)."""

    id: str
    dialect: str
    engine: str


EXECUTED = [
    Target("duckdb", "duckdb", "duckdb"),
    Target("sqlite", "sqlite", "sqlite"),
    Target("postgres", "postgres", "postgres"),
    Target("redshift", "redshift", "postgres"),
    Target("datafusion", "postgres", "datafusion"),
    Target("clickhouse", "clickhouse", "chdb"),
    Target("mysql", "mysql", "mariadb"),
    Target("spark", "spark", "spark"),
    Target("databricks", "databricks", "spark"),
    Target("snowflake", "snowflake", "fakesnow"),
]
# No local engine for these; Snowflake's fakesnow is DuckDB underneath and not numerically
# faithful (see the README), so its SQL goes this way too.
NOT_EXECUTED = ("bigquery", "trino", "athena", "presto", "tsql", "oracle", "snowflake")
ROUND_TRIP = [Target(f"{d}-roundtrip", d, "roundtrip") for d in NOT_EXECUTED]
TARGETS = EXECUTED + ROUND_TRIP
CHECKS = ("golden", "every", "per_user", "checks", "curves")
# The curve plan (plan.py: curves.MIN_CUTOFFS or more cutoffs) on the cases where it counts:
# NULL scores, each tie policy, duplicates kept first, a threshold and a population, a rank
# column, NULL groups, graded relevance.
CURVE_LABELS = [
    f"{name}@1:8"
    for name in ("ndcg", "map", "mrr", "precision", "recall", "hit_rate", "f1", "dcg", "cg", "hits")
]
# ties="average" has a closed form for these only (compose/refusals.py)
CURVE_LABELS_AVERAGED = [
    f"{name}@1:8" for name in ("ndcg", "precision", "recall", "f1", "dcg", "cg", "hits")
]
CURVE_CASES = (
    "extra_null_scores",
    "extra_null_scores_optimistic",
    "extra_null_scores_pessimistic",
    "extra_null_scores_average",
    "extra_null_scores_first",
    "extra_threshold_common",
    "extra_rank_column",
    "group_by_null_segment",
    "graded_relevance",
)
# The developer's sample of the round trips of every metric and of the curves (CI runs them all:
# SQLMETRICS_FULL_MATRIX=1, tests/conftest.py): T-SQL, the dialect rewritten most (LOG, FLOAT,
# NULL order, no QUALIFY). The golden values and the checks run in every dialect on every case
# either way.
SAMPLED_ROUND_TRIPS = ("tsql",)
# The developer's sample of the cases for every metric (``every``, ``per_user``) on SQLite and
# in T-SQL's round trip: one case for each option set the SQL depends on (each tie policy,
# population, threshold, duplicates kept first, a rank column, literal ranks, group columns
# with NULLs and arms, items and history, string ids, no relevance column, ratings, scores,
# the curve plan, a profile). The other cases give those same queries other data; CI runs them
# all.
SAMPLED_CASES = frozenset(
    {
        "beyond_lists_by_model",
        "group_by_null_segment",
        "group_by_day",
        "extra_string_arms",
        "string_ids",
        "ties_id_text_strings",
        "extra_rank_column",
        "extra_null_scores_first",
        "extra_null_scores_optimistic",
        "extra_null_scores_pessimistic",
        "extra_null_scores_average",
        "no_relevance_column",
        "duplicate_recommendations_first",
        "ranks_literal",
        "extra_threshold_common",
        "population_judged",
        "population_all_judged",
        "recall_scored",
        "auc_group_by_model",
        "rating_metrics",
        "trec_bpref",
        "curve_k_1_to_16",
        "extra_profile_recommenders",
    }
)

CASES = load_cases() + extra_cases() + [bad_rows_case(), repeats_case()]

# (target id, check, case name or "*") -> (kind, reason). kind is ibis's: notimpl (we have not
# done it yet), notyet (the engine cannot yet), never (the engine never will).
KNOWN_GAPS: dict[tuple[str, str, str], tuple[str, str]] = {
    ("datafusion", check, case): (
        "never",
        'ties="id_text" sorts PostgreSQL-style with COLLATE "C", which DataFusion cannot parse',
    )
    for check in ("golden", "every", "per_user")
    for case in (
        "ties_id_text",
        "ties_id_text_strings",
        "trec_set_measures",
        "trec_measures",
        "trec_levels",
        "trec_set_map_utility",
        "trec_bin_g",
        "trec_ideal_order",
        "trec_infap",
        "iprec_at_recall_rounding",
    )
}


def gap(target: Target, check: str, case: Case) -> tuple[str, str] | None:
    for key in ((target.id, check, case.name), (target.id, check, "*"), (target.id, "*", "*")):
        if key in KNOWN_GAPS:
            return KNOWN_GAPS[key]
    return None


def parameters() -> list[Any]:
    found = []
    # The target varies fastest: one request asked of every dialect in turn is composed once
    # for all those that share the portable plan (api._shared_composition).
    for check in CHECKS:
        for case in CASES:
            if check == "golden" and not case.expect:
                continue
            # The checks run on the cases made for them; bad rows give no metrics to compare.
            if check == "checks" and not case.name.startswith("extra_"):
                continue
            if case.name in (BAD_ROWS, REPEATS) and check != "checks":
                continue
            if check == "curves" and case.name not in CURVE_CASES:
                continue
            for target in TARGETS:
                # Databricks SQL is Spark's (the snapshots show where they differ): its golden
                # values on Spark suffice, and keep Spark's share of the suite's time down.
                if target.id == "databricks" and check != "golden":
                    continue
                # DuckDB's every, per_user and checks would compare reference() with itself:
                # the same SQL text (render's) on DuckDB over the same tables. reference() runs
                # it for every other target; DuckDB's golden values are checked here.
                if target.id == "duckdb" and check != "golden":
                    continue
                if check == "per_user" and target.engine == "roundtrip":
                    continue
                # Spark's every-metric queries cost seconds of its JVM each, and its group has
                # one worker (CI's critical path): to_sql's on the sampled cases, one per option
                # set. test_connections.py's spark-tables evaluates every case through the
                # session, per_user off and on: the same metric SQL, the checks in its pass,
                # except where evaluate refuses every metric at once (it then compares the
                # message only): those keep their cells here.
                if (
                    target.engine == "spark"
                    and check in ("every", "per_user")
                    and case.name not in SAMPLED_CASES
                    and not scores_outside_probabilities(case)
                ):
                    continue
                marks = [getattr(pytest.mark, target.engine)]
                if sampled_out(target, check, case):
                    marks.append(pytest.mark.full_matrix)
                if target.engine not in SHARED_ENGINES:
                    # Under xdist (--dist loadgroup) a case's tests on the in-process engines
                    # run on one worker: its tables are loaded once, each request is composed
                    # once for all its dialects (api._shared_composition), DuckDB's reference
                    # rows computed once, and a round trip whose DuckDB text another dialect
                    # already ran reads its rows (rows_of). The server engines, Spark and
                    # fakesnow have a group of their own (conftest.py).
                    marks.append(pytest.mark.xdist_group(f"engines-{case.name}"))
                known = gap(target, check, case)
                if known:
                    kind, reason = known
                    marks.append(
                        pytest.mark.xfail(reason=f"{kind}: {reason}", strict=True, raises=Exception)
                    )
                name = f"{target.id}-{check}-{case.name}"
                found.append(pytest.param(target, check, case, marks=marks, id=name))
    return found


def scores_outside_probabilities(case: Case) -> bool:
    """Whether evaluate refuses the case's every-metric request: logloss, ne and calibration
    read scores as probabilities (their headers' ``probabilities: yes``), and a score outside
    [0, 1] is refused."""
    if "score" not in case.recommendations.names:
        return False
    at = case.recommendations.names.index("score")
    scores = [row[at] for row in case.recommendations.rows if row[at] is not None]
    return any(not 0 <= score <= 1 for score in scores if score == score)  # NaN aside


def sampled_out(target: Target, check: str, case: Case) -> bool:
    """Whether a developer's run leaves this cell to CI (full_matrix, tests/conftest.py)."""
    if check not in ("every", "per_user", "curves"):
        return False
    if target.engine == "roundtrip" and target.dialect not in SAMPLED_ROUND_TRIPS:
        return True
    sampled = target.id == "sqlite" or target.dialect in SAMPLED_ROUND_TRIPS
    return check != "curves" and sampled and case.name not in SAMPLED_CASES


def table_names(case: Case, dialect: str) -> tuple[str, str]:
    return f"r_{case.name}", f"t_{case.name}"


def loaded(engine: Engine, case: Case, dialect: str) -> tuple[str, str]:
    """The case's two tables in the engine (created once per session)."""
    done: set[str] = engine.__dict__.setdefault("loaded_cases", set())
    recommendations, interactions = table_names(case, dialect)
    if case.name not in done:
        engine.load(recommendations, case.recommendations)
        engine.load(interactions, case.interactions)
        if case.items is not None:
            engine.load(f"i_{case.name}", case.items)
        if case.history is not None:
            engine.load(f"h_{case.name}", case.history)
        done.add(case.name)
    return recommendations, interactions


def labels(case: Case, check: str) -> list[str]:
    if check == "curves":
        averaged = case.options.get("ties") == "average"
        return CURVE_LABELS_AVERAGED if averaged else CURVE_LABELS
    return case.metrics if check == "golden" else case.all_metrics


_rendered: dict[tuple[str, str, str], str] = {}


def render(case: Case, check: str, dialect: str) -> str:
    key = (case.name, check, dialect)
    if key not in _rendered:
        _rendered[key] = _render(case, check, dialect)
    return _rendered[key]


def _render(case: Case, check: str, dialect: str) -> str:
    recommendations, interactions = table_names(case, dialect)
    kwargs = case.kwargs()
    depth = kwargs.pop("checks", True)  # the audit, unless the case asks evaluate's checks
    return sqlmetrics.to_sql(
        labels(case, check),
        recommendations,
        interactions,
        dialect=dialect,
        per_user=check == "per_user",
        checks=depth if check == "checks" else False,
        items=f"i_{case.name}" if case.items is not None else None,
        history=f"h_{case.name}" if case.history is not None else None,
        **kwargs,
    )


def to_duckdb(sql: str, dialect: str) -> str:
    """The SQL of ``dialect`` read back and written for DuckDB (the round-trip check)."""
    tree = sqlglot.parse_one(sql, read=dialect)
    assert tree.sql(dialect=dialect, pretty=True) == sql, "does not re-parse to itself"
    if dialect == "tsql":
        # sqlglot reads T-SQL's FLOAT (a 53-bit double there) as DuckDB's 32-bit FLOAT.
        for data_type in tree.find_all(exp.DataType):
            if data_type.this == exp.DataType.Type.FLOAT:
                data_type.replace(exp.DataType.build("double"))
        # ties="id_text": the binary collation (code point order) is DuckDB's own string order.
        for collate in tree.find_all(exp.Collate):
            if collate.expression.name.upper() == "LATIN1_GENERAL_BIN2":
                collate.replace(collate.this)
    if dialect == "oracle":
        # The input checks' NaN, a BINARY_DOUBLE in Oracle, is DuckDB's DOUBLE NaN.
        for function in tree.find_all(exp.Anonymous):
            if function.name.upper() == "TO_BINARY_DOUBLE":
                function.replace(exp.cast(function.expressions[0], "double"))
    return tree.sql(dialect="duckdb", copy=False)  # the tree is not read again


@functools.cache
def _reference_engine() -> DuckDBEngine:
    return DuckDBEngine()


_references: dict[tuple[str, str], list[dict[str, Any]]] = {}


def reference(case: Case, check: str) -> list[dict[str, Any]]:
    """DuckDB's rows for the same request: the values every engine must reproduce."""
    if (case.name, check) not in _references:
        _references[case.name, check] = _reference(case, check)
    return _references[case.name, check]


def _reference(case: Case, check: str) -> list[dict[str, Any]]:
    engine = _reference_engine()
    loaded(engine, case, "duckdb")
    columns, rows = engine.query(render(case, check, "duckdb"))
    return as_expect(columns, rows)


def rows_of(engine: Engine, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The engine's rows for a text, run once per engine and text (its tables are loaded once
    and never changed). Databricks SQL is Spark's text for most requests, Redshift's
    PostgreSQL's, and both run on the engine of the other; a round trip's DuckDB text is often
    another dialect's too (Athena's SQL is Trino's, Presto's often as well). Every dialect
    still renders its own SQL (and a round trip re-parses and translates it: to_duckdb) and
    compares the rows."""
    done: dict[str, tuple[list[str], list[tuple[Any, ...]]]]
    done = engine.__dict__.setdefault("rows_of", {})
    if sql not in done:
        done[sql] = engine.query(sql)
    return done[sql]


@pytest.mark.parametrize(("target", "check", "case"), parameters())
def test_fixture_on_engine(engine_pool: EnginePool, target: Target, check: str, case: Case) -> None:
    engine = engine_pool.get(target.engine)
    sql = render(case, check, target.dialect)
    loaded(engine, case, target.dialect)
    if target.engine == "roundtrip":
        sql = to_duckdb(sql, target.dialect)
    columns, rows = rows_of(engine, sql)
    expect = case.expect if check == "golden" else reference(case, check)
    compare(columns, rows, expect, f"{target.id} {check} {case.name}")


def test_every_dialect_is_verified_by_an_engine_or_a_round_trip() -> None:
    assert {target.dialect for target in TARGETS} == set(DIALECTS)


@pytest.mark.postgres
def test_id_text_ties_ignore_a_linguistic_collation(engine_pool: EnginePool) -> None:
    """The test server's collation is C (byte order) already: here the id columns get ICU's
    root collation ('a' < 'B'), which ties="id_text" must override (COLLATE "C")."""
    import dataclasses

    engine = engine_pool.get("postgres")
    fixture = next(c for c in load_cases() if c.name == "ties_id_text_strings")
    case = dataclasses.replace(fixture, name="ties_id_text_icu")
    for table in loaded(engine, case, "postgres"):
        engine.query(f'ALTER TABLE {table} ALTER COLUMN item_id TYPE TEXT COLLATE "und-x-icu"')
    compare(*engine.query(render(case, "golden", "postgres")), case.expect, "id_text under ICU")
    # Without COLLATE "C" the same query orders 'B' before 'a': the collation was in force.
    by_collation = render(case, "golden", "postgres").replace(' COLLATE "C"', "")
    with pytest.raises(AssertionError):
        compare(*engine.query(by_collation), case.expect, "id_text without COLLATE")
