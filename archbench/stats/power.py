"""The smallest difference a comparison could have detected: power analysis from the observed spread and n.

"Not distinguishable" says little without the size of difference the data could have shown. For a
two-sided t test at level `alpha` with power `power` (80 % by default), statsmodels' solve_power gives
the smallest standardised effect d; multiplied by the observed standard deviation it is the smallest
detectable difference, expressed here as a percentage:

* paired ratios (`paired_detectable_pct`): a one-sample t test on the n log ratios
  (statsmodels.stats.power.TTestPower); the detectable log ratio d · sd_log is the percentage
  100 · (exp(d · sd_log) - 1);
* two independent groups (`welch_detectable_pct`): statsmodels.stats.power.TTestIndPower with the
  groups' sizes; its effect is in units of the pooled sd, which for the Welch test (unequal variances)
  is an approximation (exact for equal variances and sizes). The sd is taken on the log scale (each
  group's coefficient of variation, pooled), so the detectable difference d · pooled cv is a ratio,
  100 · (exp(d · pooled cv) - 1) percent, comparable with the paired figure.

Multiple comparisons: with Holm's correction the level a comparison is tested at depends on its rank in
the family, between alpha / m and alpha. `holm_alpha` takes alpha / m, the level of the first (most
significant) step, for every comparison: conservative, so the difference stated is one the family could
certainly have detected. The observed spread stands in for the true one (post hoc), so the figure is an
estimate, as uncertain as that sd with few trials.
"""

from __future__ import annotations

import math
import warnings

from statsmodels.stats.power import TTestIndPower, TTestPower

from archbench.stats.samples import DEFAULT_ALPHA, all_finite, check_alpha

DEFAULT_POWER = 0.8


def holm_alpha(alpha: float, family_size: int) -> float:
    """alpha / m: the strictest level Holm's step-down applies in a family of m (m < 1 counts as 1)."""
    check_alpha(alpha)
    return alpha / max(1, int(family_size))


def _solve(solver: TTestPower | TTestIndPower, **arguments: float) -> float:
    """The effect size statsmodels solves for; NaN when it cannot (too few observations, no convergence)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            effect = float(solver.solve_power(effect_size=None, alternative="two-sided", **arguments))
        except (ValueError, RuntimeError, ZeroDivisionError, OverflowError):
            return math.nan
    return effect if math.isfinite(effect) and effect > 0 else math.nan


def paired_detectable_effect(n: int, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER) -> float:
    """Smallest standardised mean (mean / sd) a two-sided one-sample t test of n values detects; NaN for n < 2."""
    check_alpha(alpha)
    if n < 2:
        return math.nan
    return _solve(TTestPower(), nobs=float(n), alpha=alpha, power=power)


def paired_detectable_pct(sd_log: float, n: int, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER) -> float:
    """Smallest ratio difference (percent, upwards) a paired comparison of n rounds with this sd of log ratios
    detects at `power`; NaN when undefined (n < 2, sd missing)."""
    if not all_finite(sd_log) or sd_log < 0:
        return math.nan
    effect = paired_detectable_effect(n, alpha, power)
    return 100.0 * math.expm1(effect * sd_log) if math.isfinite(effect) else math.nan


def welch_detectable_pct(
    mean_a: float,
    sd_a: float,
    n_a: int,
    mean_b: float,
    sd_b: float,
    n_b: int,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
) -> float:
    """Smallest relative difference (percent, upwards) between two independent means that a two-sided two-sample
    t test with these sizes detects at `power`. The spread is on the log scale, where a ratio is a difference:
    each group's coefficient of variation sd / mean stands in for the sd of its logs, pooled over the two
    groups, so a 9-fold faster configuration's absolute spread does not inflate the figure. NaN when undefined
    (a group under 2, a mean not positive)."""
    check_alpha(alpha)
    if not all_finite(mean_a, sd_a, mean_b, sd_b) or mean_a <= 0 or mean_b <= 0 or n_a < 2 or n_b < 2:
        return math.nan
    cv_a, cv_b = sd_a / mean_a, sd_b / mean_b
    pooled = math.sqrt(((n_a - 1) * cv_a**2 + (n_b - 1) * cv_b**2) / (n_a + n_b - 2))
    effect = _solve(TTestIndPower(), nobs1=float(n_a), ratio=n_b / n_a, alpha=alpha, power=power)
    return 100.0 * math.expm1(effect * pooled) if math.isfinite(effect) else math.nan
