"""sqlmetrics.off_policy: the hand-derived fixtures (fixtures/off_policy/), the estimators
written again in numpy on random logs, OBP itself on its synthetic data (.venv-obp), the
refusals, another engine through connection= and the command line."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

import sqlmetrics
from sqlmetrics.errors import SqlmetricsError
from tests.cli_runner import cli
from tests.engines.conftest import skip_or_fail

REPO = Path(__file__).resolve().parents[1]
FIXTURES = sorted((REPO / "fixtures" / "off_policy").glob("*.yaml"))


def _fixture(path: Path) -> tuple[dict[str, Any], dict[str, pd.DataFrame]]:
    case = yaml.safe_load(path.read_text())
    given = case["given"]
    frames = {role: pd.DataFrame(given[role]) for role in ("log", "policy")}
    model = given.get("rewards")
    if model is not None:
        frames["rewards"] = pd.DataFrame(
            [
                {"context_id": c, "item_id": i, "prediction": model["prediction"]}
                for c in model["contexts"]
                for i in model["items"]
            ]
        )
    return case, frames


def _by_estimator(result: pd.DataFrame) -> dict[str, dict[str, Any]]:
    return {row["estimator"]: row for row in result.to_dict("records")}


@pytest.mark.parametrize("path", FIXTURES, ids=[path.stem for path in FIXTURES])
def test_fixture_matches_its_derivation(path: Path) -> None:
    case, frames = _fixture(path)
    result = sqlmetrics.off_policy(
        frames["log"], frames["policy"], frames.get("rewards"), clip=case.get("clip", 100.0)
    )
    found = _by_estimator(result)
    assert set(case["expect"]) <= set(found)
    for estimator, expected in case["expect"].items():
        for column, value in expected.items():
            assert found[estimator][column] == pytest.approx(value, abs=1e-12), (estimator, column)


def test_toy_log_through_a_dbapi_connection() -> None:
    """The same query on SQLite through its DB-API connection: the same numbers."""
    _, frames = _fixture(REPO / "fixtures" / "off_policy" / "toy_log.yaml")
    connection = sqlite3.connect(":memory:")
    for role, frame in frames.items():
        frame.to_sql(f"op_{role}_table", connection, index=False)
    on_sqlite = sqlmetrics.off_policy(
        "op_log_table",
        "op_policy_table",
        "op_rewards_table",
        clip=3,
        connection=connection,
        dialect="sqlite",
    )
    on_duckdb = sqlmetrics.off_policy(frames["log"], frames["policy"], frames["rewards"], clip=3)
    assert on_sqlite.attrs["dialect"] == "sqlite"
    pd.testing.assert_frame_equal(on_sqlite, on_duckdb, check_exact=False, rtol=1e-12)


# The estimators written again from their definitions, in numpy, per round and per list.


def _numpy_estimates(
    log: pd.DataFrame, policy: pd.DataFrame, rewards: pd.DataFrame, clip: float, z: float
) -> dict[str, tuple[float, float]]:
    """(value, standard error) of each estimator: means of per-round or per-list terms, the
    ratios' errors from their linearised terms."""
    pi_of = {(r.context_id, r.item_id, r.position): r.probability for r in policy.itertuples()}
    q_of = {(r.context_id, r.item_id): r.prediction for r in rewards.itertuples()}
    items = sorted(policy["item_id"].unique())
    pi = np.array([pi_of.get((r.context_id, r.item_id, r.position), 0.0) for r in log.itertuples()])
    mu = log["propensity"].to_numpy()
    reward = log["reward"].to_numpy(dtype=float)
    w = pi / mu
    q_logged = np.array([q_of[(r.context_id, r.item_id)] for r in log.itertuples()])
    dm = np.array(
        [
            sum(
                pi_of.get((r.context_id, a, r.position), 0.0) * q_of[(r.context_id, a)]
                for a in items
            )
            for r in log.itertuples()
        ]
    )
    slots = log.groupby("context_id")["position"].max().to_dict()
    pi_item = np.array(
        [
            sum(
                pi_of.get((r.context_id, r.item_id, p), 0.0)
                for p in range(1, slots[r.context_id] + 1)
            )
            for r in log.itertuples()
        ]
    )
    w_item = pi_item / log["item_propensity"].to_numpy()

    def mean(terms: np.ndarray) -> tuple[float, float]:
        return float(terms.mean()), float(terms.std(ddof=1) / math.sqrt(len(terms)))

    def ratio(y: np.ndarray, x: np.ndarray) -> tuple[float, float]:
        value = y.sum() / x.sum()
        residual = y - value * x
        n = len(y)
        return float(value), float(math.sqrt((residual**2).sum() * n / (n - 1)) / x.sum())

    def per_list(terms: np.ndarray) -> tuple[float, float]:
        return mean(pd.Series(terms).groupby(log["context_id"].to_numpy()).sum().to_numpy())

    return {
        "replay": ratio(pi * reward, pi),
        "ips": mean(w * reward),
        "clipped_ips": mean(np.minimum(w, clip) * reward),
        "snips": ratio(w * reward, w),
        "dm": mean(dm),
        "dr": mean(dm + w * (reward - q_logged)),
        "item_position_ips": per_list(w * reward),
        "independent_item_ips": per_list(w_item * reward),
    }


def _random_log(seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Lists of 1 to 3 positions over 5 items, a logging policy and a new one that are random
    distributions per (context, position), a reward model, item propensities in (0, 1]."""
    rng = np.random.default_rng(seed)
    log, policy = [], []
    for context in range(60):
        for position in range(1, int(rng.integers(1, 4)) + 1):
            logging = rng.dirichlet(np.ones(5))
            new = rng.dirichlet(np.ones(5) * 0.5)
            item = int(rng.choice(5, p=logging))
            log.append(
                {
                    "context_id": context,
                    "position": position,
                    "item_id": item,
                    "reward": float(rng.random() < 0.3 + 0.1 * item),
                    "propensity": float(logging[item]),
                    "item_propensity": float(min(1.0, logging[item] * 1.5)),
                }
            )
            policy += [
                {"context_id": context, "position": position, "item_id": a, "probability": p}
                for a, p in enumerate(new)
            ]
    rewards = pd.DataFrame(
        [
            {"context_id": c, "item_id": a, "prediction": float(rng.random())}
            for c in range(60)
            for a in range(5)
        ]
    )
    return pd.DataFrame(log), pd.DataFrame(policy), rewards


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_logs_agree_with_numpy(seed: int) -> None:
    log, policy, rewards = _random_log(seed)
    result = sqlmetrics.off_policy(log, policy, rewards, clip=4.0, ci=0.9)
    z = 1.6448536269514722  # the normal quantile of 0.95
    expected = _numpy_estimates(log, policy, rewards, 4.0, z)
    found = _by_estimator(result)
    assert list(found) == list(expected)
    for name, (value, se) in expected.items():
        row = found[name]
        assert row["value"] == pytest.approx(value, rel=1e-9), name
        assert row["std_error"] == pytest.approx(se, rel=1e-6), name
        assert row["lo"] == pytest.approx(value - z * se, rel=1e-6, abs=1e-9), name
        assert row["hi"] == pytest.approx(value + z * se, rel=1e-6, abs=1e-9), name
    weights = found["ips"]
    w = _ips_weights(log, policy)
    assert weights["max_weight"] == pytest.approx(w.max())
    assert weights["effective_sample_size"] == pytest.approx(w.sum() ** 2 / (w**2).sum())


def _ips_weights(log: pd.DataFrame, policy: pd.DataFrame) -> np.ndarray:
    merged = log.merge(policy, on=["context_id", "item_id", "position"], how="left")
    return (merged["probability"].fillna(0) / merged["propensity"]).to_numpy()


# OBP itself, on its synthetic data, from its own venv (make obp-venv).


def _obp_python() -> Path:
    python = Path(os.environ.get("SQLMETRICS_OBP_PYTHON", REPO / ".venv-obp/bin/python"))
    if (
        not (python.parent.parent / ".installed").exists()
        and "SQLMETRICS_OBP_PYTHON" not in os.environ
    ):
        skip_or_fail("obp", f"{python.parent.parent} is not built: run `make obp-venv`")
    return python


@pytest.fixture(scope="module")
def obp_data() -> dict[str, Any]:
    done = subprocess.run(
        [str(_obp_python()), str(REPO / "tests" / "obp_runner.py"), "20261129"],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if done.returncode != 0:
        pytest.fail(f"obp_runner.py failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)  # type: ignore[no-any-return]


# on one worker: OBP's data is drawn once (about 10 s of its venv's interpreter)
@pytest.mark.xdist_group("obp")
@pytest.mark.parametrize("case", ["bandit", "deterministic", "slate"])
def test_agrees_with_obp(obp_data: dict[str, Any], case: str) -> None:
    data = obp_data[case]
    rewards = pd.DataFrame(data["rewards"]) if "rewards" in data else None
    result = sqlmetrics.off_policy(
        pd.DataFrame(data["log"]),
        pd.DataFrame(data["policy"]),
        rewards,
        clip=data.get("clip", 100.0),
    )
    found = _by_estimator(result)
    for name, value in data["obp"].items():
        assert found[name]["value"] == pytest.approx(value, rel=1e-9), name


# Refusals: what is wrong, and what to do.


def _toy() -> dict[str, pd.DataFrame]:
    return _fixture(REPO / "fixtures" / "off_policy" / "toy_log.yaml")[1]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda f: f["log"].assign(propensity=[0.5, 0, 0.2, 0.5, 0.3, 0.5]),
            "1 rows have a propensity",
        ),
        (lambda f: f["log"].assign(propensity=[0.5, 1.5, 0.2, 0.5, 0.3, 0.5]), "outside (0, 1]"),
        (lambda f: f["log"].assign(context_id=[1, 1, 3, 4, 5, 6]), "(context, position) pairs"),
        (lambda f: f["log"].drop(columns="propensity"), "no propensity column 'propensity'"),
        (lambda f: f["log"].assign(reward="yes"), "the reward column 'reward' is VARCHAR"),
    ],
)
def test_bad_logs_are_refused(change: Any, message: str) -> None:
    frames = _toy()
    with pytest.raises(SqlmetricsError, match=_escaped(message)):
        sqlmetrics.off_policy(change(frames), frames["policy"], frames["rewards"])


def _escaped(text: str) -> str:
    import re

    return re.escape(text)


def test_infinities_are_refused() -> None:
    """(pandas NaN reaches DuckDB as NULL, refused as a missing value.)"""
    frames = _toy()
    log, policy, rewards = frames["log"], frames["policy"], frames["rewards"]
    with pytest.raises(SqlmetricsError, match="NaN or infinite"):
        sqlmetrics.off_policy(log.assign(reward=[1, 0, float("inf"), 0, 1, 1]), policy)
    with pytest.raises(SqlmetricsError, match="NaN or infinite"):
        sqlmetrics.off_policy(log, policy, rewards.assign(prediction=float("inf")))


def test_bad_policies_and_models_are_refused() -> None:
    frames = _toy()
    log, policy, rewards = frames["log"], frames["policy"], frames["rewards"]
    with pytest.raises(SqlmetricsError, match="not both"):
        sqlmetrics.off_policy(log, policy.assign(probability=1.0), rewards)
    with pytest.raises(SqlmetricsError, match="add up to more than 1"):
        stochastic = pd.DataFrame(
            {"context_id": [1, 1], "item_id": [0, 1], "probability": [0.7, 0.6]}
        )
        sqlmetrics.off_policy(log, stochastic)
    # the four matched rounds meet their policy row twice
    with pytest.raises(SqlmetricsError, match="4 rounds meet more than one row"):
        sqlmetrics.off_policy(log, pd.concat([policy, policy]), rewards)
    with pytest.raises(SqlmetricsError, match="6 rounds meet more than one row"):
        sqlmetrics.off_policy(log, policy, pd.concat([rewards, rewards]))
    # a repeat no round meets adds to its context's mass
    extra = pd.DataFrame({"context_id": [1, 1], "item_id": [5, 5], "probability": [0.5, 0.6]})
    with pytest.raises(SqlmetricsError, match="1 contexts add up to more than 1"):
        sqlmetrics.off_policy(
            log, pd.concat([policy.drop(columns="rank").assign(probability=0.0), extra])
        )
    # rounds 2 and 3, where the policy shows item 2
    with pytest.raises(SqlmetricsError, match="2 rounds lack a prediction"):
        sqlmetrics.off_policy(log, policy, rewards[rewards["item_id"] != 2])
    # only the policy's items predicted: the logged items of the unmatched rounds weigh 0
    shown = policy[["context_id", "item_id"]].assign(prediction=0.4)
    result = sqlmetrics.off_policy(log, policy, shown)
    assert _by_estimator(result)["dr"]["value"] == pytest.approx(1.6333333333333333)
    with pytest.raises(SqlmetricsError, match="unknown role 'user'"):
        sqlmetrics.off_policy(log, policy, columns={"user": "u"})
    with pytest.raises(SqlmetricsError, match="clip must be a positive number"):
        sqlmetrics.off_policy(log, policy, clip=0)


def test_a_list_showing_an_item_twice_is_refused() -> None:
    """The independent-item weight divides the policy's probability of an item being in the
    list by the log's: a rank policy listing item 0 at ranks 1 and 3 made it 2 (the estimate
    2.0 where each list's one click at weight 1 gives 1.0); refused, as two items at one
    rank are."""
    log = pd.DataFrame(
        {
            "context_id": [1, 1, 1, 2, 2],
            "position": [1, 2, 3, 1, 2],
            "item_id": [0, 1, 2, 1, 0],
            "reward": [1, 0, 0, 0, 1],
            "propensity": [0.5] * 5,
            "item_propensity": [1.0] * 5,
        }
    )
    ranks = pd.DataFrame({"context_id": [1, 1, 1, 2, 2], "item_id": [0, 1, 0, 1, 0]})
    ranks["rank"] = [1, 2, 3, 1, 2]
    with pytest.raises(
        SqlmetricsError, match=r"1 \(context, item\) pairs list the item at two ranks"
    ):
        sqlmetrics.off_policy(log, ranks)
    once = ranks.assign(item_id=[0, 1, 2, 1, 0])
    assert _by_estimator(sqlmetrics.off_policy(log, once))["independent_item_ips"][
        "value"
    ] == pytest.approx(1.0)


def test_contexts_the_policy_lacks() -> None:
    """A round of a context the policy has no row for: the policy shows nothing there (counted
    in the attrs); none of the log's contexts in the policy is refused (a key mismatch)."""
    frames = _toy()
    log, policy = frames["log"], frames["policy"]
    result = sqlmetrics.off_policy(log, policy[policy["context_id"] != 1])
    assert result.attrs["uncovered_rounds"] == 1
    # round 1 (w r = 2) no longer counts: (5 + 3.3333 + 2) / 6
    assert _by_estimator(result)["ips"]["value"] == pytest.approx((5 + 10 / 3 + 2) / 6)
    assert sqlmetrics.off_policy(log, policy).attrs["uncovered_rounds"] == 0
    with pytest.raises(SqlmetricsError, match="no context of the log has a row in the policy"):
        sqlmetrics.off_policy(log, policy.assign(context_id=policy["context_id"] + 100))


def test_a_policy_matching_no_round_has_no_interval() -> None:
    """Every weight 0: IPS is 0 by construction, its spread 0 says nothing of the new policy,
    so no interval rather than [0, 0]; SNIPS and replay (0 / 0) are NaN; DM still reads the
    reward model."""
    frames = _toy()
    never = frames["policy"].assign(item_id=9)  # an item the log never shows
    rewards = pd.concat([frames["rewards"], frames["rewards"].drop_duplicates("context_id")])
    rewards.iloc[len(frames["rewards"]) :, rewards.columns.get_loc("item_id")] = 9
    estimates = _by_estimator(sqlmetrics.off_policy(frames["log"], never, rewards, ci=0.95))
    for name in ("ips", "clipped_ips", "item_position_ips"):
        assert estimates[name]["value"] == 0.0 and estimates[name]["matched_share"] == 0.0
        assert math.isnan(estimates[name]["std_error"]) and math.isnan(estimates[name]["lo"])
    assert math.isnan(estimates["snips"]["value"]) and math.isnan(estimates["replay"]["value"])
    assert estimates["dm"]["value"] == pytest.approx(0.4)


def test_a_prediction_repeated_for_an_item_the_policy_shows_is_refused() -> None:
    """A repeated (context, item) of the reward model at an item the policy picks but the log
    did not show: DM summed it twice (0.467 for 0.4), where no round met it."""
    frames = _toy()
    rewards = frames["rewards"]
    again = rewards[(rewards["context_id"] == 2) & (rewards["item_id"] == 2)]
    with pytest.raises(SqlmetricsError, match="rewards: 1 predictions repeat a"):
        sqlmetrics.off_policy(frames["log"], frames["policy"], pd.concat([rewards, again]))


def test_columns_rename_the_roles() -> None:
    frames = _toy()
    renamed = {
        role: frame.rename(columns={"context_id": "impression", "reward": "clicked"})
        for role, frame in frames.items()
    }
    result = sqlmetrics.off_policy(
        renamed["log"],
        renamed["policy"],
        renamed["rewards"],
        columns={"context": "impression", "reward": "clicked"},
    )
    assert _by_estimator(result)["dr"]["value"] == pytest.approx(1.6333333333333333)


def test_a_column_spelled_differently_is_refused() -> None:
    """The query names each role's column once: its spellings must agree (PostgreSQL reads a
    quoted name case by case)."""
    frames = _toy()
    policy = frames["policy"].rename(columns={"context_id": "Context_ID"})
    with pytest.raises(SqlmetricsError, match="log 'context_id', policy 'Context_ID'"):
        sqlmetrics.off_policy(frames["log"], policy)
    log = frames["log"].assign(Position=1)
    with pytest.raises(SqlmetricsError, match="log 'Position', policy 'position'"):
        sqlmetrics.off_policy(
            log, frames["policy"].assign(position=1, probability=1.0).drop(columns="rank")
        )


def _candidates() -> dict[str, pd.DataFrame]:
    """The toy log with two candidate policies in one table (model a: the toy's; model b:
    item 0 everywhere) and a reward model per candidate (a: 0.4, b: 0.6)."""
    frames = _toy()
    a = frames["policy"].assign(model="a")
    b = a.assign(item_id=0, model="b")
    rewards = pd.concat(
        [frames["rewards"].assign(model="a"), frames["rewards"].assign(model="b", prediction=0.6)]
    )
    return {"log": frames["log"], "policy": pd.concat([a, b]), "rewards": rewards}


@pytest.mark.parametrize("per_candidate", [True, False])
def test_group_by_candidates_equals_one_call_each(per_candidate: bool) -> None:
    frames = _candidates()
    rewards = frames["rewards"] if per_candidate else _toy()["rewards"]
    grouped = sqlmetrics.off_policy(
        frames["log"], frames["policy"], rewards, group_by="model", clip=3
    )
    assert list(grouped.columns[:2]) == ["model", "estimator"]
    for model in ("a", "b"):
        policy = frames["policy"][frames["policy"]["model"] == model].drop(columns="model")
        own = rewards[rewards["model"] == model].drop(columns="model") if per_candidate else rewards
        alone = sqlmetrics.off_policy(frames["log"], policy, own, clip=3)
        part = grouped[grouped["model"] == model].drop(columns="model").reset_index(drop=True)
        pd.testing.assert_frame_equal(part, alone, check_exact=False, rtol=1e-12)
    # model b shows item 0: rounds 1, 4 and 6 match, rewards 1, 0, 1 over propensity 0.5
    b = _by_estimator(grouped[grouped["model"] == "b"])
    assert b["ips"]["value"] == pytest.approx((2 + 0 + 2) / 6)
    assert b["replay"]["value"] == pytest.approx(2 / 3)


def test_group_by_through_sqlite() -> None:
    frames = _candidates()
    connection = sqlite3.connect(":memory:")
    for role, frame in frames.items():
        frame.to_sql(f"candidates_{role}", connection, index=False)
    on_sqlite = sqlmetrics.off_policy(
        "candidates_log",
        "candidates_policy",
        "candidates_rewards",
        group_by=["model"],
        connection=connection,
        dialect="sqlite",
    )
    on_duckdb = sqlmetrics.off_policy(
        frames["log"], frames["policy"], frames["rewards"], group_by=["model"]
    )
    pd.testing.assert_frame_equal(on_sqlite, on_duckdb, check_exact=False, rtol=1e-12)


def test_group_by_refusals() -> None:
    frames = _candidates()
    log, policy, rewards = frames["log"], frames["policy"], frames["rewards"]
    with pytest.raises(SqlmetricsError, match="policy: no group column 'segment'"):
        sqlmetrics.off_policy(log, policy, group_by="segment")
    with pytest.raises(SqlmetricsError, match="2 rows have no value in a group column"):
        sqlmetrics.off_policy(log, policy.assign(model=["a"] * 10 + [None] * 2), group_by="model")
    with pytest.raises(SqlmetricsError, match="every group column"):
        sqlmetrics.off_policy(log, policy.assign(day=1), rewards, group_by=["model", "day"])


def test_command_line(tmp_path: Path) -> None:
    frames = _toy()
    paths = {}
    for role, frame in frames.items():
        paths[role] = tmp_path / f"{role}.parquet"
        frame.to_parquet(paths[role])
    done = cli(
        "off-policy",
        str(paths["log"]),
        str(paths["policy"]),
        "--rewards",
        str(paths["rewards"]),
        "--clip",
        "3",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    rows = {row["estimator"]: row for row in json.loads(done.stdout)}
    assert rows["ips"]["value"] == pytest.approx(2.0555555555555554)
    assert rows["clipped_ips"]["value"] == pytest.approx(10 / 6)
    candidates = _candidates()
    for role in ("policy", "rewards"):
        candidates[role].to_parquet(tmp_path / f"candidates_{role}.parquet")
    grouped = cli(
        "off-policy",
        str(paths["log"]),
        str(tmp_path / "candidates_policy.parquet"),
        "--rewards",
        str(tmp_path / "candidates_rewards.parquet"),
        "--group-by",
        "model",
        "--format",
        "csv",
    )
    assert grouped.returncode == 0, grouped.stderr
    assert grouped.stdout.splitlines()[0].startswith("model,estimator,value,")
    assert len(grouped.stdout.splitlines()) == 1 + 2 * 7
    refused = cli("off-policy", str(paths["log"]), str(paths["log"]))
    assert refused.returncode == 2
    assert "policy: give either a 'rank' column" in refused.stderr
