"""Gates that never fail open (issue 39): the statistics' edge cases (no, zero and overflowing
variance, a certain difference) are decided in one place, sqlmetrics/stats/moments.py, and
every interval, test and gate reads them.

The rule: a zero-variance difference that is not 0 is certain (p = 0, significant), equal
values are no difference (p = 1); a variance that cannot be computed is NaN (never 0) with a
note saying why, and a gate that meets a NaN where the model may be worse fails. The wide
class (random zero-variance pairs) is drawn by hypothesis; the narrow cases are the probes of
the issue.
"""

from __future__ import annotations

import json
import math
import os
import statistics
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

import sqlmetrics
from sqlmetrics.attrs import read
from sqlmetrics.cli import main
from sqlmetrics.stats.inference import against_stored

# Each example is a whole call: the invariants' count (10 by default, 200 in CI: .ci/run), not
# the oracle families'.
EXAMPLES = int(os.environ.get("SQLMETRICS_HYPOTHESIS_INVARIANT_EXAMPLES", "10"))
DRAWN = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def lists(hits: dict[str, list[int]], relevant: int, k: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Recommendations and interactions: user u has ``relevant`` relevant items; model m puts
    ``hits[m][u]`` of them first in its list of k, then items nobody interacted with."""
    users = len(next(iter(hits.values())))
    truth = pd.DataFrame(
        [(u, f"r{u}_{j}", 1) for u in range(users) for j in range(relevant)],
        columns=["user_id", "item_id", "relevance"],
    )
    rows = []
    for model, counts in hits.items():
        for u, count in enumerate(counts):
            items = [f"r{u}_{j}" for j in range(count)] + [f"x{u}_{j}" for j in range(k - count)]
            rows += [(u, item, float(k - p), model) for p, item in enumerate(items)]
    recs = pd.DataFrame(rows, columns=["user_id", "item_id", "score", "model"])
    return recs, truth


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main([*args])
    return code, capsys.readouterr().err


# --- a certain difference -------------------------------------------------------------------


def test_a_model_missing_every_user_is_certainly_worse_than_one_hitting_every_user() -> None:
    # every paired difference is 0 - 1 = -1: mean -1, variance 0, so t = -1 / 0 and p = 0
    recs, truth = lists({"base": [1] * 500, "bad": [0] * 500}, relevant=1, k=10)
    result = sqlmetrics.compare(recs, truth, ["hit_rate@10"], baseline="base")
    row = result.iloc[0]
    assert (row["difference"], row["difference_lo"], row["difference_hi"]) == (-1, -1, -1)
    assert row["p_t"] == 0 and row["p_holm"] == 0 and row["significant"]
    # the same model twice: every difference 0, no difference at all (p = 1)
    recs, truth = lists({"base": [1] * 50, "same": [1] * 50}, relevant=1, k=10)
    same = sqlmetrics.compare(recs, truth, ["hit_rate@10"], baseline="base").iloc[0]
    assert same["p_t"] == 1 and not same["significant"]


def test_compare_fail_if_worse_fails_on_a_certain_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recs, truth = lists({"base": [1] * 500, "bad": [0] * 500}, relevant=1, k=10)
    recs.to_parquet(tmp_path / "recs.parquet")
    truth.to_parquet(tmp_path / "truth.parquet")
    code, err = cli(
        capsys,
        "compare",
        str(tmp_path / "recs.parquet"),
        str(tmp_path / "truth.parquet"),
        "-m",
        "hit_rate@10",
        "--baseline",
        "base",
        "--fail-if-worse",
        "-q",
    )
    assert code == 1, err
    assert err.startswith("worse than base: bad hit_rate@10 0 vs 1 (difference -1, adjusted p = 0)")


@st.composite
def constant_pairs(draw: st.DrawFn) -> tuple[int, int, int, list[int]]:
    """A model that hits ``delta`` more relevant items than the baseline in every user's top k
    (delta < 0: fewer): hits@k differs by delta exactly, precision@k and recall@k by
    delta / k and delta / relevant up to rounding."""
    k = draw(st.integers(1, 5))
    relevant = draw(st.integers(k, k + 3))
    delta = draw(st.integers(-k, k))
    users = draw(st.integers(2, 20))
    base = draw(
        st.lists(st.integers(max(0, -delta), min(k, k - delta)), min_size=users, max_size=users)
    )
    return k, relevant, delta, base


@DRAWN
@given(constant_pairs())
def test_zero_variance_pairs_fail_the_gate_exactly_when_the_model_is_worse(
    case: tuple[int, int, int, list[int]],
) -> None:
    k, relevant, delta, base = case
    recs, truth = lists({"base": base, "model": [a + delta for a in base]}, relevant, k)
    metrics = [f"hits@{k}", f"precision@{k}", f"recall@{k}"]
    result = sqlmetrics.compare(recs, truth, metrics, baseline="base")
    for _, row in result.iterrows():
        worse = bool(row["significant"]) and row["difference"] < 0
        assert worse == (delta < 0), row.to_dict()
        assert bool(row["significant"]) == (delta != 0), row.to_dict()
        if delta == 0:
            assert row["p_t"] == 1


@DRAWN
@given(
    st.integers(1, 4),
    st.integers(0, 4),
    st.integers(0, 4),
    st.integers(2, 40),
    st.integers(2, 40),
)
def test_welch_against_runs_without_spread_is_worse_exactly_when_lower(
    k: int, before: int, after: int, users_before: int, users_after: int
) -> None:
    """Yesterday every user had ``before`` hits in the top k, today ``after``: the variances
    from the statistics query are 0, the difference is certain unless it is 0."""
    before, after = min(before, k), min(after, k)
    runs = []
    for hits, users in ((before, users_before), (after, users_after)):
        recs, truth = lists({"model": [hits] * users}, relevant=k, k=k)
        result = sqlmetrics.evaluate(recs, truth, [f"precision@{k}"], group_by="model", ci=0.95)
        runs.append(read(result, "moments"))
    compared = against_stored(runs[0], runs[1], ["model"], 0.05).iloc[0]
    assert bool(compared["worse"]) == (after < before)
    # 0 unless the sums' rounding leaves a variance of about 1e-34 (p about 1e-32)
    if after == before:
        assert compared["p_welch"] == 1
    else:
        assert compared["p_welch"] < 1e-12 and compared["p_holm"] < 0.05


def test_against_a_run_hitting_every_user_a_run_missing_every_user_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = {}
    for day, hits in (("yesterday", 1), ("today", 0)):
        recs, truth = lists({"model": [hits] * 500}, relevant=1, k=10)
        paths[day] = str(tmp_path / f"{day}.parquet")
        recs.to_parquet(paths[day])
        truth.to_parquet(tmp_path / "truth.parquet")
    truth_path = str(tmp_path / "truth.parquet")
    stored = str(tmp_path / "yesterday.json")
    options = ["-m", "hit_rate@10", "--group-by", "model", "-q"]
    code, err = cli(
        capsys, "evaluate", paths["yesterday"], truth_path, *options, "--ci", "0.95", "-o", stored
    )
    assert code == 0, err
    code, err = cli(
        capsys, "compare", paths["today"], truth_path, "--against", stored, "--fail-if-worse", "-q"
    )
    assert code == 1, err
    assert "worse than " + stored + ": model=model, hit_rate@10 0 vs 1 (adjusted p = 0)" in err


def test_a_model_without_a_user_paired_with_the_baseline_fails_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # under population="common" each model is evaluated on its own users: "other" has none
    # of the baseline's, so no pair, no moments row, and no comparison to pass it by
    recs, truth = lists({"base": [1] * 10 + [0] * 10, "other": [0] * 20}, relevant=1, k=5)
    recs = recs[(recs["model"] == "base") == (recs["user_id"] < 10)]
    result = sqlmetrics.compare(recs, truth, ["hit_rate@5"], baseline="base", population="common")
    row = result.iloc[0]
    assert row["model"] == "other" and row["users"] == 0 and math.isnan(row["p_t"])
    assert "model=other: no user both it and base were evaluated on" in result.attrs["notes"][0]
    recs.to_parquet(tmp_path / "recs.parquet")
    truth.to_parquet(tmp_path / "truth.parquet")
    code, err = cli(
        capsys,
        "compare",
        str(tmp_path / "recs.parquet"),
        str(tmp_path / "truth.parquet"),
        *("-m", "hit_rate@5", "--baseline", "base", "--population", "common"),
        "--fail-if-worse",
    )
    assert code == 1, err
    assert "cannot pass against base: other hit_rate@5: cannot tell whether it is worse: " in err
    assert "no user paired with base" in err


# --- variances past a double ----------------------------------------------------------------


def exponential_gains(relevances: list[int]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One relevant item per user, first in its list: dcg_exp@10 = 2^relevance - 1."""
    users = range(len(relevances))
    truth = pd.DataFrame({"user_id": users, "item_id": users, "relevance": relevances})
    recs = pd.DataFrame({"user_id": users, "item_id": users, "score": 1.0, "model": "m"})
    return recs, truth


def test_a_sum_whose_square_overflows_still_gives_the_variance() -> None:
    # 2^507 - 1 and 2^508 - 1 (about 4.2e152 and 8.4e152), 50 users each: the sum of squares
    # (about 4.4e307) is a double, the square of the sum (about 1.6e309) is not; the variance
    # is that of fifty 1s and fifty 2s (25/99) times 2^1014
    relevances = [507] * 50 + [508] * 50
    recs, truth = exponential_gains(relevances)
    result = sqlmetrics.evaluate(recs, truth, ["dcg_exp@10"], ci=0.95)
    values = np.array([2.0**r - 1 for r in relevances])
    variance = read(result, "moments")["variance"].iloc[0]
    assert variance == pytest.approx(statistics.variance([1] * 50 + [2] * 50) * 2.0**1014)
    want = scipy_stats.t.interval(
        0.95, len(values) - 1, loc=values.mean(), scale=scipy_stats.sem(values)
    )
    assert (result["dcg_exp@10_lo"].iloc[0], result["dcg_exp@10_hi"].iloc[0]) == pytest.approx(
        want, rel=1e-9
    )


def test_values_whose_squares_overflow_have_no_interval_and_say_why() -> None:
    # 2^511 .. 2^513: each square is past the largest double (about 1.8e308)
    recs, truth = exponential_gains([511 + u % 3 for u in range(300)])
    result = sqlmetrics.evaluate(recs, truth, ["dcg_exp@10"], ci=0.95)
    assert math.isnan(result["dcg_exp@10_lo"].iloc[0])
    assert math.isnan(result["dcg_exp@10_hi"].iloc[0])
    assert math.isnan(read(result, "moments")["variance"].iloc[0])
    assert any(
        "no interval for dcg_exp@10: the per-user values are too large" in note
        for note in result.attrs["notes"]
    )


def test_compare_fails_the_gate_when_the_variance_overflows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the model puts the relevant item second: its dcg_exp is 1/log2(3) of the baseline's,
    # the differences about -2.4e153 .. -9.6e153, their squares past a double
    recs, truth = exponential_gains([511 + u % 3 for u in range(300)])
    recs["model"] = "base"
    second = recs.assign(model="model", score=0.5)
    second = pd.concat([second, second.assign(item_id=second["item_id"] + 1000, score=1.0)])
    pd.concat([recs, second]).to_parquet(tmp_path / "recs.parquet")
    truth.to_parquet(tmp_path / "truth.parquet")
    api = sqlmetrics.compare(pd.concat([recs, second]), truth, ["dcg_exp@10"], baseline="base")
    assert math.isnan(api["p_t"].iloc[0]) and api["difference"].iloc[0] < 0
    assert any("no t-test for dcg_exp@10" in note for note in api.attrs["notes"])
    code, err = cli(
        capsys,
        "compare",
        str(tmp_path / "recs.parquet"),
        str(tmp_path / "truth.parquet"),
        "-m",
        "dcg_exp@10",
        "--baseline",
        "base",
        "--fail-if-worse",
        "-q",
    )
    assert code == 1, err
    assert "cannot pass against base: model dcg_exp@10: cannot tell whether it is worse" in err


# --- the --against file ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two models evaluated yesterday, their files and the JSON stored."""
    folder = tmp_path_factory.mktemp("against")
    recs, truth = lists({"a": [1, 0, 1, 1] * 10, "b": [0, 1, 1, 0] * 10}, relevant=1, k=5)
    paths = {name: str(folder / f"{name}.parquet") for name in ("recs", "truth", "only_a")}
    recs.to_parquet(paths["recs"])
    truth.to_parquet(paths["truth"])
    recs[recs["model"] == "a"].to_parquet(paths["only_a"])
    paths["json"] = str(folder / "yesterday.json")
    code = main(
        [
            *("evaluate", paths["recs"], paths["truth"], "-m", "hit_rate@5,mrr@5"),
            *("--group-by", "model", "--ci", "0.95", "-q", "-o", paths["json"]),
        ]
    )
    assert code == 0
    return {**paths, "document": json.loads(Path(paths["json"]).read_text())}


def against(
    capsys: pytest.CaptureFixture[str], stored: dict[str, Any], recs: str, path: str
) -> tuple[int, str]:
    return cli(capsys, "compare", recs, stored["truth"], "--against", path, "--fail-if-worse")


def test_the_same_run_again_passes(
    stored: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = against(capsys, stored, stored["recs"], stored["json"])
    assert code == 0, err


def test_a_model_missing_from_today_fails_the_gate(
    stored: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = against(capsys, stored, stored["only_a"], stored["json"])
    assert code == 1, err
    failed = [line for line in err.splitlines() if line.startswith("missing from this")]
    assert len(failed) == 2 and all("model=b" in line for line in failed)


def test_an_earlier_run_without_any_of_todays_groups_is_refused(
    stored: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    renamed = str(tmp_path / "renamed.parquet")
    recs = pd.read_parquet(stored["recs"])
    recs[recs["model"] == "a"].assign(model="c").to_parquet(renamed)
    code, err = against(capsys, stored, renamed, stored["json"])
    assert code == 2 and "nothing to compare" in err, err


def write_document(tmp_path: Path, document: Any) -> str:
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(document) if not isinstance(document, str) else document)
    return str(path)


def changed(document: dict[str, Any], change: str) -> Any:
    """The stored document with one hostile change."""
    copy = json.loads(json.dumps(document))
    moments = copy["moments"]
    changes: dict[str, Any] = {
        "no moments": lambda: copy.pop("moments"),
        "moments not a list": lambda: copy.update(moments={"a": 1}),
        "no options": lambda: copy.pop("options"),
        "metrics not names": lambda: copy["options"].update(metrics=[1, 2]),
        "a row without mean": lambda: moments[0].pop("mean"),
        "a text mean": lambda: moments[0].update(mean="high"),
        "a negative variance": lambda: moments[0].update(variance=-1.0),
        "a text n": lambda: moments[0].update(n="500"),
        "a fractional n": lambda: moments[0].update(n=2.5),
        "a list as group": lambda: moments[0].update(model=["a"]),
        "a row not an object": lambda: moments.append(3),
        "a repeated row": lambda: moments.append(dict(moments[0], mean=0.0)),
        "version 99": lambda: copy.update(version=99),
        "no version": lambda: copy.pop("version"),
    }
    changes[change]()
    return copy


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("no moments", "its moments are missing or not a list"),
        ("moments not a list", "its moments are missing or not a list"),
        ("no options", "its options are missing or not an object"),
        ("metrics not names", "options.metrics must be a list of names"),
        ("a row without mean", "moments[0] has no mean"),
        ("a text mean", "moments[0]: its mean must be a number, not 'high'"),
        ("a negative variance", "moments[0]: its variance must be a number at least 0"),
        ("a text n", "moments[0]: its n must be a count of users, not '500'"),
        ("a fractional n", "moments[0]: its n must be a count of users, not 2.5"),
        ("a list as group", "moments[0]: its model must be a plain value"),
        ("a row not an object", "moments[4] is not an object"),
        ("a repeated row", "moments[4] repeats model="),
        ("version 99", "format version 99 was written by a newer sqlmetrics"),
        ("no version", "format version None is not one sqlmetrics wrote"),
    ],
)
def test_a_malformed_against_file_is_refused_with_what_is_wrong(
    stored: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: str,
    message: str,
) -> None:
    path = write_document(tmp_path, changed(stored["document"], change))
    code, err = against(capsys, stored, stored["recs"], path)
    assert code == 2, err
    assert err.startswith(f"sqlmetrics: error: --against {path}")
    assert message in err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "not JSON (it begins with '['"),
        ('{"a": ' * 100_000 + "1" + "}" * 100_000, "nested too deeply"),
        ('{"sqlmetrics": "evaluation", "version": NaN}', "NaN is not a JSON number"),
        ("", "not JSON"),
    ],
)
def test_a_file_that_is_no_json_object_is_refused(
    stored: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    text: str,
    message: str,
) -> None:
    path = write_document(tmp_path, text)
    code, err = against(capsys, stored, stored["recs"], path)
    assert code == 2 and message in err, err


def test_an_endless_stream_is_refused_at_its_first_bytes(
    stored: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = against(capsys, stored, stored["recs"], "/dev/zero")
    assert code == 2 and "not JSON (it begins with '\\x00'" in err, err


# --- seeds and replicates -------------------------------------------------------------------


def test_a_numpy_seed_is_a_seed() -> None:
    recs, truth = lists({"a": [1, 0, 1] * 20, "b": [0, 1, 0] * 20}, relevant=1, k=5)
    options: dict[str, Any] = {"group_by": "model", "ci": 0.9, "ci_method": "bootstrap"}
    numpy = sqlmetrics.evaluate(recs, truth, ["hit_rate@5"], **options, seed=np.int64(3))
    plain = sqlmetrics.evaluate(recs, truth, ["hit_rate@5"], **options, seed=3)
    pd.testing.assert_frame_equal(numpy, plain)
    assert numpy.attrs["ci"]["seed"] == 3 and type(numpy.attrs["ci"]["seed"]) is int


@pytest.mark.parametrize(
    ("options", "message"),
    [
        # each end of a 0.95 interval needs a replicate beyond it: 2 / 0.05 = 40 at least
        ({"ci": 0.95, "replicates": 1}, "at least 40"),
        ({"ci": 0.95, "replicates": 39}, "at least 40"),
        ({"ci": 0.99, "replicates": 100}, "at least 200"),
    ],
)
def test_too_few_bootstrap_replicates_are_refused(options: dict[str, Any], message: str) -> None:
    recs, truth = lists({"a": [1, 0] * 20}, relevant=1, k=5)
    with pytest.raises(sqlmetrics.SqlmetricsError, match=message):
        sqlmetrics.evaluate(recs, truth, ["hit_rate@5"], ci_method="bootstrap", **options)


def test_a_randomization_test_that_cannot_reject_is_refused() -> None:
    # its p-values are at least 1 / (1 + 20); Holm over two comparisons doubles it: 2/21 > 0.05
    recs, truth = lists({"a": [1] * 40, "b": [0] * 40}, relevant=1, k=5)
    with pytest.raises(sqlmetrics.SqlmetricsError, match="use replicates=40 or more"):
        sqlmetrics.compare(
            recs,
            truth,
            ["hit_rate@5", "mrr@5"],
            baseline="a",
            test="randomization",
            replicates=20,
        )
    # 40 replicates: 2/41 < 0.05, and b, missing every user a hits, is significantly worse
    result = sqlmetrics.compare(
        recs, truth, ["hit_rate@5", "mrr@5"], baseline="a", test="randomization", replicates=40
    )
    assert result["significant"].all()


@pytest.mark.parametrize(
    ("label", "difference", "p", "failure"),
    [
        ("ndcg@10", -0.1, 0.01, "significantly worse"),
        ("ndcg@10", 0.1, 0.01, None),
        ("mae", 0.1, 0.01, "significantly worse"),  # better: lower
        ("mae", -0.1, 0.01, None),
        ("mae", 0.1, 0.5, None),  # worse, not significantly
        # better: none (judged_share describes the judgements): any significant change is for
        # a gate to see
        ("judged_share@10", 0.1, 0.01, "significantly changed"),
        ("judged_share@10", -0.1, 0.01, "significantly changed"),
        ("judged_share@10", -0.1, 0.5, None),
        ("judged_share@10", 0.0, 1.0, None),
        # better: one (calibration): a difference does not say which value is nearer to 1
        ("calibration", -0.1, 0.01, "significantly changed"),
        ("ndcg@10", math.nan, math.nan, "cannot tell"),
    ],
)
def test_a_gate_reads_the_direction_from_the_metric_header(
    label: str, difference: float, p: float, failure: str | None
) -> None:
    from sqlmetrics.stats.moments import gate_failure

    got = gate_failure(label, difference, p, alpha=0.05)
    assert (got is None) if failure is None else (got is not None and got.startswith(failure))


def test_a_header_with_an_unknown_direction_is_refused(tmp_path: Path) -> None:
    from sqlmetrics.catalog.metrics import parse_metric_file
    from sqlmetrics.errors import SqlmetricsError

    header = (
        "-- name: odd\n-- title: t\n-- definition: d\n-- cutoff: none\n-- aggregate: mean\n"
        "-- better: sideways\n-- ties_average: no\n-- references: r\n"
    )
    path = tmp_path / "odd.sql"
    path.write_text(header + "SELECT user_id, 1 AS odd FROM judged GROUP BY user_id\n")
    with pytest.raises(SqlmetricsError, match="better: 'sideways' is not one of higher, lower"):
        parse_metric_file(path)
