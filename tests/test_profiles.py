"""Definition profiles: each profile against the library it reproduces, on shared random data.

Why: a profile promises "the number this library gives"; these golden tests run the library
itself (pytrec_eval, ranx, scikit-learn, Spark MLlib here; the others through
tests/profile_runner.py in .venv-profiles) on the random data of test_crosscheck.py (graded
relevance, users without recommendations or without relevant items, duplicate interactions;
tied scores where the library is deterministic) and require equality to 1e-9 for every metric
the library defines, so a change in the library shows up here.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sqlmetrics.catalog.profiles import PROFILES, Profile, profile_requests
from sqlmetrics.cli import main
from sqlmetrics.cli.markdown import GENERIC, profiles_markdown
from sqlmetrics.compose.inputs import POPULATIONS
from tests.engines.conftest import skip_or_fail
from tests.test_crosscheck import (
    DATASETS,
    LIB_KS,
    Rows,
    _max_relevance,
    _population,
    _ranx_expected,
    _top_k_run,
    close,
    diff_users,
    per_user_dict,
    report,
    to_frames,
)

REPO = Path(__file__).resolve().parent.parent


# ----------------------------------------------------------------------------------------------
# The data itself
# ----------------------------------------------------------------------------------------------


def test_docs_page_is_generated_from_the_data() -> None:
    page = (REPO / "docs" / "profiles.md").read_text(encoding="utf-8")
    assert page == profiles_markdown(), "run: sqlmetrics profiles --format markdown"


def test_profiles_name_real_metrics_in_valid_forms() -> None:
    from sqlmetrics.catalog.metrics import metrics

    for profile in PROFILES.values():
        assert not set(profile.metrics) & set(profile.unsupported), profile.name
        assert profile.population in POPULATIONS, profile.name
        for form, population in profile.populations.items():
            assert form in profile.metrics and population in POPULATIONS, (profile.name, form)
            assert population != profile.population, (profile.name, form)
            assert metrics()[profile.metrics[form]].reads == "judged", (profile.name, form)
        for form in profile.unsupported:
            assert form.partition("@")[0] in GENERIC, (profile.name, form)
        for form, metric in profile.metrics.items():
            name, at, cut = form.partition("@")
            assert name in GENERIC, (profile.name, form)
            assert name in metrics() and metric in metrics(), (profile.name, form, metric)
            if at:
                assert cut == "k" and metrics()[metric].takes_cutoff, (profile.name, form)


def test_a_population_of_its_own_only_for_ranking_metrics() -> None:
    """Only the ranking metrics have a population to narrow; on another it would be ignored."""
    from sqlmetrics.catalog.metrics import MetricRequest, metrics
    from sqlmetrics.compose.inputs import Options
    from sqlmetrics.compose.per_user import widest_population
    from sqlmetrics.errors import SqlmetricsError

    ndcg = MetricRequest(metrics()["ndcg"], 5, "ndcg@5", population="common")
    recall = MetricRequest(metrics()["recall"], 5, "recall@5")
    assert widest_population([ndcg], Options()) == "common"
    assert widest_population([ndcg, recall], Options()) == "all"
    auc = MetricRequest(metrics()["auc"], None, "auc", population="common")
    with pytest.raises(SqlmetricsError, match=r"auc reads scored.*population of its own"):
        widest_population([ndcg, auc], Options())


def test_profile_refuses_a_metric_the_library_lacks(small: Any) -> None:
    import sqlmetrics

    recs, truth = small
    with pytest.raises(sqlmetrics.SqlmetricsError, match=r"profile 'spark'.*'mrr@10'.*map@k"):
        sqlmetrics.evaluate(recs, truth, metrics=["map@10", "mrr@10"], profile="spark")
    demo = Profile("demo", "demo 1.0", {"map@k": "map"}, unsupported={"ndcg@k": "use x"})
    with pytest.raises(
        sqlmetrics.SqlmetricsError, match=r"'demo' cannot reproduce 'ndcg@5': use x"
    ):
        profile_requests(demo, ["map@5", "ndcg@5"])
    with pytest.raises(sqlmetrics.SqlmetricsError, match="unknown profile 'sprak'"):
        sqlmetrics.to_sql(["map@10"], profile="sprak")
    with pytest.raises(sqlmetrics.SqlmetricsError, match="sets ties='average'"):
        sqlmetrics.evaluate(recs, truth, metrics=["ndcg@3"], profile="sklearn", ties="pessimistic")


def test_profile_conflicting_option_is_refused(small: Any) -> None:
    import sqlmetrics

    recs, truth = small
    with pytest.raises(sqlmetrics.SqlmetricsError, match="drop ties='optimistic' or the profile"):
        sqlmetrics.evaluate(recs, truth, metrics=["ndcg@3"], profile="sklearn", ties="optimistic")
    # Asking for the profile's own value is fine.
    sqlmetrics.evaluate(recs, truth, metrics=["ndcg@3"], profile="sklearn", ties="average")


def test_profile_averages_each_metric_over_its_own_population(
    small: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MS Recommenders: precision@k over the common users, ndcg@k over every user, in one
    query; per user, a metric over the common users is NULL for a user without a list. The
    same numbers in passes over the users (evaluate's path under a memory limit)."""
    import sqlmetrics
    from sqlmetrics.engines import duckdb_passes

    recs, truth = small  # user 3 has a relevant item and no list
    labels = ["precision@2", "ndcg@2", "map@2"]
    both = sqlmetrics.evaluate(recs, truth, metrics=labels, profile="recommenders")
    binary = {"columns": {"relevance": None}}
    common = sqlmetrics.evaluate(
        recs, truth, metrics=["precision@2", "map_min@2"], population="common", **binary
    )
    every = sqlmetrics.evaluate(recs, truth, metrics=["ndcg@2"], **binary)
    assert both["users"].tolist() == every["users"].tolist() == [3]
    assert both["precision@2"].tolist() == common["precision@2"].tolist()
    assert both["map@2"].tolist() == common["map_min@2"].tolist()
    assert both["ndcg@2"].tolist() == every["ndcg@2"].tolist()
    over_all = sqlmetrics.evaluate(recs, truth, metrics=["precision@2"], **binary)
    assert over_all["precision@2"].iloc[0] < both["precision@2"].iloc[0]  # user 3 left out
    per_user = sqlmetrics.evaluate(recs, truth, metrics=labels, per_user=True, profile="lenskit")
    by_user = per_user.set_index("user_id")
    assert math.isnan(by_user.loc[3, "precision@2"]) and math.isnan(by_user.loc[3, "map@2"])
    assert by_user.loc[3, "ndcg@2"] == 0
    lenskit = sqlmetrics.evaluate(recs, truth, metrics=labels, profile="lenskit")
    assert lenskit["precision@2"].iloc[0] == by_user["precision@2"].mean()  # NaN skipped
    assert lenskit["ndcg@2"].iloc[0] == by_user["ndcg@2"].mean()

    def in_passes(
        *arguments: Any,
        floor: float | None = None,
        rows: int | None = None,
        limit: float | None = None,
    ) -> Any:
        passes = duckdb_passes.user_passes(3, None)
        return (*duckdb_passes.run_in_passes(*arguments, passes=passes, floor=floor), 3)

    monkeypatch.setattr(duckdb_passes, "run", in_passes)
    for profile, expected in (("recommenders", both), ("lenskit", lenskit)):
        split = sqlmetrics.evaluate(recs, truth, metrics=labels, profile=profile)
        assert split.attrs["passes"] == 3
        for column in ["users", *labels]:
            assert math.isclose(split[column].iloc[0], expected[column].iloc[0], abs_tol=1e-12)


def test_profile_picks_the_variant_and_keeps_the_label(small: Any) -> None:
    import sqlmetrics

    recs, truth = small
    ours = sqlmetrics.evaluate(recs, truth, metrics=["map_min@2"], per_user=True)
    spark = sqlmetrics.evaluate(recs, truth, metrics=["map@2"], per_user=True, profile="spark")
    assert spark["map@2"].tolist() == ours["map_min@2"].tolist()
    sql = sqlmetrics.to_sql(["map@2"], profile="spark")
    assert sql == sqlmetrics.to_sql(["map_min@2"], columns={"relevance": None}).replace(
        "map_min@2", "map@2"
    )


def test_cli_profile_and_listing(
    small: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recs, truth = small
    recs.to_csv(tmp_path / "recs.csv", index=False)
    truth.to_csv(tmp_path / "truth.csv", index=False)
    paths = [str(tmp_path / "recs.csv"), str(tmp_path / "truth.csv")]
    assert main(["evaluate", *paths, "-m", "map@2", "--profile", "spark", "--format", "csv"]) == 0
    spark = capsys.readouterr().out
    assert main(["evaluate", *paths, "-m", "map_min@2", "--no-relevance", "--format", "csv"]) == 0
    assert spark.replace("map@2", "map_min@2") == capsys.readouterr().out
    assert main(["evaluate", *paths, "-m", "mrr@2", "--profile", "spark"]) == 2
    assert "does not define 'mrr@2'" in capsys.readouterr().err
    assert main(["sql", "-m", "ndcg@5", "--profile", "sklearn"]) == 0
    assert "WITH" in capsys.readouterr().out
    assert main(["sql", "--all", "--cutoff", "5", "--profile", "spark"]) == 0
    assert "map@5" in capsys.readouterr().out
    assert main(["profiles"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in PROFILES)
    assert main(["profiles", "--format", "markdown"]) == 0
    assert capsys.readouterr().out == profiles_markdown()


# ----------------------------------------------------------------------------------------------
# Golden tests: sqlmetrics with profile= against the library
# ----------------------------------------------------------------------------------------------


def _sql_per_user(
    recs: Rows, inter: Rows, labels: list[str], profile: str, population: str = "all"
) -> dict[str, dict[str, float]]:
    import sqlmetrics

    rec_df, truth_df = to_frames(recs, inter)
    frame = sqlmetrics.evaluate(
        rec_df, truth_df, metrics=labels, per_user=True, profile=profile, population=population
    )
    return {label: {str(u): v for u, v in per_user_dict(frame, label).items()} for label in labels}


def _compare(
    expected: dict[str, dict[str, float]],
    got: dict[str, dict[str, float]],
    label: str,
    users: Callable[[str], set[str]] | None = None,
) -> list[str]:
    """Per user (restricted to the users the library scores) and the mean over them."""
    problems: list[str] = []
    for column, want in expected.items():
        have = got[column]
        if users is not None:
            have = {u: v for u, v in have.items() if u in users(column)}
        problems += diff_users(have, want, f"{label} {column}")
        if want and have:
            mean_got, mean_want = sum(have.values()) / len(have), sum(want.values()) / len(want)
            if not close(mean_got, mean_want):
                problems.append(f"{label} {column}: mean {mean_got!r} vs {mean_want!r}")
    return problems


# --- trec_eval ---------------------------------------------------------------------------------

# profile form -> trec_eval measure (a cut measure is expanded over LIB_KS)
TREC_MEASURES = {
    "map": "map",
    "map@k": "map_cut",
    "ndcg": "ndcg",
    "ndcg@k": "ndcg_cut",
    "precision": "set_P",
    "precision@k": "P",
    "recall": "set_recall",
    "recall@k": "recall",
    "hit_rate@k": "success",
    "mrr": "recip_rank",
    "r_precision": "Rprec",
    "hits": "num_rel_ret",
    "f1": "set_F",
    "recall_capped": "set_relative_P",
    "recall_capped@k": "relative_P",
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
    "gm_map": "gm_map",
    "iprec_at_recall": "iprec_at_recall",
    "iprec_at_recall_trec9": "iprec_at_recall",  # IPrec@x: pytrec_eval's own cutoffs
    "iprec_11pt_avg": "11pt_avg",
    "rprec_mult": "Rprec_mult",
    "bpref": "bpref",
    "gm_bpref": "gm_bpref",
    "infap": "infAP",
    "num_nonrel_judged_ret": "num_nonrel_judged_ret",
    "set_map": "set_map",
    "utility": "utility",
    "bin_g": "binG",
    "normalized_gain": "G",
    "ndcg_rel": "ndcg_rel",
    "rndcg": "Rndcg",
    "ndcg_gains": "ndcg",  # without gains
    "ndcg_gains@k": "ndcg_cut",
    "ndcg_rel_gains": "ndcg_rel",  # without gains
    "rndcg_gains": "Rndcg",
    "normalized_gain_gains": "G",
}
# pytrec_eval's key where it is not the measure's name: the level of iprec_at_recall and
# rprec_mult without @x (0 and 1, the profile's defaults).
TREC_KEYS = {
    "iprec_at_recall": "iprec_at_recall_0.00",
    "iprec_at_recall_trec9": "iprec_at_recall_0.00",
    "rprec_mult": "Rprec_mult_1.00",
}


def _trec_eval(recs: Rows, inter: Rows, population: str = "all") -> dict[str, dict[str, float]]:
    """pytrec_eval per user of sqlmetrics' ``population``: all, the users with a relevant
    interaction; judged, pytrec_eval's own (the users with a list and any interaction);
    all_judged, every user with an interaction. 0 for a user without a list (trec_eval -c)."""
    import pytrec_eval

    qrels: dict[str, dict[str, int]] = {}
    for (user, item), rel in _max_relevance(inter).items():
        qrels.setdefault(str(user), {})[str(item)] = rel
    run = {u: items for u, items in _top_k_run(recs, None).items() if items}
    cuts = ",".join(map(str, LIB_KS))
    measures = {f"{m}.{cuts}" if f.endswith("@k") else m for f, m in TREC_MEASURES.items()}
    results = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    users = {
        "all": {str(u) for u in _population(inter, 0.0)},
        "judged": set(results),
        "all_judged": set(qrels),
    }[population]
    relevant = {
        u: sum(1 for (v, _), rel in _max_relevance(inter).items() if str(v) == u and rel > 0)
        for u in users
    }
    out: dict[str, dict[str, float]] = {}
    for form, measure in TREC_MEASURES.items():
        name = form.removesuffix("@k")
        for k in LIB_KS if form.endswith("@k") else [None]:
            key = TREC_KEYS.get(form, measure) if k is None else f"{measure}_{k}"
            label = name if k is None else f"{name}@{k}"
            # A user without a list is not in pytrec_eval's results: 0 (trec_eval -c), but
            # num_rel is still |R| and gm_map's and gm_bpref's value is the floor, 1e-5.
            missing = {"gm_map": math.log(1e-5), "gm_bpref": math.log(1e-5)}
            out[label] = {
                u: float(
                    results[u][key]
                    if u in results
                    else relevant[u]
                    if name == "num_rel"
                    else missing.get(name, 0.0)
                )
                for u in users
            }
            if name.startswith("gm_"):  # pytrec_eval's per-query value is the log of ours
                out[label] = {u: math.exp(v) for u, v in out[label].items()}
    return out


TREC_DATA = ["int-noties", "str-noties", "int-ties", "str-ties"]


def test_trec_eval_measures_cover_the_profile() -> None:
    assert set(TREC_MEASURES) == set(PROFILES["trec_eval_9"].metrics)
    # trec_eval 10 differs from 9.0.8 (pytrec_eval) in the recall cutoffs, and adds measures
    ten, nine = PROFILES["trec_eval"].metrics, PROFILES["trec_eval_9"].metrics
    changed = {form for form in nine if ten[form] != nine[form]}
    assert changed == {"iprec_at_recall", "iprec_11pt_avg"}
    assert set(ten) - set(nine) == set(PROFILES["trec_eval_9"].unsupported)
    assert nine["iprec_at_recall"] == "iprec_at_recall_trec9"


@pytest.mark.parametrize("data", TREC_DATA)
def test_trec_eval_profile(data: str) -> None:
    """Ties too: trec_eval breaks them by docno descending as strings (strcmp), and so does the
    profile's ties='id_text', integer ids included (there ties='id' would order 10 before 9)."""
    recs, inter = DATASETS[data]()
    expected = _trec_eval(recs, inter)
    report(_compare(expected, _sql_per_user(recs, inter, list(expected), "trec_eval_9"), "trec"))
    if data == "int-ties":  # the data must tell the two orders apart
        import sqlmetrics

        by_number = sqlmetrics.evaluate(*to_frames(recs, inter), metrics=["mrr"], per_user=True)
        got = {str(u): v for u, v in per_user_dict(by_number, "mrr").items()}
        assert diff_users(got, expected["mrr"], "ties='id'"), "no tie where 9 vs 10 matters"


@pytest.mark.parametrize("population", ["judged", "all_judged"])
@pytest.mark.parametrize("data", ["int-ties", "str-noties"])
def test_trec_eval_profile_populations(data: str, population: str) -> None:
    """trec_eval's own populations under the profile: users with only non-relevant
    interactions (a tenth of the data) score as pytrec_eval scores them."""
    recs, inter = DATASETS[data]()
    expected = _trec_eval(recs, inter, population)
    got = _sql_per_user(recs, inter, list(expected), "trec_eval_9", population=population)
    report(_compare(expected, got, "trec"))
    judged_only = set(expected["num_rel"]) - {str(u) for u in _population(inter, 0.0)}
    assert judged_only and all(expected["num_rel"][u] == 0 for u in judged_only)


# trec_eval's own names (pytrec_eval's keys) and ir_measures' names for them, as typed.
TREC_SPELLINGS = {
    "P_5": "P_5",
    "P.10": "P_10",
    "P@5": "P_5",
    "recall_10": "recall_10",
    "R@5": "recall_5",
    "ndcg_cut_10": "ndcg_cut_10",
    "nDCG@10": "ndcg_cut_10",
    "map_cut_5": "map_cut_5",
    "AP@10": "map_cut_10",
    "AP": "map",
    "recip_rank": "recip_rank",
    "RR": "recip_rank",
    "Rprec": "Rprec",
    "success_5": "success_5",
    "Success@10": "success_10",
    "set_P": "set_P",
    "set_recall": "set_recall",
    "set_F": "set_F",
    "relative_P_5": "relative_P_5",
    "set_relative_P": "set_relative_P",
    "num_rel_ret": "num_rel_ret",
    "NumRelRet": "num_rel_ret",
    "Bpref": "bpref",  # ir_measures' spelling (names are case-insensitive)
}


@pytest.mark.parametrize("data", ["int-ties", "str-noties"])
def test_trec_eval_spellings_under_the_profile(data: str) -> None:
    """Issue 22: the names as trec_eval prints them (and ir_measures writes them) give
    trec_eval's numbers under the profile, per user."""
    import pytrec_eval

    recs, inter = DATASETS[data]()
    population = {str(u) for u in _population(inter, 0.0)}
    qrels: dict[str, dict[str, int]] = {}
    for (user, item), rel in _max_relevance(inter).items():
        qrels.setdefault(str(user), {})[str(item)] = rel
    run = {u: items for u, items in _top_k_run(recs, None).items() if items}
    measures = {
        "P.5,10", "recall.5,10", "ndcg_cut.10", "map_cut.5,10", "map", "recip_rank", "Rprec",
        "success.5,10", "set_P", "set_recall", "set_F", "relative_P.5", "set_relative_P",
        "num_rel_ret", "bpref",
    }  # fmt: skip
    results = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    expected = {
        label: {u: float(results.get(u, {}).get(key, 0.0)) for u in population}
        for label, key in TREC_SPELLINGS.items()
    }
    got = _sql_per_user(recs, inter, list(TREC_SPELLINGS), "trec_eval_9")
    report(_compare(expected, got, "trec spellings"))


# --- ranx --------------------------------------------------------------------------------------


@pytest.mark.parametrize("data", ["int-noties", "str-noties"])
def test_ranx_profile(data: str) -> None:
    """Tie-free data only: ranx orders equal scores by insertion order (arbitrary)."""
    recs, inter = DATASETS[data]()
    expected = _ranx_expected(recs, inter, 0.0)
    expected["rbp"] = expected.pop("rbp_graded")  # ranx's rbp is the profile's rbp
    forms = {label.split("@")[0] + ("@k" if "@" in label else "") for label in expected}
    assert forms == set(PROFILES["ranx"].metrics)
    report(_compare(expected, _sql_per_user(recs, inter, list(expected), "ranx"), "ranx"))


# --- scikit-learn ------------------------------------------------------------------------------


def _sklearn(recs: Rows, inter: Rows) -> dict[str, dict[str, float]]:
    """ndcg_score / dcg_score per user over the user's scored items (users with >= 2)."""
    from sklearn.metrics import dcg_score, ndcg_score

    population = _population(inter, 0.0)
    rel = _max_relevance(inter)
    by_user: dict[object, Rows] = {}
    for r in recs:
        by_user.setdefault(r["user_id"], []).append(r)
    out: dict[str, dict[str, float]] = {}
    for user, rows in by_user.items():
        if user not in population or len(rows) < 2:
            continue
        y_true = np.array([[rel.get((user, r["item_id"]), 0) for r in rows]], dtype=float)
        y_score = np.array([[r["score"] for r in rows]], dtype=float)
        for k in (None, *LIB_KS):
            suffix = "" if k is None else f"@{k}"
            out.setdefault(f"ndcg{suffix}", {})[str(user)] = ndcg_score(y_true, y_score, k=k)
            out.setdefault(f"dcg{suffix}", {})[str(user)] = dcg_score(y_true, y_score, k=k)
    return out


@pytest.mark.parametrize("data", list(DATASETS))
def test_sklearn_profile(data: str) -> None:
    """Tied data too: sklearn averages the DCG over the orders of equal scores."""
    recs, inter = DATASETS[data]()
    expected = _sklearn(recs, inter)
    got = _sql_per_user(recs, inter, list(expected), "sklearn")
    report(_compare(expected, got, "sklearn", users=lambda column: set(expected[column])))


# --- Spark MLlib -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def spark_context(tmp_path_factory: pytest.TempPathFactory) -> Any:
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        skip_or_fail("spark", "pyspark is not installed")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        skip_or_fail("spark", "no Java runtime (java) for Spark")
    running = SparkSession.getActiveSession()  # the engine tests' session, when they ran first
    if running is not None:
        yield running
        return
    session = (
        SparkSession.builder.master("local[1]")
        .appName("sqlmetrics-profiles")
        # the JVM outlives this session: the engine tests' (tests/engines/engines.py) need 2g
        .config("spark.driver.memory", "2g")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "1")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark")))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _spark_rows(recs: Rows, inter: Rows) -> list[tuple[list[Any], list[Any]]]:
    """(ranked predictions, label set) per population user: every interaction row is a label
    (Spark takes a set of items); users without recommendations get an empty list."""
    labels: dict[object, set[object]] = {}
    for r in inter:
        labels.setdefault(r["user_id"], set()).add(r["item_id"])
    ranked = _top_k_run(recs, None)
    by_str = {str(u): u for u in labels}
    rows = []
    for user, items in labels.items():
        listed = ranked.get(str(user), {})
        original = {str(r["item_id"]): r["item_id"] for r in recs if r["user_id"] == user}
        rows.append(([original[i] for i in listed], sorted(items, key=str)))
    assert len(by_str) == len(labels)
    return rows


@pytest.mark.xdist_group("spark")  # with the Spark engine tests: one JVM per run
@pytest.mark.parametrize("data", ["int-noties", "str-noties", "int-ties", "str-ties"])
def test_spark_profile(spark_context: Any, data: str) -> None:
    """Spark takes each list already ordered, so tied data is compared too (the order is
    sqlmetrics' ranking rule). RankingMetrics gives means only: they are compared to 1e-9, and
    RankingEvaluator (the DataFrame API) must give the same means."""
    from pyspark.ml.evaluation import RankingEvaluator
    from pyspark.mllib.evaluation import RankingMetrics

    recs, inter = DATASETS[data]()
    rows = _spark_rows(recs, inter)
    metrics = RankingMetrics(spark_context.sparkContext.parallelize(rows, 1))
    expected: dict[str, float] = {"map": metrics.meanAveragePrecision}
    for k in LIB_KS:
        expected[f"map@{k}"] = metrics.meanAveragePrecisionAt(k)
        expected[f"precision@{k}"] = metrics.precisionAt(k)
        expected[f"recall@{k}"] = metrics.recallAt(k)
        expected[f"ndcg@{k}"] = metrics.ndcgAt(k)
    forms = {label.split("@")[0] + ("@k" if "@" in label else "") for label in expected}
    assert forms == set(PROFILES["spark"].metrics)

    # RankingEvaluator wants double-typed ids; map every id to a float index.
    index = {
        item: float(i) for i, item in enumerate(sorted({str(x) for r in rows for x in r[0] + r[1]}))
    }
    frame = spark_context.createDataFrame(
        [([index[str(x)] for x in p], [index[str(x)] for x in lab]) for p, lab in rows],
        "prediction: array<double>, label: array<double>",
    )
    names = {
        "meanAveragePrecision": "map",
        "meanAveragePrecisionAtK": "map@{k}",
        "precisionAtK": "precision@{k}",
        "recallAtK": "recall@{k}",
        "ndcgAtK": "ndcg@{k}",
    }
    problems = []
    for spark_name, label in names.items():
        for k in LIB_KS if "{k}" in label else [10]:
            value = RankingEvaluator(metricName=spark_name, k=k).evaluate(frame)
            if not close(value, expected[label.format(k=k)]):
                problems.append(f"RankingEvaluator {spark_name}@{k}: {value} vs RankingMetrics")

    got = _sql_per_user(recs, inter, list(expected), "spark")
    for label, want in expected.items():
        values = list(got[label].values())
        assert len(values) == len(rows)
        mean = sum(values) / len(values)
        if not close(mean, want) or math.isnan(mean):
            problems.append(f"spark {label}: sqlmetrics {mean!r} vs Spark {want!r}")
    report(problems)


def _spark_graded_rows(
    recs: Rows, inter: Rows, ascending: bool = False
) -> list[tuple[list[Any], list[Any], list[float]]]:
    """(ranked predictions, relevant items, their relevances) per population user, the labels
    in relevance-descending order (the profile's condition; ``ascending`` breaks it)."""
    relevant: dict[object, list[tuple[object, int]]] = {}
    for (user, item), rel in _max_relevance(inter).items():
        if rel > 0:
            relevant.setdefault(user, []).append((item, rel))
    ranked = _top_k_run(recs, None)
    rows = []
    for user, labelled in relevant.items():
        labelled.sort(key=lambda pair: (pair[1], str(pair[0])), reverse=not ascending)
        original = {str(r["item_id"]): r["item_id"] for r in recs if r["user_id"] == user}
        predictions = [original[i] for i in ranked.get(str(user), {})]
        rows.append((predictions, [i for i, _ in labelled], [float(r) for _, r in labelled]))
    return rows


def _scala_ranking_metrics(spark: Any, rows: list[tuple[list[Any], list[Any], list[float]]]) -> Any:
    """The Scala RankingMetrics on (predictions, labels, relevance values) triples, through
    py4j: pyspark's RankingMetrics passes only the first two columns to the JVM
    (PythonMLLibAPI.newRankingMetrics), so its NDCG stays binary whatever the relevances."""
    context = spark.sparkContext
    jvm = context._jvm

    def array(values: list[Any], kind: Any) -> Any:
        java_array = context._gateway.new_array(kind, len(values))
        for index, value in enumerate(values):
            java_array[index] = value
        return java_array

    triples = jvm.java.util.ArrayList()
    for predictions, labels, relevances in rows:
        triples.add(
            jvm.scala.Tuple3(
                array(predictions, jvm.java.lang.Object),
                array(labels, jvm.java.lang.Object),
                array(relevances, jvm.double),
            )
        )
    rdd = context._jsc.parallelize(triples, 1).rdd()
    return jvm.org.apache.spark.mllib.evaluation.RankingMetrics(
        rdd, jvm.scala.reflect.ClassTag.Any()
    )


@pytest.mark.xdist_group("spark")  # with the Spark engine tests: one JVM per run
@pytest.mark.parametrize("data", ["int-noties", "str-ties", "int-ties"])
def test_spark_graded_profile(spark_context: Any, data: str) -> None:
    """RankingMetrics with relevance values (graded NDCG, Scala API), labels in relevance-
    descending order; means to 1e-9. In ascending order Spark's NDCG differs: the condition
    matters."""
    recs, inter = DATASETS[data]()
    rows = _spark_graded_rows(recs, inter)
    assert any(not p for p, _, _ in rows), "the data must hold users without recommendations"
    assert any(len(set(rels)) > 1 for _, _, rels in rows), "the data must be graded"
    metrics = _scala_ranking_metrics(spark_context, rows)
    expected: dict[str, float] = {"map": metrics.meanAveragePrecision()}
    for k in LIB_KS:
        expected[f"map@{k}"] = metrics.meanAveragePrecisionAt(k)
        expected[f"precision@{k}"] = metrics.precisionAt(k)
        expected[f"recall@{k}"] = metrics.recallAt(k)
        expected[f"ndcg@{k}"] = metrics.ndcgAt(k)
    forms = {label.split("@")[0] + ("@k" if "@" in label else "") for label in expected}
    assert forms == set(PROFILES["spark_graded"].metrics)
    got = _sql_per_user(recs, inter, list(expected), "spark_graded")
    problems = []
    for label, want in expected.items():
        values = list(got[label].values())
        assert len(values) == len(rows), label
        mean = sum(values) / len(values)
        if not close(mean, want) or math.isnan(mean):
            problems.append(f"spark_graded {label}: sqlmetrics {mean!r} vs Spark {want!r}")
    ascending = _scala_ranking_metrics(spark_context, _spark_graded_rows(recs, inter, True))
    k = max(LIB_KS)
    assert not close(ascending.ndcgAt(k), expected[f"ndcg@{k}"]), "label order did not matter"
    report(problems)


# --- libraries in .venv-profiles (make profiles-venv) ------------------------------------------


def _profiles_python() -> Path:
    """The interpreter of .venv-profiles (or SQLMETRICS_PROFILES_PYTHON)."""
    python = Path(os.environ.get("SQLMETRICS_PROFILES_PYTHON", REPO / ".venv-profiles/bin/python"))
    if (
        not (python.parent.parent / ".installed").exists()
        and "SQLMETRICS_PROFILES_PYTHON" not in os.environ
    ):
        skip_or_fail("profiles", f"{python.parent.parent} is not built: run `make profiles-venv`")
    return python


def _run_library(library: str, recs: Rows, inter: Rows) -> dict[str, dict[str, Any]]:
    """tests/profile_runner.py in .venv-profiles on the data, interactions one row per
    (user, item) with the largest relevance (the libraries would count repeats twice)."""
    python = _profiles_python()
    truth = [
        {"user_id": user, "item_id": item, "relevance": rel}
        for (user, item), rel in _max_relevance(inter).items()
    ]
    data = {"recommendations": recs, "interactions": truth, "ks": list(LIB_KS)}
    done = subprocess.run(
        [str(python), str(REPO / "tests" / "profile_runner.py"), library],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if done.returncode != 0:
        pytest.fail(f"profile_runner.py {library} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _means(recs: Rows, inter: Rows, labels: list[str], **options: Any) -> dict[str, float]:
    import sqlmetrics

    rec_df, truth_df = to_frames(recs, inter)
    frame = sqlmetrics.evaluate(rec_df, truth_df, metrics=labels, **options)
    return {label: float(frame[label].iloc[0]) for label in labels}


def _compare_means(expected: dict[str, float], got: dict[str, float], label: str) -> list[str]:
    return [
        f"{label} {name}: sqlmetrics {got[name]!r} vs library {want!r}"
        for name, want in expected.items()
        if not close(got[name], want)
    ]


@pytest.mark.parametrize("data", ["int-noties", "str-noties"])
def test_recommenders_profile(data: str) -> None:
    """Means only (the library returns means); tie-free data: its sort keeps the input order
    of equal scores. Also checks the two alternatives the profile's notes promise."""
    recs, inter = DATASETS[data]()
    numbers = _run_library("recommenders", recs, inter)["means"]
    expected = {
        label: value
        for label, value in numbers.items()
        if label.split("@")[0] in {"precision", "recall", "map", "ndcg"}
    }
    forms = {label.split("@")[0] + "@k" for label in expected}
    assert forms == set(PROFILES["recommenders"].metrics)
    # One query: ndcg@k over every user, the others over the common users.
    problems = _compare_means(
        expected, _means(recs, inter, list(expected), profile="recommenders"), "recommenders"
    )
    # map() divides by |R|: sqlmetrics map with population common, relevance ignored.
    binary = {"columns": {"relevance": None}}
    gt = {
        label.replace("map_gt", "map"): v
        for label, v in numbers.items()
        if label.startswith("map_gt")
    }
    problems += _compare_means(
        gt, _means(recs, inter, list(gt), population="common", **binary), "map()"
    )
    report(problems)


@pytest.mark.parametrize("data", list(DATASETS))
def test_rectools_profile(data: str) -> None:
    """Per user; tied data too, since RecTools takes the ranks as given."""
    recs, inter = DATASETS[data]()
    numbers = _run_library("rectools", recs, inter)["per_user"]
    expected = {
        label.replace("ndcg_default", "ndcg"): v
        for label, v in numbers.items()
        if not label.startswith("ndcg_achievable")
    }
    forms = {label.split("@")[0] + "@k" for label in expected}
    assert forms == set(PROFILES["rectools"].metrics)
    problems = _compare(
        expected, _sql_per_user(recs, inter, list(expected), "rectools"), "rectools"
    )
    # NDCG(divide_by_achievable=True) is sqlmetrics ndcg with the relevance ignored.
    achievable = {
        label.replace("ndcg_achievable", "ndcg"): v
        for label, v in numbers.items()
        if label.startswith("ndcg_achievable")
    }
    import sqlmetrics

    rec_df, truth_df = to_frames(recs, inter)
    frame = sqlmetrics.evaluate(
        rec_df, truth_df, metrics=list(achievable), per_user=True, columns={"relevance": None}
    )
    got = {
        label: {str(u): v for u, v in per_user_dict(frame, label).items()} for label in achievable
    }
    problems += _compare(achievable, got, "rectools NDCG(divide_by_achievable)")
    report(problems)


def _literal_ranks(recs: Rows, seed: int) -> Rows:
    """The lists as literal ranks with gaps and repeats (RecTools' own tests use ranks 9, 1,
    3, 5, 7 and 4, 5, 6): per user, by score, each rank 0-3 above the one before (0 repeats
    it), the first 1-3; rows without a score are left out."""
    rng = np.random.default_rng(seed)
    by_user: dict[Any, Rows] = {}
    for row in recs:
        if row["score"] is not None:
            by_user.setdefault(row["user_id"], []).append(row)
    out: Rows = []
    for user, rows in by_user.items():
        ordered = sorted(rows, key=lambda r: (r["score"], r["item_id"]), reverse=True)
        rank = int(rng.integers(1, 4))
        for i, row in enumerate(ordered):
            rank += int(rng.choice([0, 1, 1, 2, 3])) if i else 0
            out.append({"user_id": user, "item_id": row["item_id"], "rank": rank})
    return out


@pytest.mark.parametrize("data", ["int-ties", "str-noties"])
def test_rectools_profile_reads_ranks_literally(data: str) -> None:
    """A rank column with gaps and repeats, per user against RecTools itself: the profile reads
    it as RecTools does (ranks="literal"), a cutoff k keeping the rows ranked <= k; so does
    NDCG(divide_by_achievable=True) against ndcg with ranks="literal" and no relevance."""
    import pandas as pd

    import sqlmetrics

    scored, inter = DATASETS[data]()
    recs = _literal_ranks(scored, seed=len(data))
    lists: dict[Any, list[int]] = {}
    for row in recs:
        lists.setdefault(row["user_id"], []).append(row["rank"])
    assert sum(len(set(r)) < len(r) for r in lists.values()) > 50  # repeats
    assert sum(max(r) > len(set(r)) for r in lists.values()) > 50  # gaps
    assert sum(min(r) > 1 for r in lists.values()) > 50  # a first rank above 1
    numbers = _run_library("rectools", recs, inter)["per_user"]
    rec_df = pd.DataFrame(recs, columns=["user_id", "item_id", "rank"])
    truth_df = pd.DataFrame(inter, columns=["user_id", "item_id", "relevance"])
    expected = {
        label.replace("ndcg_default", "ndcg"): v
        for label, v in numbers.items()
        if not label.startswith("ndcg_achievable")
    }
    frame = sqlmetrics.evaluate(
        rec_df, truth_df, metrics=list(expected), per_user=True, profile="rectools"
    )
    got = {label: {str(u): v for u, v in per_user_dict(frame, label).items()} for label in expected}
    problems = _compare(expected, got, "rectools literal ranks")
    achievable = {
        label.replace("ndcg_achievable", "ndcg"): v
        for label, v in numbers.items()
        if label.startswith("ndcg_achievable")
    }
    frame = sqlmetrics.evaluate(
        rec_df,
        truth_df,
        metrics=list(achievable),
        per_user=True,
        columns={"relevance": None},
        ranks="literal",
    )
    got = {
        label: {str(u): v for u, v in per_user_dict(frame, label).items()} for label in achievable
    }
    problems += _compare(achievable, got, "rectools NDCG(divide_by_achievable), literal ranks")
    report(problems)


@pytest.mark.parametrize("data", list(DATASETS))
def test_replay_profile(data: str) -> None:
    """Per user; tied data too: RePlay breaks ties by item id descending, like ties='id'."""
    recs, inter = DATASETS[data]()
    expected = _run_library("replay", recs, inter)["per_user"]
    forms = {label.split("@")[0] + "@k" for label in expected}
    assert forms == set(PROFILES["replay"].metrics)
    report(_compare(expected, _sql_per_user(recs, inter, list(expected), "replay"), "replay"))


TORCH_TOL = 1e-6  # torchmetrics computes in float32


@pytest.mark.parametrize("data", ["int-noties", "int-ties"])  # the id type is not its concern
def test_torchmetrics_profile(data: str) -> None:
    """Per user, to float32 precision, on positive scores (torchmetrics drops scores <= 0).
    Tie-free data for every metric; on tied data NDCG only, against the sklearn profile
    (both average over the tie orders)."""
    recs, inter = DATASETS[data]()
    recs = [{**r, "score": r["score"] + 1.0} for r in recs]
    numbers = _run_library("torchmetrics", recs, inter)["per_user"]
    ties = "noties" not in data
    expected = {label: v for label, v in numbers.items() if not ties or label.startswith("ndcg")}
    if not ties:
        forms = {label.split("@")[0] + ("@k" if "@" in label else "") for label in expected}
        assert forms == set(PROFILES["torchmetrics"].metrics)
    got = _sql_per_user(recs, inter, list(expected), "sklearn" if ties else "torchmetrics")
    problems = []
    for label, want in expected.items():
        # torchmetrics also scores users without any relevant interaction (0): not ours.
        have = got[label]
        assert set(have) <= set(want), label
        problems += [
            f"torchmetrics {label} user {u}: {have[u]!r} vs {want[u]!r}"
            for u in have
            if not math.isclose(have[u], want[u], rel_tol=0.0, abs_tol=TORCH_TOL)
        ]
        assert len(have) > 50, label
    report(problems)


@pytest.mark.parametrize("data", ["int-noties", "str-ties"])
def test_lenskit_profile(data: str) -> None:
    """Per user; tied data too (LensKit takes the lists already ordered). Precision and AP of
    an empty list are NaN in LensKit (left out of its means): the profile gives NULL there,
    and its means, over each metric's own users, must be LensKit's means skipping NaN."""
    recs, inter = DATASETS[data]()
    numbers = _run_library("lenskit", recs, inter)["per_user"]
    forms = {label.split("@")[0] + ("@k" if "@" in label else "") for label in numbers}
    assert forms == set(PROFILES["lenskit"].metrics)
    got = _sql_per_user(recs, inter, list(numbers), "lenskit")
    undefined = {
        label: {u for u, v in values.items() if v is None} for label, values in numbers.items()
    }
    assert any(undefined.values()), "the data must hold users without recommendations"
    problems = []
    for label, users in undefined.items():
        assert label.split("@")[0] in {"precision", "map"} or not users, label
        problems += [
            f"lenskit {label} user {u}: {got[label][u]} for an empty list"
            for u in users
            if not math.isnan(got[label][u])
        ]
    expected = {
        label: {u: v for u, v in values.items() if v is not None}
        for label, values in numbers.items()
    }
    problems += _compare(expected, got, "lenskit", users=lambda label: set(expected[label]))
    means = _means(recs, inter, list(numbers), profile="lenskit")
    problems += _compare_means(
        {label: sum(v.values()) / len(v) for label, v in expected.items()}, means, "lenskit"
    )
    report(problems)
