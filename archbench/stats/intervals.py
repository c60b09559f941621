"""Confidence intervals for a mean (Student t, from samples or from published summary statistics), the interval a
rate gets (`rate_ci`: never below zero, no t interval under three trials) and what a results table reports for one
configuration (`summarize`, the single place that decides what summary.csv shows).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from archbench.stats.samples import DEFAULT_CONFIDENCE, all_finite, as_sample, check_level, sample_sd


@dataclass(frozen=True)
class ConfidenceInterval:
    """A two-sided interval for a parameter, with how it was computed."""

    low: float
    high: float
    level: float
    method: str

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2.0

    def overlaps(self, other: ConfidenceInterval) -> bool:
        """True when the two intervals share at least one point.

        NaN bounds compare False, so an undefined interval overlaps nothing;
        callers that need "unknown" should check `is_defined` first.
        """
        return self.low <= other.high and other.low <= self.high

    @property
    def is_defined(self) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high))


def undefined_interval(level: float, method: str) -> ConfidenceInterval:
    """The NaN interval a degenerate sample gets instead of an exception."""
    return ConfidenceInterval(math.nan, math.nan, level, method)


# Under three trials a t interval is mostly its quantile (t = 12.7 at two trials) and reaches below zero for any
# rate; the report shows the range of the trials instead and says why.
MIN_TRIALS_FOR_INTERVAL = 3
RANGE_METHOD = "range"
LOG_T_METHOD = "log-t"
CLIPPED_T_METHOD = "student-t clipped at zero"


@dataclass(frozen=True)
class SampleSummary:
    """What a results table reports for one configuration."""

    n: int
    mean: float
    sd: float
    median: float
    min: float
    max: float
    mean_ci: ConfidenceInterval

    def as_dict(self, prefix: str = "") -> dict[str, float | int]:
        """Flat columns for a DataFrame row; the CI level is part of the name."""
        level = round(self.mean_ci.level * 100)
        return {
            f"{prefix}n": self.n,
            f"{prefix}mean": self.mean,
            f"{prefix}sd": self.sd,
            f"{prefix}median": self.median,
            f"{prefix}min": self.min,
            f"{prefix}max": self.max,
            f"{prefix}ci{level}_low": self.mean_ci.low,
            f"{prefix}ci{level}_high": self.mean_ci.high,
            f"{prefix}ci{level}_method": self.mean_ci.method,
        }


def mean_ci_t(values: Iterable[float], level: float = DEFAULT_CONFIDENCE) -> ConfidenceInterval:
    """Student-t interval for the mean: mean ± t(1 - α/2, n - 1) · s / √n.

    Assumes the trials are independent draws from a roughly normal
    distribution; with the 5-10 repetitions a benchmark affords, the t quantile
    (not the normal 1.96) is what keeps the coverage honest. Undefined for n < 2.
    """
    check_level(level)
    sample = as_sample(values)
    method = "student-t"
    if sample.size < 2:
        return ConfidenceInterval(math.nan, math.nan, level, method)
    mean = float(sample.mean())
    standard_error = float(sample.std(ddof=1)) / math.sqrt(sample.size)
    if standard_error == 0.0:
        # scipy returns NaN bounds for a zero-width interval; the honest answer is the point.
        return ConfidenceInterval(mean, mean, level, method)
    t_quantile = float(scipy_stats.t.ppf(0.5 + level / 2.0, df=sample.size - 1))
    return ConfidenceInterval(mean - t_quantile * standard_error, mean + t_quantile * standard_error, level, method)


def rate_ci(values: Iterable[float], level: float = DEFAULT_CONFIDENCE) -> ConfidenceInterval:
    """The interval a rate (or any positive quantity: a ratio, a cost per request) gets in the report.

    Under `MIN_TRIALS_FOR_INTERVAL` trials: the range min-max (method "range"), since no interval is honest there.
    All values positive: the t interval of the mean of the logs, exponentiated ("log-t"), so it cannot reach
    below zero and is as asymmetric as rates are. A zero among non-negative values has no log: the t interval
    with its lower bound clipped at zero. Negative values mean the quantity is not a rate: the plain t interval.
    """
    check_level(level)
    sample = as_sample(values)
    if sample.size == 0:
        return undefined_interval(level, RANGE_METHOD)
    if sample.size < MIN_TRIALS_FOR_INTERVAL:
        return ConfidenceInterval(float(sample.min()), float(sample.max()), level, RANGE_METHOD)
    if (sample > 0).all():
        logs = mean_ci_t(np.log(sample), level)
        return ConfidenceInterval(math.exp(logs.low), math.exp(logs.high), level, LOG_T_METHOD)
    plain = mean_ci_t(sample, level)
    if (sample >= 0).all():
        return ConfidenceInterval(max(0.0, plain.low), plain.high, level, CLIPPED_T_METHOD)
    return plain


def summarize(values: Iterable[float], level: float = DEFAULT_CONFIDENCE) -> SampleSummary:
    """What a table reports for one configuration's rate: n, mean, sd, median, range and `rate_ci`."""
    sample = as_sample(values)
    if sample.size == 0:
        nan = math.nan
        return SampleSummary(0, nan, nan, nan, nan, nan, rate_ci(sample, level))
    return SampleSummary(
        n=int(sample.size),
        mean=float(sample.mean()),
        sd=sample_sd(sample),
        median=float(np.median(sample)),
        min=float(sample.min()),
        max=float(sample.max()),
        mean_ci=rate_ci(sample, level),
    )


def mean_ci_from_stats(mean: float, sd: float, n: int, level: float = DEFAULT_CONFIDENCE) -> ConfidenceInterval:
    """`mean_ci_t` from published summary statistics (mean, sample sd, n): mean ± t(1 - α/2, n - 1) · sd / √n."""
    check_level(level)
    method = "student-t"
    if not all_finite(mean, sd, n) or n < 2:
        return undefined_interval(level, method)
    if sd < 0:
        raise ValueError(f"sd must be >= 0, got {sd}")
    half = float(scipy_stats.t.ppf(0.5 + level / 2.0, df=n - 1)) * sd / math.sqrt(n)
    return ConfidenceInterval(mean - half, mean + half, level, method)


def rate_ci_from_stats(mean: float, sd: float, n: int, level: float = DEFAULT_CONFIDENCE) -> ConfidenceInterval:
    """`rate_ci` from published summary statistics: the t interval of log(mean) with the delta-method standard
    error (sd / mean) / √n, exponentiated, so a published rate's interval stays above zero. Undefined under
    `MIN_TRIALS_FOR_INTERVAL` trials (a published table gives no range to show instead) or for a mean ≤ 0."""
    check_level(level)
    if not all_finite(mean, sd, n) or n < MIN_TRIALS_FOR_INTERVAL or mean <= 0:
        return undefined_interval(level, LOG_T_METHOD)
    if sd < 0:
        raise ValueError(f"sd must be >= 0, got {sd}")
    half = float(scipy_stats.t.ppf(0.5 + level / 2.0, df=n - 1)) * (sd / mean) / math.sqrt(n)
    return ConfidenceInterval(mean * math.exp(-half), mean * math.exp(half), level, LOG_T_METHOD)
