"""Sampled metrics and their corrected full-catalogue estimates (evaluate's ``sampled=``).

Each held-out positive was ranked among ``m`` negatives drawn uniformly, without replacement,
from the ``n - 1`` other items of the catalogue: its sampled rank ``r'`` is 1 + the sampled
negatives ranked above it. Given its full-catalogue rank ``r``, ``r' - 1`` follows the
hypergeometric law (``r - 1`` of the ``n - 1`` negatives are above it, ``m`` drawn): mean
``(r - 1) m / (n - 1)``. Krichene and Rendle (KDD 2020, "On Sampled Metrics for Item
Recommendation") approximate it by ``Binomial(m, (r - 1) / (n - 1))`` (drawing with
replacement); ``law="binomial"`` gives theirs. The hypergeometric law is exact for the form's
promise (m distinct negatives) and makes ``m = n - 1`` the identity: every estimator is then
the exact metric.

Every estimator is a value ``x[r']`` per sampled rank, averaged over the positives' histogram
(the only rows the SQL sends back, compose/sampled.py):

- ``naive_sampled``: the metric read at the sampled rank, as the sampled list gives it;
- ``rescaled_rank``: the metric at the full rank whose expected sampled rank is ``r'``,
  ``1 + (r' - 1)(n - 1)/m``;
- ``corrected_least_squares`` (the paper's CLS): ``x`` minimising
  ``sum_r w_r (E[x(r') | r] - M(r))^2`` over the full ranks, ``w`` uniform over 1..n;
- ``corrected_bias_variance`` (BV): the same plus ``gamma * Var[x(r') | r]``, which solves
  ``((1 - gamma) A'WA + gamma diag(A'w)) x = A'W M``; gamma = 1 is the posterior mean
  ``sum_r p(r | r') M(r)`` under the uniform prior, gamma = 0 is CLS.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlmetrics.errors import SqlmetricsError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Floats = npt.NDArray[np.float64]

ESTIMATORS = (
    "naive_sampled",
    "rescaled_rank",
    "corrected_least_squares",
    "corrected_bias_variance",
)
LAWS = ("hypergeometric", "binomial")
# The metrics whose value at one positive is a function of its rank alone (one positive per
# case: hit rate = recall; AP = reciprocal rank).
FAMILIES = ("hit_rate", "recall", "ndcg", "precision", "mrr", "map")
DEFAULT_GAMMA = 0.01  # a compromise: bench/sampled_metrics.py's best at n = 1,000, not 10,000
_CHUNK = 4096  # full ranks per block of the sampling matrix (n can be a million items)
EXACT_RANKS = 20_000  # beyond, the full ranks are summed in bins (_rank_blocks)


@dataclass(frozen=True)
class Sampled:
    """What was sampled: each user's list holds their held-out positive(s) and ``negatives``
    items drawn uniformly, without replacement, from a catalogue of ``n_items`` items.
    ``gamma`` weighs the variance in the bias-variance correction (0: least squares, 1: the
    posterior mean under a uniform prior on the full rank)."""

    n_items: int
    negatives: int
    gamma: float = DEFAULT_GAMMA

    def __post_init__(self) -> None:
        for name, value in (("n_items", self.n_items), ("negatives", self.negatives)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise SqlmetricsError(f"Sampled: {name} must be a whole number, not {value!r}")
        if self.n_items < 2:
            raise SqlmetricsError(
                f"Sampled: n_items is the catalogue's size (at least 2), not {self.n_items}"
            )
        if not 1 <= self.negatives <= self.n_items - 1:
            raise SqlmetricsError(
                f"Sampled: negatives must be between 1 and n_items - 1 = {self.n_items - 1} "
                f"(the other items of the catalogue), not {self.negatives}"
            )
        gamma = self.gamma
        if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not 0 <= gamma <= 1:
            raise SqlmetricsError(f"Sampled: gamma must be a number in [0, 1], not {gamma!r}")

    @property
    def rate(self) -> float:
        """The sampling rate m / (n - 1): the share of the other items each list holds."""
        return self.negatives / (self.n_items - 1)


def family_of(metric: str, k: int | None) -> str | None:
    """The family whose estimate a request gets, or None (not a function of one rank, or
    precision without a cutoff, whose full-catalogue value divides by n)."""
    if metric not in FAMILIES or (metric == "precision" and k is None):
        return None
    return metric


def at_rank(family: str, k: int | None, ranks: Floats) -> Floats:
    """One positive's metric at (possibly fractional) rank ``ranks``, cut at ``k``."""
    import numpy as np

    within = ranks <= (math.inf if k is None else k)
    if family in ("hit_rate", "recall"):
        value = np.ones_like(ranks)
    elif family == "ndcg":
        value = 1 / np.log2(ranks + 1)
    elif family == "precision":
        value = np.full_like(ranks, 1 / (k or 1))
    elif family in ("mrr", "map"):
        value = 1 / ranks
    else:
        raise SqlmetricsError(f"no estimate of {family} from sampled ranks")
    return np.where(within, value, 0.0)


def _log_choose(log_factorials: Floats, a: Floats, b: Floats) -> Floats:
    """log C(a, b), -inf where b is outside 0..a."""
    import numpy as np

    valid = (b >= 0) & (b <= a)
    a_, b_ = np.where(valid, a, 0).astype(int), np.where(valid, b, 0).astype(int)
    value = log_factorials[a_] - log_factorials[b_] - log_factorials[a_ - b_]
    return np.where(valid, value, -np.inf)


def law_block(ranks: Floats, n: int, m: int, law: str, log_factorials: Floats) -> Floats:
    """p(r' | r) for the full ranks ``ranks`` (rows) and r' = 1..m + 1 (columns)."""
    import numpy as np

    above = (ranks - 1)[:, None]  # negatives above the positive in the catalogue
    drawn = np.arange(m + 1, dtype=float)[None, :]  # of them in the sample: r' - 1
    if law == "hypergeometric":
        log_p = (
            _log_choose(log_factorials, above, drawn)
            + _log_choose(log_factorials, (n - 1) - above, m - drawn)
            - _log_choose(log_factorials, np.array([n - 1.0]), np.array([float(m)]))
        )
        return np.exp(log_p)
    if law == "binomial":
        q = above / (n - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_p = (
                _log_choose(log_factorials, np.array([float(m)]), drawn)
                + np.where(drawn > 0, drawn * np.log(q), 0.0)
                + np.where(m - drawn > 0, (m - drawn) * np.log1p(-q), 0.0)
            )
        return np.exp(np.nan_to_num(log_p, nan=-np.inf))
    raise SqlmetricsError(f"law must be one of {', '.join(LAWS)}, not {law!r}")


def _rank_blocks(n: int, exact: int) -> Iterator[tuple[Floats, Floats]]:
    """The full ranks 1..n in blocks, each with the number of ranks it stands for: every rank
    up to ``exact``, then one rank per bin of the rest (the middle one), so that a catalogue of
    millions costs what ``2 * exact`` ranks do. The law and the metrics change little within a
    bin of n / exact ranks beyond the cutoffs (r' - 1 moves by about m / exact)."""
    import numpy as np

    for start in range(1, min(n, exact) + 1, _CHUNK):
        ranks = np.arange(start, min(start + _CHUNK, exact + 1, n + 1), dtype=float)
        yield ranks, np.ones_like(ranks)
    if n <= exact:
        return
    edges = np.unique(np.linspace(exact, n, exact + 1).round().astype(int))  # bins (a, b]
    middles = np.floor((edges[:-1] + 1 + edges[1:]) / 2).astype(float)
    sizes = np.diff(edges).astype(float)
    for start in range(0, len(middles), _CHUNK):
        yield middles[start : start + _CHUNK], sizes[start : start + _CHUNK]


def estimator_weights(
    sampled: Sampled, targets: Sequence[tuple[str, int | None]], law: str = "hypergeometric"
) -> Floats:
    """For each target (family, k): the value each estimator gives a positive at each sampled
    rank, shape (targets, ESTIMATORS, m + 1)."""
    import numpy as np

    n, m, gamma = sampled.n_items, sampled.negatives, float(sampled.gamma)
    log_factorials = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1)))))
    gram = np.zeros((m + 1, m + 1))
    mass = np.zeros(m + 1)  # A'w: each sampled rank's prior probability
    moments = np.zeros((m + 1, len(targets)))  # A'W M
    exact = max([EXACT_RANKS, *(k + 1 for _, k in targets if k is not None)])
    for ranks, counts in _rank_blocks(n, exact):
        root = np.sqrt(counts / n)[:, None]  # each rank's prior weight, split over both sides
        block = law_block(ranks, n, m, law, log_factorials) * root
        gram += block.T @ block
        mass += (block * root).sum(axis=0)
        metric = np.stack([at_rank(f, k, ranks) for f, k in targets], axis=1) * root
        moments += block.T @ metric
    sampled_ranks = np.arange(1, m + 2, dtype=float)
    rescaled = 1 + (sampled_ranks - 1) * (n - 1) / m
    least_squares = np.linalg.lstsq(gram, moments, rcond=None)[0]
    regularised = (1 - gamma) * gram + gamma * np.diag(mass)
    bias_variance = np.linalg.lstsq(regularised, moments, rcond=None)[0]
    weights = np.empty((len(targets), len(ESTIMATORS), m + 1))
    for i, (family, k) in enumerate(targets):
        weights[i, 0] = at_rank(family, k, sampled_ranks)
        weights[i, 1] = at_rank(family, k, rescaled)
        weights[i, 2] = least_squares[:, i]
        weights[i, 3] = bias_variance[:, i]
    return weights


def estimates(
    histogram: Floats,
    weights: Floats,
    level: float | None = None,
    replicates: int = 1000,
    seed: int = 0,
) -> tuple[Floats, Floats | None]:
    """Each target's estimates from one group's ``histogram`` (positives at r' = 1..m + 1),
    shape (targets, ESTIMATORS); with ``level``, their bootstrap percentile intervals, shape
    (targets, ESTIMATORS, 2): the positives resampled with replacement (a multinomial draw of
    the histogram), the estimators recomputed on each draw."""
    import numpy as np

    from sqlmetrics.stats.inference import percentile_interval

    total = float(histogram.sum())
    if total == 0:
        nothing = np.full(weights.shape[:2], np.nan)
        return nothing, None if level is None else np.full((*weights.shape[:2], 2), np.nan)
    values = weights @ histogram / total
    if level is None:
        return values, None
    generator = np.random.default_rng(seed)
    draws = generator.multinomial(int(total), histogram / total, size=replicates) / total
    replicated = np.einsum("tem,bm->teb", weights, draws)
    intervals = np.empty((*weights.shape[:2], 2))
    for t in range(weights.shape[0]):
        for e in range(weights.shape[1]):
            intervals[t, e] = percentile_interval(replicated[t, e].tolist(), level)
    return values, intervals
