"""Draws OBP's synthetic logged data and prints it, with OBP's own estimates, as JSON.

Used by tests/test_off_policy.py through ``.venv-obp/bin/python`` (make obp-venv): OBP pins
old numpy, pandas and scikit-learn releases and Python below 3.11, so it has a venv of its own.

    python tests/obp_runner.py SEED > data.json

Output: {"bandit": {...}, "deterministic": {...}, "slate": {...}}, each with the rows of a log,
of a policy and (bandit) of a reward model as sqlmetrics.off_policy reads them, and OBP's
estimates under sqlmetrics' estimator names; nothing here computes an estimate itself.
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

CLIP = 5.0


def _log(feedback: dict[str, Any], position: Any = None) -> list[dict[str, Any]]:
    rows = []
    for i, (action, reward, pscore) in enumerate(
        zip(feedback["action"], feedback["reward"], feedback["pscore"], strict=True)
    ):
        row = {"context_id": i, "item_id": int(action), "reward": float(reward)}
        row["propensity"] = float(pscore)
        if position is not None:
            row["position"] = int(position[i]) + 1
        rows.append(row)
    return rows


def bandit(seed: int, deterministic: bool) -> dict[str, Any]:
    """Synthetic contextual bandit data, an evaluation policy (epsilon-greedy on the expected
    rewards, or its greedy part alone), a noisy reward model, and OBP's IPW, clipped IPW,
    SNIPW, DM, DR and (deterministic) replay."""
    import numpy as np
    from obp.dataset import SyntheticBanditDataset, logistic_reward_function
    from obp.ope import (
        DirectMethod,
        DoublyRobust,
        InverseProbabilityWeighting,
        OffPolicyEvaluation,
        ReplayMethod,
        SelfNormalizedInverseProbabilityWeighting,
    )
    from obp.policy import EpsilonGreedy  # noqa: F401  (imported to fail loudly if OBP is broken)

    n_actions = 4
    dataset = SyntheticBanditDataset(
        n_actions=n_actions,
        dim_context=3,
        reward_function=logistic_reward_function,
        beta=-1.0,
        random_state=seed,
    )
    feedback = dataset.obtain_batch_bandit_feedback(n_rounds=400)
    n = feedback["n_rounds"]
    expected = feedback["expected_reward"]
    greedy = np.zeros((n, n_actions))
    greedy[np.arange(n), expected.argmax(axis=1)] = 1.0
    dist = greedy if deterministic else 0.7 * greedy + 0.3 / n_actions
    action_dist = dist[:, :, np.newaxis]
    noise = np.random.default_rng(seed).normal(0, 0.1, size=expected.shape)
    predicted = np.clip(expected + noise, 0, 1)[:, :, np.newaxis]
    estimators = [
        InverseProbabilityWeighting(estimator_name="ips"),
        InverseProbabilityWeighting(lambda_=CLIP, estimator_name="clipped_ips"),
        SelfNormalizedInverseProbabilityWeighting(estimator_name="snips"),
        DirectMethod(estimator_name="dm"),
        DoublyRobust(estimator_name="dr"),
    ]
    if deterministic:
        estimators.append(ReplayMethod(estimator_name="replay"))
    ope = OffPolicyEvaluation(bandit_feedback=feedback, ope_estimators=estimators)
    values = ope.estimate_policy_values(
        action_dist=action_dist, estimated_rewards_by_reg_model=predicted
    )
    if deterministic:
        policy = [
            {"context_id": i, "item_id": int(a), "rank": 1}
            for i, a in enumerate(expected.argmax(axis=1))
        ]
    else:
        policy = [
            {"context_id": i, "item_id": a, "probability": float(dist[i, a])}
            for i in range(n)
            for a in range(n_actions)
        ]
    rewards = [
        {"context_id": i, "item_id": a, "prediction": float(predicted[i, a, 0])}
        for i in range(n)
        for a in range(n_actions)
    ]
    return {
        "log": _log(feedback),
        "policy": policy,
        "rewards": rewards,
        "clip": CLIP,
        "obp": {name: float(value) for name, value in values.items()},
    }


def slate(seed: int) -> dict[str, Any]:
    """Synthetic slates (3 positions of 6 items), an evaluation policy of its own logits, and
    OBP's independent IPS (IIPS, Li et al. 2018's item-position estimator) on them; the
    policy's rows are its marginal probabilities of the logged item at the logged position."""
    import numpy as np
    from obp.dataset import (
        SyntheticSlateBanditDataset,
        linear_behavior_policy_logit,
        logistic_reward_function,
    )
    from obp.ope import SlateIndependentIPS

    dataset = SyntheticSlateBanditDataset(
        n_unique_action=6,
        len_list=3,
        dim_context=2,
        reward_type="binary",
        reward_structure="independent",
        base_reward_function=logistic_reward_function,
        behavior_policy_function=linear_behavior_policy_logit,
        random_state=seed,
    )
    feedback = dataset.obtain_batch_bandit_feedback(n_rounds=150, return_pscore_item_position=True)
    logit = np.random.default_rng(seed).normal(0, 1, size=(feedback["n_rounds"], 6))
    _, evaluation, _ = dataset.obtain_pscore_given_evaluation_policy_logit(
        action=feedback["action"], evaluation_policy_logit_=logit
    )
    iips = SlateIndependentIPS(len_list=3).estimate_policy_value(
        slate_id=feedback["slate_id"],
        reward=feedback["reward"],
        position=feedback["position"],
        pscore_item_position=feedback["pscore_item_position"],
        evaluation_policy_pscore_item_position=evaluation,
    )
    log = []
    policy = []
    for i, slate_id in enumerate(feedback["slate_id"]):
        context, item = int(slate_id), int(feedback["action"][i])
        position = int(feedback["position"][i]) + 1
        log.append(
            {
                "context_id": context,
                "position": position,
                "item_id": item,
                "reward": float(feedback["reward"][i]),
                "propensity": float(feedback["pscore_item_position"][i]),
            }
        )
        policy.append(
            {
                "context_id": context,
                "position": position,
                "item_id": item,
                "probability": float(evaluation[i]),
            }
        )
    return {"log": log, "policy": policy, "obp": {"item_position_ips": float(iips)}}


def main() -> None:
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 12345
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = {
            "bandit": bandit(seed, deterministic=False),
            "deterministic": bandit(seed, deterministic=True),
            "slate": slate(seed),
        }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
