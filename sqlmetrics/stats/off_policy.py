"""The off-policy estimates finished from the sums the query returns (compose/off_policy.py).

Each estimate is a mean of per-round (or per-list) terms, or a ratio of two such sums; its
interval is the normal one, from the terms' variance (the central limit theorem), with the
delta method for the ratios (SNIPS, replay). Why not the bootstrap: the variance needs only
the sums of squared terms, which the one query already returns, where a bootstrap resamples
the rounds, once per replicate; and the estimators' own bias under heavy weights is what the
diagnostics (effective sample size, largest weight) flag, which a bootstrap would not correct.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist

# The estimators in the order of the result, with what each needs beyond the log and policy.
ESTIMATORS = (
    "replay",
    "ips",
    "clipped_ips",
    "snips",
    "dm",
    "dr",
    "item_position_ips",
    "independent_item_ips",
)
NEEDS_REWARDS = frozenset({"dm", "dr"})
NEEDS_ITEM_PROPENSITY = frozenset({"independent_item_ips"})
_RESOLVED = 1e-12


@dataclass(frozen=True)
class Estimate:
    """One estimator's value, its standard error and interval, and its diagnostics."""

    estimator: str
    value: float
    std_error: float
    lo: float
    hi: float
    n: int  # the rounds (or lists) its terms average over
    effective_sample_size: float
    max_weight: float
    matched_share: float


# The estimators that are 0, with no spread, where the new policy matches no round of the log.
UNMATCHED_ZERO = frozenset({"ips", "clipped_ips", "item_position_ips", "independent_item_ips"})


def _mean_se(total: float, squares: float, n: int) -> tuple[float, float]:
    """The mean of n terms from their sum and the sum of their squares, and its standard error
    (the sample variance, n - 1 in the denominator); NaN below two terms."""
    if n <= 0:
        return math.nan, math.nan
    mean = total / n
    if n < 2:
        return mean, math.nan
    spread = squares - n * mean * mean
    # below what sums of doubles resolve (terms all equal, as DM's with a constant model)
    variance = spread / (n - 1) if spread > _RESOLVED * squares else 0.0
    return mean, math.sqrt(variance / n)


def _ratio_se(
    numerator: float, denominator: float, num_sq: float, cross: float, den_sq: float, n: int
) -> tuple[float, float]:
    """R = sum(y) / sum(x) and its delta-method standard error: the linearised terms
    y_i - R x_i, whose sum of squares is sum(y^2) - 2 R sum(x y) + R^2 sum(x^2), over sum(x),
    with n / (n - 1) for the degree of freedom."""
    if denominator == 0 or n <= 0:
        return math.nan, math.nan
    ratio = numerator / denominator
    if n < 2:
        return ratio, math.nan
    residual = num_sq - 2 * ratio * cross + ratio * ratio * den_sq
    residual = residual if residual > _RESOLVED * num_sq else 0.0
    return ratio, math.sqrt(residual * n / (n - 1)) / abs(denominator)


def _ess(total: float, squares: float) -> float:
    """Kish's effective sample size of the weights: (sum w)^2 / sum w^2."""
    return total * total / squares if squares > 0 else 0.0


def _interval(value: float, se: float, z: float) -> tuple[float, float]:
    if math.isnan(se) or math.isnan(value):
        return math.nan, math.nan
    return value - z * se, value + z * se


def _get(sums: Mapping[str, object], name: str) -> float:
    value = sums.get(name)
    return 0.0 if value is None else float(value)  # type: ignore[arg-type]


def finish(sums: Mapping[str, object], level: float | None) -> list[Estimate]:
    """Every estimator the sums allow (DM and DR with a reward model, the independent-item one
    with the log's item propensities), in ESTIMATORS' order."""
    z = NormalDist().inv_cdf(0.5 + level / 2) if level is not None else math.nan
    rounds, lists = int(_get(sums, "rounds")), int(_get(sums, "lists"))
    matched = _get(sums, "matched_rounds") / rounds if rounds else math.nan
    s = {name: _get(sums, name) for name in sums}
    w_ess, w_max = _ess(s["w"], s["w_sq"]), s["w_max"]
    found: dict[str, tuple[tuple[float, float], int, float, float, float]] = {
        "replay": (
            _ratio_se(s["pi_r"], s["pi"], s["pi_r_sq"], s["pi_sq_r"], s["pi_sq"], rounds),
            rounds,
            _ess(s["pi"], s["pi_sq"]),
            s["pi_max"],
            matched,
        ),
        "ips": (_mean_se(s["w_r"], s["w_r_sq"], rounds), rounds, w_ess, w_max, matched),
        "clipped_ips": (
            _mean_se(s["c_r"], s["c_r_sq"], rounds),
            rounds,
            _ess(s["c"], s["c_sq"]),
            s["c_max"],
            matched,
        ),
        "snips": (
            _ratio_se(s["w_r"], s["w"], s["w_r_sq"], s["w_sq_r"], s["w_sq"], rounds),
            rounds,
            w_ess,
            w_max,
            matched,
        ),
        "item_position_ips": (
            _mean_se(s["w_r"], s["ip_list_sq"], lists),
            lists,
            w_ess,
            w_max,
            matched,
        ),
    }
    if "dm" in sums:
        found["dm"] = (_mean_se(s["dm"], s["dm_sq"], rounds), rounds, float(rounds), 0.0, 1.0)
        found["dr"] = (_mean_se(s["dr"], s["dr_sq"], rounds), rounds, w_ess, w_max, matched)
    if "wi" in sums:
        found["independent_item_ips"] = (
            _mean_se(s["wi_r"], s["wi_list_sq"], lists),
            lists,
            _ess(s["wi"], s["wi_sq"]),
            s["wi_max"],
            s["wi_matched"] / rounds if rounds else math.nan,
        )
    estimates = []
    for name in ESTIMATORS:
        if name not in found:
            continue
        (value, se), n, ess, largest, share = found[name]
        if share == 0 and name in UNMATCHED_ZERO:
            # every weight 0: the estimate is 0 by construction, and its spread of 0 says
            # nothing of the new policy's reward; no interval rather than a certain one
            se = math.nan
        lo, hi = _interval(value, se, z)
        estimates.append(Estimate(name, value, se, lo, hi, n, ess, largest, share))
    return estimates
