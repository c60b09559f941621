"""Paired ratios: one configuration against a reference measured in the same rounds (blocks).

A campaign runs in rounds, each round every configuration once in a fresh random order, so the
machine's slow drift (thermal state, background load) moves both sides of a pair measured in one
round together. The ratio of the two measurements of a round cancels what the round shares; the
spread left is the within-round noise, usually much smaller than the between-trial noise that the
unpaired interval of two independent means carries.

`paired_log_ratio(a, b)` takes the two sides aligned by round (a[i] and b[i] from round i) and works
on the log ratios d_i = log(a_i / b_i): their mean is the log of the geometric mean of the ratios,
its Student-t interval exp(mean(d) ± t(1 - α/2, n - 1) · sd(d) / √n) the interval of that ratio,
and the one-sample t test of mean(d) = 0 its p-value. A round where either side is missing (NaN:
the trial failed) or not positive (no log) is dropped from the pair and counted in `dropped`.

`paired_log_ratio_bootstrap` is the check: a seeded percentile bootstrap over rounds (the rounds
are resampled, each keeping its pair) of the same geometric-mean ratio.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from archbench.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, BootstrapInterval, bootstrap_ci
from archbench.stats.intervals import ConfidenceInterval, undefined_interval
from archbench.stats.samples import DEFAULT_CONFIDENCE, check_level

PAIRED_METHOD = "paired t on log ratios"


@dataclass(frozen=True)
class PairedRatio:
    """The ratio a / b within rounds: geometric mean of the per-round ratios, its interval and test.

    `n` rounds were paired, `dropped` left out (a side missing or not positive). `mean_log` and
    `sd_log` are the mean and sample sd of the log ratios; `statistic`, `df` and `p_value` the
    two-sided one-sample t test of mean_log = 0. Undefined (NaN) for n < 2; with sd_log = 0 the
    interval is the point and the test undefined."""

    n: int
    dropped: int
    ratio: float
    ci: ConfidenceInterval
    mean_log: float
    sd_log: float
    statistic: float
    df: float
    p_value: float

    @property
    def half_width_pct(self) -> float:
        """Half the interval's width as a percentage of the ratio, as summary.csv gives a mean's."""
        if not self.ci.is_defined or not self.ratio:
            return math.nan
        return 100.0 * self.ci.half_width / self.ratio


def aligned_pairs(a: Iterable[float], b: Iterable[float]) -> tuple[np.ndarray, np.ndarray, int]:
    """(a, b, dropped): the rounds where both sides are present and positive, and how many were not."""
    x = np.asarray(list(a), dtype=float)
    y = np.asarray(list(b), dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired samples must be aligned by round, got {x.size} and {y.size} values")
    keep = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    return x[keep], y[keep], int(x.size - keep.sum())


def paired_log_ratio(a: Iterable[float], b: Iterable[float], level: float = DEFAULT_CONFIDENCE) -> PairedRatio:
    """The paired ratio of a to b over rounds (a[i], b[i] measured in round i): see the module docstring."""
    check_level(level)
    x, y, dropped = aligned_pairs(a, b)
    n = int(x.size)
    nan = math.nan
    if n == 0:
        return PairedRatio(0, dropped, nan, undefined_interval(level, PAIRED_METHOD), nan, nan, nan, nan, nan)
    logs = np.log(x / y)
    mean_log = float(logs.mean())
    ratio = math.exp(mean_log)
    if n < 2:
        return PairedRatio(n, dropped, ratio, undefined_interval(level, PAIRED_METHOD), mean_log, nan, nan, nan, nan)
    sd_log = float(logs.std(ddof=1))
    df = float(n - 1)
    if sd_log == 0.0:
        point = ConfidenceInterval(ratio, ratio, level, PAIRED_METHOD)
        return PairedRatio(n, dropped, ratio, point, mean_log, 0.0, nan, df, nan)
    standard_error = sd_log / math.sqrt(n)
    half = float(scipy_stats.t.ppf(0.5 + level / 2.0, df)) * standard_error
    statistic = mean_log / standard_error
    p_value = float(2.0 * scipy_stats.t.sf(abs(statistic), df))
    interval = ConfidenceInterval(math.exp(mean_log - half), math.exp(mean_log + half), level, PAIRED_METHOD)
    return PairedRatio(n, dropped, ratio, interval, mean_log, sd_log, statistic, df, p_value)


def paired_log_ratio_bootstrap(
    a: Iterable[float],
    b: Iterable[float],
    *,
    level: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
) -> BootstrapInterval:
    """Seeded percentile bootstrap over rounds of the geometric-mean ratio a / b (rounds resampled whole)."""
    x, y, _ = aligned_pairs(a, b)
    logs = np.log(x / y) if x.size else np.array([])

    def geometric_mean_ratio(d: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.exp(np.mean(d, axis=axis))

    return bootstrap_ci([logs], geometric_mean_ratio, level=level, resamples=resamples, seed=seed)
