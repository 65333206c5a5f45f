"""sqlmetrics.off_policy on a large synthetic log: its time on DuckDB, and numpy's on the same
arrays for scale.

    python bench/off_policy.py [--rounds 1000000] [--items 10] [--positions 3]

Writes Parquet files to bench/data/off_policy/ (a log of --rounds rows: contexts of
--positions rounds each, an item drawn from a uniform logging policy over --items; a new
policy of probabilities per (context, position, item), a reward model per (context, item)),
then times ``sqlmetrics.off_policy`` on the files (three runs, the median wall and CPU time;
every estimator, the reward model's DM and DR included) and numpy's IPS, SNIPS and DR on
arrays already in memory, the smallest share of the work (no reading, no joins). It is a
measurement, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "off_policy"


def write(rounds: int, items: int, positions: int) -> dict[str, Path]:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(7)
    contexts = rounds // positions
    context = np.repeat(np.arange(contexts), positions)
    position = np.tile(np.arange(1, positions + 1), contexts)
    item = rng.integers(0, items, size=len(context))
    log = pd.DataFrame(
        {
            "context_id": context,
            "position": position,
            "item_id": item,
            "reward": (rng.random(len(context)) < 0.1 + 0.02 * item).astype("int8"),
            "propensity": np.full(len(context), 1.0 / items),
        }
    )
    new = rng.dirichlet(np.ones(items), size=len(context))
    policy = pd.DataFrame(
        {
            "context_id": np.repeat(context, items),
            "position": np.repeat(position, items),
            "item_id": np.tile(np.arange(items), len(context)),
            "probability": new.ravel(),
        }
    )
    rewards = pd.DataFrame(
        {
            "context_id": np.repeat(np.arange(contexts), items),
            "item_id": np.tile(np.arange(items), contexts),
            "prediction": rng.random(contexts * items),
        }
    )
    DATA.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, frame in (("log", log), ("policy", policy), ("rewards", rewards)):
        paths[name] = DATA / f"{name}_{rounds}.parquet"
        frame.to_parquet(paths[name])
    return paths


def numpy_seconds(paths: dict[str, Path], items: int) -> float:
    """IPS, SNIPS and DR from arrays in memory (the policy's probabilities as a matrix)."""
    import numpy as np
    import pandas as pd

    log = pd.read_parquet(paths["log"])
    pi = pd.read_parquet(paths["policy"])["probability"].to_numpy().reshape(-1, items)
    q = pd.read_parquet(paths["rewards"])["prediction"].to_numpy().reshape(-1, items)
    q_round = q[log["context_id"].to_numpy()]
    start = time.perf_counter()
    rows = np.arange(len(log))
    action = log["item_id"].to_numpy()
    w = pi[rows, action] / log["propensity"].to_numpy()
    reward = log["reward"].to_numpy()
    _ = (w * reward).mean(), (w * reward).sum() / w.sum()
    _ = ((pi * q_round).sum(axis=1) + w * (reward - q_round[rows, action])).mean()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1_000_000)
    parser.add_argument("--items", type=int, default=10)
    parser.add_argument("--positions", type=int, default=3)
    args = parser.parse_args()

    import sqlmetrics

    paths = write(args.rounds, args.items, args.positions)
    times, cpu = [], []
    for _ in range(3):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = sqlmetrics.off_policy(
            str(paths["log"]), str(paths["policy"]), str(paths["rewards"])
        )
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)  # DuckDB's threads are the process's
    print(result.to_string(index=False))
    policy_rows = args.rounds * args.items
    print(
        f"off_policy on DuckDB: {args.rounds:,} rounds, {policy_rows:,} policy rows: "
        f"median {statistics.median(times):.2f} s of {', '.join(f'{t:.2f}' for t in times)}; "
        f"CPU median {statistics.median(cpu):.2f} s"
    )
    print(f"numpy IPS, SNIPS, DR on arrays in memory: {numpy_seconds(paths, args.items):.2f} s")


if __name__ == "__main__":
    main()
