"""The dbt package of ``sqlmetrics dbt export``: rendered for every adapter, run by dbt.

- every adapter's macro, rendered for every option, re-parses with sqlglot in its dialect and
  names the expected columns;
- the DuckDB and PostgreSQL macros, rendered for each golden fixture with every metric of the
  package, give the values of ``to_sql`` on the same engine, and the fixture's values;
- the macro refuses bad arguments with a compiler error naming them;
- ``dbt build`` of integration_tests/ (seeds and one model per fixture, equality tests against
  the fixtures' values, the incremental pattern with a late interaction) passes on DuckDB and on
  PostgreSQL, and an equality test fails when one expected value is off.

The rendering runs in the dbt venv (tests/engines/dbt_render.py stands in for dbt's context);
without that venv these tests are deselected, unless SQLMETRICS_ENGINES asks for dbt (CI).
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import sqlglot
from sqlglot import exp

import sqlmetrics
from sqlmetrics.catalog.metrics import parse_request
from sqlmetrics.dbt import templates
from tests.engines.cases import Case, as_expect, compare, extra_cases, load_cases
from tests.engines.conftest import EnginePool, skip_or_fail, why_unavailable
from tests.engines.dbt_project import dbt_cases, macro_kwargs, packaged, write_project
from tests.engines.engines import Engine, PostgresEngine, dbt_executable

pytestmark = pytest.mark.dbt
RENDERER = Path(__file__).with_name("dbt_render.py")
ADAPTERS = {**templates.ADAPTERS, "default": templates.DEFAULT_DIALECT}


@pytest.fixture(scope="session")
def package(exported_dbt_package: Path) -> Path:
    """The exported package (tests/conftest.py), shared with tests/test_dbt_export.py."""
    return exported_dbt_package


def render(package: Path, calls: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """The macro's SQL (or compiler error) per call, rendered by dbt_render.py."""
    executable = dbt_executable()
    assert executable is not None
    request = json.dumps({"package": str(package), "calls": list(calls)})
    done = subprocess.run(
        [str(executable.with_name("python")), str(RENDERER)],
        input=request,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results: list[dict[str, str]] = json.loads(done.stdout)
    return results


def evaluate_call(adapter: str, labels: Sequence[str], **kwargs: Any) -> dict[str, Any]:
    arguments = {"recommendations": "recs", "interactions": "clicks", "metrics": list(labels)}
    return {"adapter": adapter, "kwargs": {**arguments, **kwargs}}


# every adapter: the rendered SQL parses -------------------------------------------------------

OPTIONS: list[dict[str, Any]] = [
    {},
    {"ties": "optimistic"},
    {"ties": "pessimistic"},
    {"ties": "average"},
    {"population": "common", "threshold": 1.5},
    {"columns": {"relevance": None, "user": "user"}},
    {"columns": {"rank": "rank"}},
]
GROUPS: list[dict[str, Any]] = [
    {},
    {"group_by": ["day"]},
    {"group_by": ["day", "model"], "interactions_group_by": ["day"]},
]


def metric_lists(ties: str) -> list[list[str]]:
    """Every packaged metric at a cutoff (the stages stop there), and every one without one."""
    kept = [m for m in templates.packaged_metrics() if ties != "average" or m.ties_average]
    with_cutoff = [f"{m.name}@5" for m in kept if m.takes_cutoff and not m.reads_whole_list]
    return [with_cutoff, [m.name for m in kept]]


def test_macros_parse_in_every_adapter(package: Path) -> None:
    calls, expected = [], []
    for adapter in ADAPTERS:
        for options in OPTIONS:
            for groups in GROUPS:
                for labels in metric_lists(options.get("ties", "id")):
                    calls.append(evaluate_call(adapter, labels, **options, **groups))
                    expected.append([*groups.get("group_by", []), "users", *labels])
    for call, columns, result in zip(calls, expected, render(package, calls), strict=True):
        where = (call["adapter"], {k: v for k, v in call["kwargs"].items() if k != "metrics"})
        assert "sql" in result, (where, result)
        dialect = ADAPTERS[call["adapter"]]
        tree = sqlglot.parse_one(result["sql"], read=dialect, error_level=sqlglot.ErrorLevel.RAISE)
        assert isinstance(tree, exp.Select), where
        assert [p.alias_or_name for p in tree.expressions] == columns, where
        for table in ("recs", "clicks"):
            assert any(t.name == table for t in tree.find_all(exp.Table)), where


# DuckDB and PostgreSQL: the rendered macro computes to_sql's numbers ------------------------

PARITY_CASES = [
    c
    for c in load_cases() + extra_cases()
    # macros take no profile, nor duplicates or ranks (evaluate's checks; a rank column as 1..n),
    # nor a weight column: it weighs the scored rows, which no packaged metric reads
    if not {"duplicates", "profile", "ranks"} & set(c.options)
    and "weight" not in c.options.get("columns", {})
]


@pytest.fixture(scope="module")
def parity_sql(package: Path) -> dict[tuple[str, str], str]:
    """(adapter, case) -> the macro's SQL for every packaged metric at the case's cutoffs."""
    calls, keys = [], []
    for adapter in ("duckdb", "postgres"):
        for case in PARITY_CASES:
            recommendations, interactions = parity_tables(case)
            kwargs = {**macro_kwargs(case), "recommendations": recommendations}
            kwargs["interactions"] = interactions
            labels = packaged(case.all_metrics)
            calls.append({"adapter": adapter, "kwargs": {**kwargs, "metrics": labels}})
            keys.append((adapter, case.name))
    results = render(package, calls)
    for key, result in zip(keys, results, strict=True):
        assert "sql" in result, (key, result)  # the compiler's error
    return {key: result["sql"] for key, result in zip(keys, results, strict=True)}


def _ordered(sql: str, case: Case) -> str:
    groups = len(case.options.get("group_by", []))
    order = ", ".join(str(i + 1) for i in range(groups))
    return f"SELECT * FROM ({sql}) AS evaluated" + (f" ORDER BY {order}" if order else "")


def parity_tables(case: Case) -> tuple[str, str]:
    """Names of their own: test_engines.py's r_/t_ tables live in the same PostgreSQL database,
    read by another pytest-xdist worker while these are dropped and loaded again."""
    return f"dbt_r_{case.name}", f"dbt_t_{case.name}"


def _check_parity(engine: Engine, dialect: str, sql: str, case: Case) -> None:
    recommendations, interactions = parity_tables(case)
    engine.load(recommendations, case.recommendations)
    engine.load(interactions, case.interactions)
    # without the overlap metrics' baseline, which would ask compare's query of the others
    options = {k: v for k, v in case.kwargs().items() if k != "baseline"}
    reference = sqlmetrics.to_sql(
        packaged(case.all_metrics), recommendations, interactions, dialect=dialect, **options
    )
    want = as_expect(*engine.query(reference))
    columns, rows = engine.query(_ordered(sql, case))  # once, for both comparisons
    compare(columns, rows, want, f"{dialect} {case.name}")
    # the golden values of the packaged metrics (``users`` is the fixture's metrics' population)
    if case.expect and packaged(case.metrics):
        got = as_expect(columns, rows)
        groups = list(case.options.get("group_by", []))
        keep = [*groups, "users", *packaged(case.metrics)]
        compare(
            keep,
            [[row[c if c in row else _canonical(c)] for c in keep] for row in got],
            [{c: row[c] for c in keep} for row in case.expect],
            f"{dialect} {case.name} golden",
        )


def _canonical(label: str) -> str:
    """The label every_metric gives the metric of ``label`` (the macro's query asks for those):
    a fixture may name it as trec_eval does (set_P is precision, relative_P_2 recall_capped@2)."""
    request = parse_request(label)
    return request.metric.name + (f"@{request.k}" if request.k else "")


@pytest.mark.parametrize("case", PARITY_CASES, ids=lambda c: c.name)
def test_duckdb_macro_gives_to_sql_values(
    case: Case, parity_sql: dict[tuple[str, str], str], engine_pool: EnginePool
) -> None:
    _check_parity(engine_pool.get("duckdb"), "duckdb", parity_sql["duckdb", case.name], case)


@pytest.mark.parametrize("case", PARITY_CASES, ids=lambda c: c.name)
def test_postgres_macro_gives_to_sql_values(
    case: Case, parity_sql: dict[tuple[str, str], str], engine_pool: EnginePool
) -> None:
    postgres = _postgres(engine_pool)
    _check_parity(postgres, "postgres", parity_sql["postgres", case.name], case)


def _postgres(engine_pool: EnginePool) -> PostgresEngine:
    why = why_unavailable("postgres")
    if why:
        skip_or_fail("postgres", f"PostgreSQL: {why}")
    engine = engine_pool.get("postgres")
    assert isinstance(engine, PostgresEngine)
    return engine


# bad arguments -------------------------------------------------------------------------------

REFUSED: list[tuple[dict[str, Any], str]] = [
    ({"metrics": ["ndcg@0"]}, "cutoff in 'ndcg@0' must be a whole number of at least 1"),
    ({"metrics": ["ndcg@ten"]}, "cutoff in 'ndcg@ten' must be a whole number"),
    ({"metrics": ["ndgc@10"]}, "unknown metric 'ndgc@10'"),
    ({"metrics": ["coverage@10"]}, "metric 'coverage' is not in the dbt package"),
    ({"metrics": ["err(gmax=3)@10"]}, "a metric's parameters are not in the dbt package"),
    ({"metrics": ["r_precision@5"]}, "metric 'r_precision' takes no cutoff"),
    ({"metrics": []}, "no metrics requested"),
    ({"metrics": ["mrr@5"], "ties": "average"}, "ties='average' has no exact closed form"),
    ({"metrics": ["ndcg@5"], "ties": "random"}, "ties must be one of"),
    ({"metrics": ["ndcg@5"], "population": "some"}, "population must be one of all, common"),
    ({"metrics": ["ndcg@5"], "threshold": -1}, "threshold must be a number >= 0"),
    ({"metrics": ["ndcg@5"], "threshold": "0"}, "threshold must be a number >= 0"),
    ({"metrics": ["ndcg@5"], "columns": {"user": "u; drop table x"}}, "the user column"),
    ({"metrics": ["ndcg@5"], "columns": {"item": 'a"b'}}, "is not a plain column name"),
    ({"metrics": ["ndcg@5"], "columns": {"colour": "c"}}, "unknown column role colour"),
    ({"metrics": ["ndcg@5"], "group_by": ["day) x"]}, "the group_by column day) x"),
    (
        {"metrics": ["ndcg@5"], "group_by": ["day"], "interactions_group_by": ["model"]},
        "interactions_group_by must name columns of group_by",
    ),
    (
        {"metrics": ["ndcg@5"], "columns": {"rank": "rank"}, "ties": "optimistic"},
        "a rank column fixes the order",
    ),
]


def test_macro_refuses_bad_arguments(package: Path) -> None:
    calls = [evaluate_call("duckdb", [], **kwargs) for kwargs, _ in REFUSED]
    calls += [
        {
            "adapter": "duckdb",
            "macro": "ndcg",
            "kwargs": {"recommendations": "r", "interactions": "i", "k": k},
        }
        for k in ("10", 2.5, 0, True)
    ]
    messages = [message for _, message in REFUSED] + ["ndcg: k must be a whole number"] * 4
    for call, message, result in zip(calls, messages, render(package, calls), strict=True):
        assert "error" in result, (call, result)
        assert result["error"].startswith("sqlmetrics: "), result
        assert message in result["error"], (call, result["error"])


def test_reserved_column_names_are_quoted_as_the_adapter_folds_them(package: Path) -> None:
    calls = [
        evaluate_call(adapter, ["ndcg@5"], columns={"user": "user", "item": "Item_Id"})
        for adapter in ("duckdb", "snowflake", "bigquery")
    ]
    duckdb_sql, snowflake_sql, bigquery_sql = (r["sql"] for r in render(package, calls))
    assert '"user" AS user_id' in duckdb_sql and "Item_Id AS item_id" in duckdb_sql
    assert '"USER" AS user_id' in snowflake_sql
    assert "`user` AS user_id" in bigquery_sql


# dbt itself ----------------------------------------------------------------------------------


class Project:
    def __init__(self, folder: Path, target: str, env: dict[str, str]) -> None:
        self.folder, self.target, self.env = folder, target, env

    def dbt(self, *arguments: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        executable = dbt_executable()
        assert executable is not None
        command = [str(executable), *arguments, "--target", self.target]
        done = subprocess.run(
            command, cwd=self.folder, env=self.env, capture_output=True, text=True, check=False
        )
        if check:
            assert done.returncode == 0, (command, done.stdout[-6000:], done.stderr[-2000:])
        return done


@pytest.fixture
def project_env(tmp_path: Path, package: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("DBT_")}
    env.update(
        SQLMETRICS_DBT_PACKAGE=str(package),
        DBT_PROFILES_DIR=str(tmp_path / "project"),
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
        DBT_USE_COLORS="false",
        DBT_VERSION_CHECK="false",
        SQLMETRICS_DBT_DUCKDB_PATH=str(tmp_path / "integration.duckdb"),
    )
    return env


def _build(project: Project, adapter: str, package: Path) -> list[str]:
    models = write_project(project.folder, adapter, package)
    project.dbt("deps")
    project.dbt("seed")
    # Run 1: one interaction of the last day has not arrived yet, so its values are off ...
    project.dbt("run", "--select", "incremental_by_day", "--vars", "{run: 1}")
    early = project.dbt("test", "--select", "incremental_by_day", check=False)
    assert early.returncode != 0, "the late interaction should change the last day's values"
    # ... run 2 recomputes the last days with it; then every model and test passes.
    built = project.dbt("build", "--vars", "{run: 2}")
    for model in models:
        assert f"sqlmetrics_equal_{model}" in built.stdout, (model, built.stdout[-3000:])
    return models


def test_dbt_build_on_duckdb(tmp_path: Path, package: Path, project_env: dict[str, str]) -> None:
    project = Project(tmp_path / "project", "duckdb", project_env)
    _build(project, "duckdb", package)
    # An equality test fails when an expected value is off in its 8th digit.
    seed = project.folder / "seeds" / "seed004_ndcg__expected.csv"
    lines = seed.read_text(encoding="utf-8").splitlines()
    key, metric, value = lines[2].split(",")
    lines[2] = ",".join([key, metric, repr(float(value) + 1e-7)])
    seed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    project.dbt("seed", "--select", "seed004_ndcg__expected")
    off = project.dbt("test", "--select", "seed004_ndcg", check=False)
    assert off.returncode != 0 and metric in seed.read_text(encoding="utf-8")


@pytest.fixture
def postgres_schema(engine_pool: EnginePool) -> Iterator[tuple[PostgresEngine, str]]:
    engine = _postgres(engine_pool)
    schema = f"sqlmetrics_dbt_{uuid.uuid4().hex[:8]}"
    try:
        yield engine, schema
    finally:
        engine.query(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def test_dbt_build_on_postgres(
    tmp_path: Path,
    package: Path,
    project_env: dict[str, str],
    postgres_schema: tuple[PostgresEngine, str],
) -> None:
    engine, schema = postgres_schema
    dsn = dict(part.split("=", 1) for part in engine.dsn.split())
    project_env.update(
        SQLMETRICS_DBT_PG_HOST=dsn.get("host", "127.0.0.1"),
        SQLMETRICS_DBT_PG_PORT=dsn.get("port", "5432"),
        SQLMETRICS_DBT_PG_USER=dsn.get("user", "postgres"),
        SQLMETRICS_DBT_PG_PASSWORD=dsn.get("password", ""),
        SQLMETRICS_DBT_PG_DBNAME=dsn.get("dbname", "postgres"),
        SQLMETRICS_DBT_PG_SCHEMA=schema,
    )
    _build(Project(tmp_path / "project", "postgres", project_env), "postgres", package)


def test_every_fixture_but_the_unsupported_has_a_model() -> None:
    """A fixture has no model only when the macro cannot take it: it asks for a metric outside
    the package (reads: lists, a constant of k...), spells one the trec_eval way (set_P: only
    the Python API reads those), or asks for duplicates="first" or ranks="literal"; every
    packaged metric is built."""
    unsupported = {
        case.name
        for case in load_cases()
        if "duplicates" in case.options
        or "ranks" in case.options
        or any(not templates.is_packaged(parse_request(label).metric) for label in case.metrics)
        or any(label.split("@")[0] != parse_request(label).metric.name for label in case.metrics)
    }
    assert {"duplicate_recommendations_first", "trec_set_measures", "ranks_literal"} <= unsupported
    names = {case.name for case in dbt_cases()}
    assert names == {case.name for case in load_cases()} - unsupported
    built = {parse_request(label).metric.name for case in dbt_cases() for label in case.metrics}
    assert built == {metric.name for metric in templates.packaged_metrics()}
