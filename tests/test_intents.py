"""The intent-aware metrics (alpha_ndcg, err_ia, nerr_ia, p_ia, ap_ia, s_recall) against ndeval
itself, through pyndeval (ir_measures' provider of the TREC Web track measures) in the venv of
the profile libraries, per user on random judgements; against tests/intent_oracle.py with
groups; and what they refuse."""

from __future__ import annotations

import json
import math
import random
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import sqlmetrics
from sqlmetrics.errors import SqlmetricsError
from tests.beyond_oracle import top_lists
from tests.cli_runner import cli
from tests.engines.conftest import skip_or_fail
from tests.intent_oracle import INTENT_METRICS, intent_values
from tests.test_beyond import LIBRARIES_PYTHON

TOLERANCE = 1e-9
# sqlmetrics' name -> ndeval's, at the cutoffs ndeval reports (ap_ia has none)
NDEVAL = {
    "alpha_ndcg": "alpha-nDCG",
    "err_ia": "ERR-IA",
    "nerr_ia": "nERR-IA",
    "p_ia": "P-IA",
    "s_recall": "strec",
}
NDEVAL_SCRIPT = """
import json, sys
try:
    import pyndeval
except ImportError:
    print(json.dumps(None))
    sys.exit(0)
data = json.load(sys.stdin)
qrels = [pyndeval.SubtopicQrel(*row) for row in data["qrels"]]
run = [pyndeval.ScoredDoc(*row) for row in data["run"]]
print(json.dumps(pyndeval.ndeval(qrels, run)))
"""


def random_judgements(seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Users q0..q13 with 1-4 intents over a pool of judged items (some judged not relevant,
    grade 2 as relevant as 1), lists of 1-22 items with distinct scores, mixing judged and
    unjudged items; some users have no list, some no judgement. Item ids of one length, so
    that ndeval's docno order (text) is the ids' order."""
    rng = random.Random(seed)
    items = [f"d{i:02d}" for i in range(30)]
    interactions, recommendations = [], []
    for u in range(14):
        user = f"q{u}"
        pool = rng.sample(items, rng.randint(2, 12))
        if u % 7 != 6:  # q6, q13: no judgement
            for intent in range(1, rng.randint(2, 5)):
                for item in rng.sample(pool, rng.randint(1, len(pool))):
                    grade = rng.choice([0, 1, 1, 2])
                    interactions.append(
                        {
                            "user_id": user,
                            "intent": f"s{intent}",
                            "item_id": item,
                            "relevance": grade,
                        }
                    )
        if u % 5 != 4:  # q4, q9: no list
            listed = rng.sample(items, rng.randint(1, 22))
            scores = rng.sample(range(1000), len(listed))
            recommendations += [
                {"user_id": user, "item_id": item, "score": float(score)}
                for item, score in zip(listed, scores, strict=True)
            ]
    return recommendations, interactions


LABELS = [f"{name}@{k}" for name in sorted(NDEVAL) for k in (5, 10, 20)] + ["ap_ia"]


def _ours(
    recommendations: list[dict[str, Any]], interactions: list[dict[str, Any]]
) -> pd.DataFrame:
    return sqlmetrics.evaluate(
        pd.DataFrame(recommendations), pd.DataFrame(interactions), LABELS, per_user=True
    ).set_index("user_id")


@pytest.mark.parametrize("seed", range(4))
def test_random_judgements_agree_with_ndeval(seed: int) -> None:
    """Per user and in the mean: every user in both the run and the judgements (ndeval's
    topics), those judged with nothing relevant at 0."""
    if not LIBRARIES_PYTHON.exists():
        skip_or_fail("profiles", "no venv of the profile libraries (make profiles-venv)")
    recommendations, interactions = random_judgements(seed)
    payload = {
        "qrels": [[r["user_id"], r["intent"], r["item_id"], r["relevance"]] for r in interactions],
        "run": [[r["user_id"], r["item_id"], r["score"]] for r in recommendations],
    }
    done = subprocess.run(
        [str(LIBRARIES_PYTHON), "-c", NDEVAL_SCRIPT],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=True,
    )
    theirs = json.loads(done.stdout)
    if theirs is None:
        skip_or_fail("profiles", "pyndeval is not in the venv of the profile libraries")
    ours = _ours(recommendations, interactions)
    summary = sqlmetrics.evaluate(pd.DataFrame(recommendations), pd.DataFrame(interactions), LABELS)
    assert len(theirs) >= 8  # most users are in both
    for label in LABELS:
        name, _, k = label.partition("@")
        measure = f"{NDEVAL[name]}@{k}" if k else "MAP-IA"
        values = {user: numbers[measure] for user, numbers in theirs.items()}
        for user, value in values.items():
            # per_user lists the ranking population (a relevant interaction); a user judged
            # with nothing relevant is 0 in ndeval and counted in the mean below
            got = ours[label].get(user, 0.0) if user in ours.index else 0.0
            assert math.isclose(got, value, rel_tol=0, abs_tol=TOLERANCE), (label, user, value)
        mean = sum(values.values()) / len(values)
        assert math.isclose(summary[label].iloc[0], mean, abs_tol=TOLERANCE), (label, mean)


@pytest.mark.parametrize("seed", range(3))
def test_random_judgements_by_model_agree_with_the_oracle(seed: int) -> None:
    """Two models' lists evaluated against the same judgements (group_by a column of the
    recommendations only), each against tests/intent_oracle.py; ties in the scores; in seed 1
    only grade 2 relevant (threshold 1)."""
    rng = random.Random(seed)
    recommendations, interactions = random_judgements(seed + 100)
    both = [
        {**row, "model": model, "score": rng.choice([1.0, 2.0, row["score"]])}
        for model in ("a", "b")
        for row in recommendations
        if model == "a" or rng.random() < 0.7
    ]
    labels = [f"{name}@{k}" for name in sorted(INTENT_METRICS - {"ap_ia"}) for k in (1, 3, 8)]
    threshold = float(seed == 1)
    ours = sqlmetrics.evaluate(
        pd.DataFrame(both),
        pd.DataFrame(interactions),
        [*labels, "ap_ia"],
        group_by="model",
        threshold=threshold,
    ).set_index("model")
    for model in ("a", "b"):
        lists = top_lists([r for r in both if r["model"] == model], 10**6)
        for label in [*labels, "ap_ia"]:
            name, _, k = label.partition("@")
            values = intent_values(name, int(k or 0), lists, interactions, threshold)
            want = sum(values.values()) / len(values)
            got = ours.loc[model, label]
            assert math.isclose(got, want, rel_tol=0, abs_tol=TOLERANCE), (model, label, want)


def test_without_an_intent_column_the_metrics_are_refused() -> None:
    recommendations = pd.DataFrame({"user_id": [1], "item_id": [1], "score": [1.0]})
    interactions = pd.DataFrame({"user_id": [1], "item_id": [1]})
    with pytest.raises(
        SqlmetricsError, match=r"alpha_ndcg@5, ap_ia judge each item per intent.*intent column"
    ):
        sqlmetrics.evaluate(recommendations, interactions, ["alpha_ndcg@5", "ap_ia", "ndcg@5"])
    named = interactions.assign(aspect="x")
    result = sqlmetrics.evaluate(
        recommendations, named, ["s_recall@5"], columns={"intent": "aspect"}
    )
    assert result["s_recall@5"].iloc[0] == 1.0
    with pytest.raises(SqlmetricsError, match="no column 'facet'"):
        sqlmetrics.evaluate(recommendations, named, ["s_recall@5"], columns={"intent": "facet"})


def test_the_other_metrics_do_not_read_the_intent_column() -> None:
    """The intent column changes nothing else: a (user, item) judged under two intents is one
    relevant item, and the query reads no intent unless an intent-aware metric asks."""
    sql = sqlmetrics.to_sql(["ndcg@5", "coverage@5"])
    assert "intent" not in sql.lower()
    recommendations = pd.DataFrame({"user_id": [1, 1], "item_id": [1, 2], "score": [2.0, 1.0]})
    interactions = pd.DataFrame(
        {"user_id": [1, 1, 1], "intent": ["a", "b", "a"], "item_id": [1, 1, 2]}
    )
    result = sqlmetrics.evaluate(recommendations, interactions, ["precision@2", "s_recall@1"])
    assert result["precision@2"].iloc[0] == 1.0
    assert result["s_recall@1"].iloc[0] == 1.0  # item 1 covers a and b


def test_literal_ranks_refuse_them() -> None:
    """Each walks the list in position order (the items relevant to an intent above each)."""
    ranked = pd.DataFrame({"user_id": [1, 1], "item_id": [1, 2], "rank": [1, 1]})
    interactions = pd.DataFrame({"user_id": [1], "intent": ["a"], "item_id": [1]})
    columns = {"score": None, "rank": "rank"}
    with pytest.raises(SqlmetricsError, match=r'ranks="literal" cannot serve alpha_ndcg@2, ap_ia'):
        sqlmetrics.evaluate(
            ranked, interactions, ["alpha_ndcg@2", "ap_ia"], columns=columns, ranks="literal"
        )


# issue 37's validation data as TREC files: diversity qrels (qid intent docno rel) and a run
DIVERSITY_QRELS = "1 1 d1 1\n1 1 d2 1\n1 2 d2 1\n1 2 d3 1\n1 3 d4 2\n2 1 e1 1\n2 2 e2 1\n2 3 e9 0\n"
DIVERSITY_RUN = "".join(
    f"{qid} Q0 {doc} {rank} {10 - rank} tag\n"
    for qid, docs in (("1", "d1 d2 d9 d3 d4"), ("2", "e1 e3 e2"))
    for rank, doc in enumerate(docs.split(), start=1)
)
# pyndeval on the same judgements (fixtures/intent_aware_diversity.yaml's q1, q2)
VALIDATION = {
    "alpha_ndcg@5": (0.8231153407224933, 0.9197207891481877),
    "err_ia@5": (0.5022692889561272, 0.48411497730711045),
    "nerr_ia@5": (0.7432835820895524, 0.888888888888889),
    "p_ia@5": (1 / 3, 0.2),
    "ap_ia": (0.5666666666666667, 0.6666666666666666),
}


@pytest.mark.parametrize("separator", [" ", "\t  "], ids=["plain", "general"])
def test_diversity_qrels_are_read_with_their_intents(tmp_path: Path, separator: str) -> None:
    """Both readers (the plain one for single spaces, the general one otherwise) keep the
    second field as the intent when told; grade 2 is as relevant as 1, as in ndeval."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text(DIVERSITY_QRELS.replace(" ", separator))
    run.write_text(DIVERSITY_RUN)
    result = sqlmetrics.evaluate(
        sqlmetrics.read_run(run),
        sqlmetrics.read_qrels(qrels, intents=True),
        list(VALIDATION),
        per_user=True,
    ).set_index("user_id")
    for label, values in VALIDATION.items():
        for user, value in zip(("1", "2"), values, strict=True):
            assert math.isclose(result.loc[user, label], value, abs_tol=TOLERANCE), (label, user)


def test_diversity_qrels_from_the_command_line(tmp_path: Path) -> None:
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text(DIVERSITY_QRELS)
    run.write_text(DIVERSITY_RUN)
    done = cli(
        "evaluate",
        str(run),
        str(qrels),
        "-m",
        "alpha_ndcg@5",
        "--input-format",
        "trec",
        "--trec-intents",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    mean = sum(VALIDATION["alpha_ndcg@5"]) / 2
    assert math.isclose(json.loads(done.stdout)[0]["alpha_ndcg@5"], mean, abs_tol=TOLERANCE)
    alone = cli("evaluate", str(run), str(qrels), "-m", "alpha_ndcg@5", "--trec-intents")
    assert alone.returncode != 0 and "--trec-intents reads TREC files" in alone.stderr


def test_diversity_qrels_are_chosen_not_guessed(tmp_path: Path) -> None:
    """The layout is trec_eval's qrels': read without intents=True, a document judged under
    two intents is a duplicate (the message says how to read the file), and the metrics
    that need the intents are refused; a line twice under one intent is refused either way."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text(DIVERSITY_QRELS)
    run.write_text(DIVERSITY_RUN)
    with pytest.raises(
        SqlmetricsError, match=r"lines 2 and 3 both judge document 'd2'.*intents=True"
    ):
        sqlmetrics.evaluate(sqlmetrics.read_run(run), sqlmetrics.read_qrels(qrels), ["ndcg@5"])
    plain = tmp_path / "plain"
    plain.write_text("1 0 d1 1\n2 0 e1 1\n")
    with pytest.raises(SqlmetricsError, match=r"--trec-intents"):
        sqlmetrics.evaluate(sqlmetrics.read_run(run), sqlmetrics.read_qrels(plain), ["p_ia@5"])
    twice = tmp_path / "twice"
    twice.write_text("1 1 d1 1\n1 2 d1 1\n1 1 d1 0\n")
    with pytest.raises(
        SqlmetricsError,
        match=r"lines 1 and 3 both judge document 'd1' for query '1' under intent '1'",
    ):
        sqlmetrics.evaluate(
            sqlmetrics.read_run(run), sqlmetrics.read_qrels(twice, intents=True), ["p_ia@5"]
        )


def test_a_group_column_in_both_inputs_keeps_each_groups_judgements() -> None:
    """group_by a column the interactions have too (a day): each group's value is the one of
    its own rows evaluated alone, the greedy ideal list included."""
    frames = []
    for day, seed in (("mon", 1), ("tue", 2)):
        recommendations, interactions = random_judgements(seed)
        frames.append(
            (
                day,
                pd.DataFrame(recommendations).assign(day=day),
                pd.DataFrame(interactions).assign(day=day),
            )
        )
    labels = ["alpha_ndcg@5", "nerr_ia@3", "err_ia@5", "ap_ia", "p_ia@4", "s_recall@2"]
    both = sqlmetrics.evaluate(
        pd.concat([frame[1] for frame in frames]),
        pd.concat([frame[2] for frame in frames]),
        labels,
        group_by="day",
    ).set_index("day")
    for day, recommendations, interactions in frames:
        alone = sqlmetrics.evaluate(
            recommendations.drop(columns="day"), interactions.drop(columns="day"), labels
        )
        for label in labels:
            want = alone[label].iloc[0]
            assert math.isclose(both.loc[day, label], want, abs_tol=TOLERANCE), (day, label)
