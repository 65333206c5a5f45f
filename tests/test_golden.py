"""Every golden case in fixtures/ on DuckDB, against its hand-derived values.

A fixture is one YAML file: the input rows (`given`), the options, and `expect`: result rows
keyed by output column, each metric value with its derivation by hand beside it. The same
inputs go through the independent Python oracle (tests/oracle.py), which must agree too.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics.catalog.metrics import parse_request
from sqlmetrics.compose.lists import reads_baseline
from tests.engines.cases import read_yaml
from tests.fixture_index import case_metrics

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CASES = sorted(FIXTURES.glob("*.yaml"))
TOLERANCE = 1e-9


def load(path: Path) -> dict[str, Any]:
    case: dict[str, Any] = read_yaml(path)
    for key in ("description", "given", "expect", "derivation"):
        assert key in case, f"{path.name}: missing {key!r}"
    return case


def frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns) if not rows else pd.DataFrame(rows)


def run(case: dict[str, Any], per_user: bool = False) -> pd.DataFrame:
    given = case["given"]
    options = dict(case.get("options", {}))
    recs = frame(given["recommendations"], ["user_id", "item_id", "score"])
    truth = frame(given["interactions"], ["user_id", "item_id", "relevance"])
    items = pd.DataFrame(given["items"]) if "items" in given else None
    history = pd.DataFrame(given["history"]) if "history" in given else None
    return sqlmetrics.evaluate(
        recs,
        truth,
        case_metrics(case),
        per_user=per_user,
        items=items,
        history=history,
        **options,
    )


@pytest.fixture(params=["duckdb_plan", "portable_plan"])
def plan(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """DuckDB ranks with a top-k aggregate; the portable window plan must agree."""
    if request.param == "portable_plan":
        monkeypatch.setattr("sqlmetrics.compose.plan.TOP_K_DIALECTS", frozenset())
    return str(request.param)


@pytest.mark.parametrize("path", CASES, ids=[path.stem for path in CASES])
def test_fixture_matches_golden_values(path: Path, plan: str) -> None:
    case = load(path)
    result = run(case)
    expected = pd.DataFrame(case["expect"])
    assert list(result.columns) == list(expected.columns)
    assert len(result) == len(expected), result
    for column in expected.columns:
        for got, want in zip(result[column], expected[column], strict=True):
            assert same(got, want), (column, got, want)


def same(got: Any, want: Any) -> bool:
    """Equal to 1e-9; ``.nan`` in a fixture (an undefined value) wants NaN or NULL, and so does
    ``null`` (a NULL group value)."""
    if want is None:
        return got is None or bool(pd.isna(got))
    if isinstance(want, float):
        if math.isnan(want):
            return got is None or bool(pd.isna(got))
        return math.isclose(got, want, rel_tol=0, abs_tol=TOLERANCE)
    return bool(got == want)


PER_USER_CASES = [path for path in CASES if "expect_per_user" in load(path)]


@pytest.mark.parametrize("path", PER_USER_CASES, ids=[path.stem for path in PER_USER_CASES])
def test_fixture_per_user_values(path: Path) -> None:
    """``expect_per_user``: the per-user rows (NaN where a user has no value), and
    ``diagnostics``: some of the counts, per group."""
    case = load(path)
    result = run(case, per_user=True)
    expected = pd.DataFrame(case["expect_per_user"])
    assert list(result.columns) == list(expected.columns)
    assert len(result) == len(expected), result
    for column in expected.columns:
        for got, want in zip(result[column], expected[column], strict=True):
            assert same(got, want), (column, got, want)
    if "diagnostics" in case:
        counted = sqlmetrics.read_diagnostics(run(case)).to_dict("records")
        for got, want in zip(counted, case["diagnostics"], strict=True):
            assert {key: got[key] for key in want} == want


@pytest.mark.parametrize("path", CASES, ids=[path.stem for path in CASES])
def test_every_expected_value_has_a_derivation(path: Path) -> None:
    case = load(path)
    for metric in case_metrics(case):
        assert str(case["derivation"].get(metric, "")).strip(), f"{path.name}: derive {metric}"
        parse_request(metric)  # a real metric name


def _first_of_each_pair(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """duplicates="first" done the plain way: the best-scored row of each (user, item)."""
    best: dict[tuple[Any, Any], dict[str, Any]] = {}
    for row in rows:
        key = (row["user_id"], row["item_id"])
        if key not in best or row["score"] > best[key]["score"]:
            best[key] = row
    return list(best.values())


@pytest.mark.parametrize("path", CASES, ids=[path.stem for path in CASES])
def test_fixture_agrees_with_the_independent_oracle(path: Path) -> None:
    """The oracle sees one group at a time: a recommendation-only column splits the lists and
    keeps every interaction, a shared column splits both. A metric the oracle has no formula
    for is left out, and the test then skips naming it once the others agree."""
    from tests.oracle import NoFormula

    case = load(path)
    unchecked: set[str] = set()
    for expected in case["expect"]:
        for metric in case_metrics(case):
            try:
                got = _oracle_value(case, expected, metric)
            except NoFormula:
                unchecked.add(parse_request(metric).metric.name)
                continue
            want = expected[metric]
            assert same(got, want), (metric, got, want)
    if unchecked:
        pytest.skip(f"tests/oracle.py has no formula for {', '.join(sorted(unchecked))}")


def _oracle_value(case: dict[str, Any], expected: dict[str, Any], metric: str) -> float:
    """The oracle's value of ``metric`` over the group of the ``expected`` row."""
    from tests.beyond_oracle import list_metric, overlap_metric
    from tests.oracle import RATED_METRICS, SCORED_METRICS, oracle_mean, oracle_scored

    options = dict(case.get("options", {}))
    groups = options.pop("group_by", [])
    recommendations = case["given"]["recommendations"]
    if options.pop("duplicates", "error") == "first":
        recommendations = _first_of_each_pair(recommendations)
    recs = [r for r in recommendations if all(r[g] == expected[g] for g in groups)]
    truth = [
        row
        for row in case["given"]["interactions"]
        if all(row.get(g, expected[g]) == expected[g] for g in groups)
    ]
    request = parse_request(metric)
    name = request.metric.name
    # a parameter asked in parentheses (err(gmax=query)@10): the oracle's err/gmax=query
    name += "".join(f"/{key}={value}" for key, value in request.parameters)
    if reads_baseline(request.metric):
        # the same user's list in the baseline model, within the other group columns
        model, others = groups[0], groups[1:]
        baseline = [
            r
            for r in recommendations
            if str(r[model]) == options["baseline"] and all(r[g] == expected[g] for g in others)
        ]
        p = float(dict(request.parameters).get("p", 0.9))
        return overlap_metric(request.metric.name, int(request.k or 0), recs, baseline, p)
    if request.metric.reads == "lists":
        # The catalogue and the popularity are the same for every group.
        return list_metric(
            name,
            int(request.k or 0),
            recs,
            case["given"]["interactions"],
            case["given"].get("items"),
            all_recommendations=recommendations,
            history=case["given"].get("history"),
            relevant_interactions=truth,
        )
    if name in SCORED_METRICS | RATED_METRICS:
        return oracle_scored(
            recs,
            truth,
            name,
            threshold=options.get("threshold", 0.0),
            score_threshold=request.score_threshold or 0.5,
            weight=options.get("columns", {}).get("weight"),
        ).mean
    # a level metric's @x travels where the oracle reads a cutoff
    k = request.score_threshold if request.metric.takes_level else request.k
    return oracle_mean(  # type: ignore[arg-type]
        recs,
        truth,
        name,
        k,
        rank_column=any("rank" in row and "score" not in row for row in recs),
        **options,
    )


def test_curve_fixture_against_the_oracle_and_pytrec_eval() -> None:
    """curve_k_1_to_16.yaml's values, from tests/oracle.py at each k and from pytrec_eval's
    P_k and recall_k (whose means over the two users are the fixture's)."""
    import pytrec_eval

    from tests.oracle import oracle_mean

    case = load(Path(__file__).parent.parent / "fixtures" / "curve_k_1_to_16.yaml")
    recs, truth = case["given"]["recommendations"], case["given"]["interactions"]
    expected = case["expect"][0]
    qrels = {str(row["user_id"]): {} for row in truth}
    for row in truth:
        qrels[str(row["user_id"])][str(row["item_id"])] = 1
    run: dict[str, dict[str, float]] = {}
    for row in recs:
        run.setdefault(str(row["user_id"]), {})[str(row["item_id"])] = row["score"]
    cutoffs = ",".join(str(k) for k in range(1, 17))
    measured = pytrec_eval.RelevanceEvaluator(qrels, {f"P.{cutoffs}", f"recall.{cutoffs}"})
    per_user = measured.evaluate(run)
    for k in range(1, 17):
        for metric, trec in (("precision", "P"), ("recall", "recall")):
            trec_mean = sum(user[f"{trec}_{k}"] for user in per_user.values()) / len(per_user)
            assert math.isclose(expected[f"{metric}@{k}"], trec_mean, abs_tol=1e-9), (metric, k)
        for metric in ("precision", "recall", "hit_rate", "mrr"):
            mean = oracle_mean(recs, truth, metric, k)
            assert math.isclose(expected[f"{metric}@{k}"], mean, abs_tol=1e-9), (metric, k)


def test_a_metric_without_an_oracle_formula_skips_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A new metric file whose formula tests/oracle.py lacks: its fixture's other metrics are
    still compared, then the test skips with the metric's name, rather than failing on an
    unknown name."""
    import tests.oracle

    monkeypatch.setattr(tests.oracle, "ALL_METRICS", tests.oracle.ALL_METRICS - {"ndcg"})
    with pytest.raises(pytest.skip.Exception, match=r"no formula for ndcg$"):
        test_fixture_agrees_with_the_independent_oracle(FIXTURES / "seed004_ndcg.yaml")


def test_the_oracles_formulas_name_real_metrics() -> None:
    """The oracles name the metrics they have a formula for; a metric file renamed or removed
    leaves no formula behind under its old name."""
    from sqlmetrics.catalog.metrics import metrics
    from tests import beyond_oracle, intent_oracle, oracle

    formulas = [oracle.ALL_METRICS, beyond_oracle.LIST_METRICS, intent_oracle.INTENT_METRICS]
    formulas += [oracle._SCORED_FORMULAS, oracle._RATED_FORMULAS]
    for names in formulas:
        assert names <= set(metrics()), sorted(names - set(metrics()))
