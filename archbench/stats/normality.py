"""The diagnostic check before assuming normality: Shapiro-Wilk with an explicit pass rule."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from archbench.stats.samples import DEFAULT_ALPHA, as_sample, check_alpha


@dataclass(frozen=True)
class NormalityCheck:
    """Shapiro-Wilk on one group. `passes` = n >= 3, some spread, and p >= alpha.

    Passing means "no evidence against normality", not "normal": with the 5-10 trials a
    benchmark affords the test has little power, so a pass is a weak licence.
    """

    n: int
    statistic: float
    p_value: float
    alpha: float
    passes: bool
    reason: str
    test: str = "shapiro-wilk"


def shapiro_wilk(values: Iterable[float], alpha: float = DEFAULT_ALPHA) -> NormalityCheck:
    """Shapiro-Wilk W and p (scipy.stats.shapiro) with the pass rule p >= alpha and n >= 3.

    A constant sample is reported as not passing (no spread: neither normality nor a
    t-test means anything there) without calling scipy, which would answer W = 1, p = 1.
    """
    check_alpha(alpha)
    sample = as_sample(values)
    n = int(sample.size)
    if n < 3:
        return NormalityCheck(
            n, math.nan, math.nan, alpha, False, f"n = {n} < 3: Shapiro-Wilk needs at least 3 observations"
        )
    if float(np.ptp(sample)) == 0.0:
        return NormalityCheck(n, math.nan, math.nan, alpha, False, "all observations are equal: no spread to check")
    w, p = scipy_stats.shapiro(sample)
    passes = bool(p >= alpha)
    relation = ">=" if passes else "<"
    return NormalityCheck(
        n,
        float(w),
        float(p),
        alpha,
        passes,
        f"Shapiro-Wilk W = {float(w):.4f}, p = {float(p):.3g} {relation} alpha = {alpha:g}",
    )
