"""Comparing two configurations' trials: the test chosen by a diagnostic check, its p-value, the effect size and
the difference and ratio with their intervals, all in one `ComparisonResult`."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats as scipy_stats

from archbench.stats.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    BootstrapMethod,
    bootstrap_difference_ci,
    bootstrap_ratio_ci,
)
from archbench.stats.effect_sizes import EffectSize, cliffs_delta, hedges_g
from archbench.stats.intervals import ConfidenceInterval, undefined_interval
from archbench.stats.normality import NormalityCheck, shapiro_wilk
from archbench.stats.samples import (
    DEFAULT_ALPHA,
    as_sample,
    check_alpha,
    check_level,
    ratio,
    sample_mean,
    sample_median,
)
from archbench.stats.welch import welch_test


@dataclass(frozen=True)
class ComparisonResult:
    """The outcome of `compare(a, b)`: which test and why, its result, and the effect.

    * `test`: "welch_t" (both groups pass Shapiro-Wilk), "mann_whitney_u" (otherwise) or
      "none" (a group has n < 2); `reason` says why in words.
    * `statistic`: Welch's t, or the Mann-Whitney U of a; `df`: Welch-Satterthwaite df (NaN
      for Mann-Whitney); `p_value`: two-sided; `p_method`: how p was computed.
    * `center`: "mean" (Welch) or "median" (Mann-Whitney): `estimate_a`, `estimate_b`, the
      `difference` a - b with its interval (Welch t / seeded bootstrap), and the `ratio`
      a / b with its seeded bootstrap interval.
    * `effect_size`: Hedges' g (Welch) or Cliff's delta (Mann-Whitney), with its interval.
    * `alpha` is the test's level and `level` the intervals' (1 - alpha unless given), so
      for Welch the difference interval excludes 0 exactly when p < alpha.
    """

    test: str
    reason: str
    n_a: int
    n_b: int
    normality_a: NormalityCheck
    normality_b: NormalityCheck
    statistic: float
    df: float
    p_value: float
    p_method: str
    alpha: float
    level: float
    center: str
    estimate_a: float
    estimate_b: float
    difference: float
    difference_ci: ConfidenceInterval
    ratio: float
    ratio_ci: ConfidenceInterval
    effect_size: EffectSize
    seed: int | None
    resamples: int
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def significant(self) -> bool:
        """p < alpha, before any multiple-comparison correction (False when p is undefined)."""
        return bool(self.p_value < self.alpha) if not math.isnan(self.p_value) else False

    def as_dict(self, prefix: str = "") -> dict[str, Any]:
        """Flat columns for a DataFrame row (names documented in archbench/crossos.py)."""
        row: dict[str, Any] = {
            "test": self.test,
            "test_reason": self.reason,
            "n_a": self.n_a,
            "n_b": self.n_b,
            "shapiro_w_a": self.normality_a.statistic,
            "shapiro_p_a": self.normality_a.p_value,
            "normal_a": self.normality_a.passes,
            "shapiro_w_b": self.normality_b.statistic,
            "shapiro_p_b": self.normality_b.p_value,
            "normal_b": self.normality_b.passes,
            "statistic": self.statistic,
            "df": self.df,
            "p_value": self.p_value,
            "p_method": self.p_method,
            "alpha": self.alpha,
            "significant": self.significant,
            "center": self.center,
            "estimate_a": self.estimate_a,
            "estimate_b": self.estimate_b,
            "difference": self.difference,
            "difference_ci_low": self.difference_ci.low,
            "difference_ci_high": self.difference_ci.high,
            "difference_ci_method": self.difference_ci.method,
            "ratio": self.ratio,
            "ratio_ci_low": self.ratio_ci.low,
            "ratio_ci_high": self.ratio_ci.high,
            "ratio_ci_method": self.ratio_ci.method,
            "effect_size_name": self.effect_size.name,
            "effect_size": self.effect_size.estimate,
            "effect_size_ci_low": self.effect_size.ci.low,
            "effect_size_ci_high": self.effect_size.ci.high,
            "effect_size_ci_method": self.effect_size.ci.method,
            "ci_level": self.level,
            "seed": self.seed,
            "resamples": self.resamples,
            "notes": "; ".join(n for n in (*self.notes, self.effect_size.note) if n),
        }
        return {f"{prefix}{key}": value for key, value in row.items()}


# Largest group for the exact Mann-Whitney distribution; beyond it the normal approximation.
MANN_WHITNEY_EXACT_MAX_N = 50


def compare(
    a: Iterable[float],
    b: Iterable[float],
    alpha: float = DEFAULT_ALPHA,
    *,
    seed: int | None = DEFAULT_SEED,
    level: float | None = None,
    normality_alpha: float = DEFAULT_ALPHA,
    resamples: int = DEFAULT_RESAMPLES,
    bootstrap_method: BootstrapMethod = "percentile",
) -> ComparisonResult:
    """Compare two independent groups of trials (a - b), choosing the test by a diagnostic check.

    Both groups pass Shapiro-Wilk (n >= 3, p >= normality_alpha): Welch's t-test, Hedges' g
    (noncentral-t interval), difference of means with Welch's interval, ratio of means
    with a seeded bootstrap interval. Otherwise: two-sided Mann-Whitney U (exact
    distribution without ties and n <= MANN_WHITNEY_EXACT_MAX_N; with ties a permutation
    test, exact enumeration when C(n_a + n_b, n_a) <= resamples, else seeded random
    permutations; normal approximation beyond), Cliff's delta, difference and ratio of
    medians with seeded bootstrap intervals. A group with n < 2: test "none", NaN results.

    Choosing the test after a normality pre-test is a two-stage procedure whose overall
    error rate is not exactly alpha, and Shapiro-Wilk has little power at n = 5; the rule
    is kept because it is explicit and the report prints both the check and the choice.
    """
    check_alpha(alpha)
    level = 1.0 - alpha if level is None else level
    check_level(level)
    x, y = as_sample(a), as_sample(b)
    n_a, n_b = int(x.size), int(y.size)
    normality_a, normality_b = shapiro_wilk(x, normality_alpha), shapiro_wilk(y, normality_alpha)
    nan = math.nan

    if n_a < 2 or n_b < 2:
        center = "mean"
        return ComparisonResult(
            test="none",
            reason=f"n = {n_a} and {n_b}: a test needs at least 2 trials per group",
            n_a=n_a,
            n_b=n_b,
            normality_a=normality_a,
            normality_b=normality_b,
            statistic=nan,
            df=nan,
            p_value=nan,
            p_method="",
            alpha=alpha,
            level=level,
            center=center,
            estimate_a=sample_mean(x),
            estimate_b=sample_mean(y),
            difference=sample_mean(x) - sample_mean(y),
            difference_ci=undefined_interval(level, ""),
            ratio=ratio(sample_mean(x), sample_mean(y)),
            ratio_ci=undefined_interval(level, ""),
            effect_size=EffectSize("none", nan, undefined_interval(level, "")),
            seed=seed,
            resamples=resamples,
        )

    if normality_a.passes and normality_b.passes:
        welch = welch_test(x, y, level)
        ratio_interval = bootstrap_ratio_ci(
            x, y, center="mean", level=level, resamples=resamples, seed=seed, method=bootstrap_method
        )
        return ComparisonResult(
            test="welch_t",
            reason=(
                f"both groups pass Shapiro-Wilk (p = {normality_a.p_value:.3g} and {normality_b.p_value:.3g}, "
                f">= {normality_alpha:g}): Welch's t-test"
            ),
            n_a=n_a,
            n_b=n_b,
            normality_a=normality_a,
            normality_b=normality_b,
            statistic=welch.statistic,
            df=welch.df,
            p_value=welch.p_value,
            p_method="Welch t, two-sided",
            alpha=alpha,
            level=level,
            center="mean",
            estimate_a=welch.mean_a,
            estimate_b=welch.mean_b,
            difference=welch.difference,
            difference_ci=welch.ci,
            ratio=ratio_interval.estimate,
            ratio_ci=ratio_interval.ci,
            effect_size=hedges_g(x, y, level),
            seed=seed,
            resamples=resamples,
            notes=tuple(n for n in (welch.note, ratio_interval.note) if n),
        )

    failing = [
        f"group {name}: {check.reason}" for name, check in (("a", normality_a), ("b", normality_b)) if not check.passes
    ]
    reason = "; ".join(failing) + ": Mann-Whitney U (two-sided)"
    has_ties = np.unique(np.concatenate([x, y])).size < n_a + n_b
    method: Any
    if not has_ties and max(n_a, n_b) <= MANN_WHITNEY_EXACT_MAX_N:
        method, p_method = "exact", "exact U distribution"
    elif has_ties and math.comb(n_a + n_b, n_a) <= resamples:
        method = scipy_stats.PermutationMethod(n_resamples=resamples, rng=np.random.default_rng(seed))
        p_method = "permutation (exact enumeration, ties present)"
    elif has_ties and max(n_a, n_b) <= MANN_WHITNEY_EXACT_MAX_N:
        method = scipy_stats.PermutationMethod(n_resamples=resamples, rng=np.random.default_rng(seed))
        p_method = f"permutation ({resamples} random, seed {seed}; ties present)"
    else:
        method, p_method = "asymptotic", "normal approximation (tie and continuity corrected)"
    mwu = scipy_stats.mannwhitneyu(x, y, alternative="two-sided", method=method)
    notes = []
    smallest_p = min(1.0, 2.0 / math.comb(n_a + n_b, n_a))  # two-sided, complete separation, no ties
    if smallest_p > alpha:
        notes.append(
            f"with n = {n_a} and {n_b} the smallest two-sided Mann-Whitney p is {smallest_p:.3g} > "
            f"alpha = {alpha:g}: no outcome could be significant"
        )
    difference = bootstrap_difference_ci(
        x, y, center="median", level=level, resamples=resamples, seed=seed, method=bootstrap_method
    )
    ratio_interval = bootstrap_ratio_ci(
        x, y, center="median", level=level, resamples=resamples, seed=seed, method=bootstrap_method
    )
    return ComparisonResult(
        test="mann_whitney_u",
        reason=reason,
        n_a=n_a,
        n_b=n_b,
        normality_a=normality_a,
        normality_b=normality_b,
        statistic=float(mwu.statistic),
        df=nan,
        p_value=float(mwu.pvalue),
        p_method=p_method,
        alpha=alpha,
        level=level,
        center="median",
        estimate_a=sample_median(x),
        estimate_b=sample_median(y),
        difference=difference.estimate,
        difference_ci=difference.ci,
        ratio=ratio_interval.estimate,
        ratio_ci=ratio_interval.ci,
        effect_size=cliffs_delta(x, y, level),
        seed=seed,
        resamples=resamples,
        notes=tuple(n for n in (*notes, difference.note, ratio_interval.note) if n),
    )
