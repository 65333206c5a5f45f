"""How often the bootstrap interval of a gap between segments holds the true gap.

    python bench/gap_coverage.py --rates 0.5,0.53,0.56,0.5 --users 100 --runs 60

Simulates data sets of segments (one per rate) of ``--users`` users each, each user's one
relevant item placed first with probability the segment's rate (precision@1 is then a
Bernoulli mean), evaluates ``segment=`` with a 90% bootstrap interval (400 replicates, a new
seed per data set) and counts how often ``range_lo <= true range <= range_hi`` (and the same
for ``mad``). The gaps of noisy means are biased upward: where the true gap is small against
the segments' noise the estimate and its interval overstate it (docs/reference/results.md).
It is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np
import pandas as pd

import sqlmetrics


def data(rng: np.random.Generator, rates: list[float], users: int) -> tuple[pd.DataFrame, ...]:
    recs, truth = [], []
    for s, rate in enumerate(rates):
        for _ in range(users):
            user = f"s{s}u{rng.integers(10**9):09d}"
            hit = rng.random() < rate
            first, second = ("r", "x") if hit else ("x", "r")
            recs += [(user, first, 0.9, f"g{s}"), (user, second, 0.5, f"g{s}")]
            truth.append((user, "r", f"g{s}"))
    return (
        pd.DataFrame(recs, columns=["user_id", "item_id", "score", "segment"]),
        pd.DataFrame(truth, columns=["user_id", "item_id", "segment"]),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="0.5,0.53,0.56,0.5")
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    rates = [float(rate) for rate in args.rates.split(",")]
    true_range = max(rates) - min(rates)
    true_mad = float(np.mean([abs(a - b) for a, b in itertools.combinations(rates, 2)]))
    rng = np.random.default_rng(0)
    held = {"range": 0, "mad": 0}
    found = []
    for run in range(args.runs):
        recs, truth = data(rng, rates, args.users)
        result = sqlmetrics.evaluate(
            recs,
            truth,
            ["precision@1"],
            segment="segment",
            ci=0.9,
            ci_method="bootstrap",
            replicates=400,
            seed=run,
        )
        gap = sqlmetrics.read_gaps(result).iloc[0]
        held["range"] += bool(gap["range_lo"] <= true_range <= gap["range_hi"])
        held["mad"] += bool(gap["mad_lo"] <= true_mad <= gap["mad_hi"])
        found.append((gap["range"], gap["range_lo"], gap["range_hi"]))
    mean = np.array(found).mean(axis=0)
    print(
        f"rates {rates}, {args.users} users a segment, {args.runs} data sets: true range "
        f"{true_range:.3f}, mean estimate {mean[0]:.3f}, mean interval [{mean[1]:.3f}, "
        f"{mean[2]:.3f}]; 90% intervals holding the true range {held['range'] / args.runs:.2f}, "
        f"the true mad {held['mad'] / args.runs:.2f}"
    )


if __name__ == "__main__":
    main()
