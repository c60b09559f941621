"""Welch's unequal-variance t-test and the ratio of two means, from samples or from published mean, sd and n
(source 000's tables give only those)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from scipy import stats as scipy_stats

from archbench.stats.intervals import MIN_TRIALS_FOR_INTERVAL, ConfidenceInterval, undefined_interval
from archbench.stats.samples import (
    DEFAULT_CONFIDENCE,
    all_finite,
    as_sample,
    check_level,
    int_or_zero,
    sample_mean,
    sample_sd,
)


@dataclass(frozen=True)
class WelchResult:
    """Welch's unequal-variance t-test of mean_a - mean_b and the interval of that difference.

    `df` is the Welch-Satterthwaite degrees of freedom; `p_value` is two-sided; `ci` is
    difference ± t(1 - α/2, df) · standard_error.
    """

    n_a: int
    mean_a: float
    sd_a: float
    n_b: int
    mean_b: float
    sd_b: float
    difference: float
    standard_error: float
    df: float
    statistic: float
    p_value: float
    ci: ConfidenceInterval
    note: str = ""


def welch_satterthwaite_df(sd_a: float, n_a: int, sd_b: float, n_b: int) -> float:
    """(s_a²/n_a + s_b²/n_b)² / ((s_a²/n_a)²/(n_a - 1) + (s_b²/n_b)²/(n_b - 1)); NaN when undefined."""
    if not all_finite(sd_a, n_a, sd_b, n_b) or n_a < 2 or n_b < 2:
        return math.nan
    va, vb = sd_a**2 / n_a, sd_b**2 / n_b
    denominator = va**2 / (n_a - 1) + vb**2 / (n_b - 1)
    return (va + vb) ** 2 / denominator if denominator > 0 else math.nan


def welch_from_stats(
    mean_a: float, sd_a: float, n_a: int, mean_b: float, sd_b: float, n_b: int, level: float = DEFAULT_CONFIDENCE
) -> WelchResult:
    """Welch's t-test from published mean, sample sd and n (e.g. source 000's tables).

    Same t, df and p as scipy.stats.ttest_ind_from_stats(..., equal_var=False).
    NaN results with a `note` when an n < 2, a value is missing, or both sds are 0.
    """
    check_level(level)
    method = "welch-satterthwaite t"
    nan = math.nan
    if not all_finite(mean_a, sd_a, n_a, mean_b, sd_b, n_b):
        return WelchResult(
            int_or_zero(n_a),
            mean_a,
            sd_a,
            int_or_zero(n_b),
            mean_b,
            sd_b,
            nan,
            nan,
            nan,
            nan,
            nan,
            undefined_interval(level, method),
            "a summary statistic is missing",
        )
    if sd_a < 0 or sd_b < 0:
        raise ValueError(f"standard deviations must be >= 0, got {sd_a}, {sd_b}")
    difference = float(mean_a - mean_b)
    if n_a < 2 or n_b < 2:
        return WelchResult(
            int(n_a),
            mean_a,
            sd_a,
            int(n_b),
            mean_b,
            sd_b,
            difference,
            nan,
            nan,
            nan,
            nan,
            undefined_interval(level, method),
            f"n = {int(n_a)} and {int(n_b)}: Welch's t needs n >= 2 per group",
        )
    se = math.sqrt(sd_a**2 / n_a + sd_b**2 / n_b)
    if se == 0.0:
        return WelchResult(
            int(n_a),
            mean_a,
            sd_a,
            int(n_b),
            mean_b,
            sd_b,
            difference,
            0.0,
            nan,
            nan,
            nan,
            undefined_interval(level, method),
            "both standard deviations are 0: Welch's t is undefined",
        )
    df = welch_satterthwaite_df(sd_a, n_a, sd_b, n_b)
    t = difference / se
    p = float(2.0 * scipy_stats.t.sf(abs(t), df))
    half = float(scipy_stats.t.ppf(0.5 + level / 2.0, df)) * se
    return WelchResult(
        int(n_a),
        float(mean_a),
        float(sd_a),
        int(n_b),
        float(mean_b),
        float(sd_b),
        difference,
        se,
        float(df),
        float(t),
        p,
        ConfidenceInterval(difference - half, difference + half, level, method),
    )


def welch_test(a: Iterable[float], b: Iterable[float], level: float = DEFAULT_CONFIDENCE) -> WelchResult:
    """Welch's t-test on two samples (via their summary statistics; = scipy.stats.ttest_ind(equal_var=False))."""
    x, y = as_sample(a), as_sample(b)
    return welch_from_stats(sample_mean(x), sample_sd(x), int(x.size), sample_mean(y), sample_sd(y), int(y.size), level)


def ratio_ci_from_stats(
    mean_a: float, sd_a: float, n_a: int, mean_b: float, sd_b: float, n_b: int, level: float = DEFAULT_CONFIDENCE
) -> tuple[float, ConfidenceInterval]:
    """(mean_a / mean_b, its interval) from summary statistics, by the delta method on the log
    scale: log(mean_a/mean_b) ± t(1 - α/2, df) · √(cv_a²/n_a + cv_b²/n_b), cv = sd/mean, df by
    Welch-Satterthwaite on the two terms, exponentiated (so the interval stays positive and
    is asymmetric). Needs positive means and n >= MIN_TRIALS_FOR_INTERVAL (3); NaN interval otherwise."""
    check_level(level)
    method = "delta method (log ratio, welch-satterthwaite df)"
    if not all_finite(mean_a, sd_a, n_a, mean_b, sd_b, n_b) or mean_b == 0:
        return math.nan, undefined_interval(level, method)
    estimate = float(mean_a / mean_b)
    if mean_a <= 0 or mean_b <= 0 or n_a < MIN_TRIALS_FOR_INTERVAL or n_b < MIN_TRIALS_FOR_INTERVAL:
        return estimate, undefined_interval(level, method)
    va, vb = (sd_a / mean_a) ** 2 / n_a, (sd_b / mean_b) ** 2 / n_b
    if va + vb == 0.0:
        return estimate, undefined_interval(level, method)
    df = (va + vb) ** 2 / (va**2 / (n_a - 1) + vb**2 / (n_b - 1))
    half = float(scipy_stats.t.ppf(0.5 + level / 2.0, df)) * math.sqrt(va + vb)
    return estimate, ConfidenceInterval(estimate * math.exp(-half), estimate * math.exp(half), level, method)
