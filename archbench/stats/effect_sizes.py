"""Standardised effect sizes with intervals: Hedges' g (means, noncentral t) and Cliff's delta (dominance,
Cliff's or Newcombe's interval)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import optimize as scipy_optimize
from scipy import special as scipy_special
from scipy import stats as scipy_stats

from archbench.stats.intervals import ConfidenceInterval, undefined_interval
from archbench.stats.samples import DEFAULT_CONFIDENCE, all_finite, as_sample, check_level, sample_mean, sample_sd


@dataclass(frozen=True)
class EffectSize:
    """A standardised effect (`name`: "hedges_g" or "cliffs_delta") with its interval; the
    interval's `method` says how it was computed."""

    name: str
    estimate: float
    ci: ConfidenceInterval
    note: str = ""


HedgesCIMethod = Literal["noncentral-t", "normal"]
# |noncentral t cdf at a solved noncentrality - its target| a bound of the interval must meet: scipy's noncentral t
# returns NaN over parts of the range, and Brent's method, which assumes a continuous function, then stops anywhere.
CDF_TOLERANCE = 1e-6


class UncheckedRoot(ArithmeticError):
    """A noncentrality Brent's method returned whose cdf is not its target within CDF_TOLERANCE."""

    def __init__(self, target: float, noncentrality: float, achieved: float) -> None:
        super().__init__(
            f"the noncentral t cdf at noncentrality {noncentrality:.6g} is {achieved:.6g}, not {target:.6g}"
        )


def hedges_correction(df: float) -> float:
    """Hedges' (1981) small-sample factor J(df) = Γ(df/2) / (√(df/2) · Γ((df - 1)/2)),
    ≈ 1 - 3 / (4 df - 1); df = n_a + n_b - 2. NaN for df <= 1."""
    if not all_finite(df) or df <= 1:
        return math.nan
    return math.exp(scipy_special.gammaln(df / 2.0) - 0.5 * math.log(df / 2.0) - scipy_special.gammaln((df - 1) / 2.0))


def hedges_g_from_stats(
    mean_a: float,
    sd_a: float,
    n_a: int,
    mean_b: float,
    sd_b: float,
    n_b: int,
    level: float = DEFAULT_CONFIDENCE,
    ci_method: HedgesCIMethod = "noncentral-t",
) -> EffectSize:
    """Hedges' g = J(df) · (mean_a - mean_b) / s_pooled, s_pooled² = ((n_a-1)s_a² + (n_b-1)s_b²) / df.

    Interval:
    * "noncentral-t" (default): exact under normality with equal variances. With
      t = d / √(1/n_a + 1/n_b) (d = Cohen's d, uncorrected), find the noncentrality
      parameters λ_L, λ_U at which t is the 1 - α/2 and α/2 quantile of the noncentral t
      with df degrees of freedom, and report J · λ · √(1/n_a + 1/n_b) (Steiger & Fouladi
      1997; the J scaling as in Hedges & Olkin 1985). Each bound is checked after it is solved: the
      noncentral t cdf there must be its target within CDF_TOLERANCE, else the interval is NaN and the
      note says which bound failed. Falls back to "normal" (and says so) if the root search fails.
    * "normal": g ± z · J · √((n_a + n_b)/(n_a n_b) + d² / (2 (n_a + n_b)))
      (Borenstein et al. 2009, Introduction to Meta-Analysis, eqs. 4.20-4.24).
    The pooled sd assumes equal variances; Welch's test does not, so g is a
    conventional scale for the effect, not part of the test.
    """
    check_level(level)
    if ci_method not in ("noncentral-t", "normal"):
        raise ValueError(f"ci_method must be 'noncentral-t' or 'normal', got {ci_method!r}")
    name = "hedges_g"
    undefined = undefined_interval(level, ci_method)
    if not all_finite(mean_a, sd_a, n_a, mean_b, sd_b, n_b):
        return EffectSize(name, math.nan, undefined, "a summary statistic is missing")
    if n_a < 2 or n_b < 2:
        return EffectSize(name, math.nan, undefined, f"n = {int(n_a)} and {int(n_b)}: Hedges' g needs n >= 2 per group")
    df = n_a + n_b - 2
    pooled = math.sqrt(((n_a - 1) * sd_a**2 + (n_b - 1) * sd_b**2) / df)
    if pooled == 0.0:
        return EffectSize(name, math.nan, undefined, "pooled standard deviation is 0: no standardised effect")
    d = (mean_a - mean_b) / pooled
    j = hedges_correction(df)
    g = j * d
    scale = math.sqrt(1.0 / n_a + 1.0 / n_b)
    note = ""
    if ci_method == "noncentral-t":
        try:
            low_ncp, high_ncp = _noncentral_t_interval(d / scale, df, level)
            return EffectSize(
                name, g, ConfidenceInterval(j * low_ncp * scale, j * high_ncp * scale, level, "noncentral-t")
            )
        except UncheckedRoot as error:
            return EffectSize(name, g, undefined, f"noncentral-t interval did not check ({error}): no interval")
        except (ValueError, RuntimeError, ArithmeticError) as error:
            note = f"noncentral-t interval failed ({error}); normal approximation instead"
    se = j * math.sqrt((n_a + n_b) / (n_a * n_b) + d**2 / (2.0 * (n_a + n_b)))
    z = float(scipy_stats.norm.ppf(0.5 + level / 2.0))
    return EffectSize(name, g, ConfidenceInterval(g - z * se, g + z * se, level, "normal"), note)


def _noncentral_t_interval(t_observed: float, df: float, level: float) -> tuple[float, float]:
    """(λ_L, λ_U) with P(T_df,λ_L <= t) = 1 - α/2 and P(T_df,λ_U <= t) = α/2. The noncentral t
    cdf falls as λ grows, so each root is bracketed by stepping outwards from t; UncheckedRoot when
    the cdf at a root is not its target."""
    tail = (1.0 - level) / 2.0

    def cdf(ncp: float) -> float:
        return float(scipy_stats.nct.cdf(t_observed, df, ncp))

    def root(target: float) -> float:
        def f(ncp: float) -> float:
            return cdf(ncp) - target

        step = max(1.0, abs(t_observed) / 4.0)
        low, high = t_observed - step, t_observed + step
        for _ in range(200):
            if f(low) > 0:
                break
            low -= step
            step *= 2.0
        step = max(1.0, abs(t_observed) / 4.0)
        for _ in range(200):
            if f(high) < 0:
                break
            high += step
            step *= 2.0
        if not (f(low) > 0 > f(high)):
            raise RuntimeError("could not bracket the noncentrality parameter")
        solved = float(scipy_optimize.brentq(f, low, high, xtol=1e-12, rtol=1e-12, maxiter=500))
        achieved = cdf(solved)
        if not (math.isfinite(achieved) and abs(achieved - target) <= CDF_TOLERANCE):
            raise UncheckedRoot(target, solved, achieved)
        return solved

    return root(1.0 - tail), root(tail)


def hedges_g(
    a: Iterable[float],
    b: Iterable[float],
    level: float = DEFAULT_CONFIDENCE,
    ci_method: HedgesCIMethod = "noncentral-t",
) -> EffectSize:
    """`hedges_g_from_stats` on two samples."""
    x, y = as_sample(a), as_sample(b)
    return hedges_g_from_stats(
        sample_mean(x), sample_sd(x), int(x.size), sample_mean(y), sample_sd(y), int(y.size), level, ci_method
    )


CliffCIMethod = Literal["cliff", "newcombe"]


def cliffs_delta(
    a: Iterable[float],
    b: Iterable[float],
    level: float = DEFAULT_CONFIDENCE,
    ci_method: CliffCIMethod = "cliff",
    variance: Literal["unbiased", "consistent"] = "unbiased",
    quantile: Literal["t", "normal"] = "t",
) -> EffectSize:
    """Cliff's delta = P(A > B) - P(A < B) over all pairs (= 2U/(n_a n_b) - 1 with U the
    Mann-Whitney U of a), in [-1, 1]; ties count as neither.

    Interval:
    * "cliff" (default): Cliff's asymmetric interval (Cliff 1993; Long, Feng & Cliff 2003;
      Feng & Cliff 2004), (d - d³ ± q s √((1 - d²)² + q² s²)) / (1 - d² + q² s²), with s² from
      the dominance matrix ("unbiased": Cliff 1993, floored at (1 - d²)/(n_a n_b - 1), the
      minimum Cliff recommends; "consistent": Long et al. 2003) and q the t quantile with
      n_a + n_b - 2 df ("t", Feng & Cliff 2004) or the normal quantile. This is the R effsize
      package's cliff.delta without the floor. At complete separation (|d| = 1) s² = 0 and
      the interval is undefined, so Newcombe's method replaces it there and the interval's
      method says so: benchmark groups are often completely separated.
    * "newcombe": Newcombe's (2006, Part 2) method 5 score interval for θ = (d + 1)/2 with
      the Hanley-McNeil variance, m* = n* = (n_a + n_b)/2 - 1, mapped back to d = 2θ - 1.
    n < 2 in a group: the estimate where defined, no interval.
    """
    check_level(level)
    if ci_method not in ("cliff", "newcombe"):
        raise ValueError(f"ci_method must be 'cliff' or 'newcombe', got {ci_method!r}")
    if variance not in ("unbiased", "consistent"):
        raise ValueError(f"variance must be 'unbiased' or 'consistent', got {variance!r}")
    if quantile not in ("t", "normal"):
        raise ValueError(f"quantile must be 't' or 'normal', got {quantile!r}")
    name = "cliffs_delta"
    x, y = as_sample(a), as_sample(b)
    m, n = int(x.size), int(y.size)
    if m == 0 or n == 0:
        return EffectSize(name, math.nan, undefined_interval(level, ci_method), "a group has no observations")
    dominance = np.sign(x[:, None] - y[None, :])
    d = float(dominance.mean())
    if m < 2 or n < 2:
        return EffectSize(
            name, d, undefined_interval(level, ci_method), f"n = {m} and {n}: no interval with n < 2 in a group"
        )
    if ci_method == "newcombe":
        return EffectSize(name, d, _newcombe_delta_interval(d, m, n, level))
    row, column = dominance.mean(axis=1), dominance.mean(axis=0)
    if variance == "unbiased":
        s2 = (
            n**2 * float(((row - d) ** 2).sum())
            + m**2 * float(((column - d) ** 2).sum())
            - float(((dominance - d) ** 2).sum())
        ) / (m * n * (m - 1) * (n - 1))
        s2 = max(s2, (1.0 - d**2) / (m * n - 1))
    else:
        s_row = float(((row - d) ** 2).sum()) / (m - 1)
        s_column = float(((column - d) ** 2).sum()) / (n - 1)
        s_cell = float(((dominance - d) ** 2).sum()) / ((m - 1) * (n - 1))
        s2 = ((n - 1) * s_row + (m - 1) * s_column + s_cell) / (m * n)
    if s2 <= 0.0 or abs(d) == 1.0:
        return EffectSize(
            name,
            d,
            _newcombe_delta_interval(d, m, n, level),
            "complete separation (|delta| = 1): Cliff's variance is 0, Newcombe's score interval instead",
        )
    if quantile == "t":
        q = float(scipy_stats.t.ppf(0.5 + level / 2.0, m + n - 2))
    else:
        q = float(scipy_stats.norm.ppf(0.5 + level / 2.0))
    spread = q * math.sqrt(s2) * math.sqrt((1.0 - d**2) ** 2 + q**2 * s2)
    denominator = 1.0 - d**2 + q**2 * s2
    low = max(-1.0, (d - d**3 - spread) / denominator)
    high = min(1.0, (d - d**3 + spread) / denominator)
    return EffectSize(
        name, d, ConfidenceInterval(low, high, level, f"cliff ({variance} variance, {quantile} quantile)")
    )


def _newcombe_delta_interval(d: float, m: int, n: int, level: float) -> ConfidenceInterval:
    """Newcombe (2006) method 5 for θ = P(A > B) + P(A = B)/2 = (d + 1)/2: the roots of
    (θ̂ - θ)² = z² V(θ), V(θ) = θ(1-θ)[1 + k((1-θ)/(2-θ) + θ/(1+θ))]/(mn), k = (m+n)/2 - 1."""
    z = float(scipy_stats.norm.ppf(0.5 + level / 2.0))
    theta_hat = (d + 1.0) / 2.0
    k = (m + n) / 2.0 - 1.0

    def sd(theta: float) -> float:
        variance = theta * (1 - theta) * (1 + k * ((1 - theta) / (2 - theta) + theta / (1 + theta))) / (m * n)
        return math.sqrt(max(variance, 0.0))

    # V vanishes at 0 and 1, so at θ̂ = 1 (or 0) the far root is searched just inside the boundary.
    edge = 1e-12
    if theta_hat <= 0.0:
        low = 0.0
    else:
        low = float(
            scipy_optimize.brentq(lambda t: theta_hat - t - z * sd(t), 0.0, min(theta_hat, 1.0 - edge), xtol=1e-14)
        )
    if theta_hat >= 1.0:
        high = 1.0
    else:
        high = float(scipy_optimize.brentq(lambda t: theta_hat - t + z * sd(t), max(theta_hat, edge), 1.0, xtol=1e-14))
    return ConfidenceInterval(2.0 * low - 1.0, 2.0 * high - 1.0, level, "newcombe score (method 5)")
