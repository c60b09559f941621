"""Descriptive statistics and confidence intervals for repeated benchmark trials.

Every estimator is a plain function of a one-dimensional sample so that later
work can add more (distribution-free median intervals, bootstrap, Shapiro-Wilk,
Welch / Mann-Whitney tests, Holm / Benjamini-Hochberg corrections, harmonic
means) beside these without touching callers: an interval is always returned as
a `ConfidenceInterval` that names the method that produced it, and
`summarize` is the single place that decides which statistics a table shows.

Degenerate samples never raise: a statistic that needs more observations than
there are is NaN, which pandas writes as an empty CSV cell and the LaTeX layer
prints as a dash. Benchmark campaigns routinely end up with n = 1 (smoke runs)
or n = 0 (every repetition failed) for some configuration.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

DEFAULT_CONFIDENCE = 0.95


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
        }


def as_sample(values: Iterable[float]) -> np.ndarray:
    """A float array without NaNs: a missing measurement is not an observation."""
    array = np.asarray(list(values), dtype=float)
    return array[~np.isnan(array)]


def sample_mean(values: Iterable[float]) -> float:
    sample = as_sample(values)
    return float(sample.mean()) if sample.size else math.nan


def sample_sd(values: Iterable[float]) -> float:
    """Sample standard deviation (Bessel's n - 1), as source 000 reports it."""
    sample = as_sample(values)
    return float(sample.std(ddof=1)) if sample.size >= 2 else math.nan


def sample_median(values: Iterable[float]) -> float:
    sample = as_sample(values)
    return float(np.median(sample)) if sample.size else math.nan


def mean_ci_t(values: Iterable[float], level: float = DEFAULT_CONFIDENCE) -> ConfidenceInterval:
    """Student-t interval for the mean: mean ± t(1 - α/2, n - 1) · s / √n.

    Assumes the trials are independent draws from a roughly normal
    distribution; with the 5-10 repetitions a benchmark affords, the t quantile
    (not the normal 1.96) is what keeps the coverage honest. Undefined for n < 2.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
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


def summarize(values: Iterable[float], level: float = DEFAULT_CONFIDENCE) -> SampleSummary:
    sample = as_sample(values)
    if sample.size == 0:
        nan = math.nan
        return SampleSummary(0, nan, nan, nan, nan, nan, mean_ci_t(sample, level))
    return SampleSummary(
        n=int(sample.size),
        mean=float(sample.mean()),
        sd=sample_sd(sample),
        median=float(np.median(sample)),
        min=float(sample.min()),
        max=float(sample.max()),
        mean_ci=mean_ci_t(sample, level),
    )


def ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, NaN instead of an exception or ±inf when undefined."""
    if denominator == 0 or math.isnan(numerator) or math.isnan(denominator):
        return math.nan
    return numerator / denominator
