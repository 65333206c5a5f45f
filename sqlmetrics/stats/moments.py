"""The t-statistics read from (count, sum, sum of squares), with their edge cases decided here
once, for every interval, test and gate (docs/METRICS.md, "Intervals and tests"):

- fewer than 2 values, or sums that are not finite (per-user values past ~1e154 square past a
  double): no variance. It is NaN, never 0, and ``Moments.problem`` says why; the interval and
  p-value are NaN, and a gate that meets a NaN where the model may be worse fails.
- zero variance (every value the same): a mean difference that is not 0 is certain (p = 0),
  one that is 0 is no difference (p = 1); the interval is the point.

A gate passes only when the data says the model did not get worse (``gate_failure``); which
way is worse is the metric header's ``better:``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqlmetrics.catalog.metrics import better
from sqlmetrics.stats.tdist import t_quantile, two_sided_p


@dataclass(frozen=True)
class Moments:
    """n values, their sum and sum of squares."""

    n: float
    total: float
    squares: float

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n > 0 else math.nan

    @property
    def variance(self) -> float:
        """The sample variance (n - 1 in the denominator); NaN when it is not known."""
        if self.problem is not None:
            return math.nan
        # squares >= total * mean (Cauchy-Schwarz): nothing here is larger than squares, so a
        # finite sum of squares gives a finite variance (total * total could overflow).
        variance = (self.squares - self.total * self.mean) / (self.n - 1)
        return max(0.0, variance)  # rounding can leave a zero variance slightly negative

    @property
    def problem(self) -> str | None:
        """Why these moments have no variance, or None."""
        if math.isnan(self.n) or self.n < 2:
            return "fewer than 2 users"
        if not (math.isfinite(self.total) and math.isfinite(self.squares)):
            return (
                "the per-user values are too large for their variance in double precision "
                "(their sum or sum of squares is not finite: values above about 1e154)"
            )
        return None


def same_values_p(difference: float) -> float:
    """The p-value of a difference whose values do not vary: certain unless it is 0."""
    if math.isnan(difference):
        return math.nan
    return 1.0 if difference == 0 else 0.0


def t_interval(moments: Moments, level: float) -> tuple[float, float]:
    """Student's t-interval for the mean (scipy.stats.t.interval with the standard error)."""
    variance = moments.variance
    if math.isnan(variance):
        return math.nan, math.nan
    half = t_quantile(0.5 + level / 2, moments.n - 1) * math.sqrt(variance / moments.n)
    return moments.mean - half, moments.mean + half


def t_test(moments: Moments) -> float:
    """The two-sided p-value of the one-sample t-test of mean 0 (scipy.stats.ttest_rel on
    paired differences; where scipy gives NaN for equal differences, same_values_p)."""
    variance = moments.variance
    if math.isnan(variance):
        return math.nan
    error = math.sqrt(variance / moments.n)
    if error == 0:
        return same_values_p(moments.mean)
    return two_sided_p(moments.mean / error, moments.n - 1)


def welch_test(mean1: float, var1: float, n1: float, mean2: float, var2: float, n2: float) -> float:
    """Welch's two-sided p-value for two independent samples given by mean, variance, count
    (scipy.stats.ttest_ind_from_stats(..., equal_var=False); where scipy gives NaN for two
    samples without spread, same_values_p)."""
    if welch_problem(var1, n1, var2, n2) is not None:
        return math.nan
    a, b = var1 / n1, var2 / n2
    if a + b == 0:
        return same_values_p(mean2 - mean1)
    t = (mean2 - mean1) / math.sqrt(a + b)
    df = (a + b) ** 2 / (a * a / (n1 - 1) + b * b / (n2 - 1))
    return two_sided_p(t, df)


def welch_problem(var1: float, n1: float, var2: float, n2: float) -> str | None:
    """Why Welch's test cannot compare these samples, or None."""
    for side, variance, n in (("earlier", var1, n1), ("current", var2, n2)):
        if math.isnan(n) or n < 2:
            return f"the {side} run has fewer than 2 users"
        if not math.isfinite(variance):
            return f"the {side} run's variance is not known (not finite)"
    return None


def in_worse_direction(label: str, difference: float) -> bool:
    """Whether a difference (new - old) may be a change for the worse: a NaN one may be, and
    any change of a metric without a better direction, or whose best is 1 (a difference does
    not say whether the new value is nearer to 1), is one that a gate must look at."""
    if math.isnan(difference):
        return True
    direction = better(label)
    if direction == "higher":
        return difference < 0
    if direction == "lower":
        return difference > 0
    return difference != 0


def gate_failure(
    label: str, difference: float, p: float, alpha: float, why: str = "no p-value"
) -> str | None:
    """Why a gate on this comparison fails, or None when it passes: it passes only when the
    data says the model did not get worse (a difference in the good direction, or one in the
    bad direction that is not significant). A NaN p-value on a difference that may be worse
    fails (``why`` says why there is none): what cannot be tested cannot pass."""
    if not in_worse_direction(label, difference):
        return None
    if math.isnan(difference) or math.isnan(p):
        return f"cannot tell whether it is worse: {why}"
    if p >= alpha:
        return None
    if better(label) in ("higher", "lower"):
        return "significantly worse"
    return "significantly changed (this metric has no better direction a difference shows)"
