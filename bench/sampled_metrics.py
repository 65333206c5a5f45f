"""How far each estimator of evaluate's ``sampled=`` lands from the full-catalogue metric.

    python bench/sampled_metrics.py [--users 1000] [--repeats 300] [--gamma 0.01]
        [--plot docs/sampled_metrics.png]

A model's full-catalogue ranks are fixed once: each of ``--users`` users has one held-out
positive at a full rank drawn from a heavy-tailed law (a log-uniform rank over 1..n, the share
of positives in the top 10 about that of a fair model), so the exact metric is known. Then,
``--repeats`` times, each user's positive is ranked among m = 100 negatives drawn without
replacement from the n - 1 others (its sampled rank r' - 1 is the number of the r - 1 items
above it among the m drawn: a hypergeometric draw, what sampling the items gives), and every
estimator (sqlmetrics.stats.sampled) is computed from the histogram of r', as evaluate does.
For n = 1,000 and 10,000 it prints, per metric and estimator, the mean estimate, its bias
(mean - exact), its spread (standard deviation over the repeats) and the root mean squared
error; ``--plot`` draws each estimator's estimates against the exact value. One repeat is also
run through ``evaluate`` on DuckDB, whose estimates must equal the Python path's.

The exact metric is that of one positive per user, the paper's setting (Krichene and Rendle,
KDD 2020). It is a measurement, not a test; run it by hand (about a minute).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlmetrics.stats.sampled import (
    DEFAULT_GAMMA,
    ESTIMATORS,
    Sampled,
    at_rank,
    estimates,
    estimator_weights,
)

TARGETS = [("hit_rate", 10), ("ndcg", 10), ("precision", 10), ("mrr", None), ("map", 10)]
LABELS = ["hit_rate@10", "ndcg@10", "precision@10", "mrr", "map@10"]
NEGATIVES = 100


def full_ranks(n: int, users: int, seed: int) -> Any:
    """Each user's positive's full rank: log-uniform over 1..n (a good model's head, a tail)."""
    import numpy as np

    generator = np.random.default_rng(seed)
    return np.floor(np.exp(generator.uniform(0, math.log(n), size=users))).astype(int)


def sampled_ranks(ranks: Any, n: int, m: int, generator: Any) -> Any:
    """One draw of every positive's sampled rank: 1 + the items above it among m drawn."""
    return 1 + generator.hypergeometric(ranks - 1, n - ranks, m)


def simulate(n: int, users: int, repeats: int, seed: int, gamma: float) -> dict[str, Any]:
    """The exact metrics and every repeat's estimates, shape (repeats, targets, ESTIMATORS)."""
    import numpy as np

    sampled = Sampled(n, NEGATIVES, gamma)
    ranks = full_ranks(n, users, seed)
    exact = np.array([at_rank(f, k, ranks.astype(float)).mean() for f, k in TARGETS])
    weights = estimator_weights(sampled, TARGETS)
    generator = np.random.default_rng(seed + 1)
    found = np.empty((repeats, len(TARGETS), len(ESTIMATORS)))
    first = None
    for repeat in range(repeats):
        drawn = sampled_ranks(ranks, n, NEGATIVES, generator)
        histogram = np.bincount(drawn - 1, minlength=NEGATIVES + 1).astype(float)
        found[repeat] = estimates(histogram, weights)[0]
        if first is None:
            first = drawn
    return {"sampled": sampled, "exact": exact, "found": found, "first": first}


def through_evaluate(sampled: Sampled, drawn: Any, expected: Any) -> float:
    """The first repeat's lists (each positive above r' - 1 of its m negatives) evaluated on
    DuckDB with sampled=: the largest difference from the Python path's estimates."""
    import numpy as np
    import pandas as pd

    import sqlmetrics

    users = np.repeat(np.arange(len(drawn)), NEGATIVES + 1)
    places = np.tile(np.arange(1, NEGATIVES + 2), len(drawn))  # list positions 1..m + 1
    positive = places == np.repeat(drawn, NEGATIVES + 1)
    recs = pd.DataFrame(
        {"user_id": users, "item_id": np.where(positive, -1, places), "score": -places}
    )
    truth = pd.DataFrame({"user_id": np.arange(len(drawn)), "item_id": -1})
    result = sqlmetrics.evaluate(recs, truth, LABELS, sampled=sampled)
    table = sqlmetrics.read_sampled(result)
    values = table.pivot(index="metric", columns="estimator", values="value")
    got = values.loc[LABELS, list(ESTIMATORS)].to_numpy()
    return float(np.abs(got - expected).max())


def table(results: dict[int, dict[str, Any]]) -> str:
    """The Markdown table of every (n, metric, estimator): exact, mean, bias, spread, RMSE."""
    lines = [
        "| n | metric | exact | estimator | mean | bias | spread (sd) | RMSE |",
        "|---:|---|---:|---|---:|---:|---:|---:|",
    ]
    for n, found in results.items():
        for t, label in enumerate(LABELS):
            exact = found["exact"][t]
            for e, estimator in enumerate(ESTIMATORS):
                values = found["found"][:, t, e]
                bias = values.mean() - exact
                rmse = math.sqrt(((values - exact) ** 2).mean())
                lines.append(
                    f"| {n:,} | {label} | {exact:.4f} | {estimator} | {values.mean():.4g} "
                    f"| {bias:+.4g} | {values.std():.4g} | {rmse:.4g} |"
                )
    return "\n".join(lines)


def plot(results: dict[int, dict[str, Any]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [0, 1, 3]  # hit_rate@10, ndcg@10, mrr
    figure, axes = plt.subplots(
        len(results), len(shown), figsize=(12, 3.4 * len(results)), squeeze=False
    )
    for row, (n, found) in enumerate(results.items()):
        for column, t in enumerate(shown):
            axis = axes[row][column]
            values = [found["found"][:, t, e] for e in (0, 1, 3)]
            axis.boxplot(values, showfliers=False)
            axis.axhline(found["exact"][t], color="black", linestyle="--", label="exact")
            axis.set_xticks(range(1, 4))
            axis.set_xticklabels(["naive", "rescaled", f"BV ({found['sampled'].gamma:g})"])
            spread = float(found["found"][:, t, 2].std())
            axis.set_title(
                f"{LABELS[t]}, n = {n:,}, m = {NEGATIVES}\n(CLS off the scale: sd {spread:.3g})"
            )
    axes[0][0].legend(loc="upper right")
    figure.tight_layout()
    figure.savefig(path, dpi=90)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gamma", type=float, default=DEFAULT_GAMMA, help="BV's gamma")
    parser.add_argument("--plot", metavar="PNG")
    args = parser.parse_args(argv)
    results = {
        n: simulate(n, args.users, args.repeats, args.seed, args.gamma) for n in (1_000, 10_000)
    }
    for n, found in results.items():
        difference = through_evaluate(found["sampled"], found["first"], found["found"][0])
        print(f"n = {n:,}: evaluate on DuckDB against the Python path: {difference:.2g}")
    print(
        f"\n{args.users:,} users, one positive each, m = {NEGATIVES}, {args.repeats} repeats, "
        f"gamma {args.gamma:g}\n"
    )
    print(table(results))
    if args.plot:
        plot(results, args.plot)
        print(f"\nwrote {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
