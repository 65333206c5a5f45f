"""What a call asks of the statistics: the interval or test, its replicates and seed, checked
(``Resampling``), and which requests have a per-user value to resample."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.errors import SqlmetricsError

CI_METHODS = ("t", "bootstrap")
TESTS = ("t", "randomization")
BUCKETS = 1000
MAX_REPLICATES = 100_000
MAX_SEED = 2**31 - 1
# Poisson(1) CDF at 0..POISSON_MAX - 1; a draw above the last is weight POISSON_MAX
# (probability 1e-10 for 13).
POISSON_MAX = 13
POISSON_CDF = tuple(
    sum(math.exp(-1.0) / math.factorial(j) for j in range(k + 1)) for k in range(POISSON_MAX)
)


@dataclass(frozen=True)
class Resampling:
    """How intervals and tests are computed: the level, the interval method, and the replicates,
    seed and buckets of the bootstrap and the randomization test."""

    level: float = 0.95
    method: str = "t"
    replicates: int = 1000
    seed: int = 0
    buckets: int = BUCKETS
    # The last group column is a segment of users (evaluate's segment=): the users of a group
    # are dealt into buckets across its segments, so that two segments share no bucket's draw
    # while the group has no more users than buckets (stats/replicates.py, _units).
    segmented: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.level, bool) or not isinstance(self.level, numbers.Real):
            raise SqlmetricsError(
                f"ci must be a number between 0 and 1, like 0.95, not {self.level!r}"
            )
        if not 0 < self.level < 1:
            raise SqlmetricsError(
                f"ci must be between 0 and 1 (a confidence level like 0.95), not {self.level!r}"
            )
        object.__setattr__(self, "level", float(self.level))
        if self.method not in CI_METHODS:
            raise SqlmetricsError(
                f"ci_method must be one of {', '.join(CI_METHODS)}, not {self.method!r}"
            )
        for name, value, low, high in (
            ("replicates", self.replicates, 1, MAX_REPLICATES),
            ("seed", self.seed, 0, MAX_SEED),
            ("buckets", self.buckets, 1, MAX_SEED // MAX_REPLICATES),
        ):
            # numpy's integers too (numbers.Integral), as Python ints from here on
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                value = None
            if value is None or not low <= value <= high:
                raise SqlmetricsError(
                    f"{name} must be a whole number from {low} to {high:,}, "
                    f"not {getattr(self, name)!r}"
                )
            object.__setattr__(self, name, int(value))
        fewest = bootstrap_replicates(self.level)
        if self.method == "bootstrap" and self.replicates < fewest:
            raise SqlmetricsError(
                f"replicates={self.replicates} is too few for a {self.level:g} bootstrap "
                f"interval: each end needs a replicate beyond it, so at least {fewest} "
                "(1000 is the default)"
            )


def bootstrap_replicates(level: float) -> int:
    """The fewest replicates whose percentile interval at ``level`` has a replicate beyond
    each end: (1 - level) / 2 of them at least 1. With fewer, the ends are the extreme
    replicates, and with one the interval is that replicate alone, which need not hold the
    estimate."""
    return math.ceil(2 / (1 - level) - 1e-9)


def has_interval(request: MetricRequest) -> bool:
    """Whether a metric is a mean of per-user values, which the t-interval, the bootstrap and
    the paired tests are about. Micro metrics (a ratio of sums, rmse's square root of one) and
    group-level ones (coverage, gini, entropy, personalization) have no per-user value to
    resample: they get no interval. Nor, yet, do the means over the top-k lists (novelty, arp,
    ild, serendipity): they average over every user with a list, and the per-user rows hold the
    population's users only, so their mean would be another one."""
    metric = request.metric
    return not (metric.micro or metric.group_level or metric.square_root or metric.reads == "lists")


def without_interval(requests: Sequence[MetricRequest]) -> list[str]:
    return [request.label for request in requests if not has_interval(request)]


def distribution_indexes(
    requests: Sequence[MetricRequest], labels: Sequence[str] | str
) -> list[int]:
    """The requests whose distributions evaluate's ``distributions`` asks for."""
    labels = [labels] if isinstance(labels, str) else list(labels)
    index = {request.label: i for i, request in enumerate(requests)}
    wanted = []
    for label in labels:
        if label not in index:
            raise SqlmetricsError(
                f"distributions={label!r} is not one of the metrics asked for; "
                f"choose among {', '.join(index)}"
            )
        if not has_interval(requests[index[label]]):
            raise SqlmetricsError(
                f"{label} is not a mean over users (a micro, group-level or over-the-lists "
                "metric): it has no per-user values to spread; leave it out of distributions"
            )
        wanted.append(index[label])
    return list(dict.fromkeys(wanted))
