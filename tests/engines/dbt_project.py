"""The dbt integration project of test_dbt.py: integration_tests/ plus what fixtures/ gives.

From each golden fixture (fixtures/*.yaml, read by cases.py, never copied by hand): its two
tables as seeds, one model calling ``sqlmetrics.evaluate`` with the fixture's options, and its
expected values as a third seed (``group_key, metric, value``) that the project's
``sqlmetrics_equal`` test compares with the model. Plus the seeds of the incremental model
(fixture group_by_day with a ``loaded_in_run`` column) and a model using one metric's macro.
"""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlmetrics.catalog.metrics import parse_request
from sqlmetrics.dbt.templates import packaged_metrics
from tests.engines.cases import REPO, Case, Table, load_cases

PROJECT = REPO / "integration_tests"
SEED_TYPES = {
    "duckdb": {"int": "bigint", "float": "double", "str": "varchar"},
    "postgres": {"int": "bigint", "float": "double precision", "str": "varchar"},
}
INCREMENTAL_CASE = "group_by_day"
SINGLE_METRIC_CASE = "seed004_ndcg"


def jinja(value: Any) -> str:
    """A Python value as a Jinja literal."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{jinja(k)}: {jinja(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(jinja(v) for v in value) + "]"
    return json.dumps(value)


def packaged(labels: Sequence[str]) -> list[str]:
    """The labels whose metric is in the package (the others are not the macro's), without
    parameters (err(gmax=3)@10: the macro takes none)."""
    names = {metric.name for metric in packaged_metrics()}
    return [
        label
        for label in labels
        if parse_request(label).metric.name in names and not parse_request(label).parameters
    ]


def dbt_cases() -> list[Case]:
    """The fixtures the macro can reproduce: every metric they ask for is in the package (so no
    items or history table is read), no ``duplicates`` option (it needs evaluate's checks) and
    no ``ranks`` (the macro reads a rank column as 1..n only)."""
    return [
        case
        for case in load_cases()
        if "duplicates" not in case.options
        and "ranks" not in case.options
        and packaged(case.metrics) == case.metrics
        and all(_canonical(label) for label in case.metrics)
    ]


def _canonical(label: str) -> bool:
    """Whether a label names its metric as the package does: the macro takes sqlmetrics'
    names, not trec_eval's spellings (set_P), which only the Python API reads."""
    request = parse_request(label)
    return label in (request.metric.name, f"{request.metric.name}@{request.k}")


def macro_kwargs(case: Case) -> dict[str, Any]:
    """The fixture's to_sql keyword arguments, as the macro takes them."""
    kwargs = case.kwargs()
    kwargs.pop("duplicates", None)
    # the macros compute the ranking metrics; the overlap metrics' baseline is dbt models'
    kwargs.pop("baseline", None)
    return kwargs


def _write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(header)
        for row in rows:
            writer.writerow(["" if value is None else repr_value(value) for value in row])


def repr_value(value: Any) -> str:
    # repr keeps every digit of a float (str would too in Python 3, but say it).
    return repr(value) if isinstance(value, float) else str(value)


def _seed(folder: Path, name: str, table: Table, types: dict[str, str]) -> dict[str, Any]:
    _write_csv(folder / f"{name}.csv", table.names, table.rows)
    return {
        "name": name,
        "config": {"column_types": {column: types[kind] for column, kind in table.columns}},
    }


def expected_rows(case: Case, labels: Sequence[str]) -> list[tuple[str, str, Any]]:
    groups = list(case.options.get("group_by", []))
    rows = []
    for row in case.expect:
        # "(null)" for a NULL group value, as the test_sqlmetrics_equal macro writes it
        key = (
            "|".join("(null)" if row[group] is None else str(row[group]) for group in groups)
            if groups
            else "all"
        )
        rows += [(key, label, row[label]) for label in ["users", *labels]]
    return rows


def _expected_seed(
    folder: Path, name: str, rows: list[tuple[str, str, Any]], types: dict[str, str]
) -> dict[str, Any]:
    _write_csv(folder / f"{name}.csv", ["group_key", "metric", "value"], rows)
    column_types = {"group_key": types["str"], "metric": types["str"], "value": types["float"]}
    return {"name": name, "config": {"column_types": column_types}}


def _equality_test(case: Case, expected: str, labels: Sequence[str]) -> dict[str, Any]:
    arguments = {
        "expected": f"ref('{expected}')",
        "group_by": list(case.options.get("group_by", [])),
        "metrics": list(labels),
    }
    return {"sqlmetrics_equal": {"arguments": arguments}}


def write_project(folder: Path, adapter: str, package: Path) -> list[str]:
    """The project in ``folder`` (a copy of integration_tests/ plus the generated files); the
    names of the models that have an equality test."""
    shutil.copytree(PROJECT, folder)
    seeds, models = folder / "seeds", folder / "models" / "fixtures"
    seeds.mkdir()
    models.mkdir(parents=True)
    types = SEED_TYPES[adapter]
    seed_entries: list[dict[str, Any]] = []
    model_entries: list[dict[str, Any]] = []
    for case in dbt_cases():
        recommendations, interactions = (
            f"{case.name}__recommendations",
            f"{case.name}__interactions",
        )
        seed_entries.append(_seed(seeds, recommendations, case.recommendations, types))
        seed_entries.append(_seed(seeds, interactions, case.interactions, types))
        expected = f"{case.name}__expected"
        seed_entries.append(
            _expected_seed(seeds, expected, expected_rows(case, case.metrics), types)
        )
        arguments = ", ".join(f"{key}={jinja(value)}" for key, value in macro_kwargs(case).items())
        call = (
            f"sqlmetrics.evaluate(ref('{recommendations}'), ref('{interactions}'), "
            f"metrics={jinja(case.metrics)}{', ' + arguments if arguments else ''})"
        )
        (models / f"{case.name}.sql").write_text(f"{{{{ {call} }}}}\n", encoding="utf-8")
        model_entries.append(
            {"name": case.name, "data_tests": [_equality_test(case, expected, case.metrics)]}
        )
        if case.name == SINGLE_METRIC_CASE:
            model_entries.append(_single_metric_model(models, case, recommendations, interactions))
        if case.name == INCREMENTAL_CASE:
            seed_entries += _incremental_seeds(seeds, case, types)
            model_entries.append(
                {
                    "name": "incremental_by_day",
                    "data_tests": [_equality_test(case, expected, case.metrics)],
                }
            )
    (seeds / "seeds.yml").write_text(
        json.dumps({"version": 2, "seeds": seed_entries}, indent=1), encoding="utf-8"
    )
    (models / "models.yml").write_text(
        json.dumps({"version": 2, "models": model_entries}, indent=1), encoding="utf-8"
    )
    return [entry["name"] for entry in model_entries]


def _single_metric_model(
    models: Path, case: Case, recommendations: str, interactions: str
) -> dict[str, Any]:
    """One metric's own macro (``sqlmetrics.ndcg(..., k=5)``) against the fixture's value."""
    label = next(label for label in case.metrics if parse_request(label).k is not None)
    request = parse_request(label)
    call = (
        f"sqlmetrics.{request.metric.name}(ref('{recommendations}'), ref('{interactions}'), "
        f"k={request.k})"
    )
    (models / "single_metric_macro.sql").write_text(f"{{{{ {call} }}}}\n", encoding="utf-8")
    expected = f"{case.name}__expected"
    return {"name": "single_metric_macro", "data_tests": [_equality_test(case, expected, [label])]}


def _incremental_seeds(seeds: Path, case: Case, types: dict[str, str]) -> list[dict[str, Any]]:
    """The fixture's rows with ``loaded_in_run``: the last interaction of the last day arrives
    in run 2, after that day was computed in run 1 (so run 1's values for it are off)."""
    day = case.interactions.names.index("day")
    last_day = max(row[day] for row in case.interactions.rows)
    late = max(i for i, row in enumerate(case.interactions.rows) if row[day] == last_day)
    entries = []
    for name, table in (
        ("incremental__recommendations", case.recommendations),
        ("incremental__interactions", case.interactions),
    ):
        runs = [
            2 if table is case.interactions and index == late else 1
            for index in range(len(table.rows))
        ]
        extended = Table(
            (*table.columns, ("loaded_in_run", "int")),
            tuple((*row, run) for row, run in zip(table.rows, runs, strict=True)),
        )
        entries.append(_seed(seeds, name, extended, types))
    return entries
