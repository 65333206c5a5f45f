"""Every metric in every dialect: rendered without a sqlglot warning, stable, and portable.

- Every option set renders for every dialect with sqlglot's unsupported warnings raised.
- The output parses back in its own dialect to the same text (so a reader of that dialect sees
  the query we meant), and has none of the constructs whose meaning differs between engines: a
  one-argument LOG, an uncast or unguarded division, an integer POWER or AVG, LEAST of
  something that may be NULL, an unaliased column projection, a FULL JOIN where there is none.
- A reviewed snapshot of each metric x dialect lives in tests/snapshots/<dialect>/<metric>.sql,
  so a sqlglot upgrade shows as a diff. Regenerate them with ``make snapshots``
  (``SQLMETRICS_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_dialects.py``) and review the diff.
"""

from __future__ import annotations

import difflib
import math
import os
from pathlib import Path
from typing import Any

import duckdb
import pytest
import sqlglot
from sqlglot import exp

import sqlmetrics
from sqlmetrics.api import _prepared
from sqlmetrics.catalog.metrics import metrics
from sqlmetrics.compose.exposure import compose_exposure
from sqlmetrics.compose.inputs import Options
from sqlmetrics.compose.lists import reads_baseline
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.options import QueryOptions, filled
from sqlmetrics.render.dialects import CANONICAL, DIALECTS
from sqlmetrics.render.dialects import render as render_query

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
UPDATE = os.environ.get("SQLMETRICS_UPDATE_SNAPSHOTS") == "1"
NON_CANONICAL = [d for d in DIALECTS if d != CANONICAL]

VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "per_user": {"per_user": True},
    "group_by_shared": {"group_by": ["day"]},
    "group_by_recommendations_only": {"group_by": ["model"], "interactions_group_by": []},
    "two_groups_per_user": {
        "group_by": ["day", "model"],
        "interactions_group_by": ["day"],
        "per_user": True,
    },
    # the overlap metrics' baseline, its lists joined within the other group column
    "baseline_two_groups": {
        "group_by": ["model", "day"],
        "interactions_group_by": ["day"],
        "baseline": "pop",
    },
    "ties_optimistic": {"ties": "optimistic"},
    "ties_pessimistic": {"ties": "pessimistic"},
    "ties_average": {"ties": "average"},
    "duplicates_first": {"duplicates": "first"},
    "rank_column": {"columns": {"rank": "rank"}},
    "rank_column_duplicates_first": {"columns": {"rank": "rank"}, "duplicates": "first"},
    "no_relevance": {"columns": {"relevance": None}},
    "threshold_common": {"threshold": 1.5, "population": "common"},
    "population_judged": {"population": "judged"},
    "population_all_judged_groups": {"population": "all_judged", "group_by": ["day"]},
    "renamed_columns": {
        "columns": {
            "user": "customer_id",
            "item": "sku",
            "score": "pred",
            "relevance": "grade",
            "rating": "stars",
        }
    },
}


def every_metric(variant: dict[str, Any]) -> list[str]:
    labels: list[str] = []
    for metric in metrics().values():
        if variant.get("ties") == "average" and not metric.ties_average:
            continue
        if "rank" in variant.get("columns", {}) and metric.reads != "judged":
            continue  # the metrics over scores refuse a rank column
        if reads_baseline(metric) and "baseline" not in variant:
            continue  # the overlap metrics compare the lists with a baseline model's
        labels += [f"{metric.name}@5", f"{metric.name}@10"] if metric.takes_cutoff else []
        labels += [] if metric.requires_cutoff else [metric.name]
    return labels


def one_metric(name: str) -> str:
    return f"{name}@10" if metrics()[name].takes_cutoff else name


def render(dialect: str, labels: list[str], **options: Any) -> str:
    return sqlmetrics.to_sql(
        labels,
        "analytics.recs",
        "analytics.truth",
        dialect=dialect,
        items="analytics.items",
        history="analytics.history",
        **options,
    )


# The developer's sample of the every-option matrix (CI runs every cell: SQLMETRICS_FULL_MATRIX=1,
# tests/conftest.py): every option set in the dialects sqlmetrics rewrites the most and DuckDB's
# own plans (T-SQL: LOG, FLOAT, NULL order; MySQL: FULL JOIN as a union, NULL order; DuckDB:
# the top-k plans), and every dialect on the default request and on the one with the most
# parts (two groups, per user), where Spark's COLLECT_SET is.
SAMPLED_DIALECTS = ("duckdb", "mysql", "tsql")
SAMPLED_VARIANTS = ("default", "two_groups_per_user")


def every_option_cases() -> list[Any]:
    # The dialect varies fastest: one request asked of every dialect in turn is composed once
    # for those that share the portable plan (api._shared_composition).
    return [
        pytest.param(
            dialect,
            variant,
            id=f"{variant}-{dialect}",
            marks=(
                ()
                if dialect in SAMPLED_DIALECTS or variant in SAMPLED_VARIANTS
                else (pytest.mark.full_matrix,)
            ),
        )
        for variant in VARIANTS
        for dialect in DIALECTS
    ]


def test_ci_runs_every_cell_of_the_matrices() -> None:
    """The developer's sample is a sample: CI (.ci/run) runs the whole matrix."""
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert "\nexport SQLMETRICS_FULL_MATRIX=1\n" in ci


@pytest.mark.parametrize(("dialect", "variant"), every_option_cases())
def test_every_option_renders_without_warnings_and_round_trips(dialect: str, variant: str) -> None:
    """render raises on any sqlglot 'unsupported' warning; the text re-parses to itself."""
    sql = render(dialect, every_metric(VARIANTS[variant]), **VARIANTS[variant])
    tree = sqlglot.parse_one(sql, read=dialect)
    if dialect != CANONICAL:
        assert_portable(tree, dialect, sql)
    # Last, and without the generator's copy of the tree (~25 ms of the test's ~0.6 s): the
    # generator may rewrite the tree it writes, which nothing reads afterwards.
    assert tree.sql(dialect=dialect, pretty=True, copy=False) == sql


@pytest.mark.parametrize("dialect", [CANONICAL, "postgres"])  # DuckDB's plans, the portable one
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_node_of_the_composed_tree_has_one_parent(
    variant: str, dialect: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A node held by two parents is rewritten in one only when a dialect's writer replaces it
    (BigQuery's writer put a grouped column's alias in ORDER BY, not in GROUP BY): composing
    copies every node it places twice, and never re-parents a node of the tree."""
    composed: list[exp.Expr] = []

    def keeping(tree: exp.Expr, dialect: str, **kwargs: Any) -> str:
        composed.append(tree)
        return original(tree, dialect, **kwargs)

    original = sqlmetrics.api.render
    monkeypatch.setattr(sqlmetrics.api, "render", keeping)
    # composed for this call, not a string kept from an earlier test's (nor a copy of its tree)
    monkeypatch.setattr(sqlmetrics.api, "_request_key", lambda arguments: None)
    render(dialect, every_metric(VARIANTS[variant]), **VARIANTS[variant])
    strays = [
        (type(node).__name__, child.sql()[:60])
        for node in composed[0].walk()
        for child in node.iter_expressions()
        if child.parent is not node
    ]
    assert not strays, strays[:10]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("name", list(metrics()))
def test_each_metric_matches_its_reviewed_snapshot(dialect: str, name: str) -> None:
    items = "items" if metrics()[name].needs_items else None
    history = "history" if metrics()[name].needs_history else None
    # the overlap metrics compare each model's lists with a baseline model's
    overlap = {"group_by": "model", "baseline": "pop"} if reads_baseline(metrics()[name]) else {}
    sql = sqlmetrics.to_sql(
        [one_metric(name)], dialect=dialect, items=items, history=history, **overlap
    )
    sql += ";\n"
    path = SNAPSHOTS / dialect / f"{name}.sql"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(sql, encoding="utf-8")
    assert path.exists(), f"no snapshot {path.relative_to(SNAPSHOTS.parent)}: run make snapshots"
    want = path.read_text(encoding="utf-8")
    diff = "".join(difflib.unified_diff(want.splitlines(True), sql.splitlines(True), "snap", "now"))
    assert sql == want, f"{dialect}/{name} differs from its snapshot (make snapshots):\n{diff}"


def exposure_query(dialect: str) -> str:
    """The exposure table's query (compose/exposure.py) over two group columns, one of them
    only the recommendations'."""
    given = filled(
        QueryOptions,
        {
            "group_by": ["model", "day"],
            "interactions_group_by": ["day"],
            "items": "items",
            "columns": {"item_group": "provider"},
        },
        "test",
    )
    inputs, _ = _prepared(["recall@10"], "recommendations", "interactions", given)
    return render_query(compose_exposure(inputs, Options(), 10, dialect=dialect), dialect) + ";\n"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_exposure_table_matches_its_reviewed_snapshot(dialect: str) -> None:
    """The exposure table (evaluate's exposure_k) is a query of its own: its snapshot sits beside
    the metrics' (exposure_table.sql), and it is portable and re-parses to itself."""
    sql = exposure_query(dialect)
    path = SNAPSHOTS / dialect / "exposure_table.sql"
    if UPDATE:
        path.write_text(sql, encoding="utf-8")
    assert path.exists(), f"no snapshot {path.relative_to(SNAPSHOTS.parent)}: run make snapshots"
    want = path.read_text(encoding="utf-8")
    diff = "".join(difflib.unified_diff(want.splitlines(True), sql.splitlines(True), "snap", "now"))
    assert sql == want, f"{dialect}/exposure_table differs from its snapshot:\n{diff}"
    tree = sqlglot.parse_one(sql.rstrip(";\n"), read=dialect)
    assert tree.sql(dialect, pretty=True) == sql.rstrip(";\n")
    if dialect != CANONICAL:
        assert_portable(tree, dialect, sql)


def test_no_snapshot_is_left_over() -> None:
    # the exposure table's query (tests/test_exposure.py) beside the metrics'
    expected = {f"{d}/{name}.sql" for d in DIALECTS for name in [*metrics(), "exposure_table"]}
    found = {str(p.relative_to(SNAPSHOTS)) for p in SNAPSHOTS.glob("*/*.sql")}
    assert found <= expected, f"stale snapshots: {sorted(found - expected)}"


def assert_portable(tree: exp.Expr, dialect: str, sql: str) -> None:
    """The output (``sql``, parsed as ``tree``) has no construct whose meaning differs between
    engines."""
    # One walk of the tree (some 30,000 nodes for every metric), its nodes looked up by type
    nodes = list(tree.walk())

    def find_all(*types: type[exp.Expr]) -> list[Any]:
        return [node for node in nodes if isinstance(node, types)]

    for log in find_all(exp.Log):
        # T-SQL writes LN(x) as LOG(x): the one place a one-argument LOG is natural.
        assert log.args.get("expression") is not None or dialect == "tsql", log.sql(dialect)
    if dialect == "tsql":
        # T-SQL has no LN: it writes one as LOG(x), which reads back as a natural log.
        assert "LN(" not in sql.upper(), "T-SQL has no LN"
    for div in find_all(exp.Div):
        numerator, denominator = div.this, div.expression.unnest()
        assert isinstance(numerator, exp.Cast), div.sql(dialect)
        assert numerator.to.is_type(*exp.DataType.REAL_TYPES), div.sql(dialect)
        assert isinstance(denominator, exp.Nullif) or (
            isinstance(denominator, exp.Literal) and float(denominator.name) != 0
        ), div.sql(dialect)
    for average in find_all(exp.Avg):
        assert isinstance(average.this, exp.Cast), average.sql(dialect)
    for power in find_all(exp.Pow):
        assert isinstance(power.this, exp.Cast), power.sql(dialect)
    for node in find_all(exp.Least, exp.Greatest):
        for argument in [node.this, *node.expressions]:
            assert isinstance(argument, (exp.Literal, exp.Coalesce)), node.sql(dialect)
    selects = find_all(exp.Select)
    for select in selects:
        for projection in select.expressions:
            assert isinstance(projection, exp.Alias) or projection.is_star, projection.sql(dialect)
        for join in select.args.get("joins") or []:
            assert not (dialect in ("mysql", "sqlite") and join.side == "FULL"), select.sql()
    for subquery in find_all(exp.Subquery):
        if isinstance(subquery.parent, (exp.From, exp.Join)):
            assert subquery.alias, subquery.sql(dialect)
    if dialect not in ("snowflake",):
        assert not any(select.args.get("qualify") for select in selects)


def test_duckdb_gets_the_canonical_text_unchanged() -> None:
    """The SQL files are DuckDB: no casts, no NULLIF added, QUALIFY kept."""
    from sqlmetrics.render.dialects import portable

    tree = sqlglot.parse_one(
        "SELECT a / b AS c, LOG(x) AS y FROM t QUALIFY ROW_NUMBER() OVER (ORDER BY x) = 1",
        read="duckdb",
    )
    assert portable(tree, "duckdb") == tree
    assert portable(tree, "postgres") != tree


def test_an_unknown_dialect_is_refused_with_the_verified_list() -> None:
    with pytest.raises(SqlmetricsError, match=r"unknown dialect 'postgress'.*snowflake"):
        sqlmetrics.to_sql(["ndcg@10"], dialect="postgress")


def test_one_argument_log_gets_base_10() -> None:
    """DuckDB's LOG(x) is base 10; MySQL, Spark, BigQuery and T-SQL read LOG(x) as ln."""
    from sqlmetrics.render.dialects import render as render_tree

    tree = sqlglot.parse_one("SELECT LOG(x) AS y FROM t", read="duckdb")
    assert render_tree(tree, "mysql", pretty=False) == "SELECT LOG(10, x) AS y FROM t"
    assert render_tree(tree, "tsql", pretty=False) == "SELECT LOG(x, 10) AS y FROM t"


def test_postgres_reads_a_logarithm_of_a_double_as_a_ratio_of_natural_logs() -> None:
    """PostgreSQL's two-argument LOG takes NUMERIC only, and a DOUBLE PRECISION argument
    (normalized_gain's cost over fractional relevances) is not cast to it: LOG(2, x) failed
    with "function log(integer, double precision) does not exist". LN(x) / ln(2) takes both."""
    from sqlmetrics.render.dialects import render as render_tree

    tree = sqlglot.parse_one("SELECT LOG2(x) AS y, LOG(b, x) AS z FROM t", read="duckdb")
    for dialect in ("postgres", "redshift"):
        sql = render_tree(tree, dialect, pretty=False)
        assert "LOG(" not in sql.upper(), sql
        assert f"(CAST(LN(x) AS DOUBLE PRECISION) / {math.log(2)!r}) AS y" in sql, sql
        assert "/ NULLIF(LN(b), 0)) AS z" in sql, sql


def test_nulls_last_inside_a_framed_window_is_spelled_out_where_sqlglot_cannot() -> None:
    """MySQL, T-SQL and BigQuery sort NULLs first ascending and sqlglot drops NULLS LAST from a
    framed window: the running hit count would start with the unranked relevant items."""
    from sqlmetrics.render.dialects import render as render_tree

    tree = sqlglot.parse_one(
        "SELECT SUM(h) OVER (PARTITION BY u ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND "
        "CURRENT ROW) AS s FROM t",
        read="duckdb",
    )
    for dialect in ("mysql", "tsql", "bigquery"):
        sql = render_tree(tree, dialect, pretty=False)
        assert "ORDER BY CASE WHEN pos IS NULL THEN 1 ELSE 0 END, pos ROWS" in sql, sql


def test_full_outer_join_becomes_a_union_where_there_is_none() -> None:
    from sqlmetrics.render.dialects import render as render_tree

    tree = sqlglot.parse_one(
        "SELECT COALESCE(a.k, b.k) AS k, a.x AS x, b.y AS y FROM a FULL OUTER JOIN b ON a.k = b.k",
        read="duckdb",
    )
    assert render_tree(tree, "mysql", pretty=False) == (
        "SELECT COALESCE(a.k, b.k) AS k, a.x AS x, b.y AS y FROM a LEFT OUTER JOIN b ON a.k = b.k "
        "UNION ALL "
        "SELECT COALESCE(a.k, b.k) AS k, a.x AS x, b.y AS y FROM b LEFT JOIN a ON a.k = b.k "
        "WHERE a.k IS NULL"
    )
    grouped = sqlglot.parse_one(
        "SELECT a.k AS k, COUNT(*) AS n FROM a FULL JOIN b ON a.k = b.k GROUP BY a.k",
        read="duckdb",
    )
    with pytest.raises(SqlmetricsError, match="FULL OUTER JOIN"):
        render_tree(grouped, "mysql")


def test_spark_counts_distinct_values_per_user_as_sets() -> None:
    """On Spark a per-user distinct count (repeated items, repeated interactions) is
    SIZE(COLLECT_SET(x)), built before the shuffle by user; a distinct count over a whole group
    (coverage's items, novelty's users) stays COUNT(DISTINCT): a set there would hold a whole
    table. (tests/engines runs both on Spark against DuckDB's numbers and diagnostics.)"""
    checks = sqlmetrics.to_sql(["ndcg@10"], "r", "i", dialect="spark", checks=True)
    assert "COUNT(item_id) - SIZE(COLLECT_SET(item_id)) AS duplicate_rows" in checks
    assert "COUNT(DISTINCT" not in checks
    coverage = sqlmetrics.to_sql(["coverage@10", "novelty@10"], "r", "i", dialect="spark")
    assert "COLLECT_SET" not in coverage
    assert "COUNT(DISTINCT ranked.item_id)" in coverage and "COUNT(DISTINCT user_id)" in coverage


def test_mysql_writes_ctes_past_mariadbs_limit_where_they_are_read() -> None:
    """MariaDB takes at most 64 CTEs in one WITH: past that, CTEs become derived tables where
    they are read, those read once first (from the last), then those read in several places
    (copied into each); other dialects keep every CTE."""
    from sqlmetrics.render.dialects import render as render_tree
    from sqlmetrics.render.rules.with_limit import MOST_CTES

    many = MOST_CTES + 3
    ctes = ["c0 AS (SELECT 1 AS x)"]
    ctes += [f"c{i} AS (SELECT x + 1 AS x FROM c{i - 1})" for i in range(1, many)]
    # c0 .. c{many - 2} are each read once (by the next); the last is read twice
    query = f"WITH {', '.join(ctes)} SELECT a.x + b.x AS y FROM c{many - 1} AS a, c{many - 1} AS b"
    tree = sqlglot.parse_one(query, read="duckdb")
    duck = duckdb.sql(query).fetchall()
    assert render_tree(tree, "postgres", pretty=False).count(" AS (") == many
    sql = render_tree(tree, "mysql", pretty=False)
    rendered = sqlglot.parse_one(sql, read="mysql")
    assert len(rendered.args["with_"].expressions) == MOST_CTES
    # the three inlined are the last ones read once: c{many-2} into c{many-1}, c{many-3} into
    # that, and so on
    kept = [cte.alias for cte in rendered.args["with_"].expressions]
    assert kept == [f"c{i}" for i in range(MOST_CTES - 1)] + [f"c{many - 1}"]
    assert duckdb.sql(rendered.sql("duckdb")).fetchall() == duck == [(2 * many,)]
    # a table of the user's named like a CTE, under a schema, is not one of its readers, in a
    # CTE's query moved where it is read too (each CTE read twice: the second pass copies them)
    twice = ["c0 AS (SELECT 1 AS x)"]
    twice += [
        f"c{i} AS (SELECT x FROM c{i - 1} UNION ALL SELECT x FROM c{i - 1})" for i in range(1, many)
    ]
    last = f"c{many - 1}"
    schema = (
        f"WITH {', '.join(twice)}, z AS (SELECT x FROM {last} UNION ALL SELECT x FROM s.{last})"
    )
    schema += " SELECT COUNT(*) AS y FROM z"
    kept_schema = render_tree(sqlglot.parse_one(schema, read="duckdb"), "mysql", pretty=False)
    assert f"FROM s.{last}" in kept_schema
    # every CTE read in several places: the last ones copied into each
    reads = " UNION ALL ".join(f"SELECT x FROM c{i}" for i in range(many) for _ in range(2))
    several = f"WITH {', '.join(ctes)} SELECT SUM(x) AS y FROM ({reads}) AS every_read"
    copied = render_tree(sqlglot.parse_one(several, read="duckdb"), "mysql", pretty=False)
    copied_tree = sqlglot.parse_one(copied, read="mysql")
    assert len(copied_tree.args["with_"].expressions) == MOST_CTES
    assert duckdb.sql(copied_tree.sql("duckdb")).fetchall() == duckdb.sql(several).fetchall()
