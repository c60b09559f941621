"""Summaries of rates (requests per second): the harmonic mean and total work over total time, never the
arithmetic mean of rates (Hoefler & Belli's rule)."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from archbench.stats.intervals import ConfidenceInterval, mean_ci_t, undefined_interval
from archbench.stats.samples import DEFAULT_CONFIDENCE, as_sample, check_level


def harmonic_mean(rates: Iterable[float]) -> float:
    """Harmonic mean n / Σ(1/r_i) of rates (e.g. requests per second); NaN for no rates.

    Hoefler & Belli's rule: use the arithmetic mean only for summarising costs (times),
    the harmonic mean for rates. A rate is work / time, and the rate of several trials
    taken together is total work / total time. When every trial does the same work W
    in time t_i, r_i = W / t_i and total / total = nW / Σt_i = n / Σ(1/r_i): the harmonic
    mean. The arithmetic mean of the r_i over-weights the fast trials and is not the
    rate of anything that ran.

    Caveat for this study: wrk runs for a fixed *time*, not a fixed amount of work. With
    equal durations T, total / total = Σw_i / (nT) is the arithmetic mean of the rates,
    and the harmonic mean is at most that (equal when the trials agree). When the work
    and the times are both recorded (trials.csv: total_requests, measured_duration_s),
    `total_rate` is right in every case.

    A zero rate (no work done) makes the harmonic mean 0; a negative rate is an error.
    """
    sample = as_sample(rates)
    if sample.size == 0:
        return math.nan
    if (sample < 0).any():
        raise ValueError("rates must be >= 0")
    if (sample == 0).any():
        return 0.0
    return float(sample.size / np.sum(1.0 / sample))


def harmonic_mean_ci(rates: Iterable[float], level: float = DEFAULT_CONFIDENCE) -> ConfidenceInterval:
    """Interval for the harmonic mean: a Student-t interval for the mean of 1/r_i (time per
    unit of work, the cost the harmonic mean averages), inverted. The upper bound is +inf
    when the reciprocal interval reaches 0. NaN for n < 2 or a zero rate."""
    check_level(level)
    method = "student-t on reciprocals"
    sample = as_sample(rates)
    if (sample < 0).any():
        raise ValueError("rates must be >= 0")
    if sample.size < 2 or (sample == 0).any():
        return undefined_interval(level, method)
    reciprocal = mean_ci_t(1.0 / sample, level)
    high = math.inf if reciprocal.low <= 0 else 1.0 / reciprocal.low
    return ConfidenceInterval(1.0 / reciprocal.high, high, level, method)


def total_rate(work: Iterable[float], time: Iterable[float]) -> float:
    """Σ work / Σ time over trials (e.g. total requests over total measured seconds): the
    rate of all trials taken together (see `harmonic_mean`). Trials missing either number
    are left out of both sums; NaN when nothing is left or the total time is 0."""
    w = np.array([math.nan if v is None else float(v) for v in work], dtype=float)
    t = np.array([math.nan if v is None else float(v) for v in time], dtype=float)
    if w.shape != t.shape:
        raise ValueError(f"work and time must have the same length, got {w.size} and {t.size}")
    both = ~(np.isnan(w) | np.isnan(t))
    total_time = float(t[both].sum())
    if not both.any() or total_time == 0.0:
        return math.nan
    return float(w[both].sum()) / total_time
