"""Drift: does a measurement move with the round it was taken in?

A campaign runs in rounds (every configuration once per round, in a fresh random order), so a machine that
slowly warms up, throttles or fills a cache shows as a trend of each configuration's values against the round
number. The trend is the least-squares slope, relative to the configuration's mean so configurations of very
different rates can be summarised together, with Student's t interval on n - 2 degrees of freedom and the
two-sided p-value of "no trend" (scipy.stats.linregress). With the handful of rounds of a campaign the test
sees only a strong drift; the slope and its interval say how strong a drift is still compatible with the data.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from archbench.stats.intervals import ConfidenceInterval, undefined_interval
from archbench.stats.samples import DEFAULT_CONFIDENCE, check_level

METHOD = "least-squares slope / mean, Student t on n-2 df"
MIN_POINTS = 3  # a line through two points has no residual: no interval, no test


@dataclass(frozen=True)
class RelativeSlope:
    """The slope of y against x divided by y's mean (a fraction of the mean per unit of x), its interval
    and the p-value of slope = 0. NaN (with `note`) when undefined."""

    n: int
    mean: float
    slope: float  # in y's units per unit of x
    relative: float  # slope / mean
    ci: ConfidenceInterval  # of `relative`
    p_value: float
    note: str = ""


def relative_slope(x: Iterable[float], y: Iterable[float], level: float = DEFAULT_CONFIDENCE) -> RelativeSlope:
    """Least-squares slope of `y` on `x` relative to mean(y); pairs with a missing x or y are left out."""
    check_level(level)
    xs = np.asarray(list(x), dtype=float)
    ys = np.asarray(list(y), dtype=float)
    if xs.shape != ys.shape:
        raise ValueError(f"x and y differ in length: {xs.size} and {ys.size}")
    keep = ~(np.isnan(xs) | np.isnan(ys))
    xs, ys = xs[keep], ys[keep]
    n = int(xs.size)
    mean = float(ys.mean()) if n else math.nan

    def undefined(note: str) -> RelativeSlope:
        return RelativeSlope(n, mean, math.nan, math.nan, undefined_interval(level, METHOD), math.nan, note)

    if n < MIN_POINTS:
        return undefined(f"needs {MIN_POINTS} points, has {n}")
    if np.ptp(xs) == 0:
        return undefined("x does not vary")
    if mean == 0:
        return undefined("mean is zero")
    if np.ptp(ys) == 0:
        # A constant series has no trend and no uncertainty about it.
        return RelativeSlope(n, mean, 0.0, 0.0, ConfidenceInterval(0.0, 0.0, level, METHOD), 1.0, "y does not vary")
    fit = scipy_stats.linregress(xs, ys)
    t = float(scipy_stats.t.ppf(0.5 + level / 2.0, n - 2))
    scale = abs(mean)
    relative = float(fit.slope) / scale
    half = t * float(fit.stderr) / scale
    return RelativeSlope(
        n=n,
        mean=mean,
        slope=float(fit.slope),
        relative=relative,
        ci=ConfidenceInterval(relative - half, relative + half, level, METHOD),
        p_value=float(fit.pvalue),
    )
