"""The minimum detectable difference of a comparison: power analysis from the observed spread and n.

"Not distinguishable" says little without the size of difference the data could have shown. The minimum
detectable difference is the smallest true difference a two-sided t test at level `alpha` detects with
probability `power` (80 % by default): the smallest standardised effect d with that power, multiplied by the
observed standard deviation, expressed here as a percentage:

* paired ratios (`paired_detectable_pct`): a one-sample t test on the n log ratios (df n - 1, noncentrality
  d sqrt(n)); the detectable log ratio d · sd_log is the percentage 100 · (exp(d · sd_log) - 1);
* two independent groups (`welch_detectable_pct`): a two-sample t test with the groups' sizes (df n_a + n_b - 2,
  noncentrality d sqrt(n_a n_b / (n_a + n_b))); its effect is in units of the pooled sd, which for the Welch
  test (unequal variances) is an approximation (exact for equal variances and sizes). The sd is taken on the log
  scale (each group's coefficient of variation, pooled), so the detectable difference d · pooled cv is a ratio,
  100 · (exp(d · pooled cv) - 1) percent, comparable with the paired figure.

It is not the smallest ratio a test calls significant (archbench.stats.predeclared.minimum_detectable_pct, which
the report calls the smallest significant difference): a true difference of exactly that size is detected only
half the time.

Every effect is checked after it is solved. statsmodels' solve_power is taken first, but it does not always
converge (at n = 3 and alpha = 0.05 / 58 it returns d = 5.5, whose power is 7.6 %, not 80 %; the answer is
about 24.9), and scipy's noncentral t distribution returns NaN over parts of the same range. So the power of
an effect is computed here by integrating the normal cdf over the sampling distribution of the sd
(`t_test_power`), the returned effect is kept only if its power is the requested one within POWER_TOLERANCE,
else the effect is solved by bracketing and Brent's method on that power function and checked again; an effect
that still fails the check is not computable and comes back as NaN, as does one that is undefined (n < 2).
`paired_detectable_effect_status` and `welch_detectable_status` say which.

Multiple comparisons: with Holm's correction the level a comparison is tested at depends on its rank in the
family, between alpha / m and alpha. `holm_alpha` takes alpha / m, the level of the first (most significant)
step, for every comparison: conservative, so the difference stated is one the family could certainly have
detected. The observed spread stands in for the true one (post hoc), so the figure is an estimate, as uncertain
as that sd with few trials.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable

from scipy import integrate, optimize, special
from statsmodels.stats.power import TTestIndPower, TTestPower

from archbench.stats.samples import DEFAULT_ALPHA, all_finite, check_alpha

DEFAULT_POWER = 0.8
POWER_TOLERANCE = 1e-6  # |power at the solved effect - requested power| a solution must meet
MAX_EFFECT = 1e7  # the bracket for the effect is searched up to this many standard deviations
# Why an effect is NaN: too few observations (or no spread) to define it, or no effect passed the check.
COMPUTED, UNDEFINED, NOT_COMPUTABLE = "computed", "undefined", "not computable"

# Quantiles of the sd's sampling distribution where the integrand is cut into pieces: quad then sees its bulk
# and its tails whatever the degrees of freedom.
_SD_QUANTILES = (1e-20, 1e-12, 1e-6, 1e-3, 0.1, 0.5, 0.9, 1 - 1e-3, 1 - 1e-6, 1 - 1e-12)
# Standard normal deviates around each place where the rejection probability turns from 0 to 1.
_TURNS = (-8.0, -4.0, -2.0, 0.0, 2.0, 4.0, 8.0)


def holm_alpha(alpha: float, family_size: int) -> float:
    """alpha / m: the strictest level Holm's step-down applies in a family of m (m < 1 counts as 1)."""
    check_alpha(alpha)
    return alpha / max(1, int(family_size))


def t_test_power(noncentrality: float, df: float, alpha: float) -> float:
    """Power of a two-sided t test with `df` degrees of freedom at level alpha when the statistic's noncentrality
    is `noncentrality`: P(|T| > t_{1 - alpha/2, df}). T = (Z + delta) / S with S^2 ~ chi^2_df / df, so the power
    is the integral over s of [Phi(delta - c s) + Phi(-delta - c s)] times S's density; integrated piecewise
    between S's quantiles and the places where the bracket turns (NaN when df or the noncentrality is invalid)."""
    check_alpha(alpha)
    if not (math.isfinite(noncentrality) and math.isfinite(df)) or df <= 0:
        return math.nan
    critical = float(special.stdtrit(df, 1.0 - alpha / 2.0))
    root = math.sqrt(df)
    log_scale = (df / 2.0 - 1.0) * math.log(2.0) + float(special.gammaln(df / 2.0))

    def integrand(s: float) -> float:
        x = s * root  # S sqrt(df) follows the chi distribution with df degrees of freedom
        if x <= 0.0:
            return 0.0
        density = math.exp((df - 1.0) * math.log(x) - x * x / 2.0 - log_scale) * root
        reject = float(special.ndtr(noncentrality - critical * s) + special.ndtr(-noncentrality - critical * s))
        return reject * density

    cuts = {math.sqrt(float(special.chdtri(df, q)) / df) for q in _SD_QUANTILES}
    top = max(cuts)
    cuts |= {0.0} | {(sign * noncentrality + z) / critical for sign in (1.0, -1.0) for z in _TURNS}
    edges = sorted(c for c in cuts if 0.0 <= c <= top)
    total = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        for low, high in zip(edges, edges[1:], strict=False):
            if high > low:
                total += integrate.quad(integrand, low, high, epsabs=1e-15, epsrel=1e-12, limit=200)[0]
    return min(1.0, max(0.0, total))


def paired_power(effect: float, n: int, alpha: float = DEFAULT_ALPHA) -> float:
    """Power of a two-sided one-sample t test of n values whose true mean is `effect` standard deviations."""
    if n < 2:
        return math.nan
    return t_test_power(effect * math.sqrt(n), n - 1, alpha)


def two_sample_power(effect: float, n_a: int, n_b: int, alpha: float = DEFAULT_ALPHA) -> float:
    """Power of a two-sided two-sample t test (pooled sd) with groups of n_a and n_b whose true means differ by
    `effect` standard deviations."""
    if n_a < 2 or n_b < 2:
        return math.nan
    return t_test_power(effect * math.sqrt(n_a * n_b / (n_a + n_b)), n_a + n_b - 2, alpha)


def _meets(power_of: Callable[[float], float], effect: float, power: float) -> bool:
    if not (math.isfinite(effect) and effect > 0):
        return False
    achieved = power_of(effect)
    return math.isfinite(achieved) and abs(achieved - power) <= POWER_TOLERANCE


def _statsmodels_effect(solver: TTestPower | TTestIndPower, **arguments: float) -> float:
    """statsmodels' answer, unchecked; NaN when it raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(solver.solve_power(effect_size=None, alternative="two-sided", **arguments))
        except (ValueError, RuntimeError, ZeroDivisionError, OverflowError):
            return math.nan


def _bracketed_effect(power_of: Callable[[float], float], power: float) -> float:
    """The effect with this power by Brent's method: power is alpha at effect 0 and grows with the effect, so
    the bracket's top doubles until the power passes the target. NaN when it never does or the root fails."""
    top = 1.0
    while True:
        reached = power_of(top)
        if not math.isfinite(reached):
            return math.nan
        if reached >= power:
            break
        top *= 2.0
        if top > MAX_EFFECT:
            return math.nan
    try:
        return float(optimize.brentq(lambda d: power_of(d) - power, 0.0, top, xtol=1e-12, rtol=1e-12, maxiter=200))
    except (ValueError, RuntimeError):
        return math.nan


def verified_effect(
    power_of: Callable[[float], float], power: float, first_guess: float = math.nan
) -> tuple[float, str]:
    """(effect, status): `first_guess` if its power is `power` within POWER_TOLERANCE, else the bracketed root if
    its is; (NaN, NOT_COMPUTABLE) when neither passes."""
    if _meets(power_of, first_guess, power):
        return first_guess, COMPUTED
    solved = _bracketed_effect(power_of, power)
    if _meets(power_of, solved, power):
        return solved, COMPUTED
    return math.nan, NOT_COMPUTABLE


def _check_power(alpha: float, power: float) -> None:
    check_alpha(alpha)
    if not alpha < power < 1.0:
        raise ValueError(f"power must lie between alpha ({alpha}) and 1, got {power}")


@functools.lru_cache(maxsize=1024)  # one solve per (n, alpha, power): a family shares them
def paired_detectable_effect_status(
    n: int, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER
) -> tuple[float, str]:
    """(smallest standardised mean a two-sided one-sample t test of n values detects at `power`, status): NaN and
    UNDEFINED for n < 2, NaN and NOT_COMPUTABLE when no effect passes the check."""
    _check_power(alpha, power)
    if n < 2:
        return math.nan, UNDEFINED
    guess = _statsmodels_effect(TTestPower(), nobs=float(n), alpha=alpha, power=power)
    return verified_effect(lambda d: paired_power(d, n, alpha), power, guess)


def paired_detectable_effect(n: int, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER) -> float:
    """Smallest standardised mean (mean / sd) a two-sided one-sample t test of n values detects at `power`,
    checked; NaN for n < 2 or when not computable."""
    return paired_detectable_effect_status(n, alpha, power)[0]


@functools.lru_cache(maxsize=1024)
def two_sample_detectable_effect_status(
    n_a: int, n_b: int, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER
) -> tuple[float, str]:
    """(smallest standardised difference a two-sided two-sample t test of n_a and n_b values detects, status), as
    `paired_detectable_effect_status`."""
    _check_power(alpha, power)
    if n_a < 2 or n_b < 2:
        return math.nan, UNDEFINED
    guess = _statsmodels_effect(TTestIndPower(), nobs1=float(n_a), ratio=n_b / n_a, alpha=alpha, power=power)
    return verified_effect(lambda d: two_sample_power(d, n_a, n_b, alpha), power, guess)


def paired_detectable_status(
    sd_log: float, n: int, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER
) -> tuple[float, str]:
    """(minimum detectable difference in percent of a paired comparison of n rounds with this sd of log ratios,
    status): NaN and UNDEFINED when n < 2 or the sd is missing, NaN and NOT_COMPUTABLE when the effect fails
    its check."""
    if not all_finite(sd_log) or sd_log < 0:
        return math.nan, UNDEFINED
    effect, status = paired_detectable_effect_status(n, alpha, power)
    return (100.0 * math.expm1(effect * sd_log), status) if status == COMPUTED else (math.nan, status)


def paired_detectable_pct(sd_log: float, n: int, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER) -> float:
    """Minimum detectable difference (percent, upwards) of a paired comparison of n rounds with this sd of log
    ratios at `power`; NaN when undefined or not computable (`paired_detectable_status` says which)."""
    return paired_detectable_status(sd_log, n, alpha, power)[0]


def welch_detectable_status(
    mean_a: float,
    sd_a: float,
    n_a: int,
    mean_b: float,
    sd_b: float,
    n_b: int,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
) -> tuple[float, str]:
    """(minimum detectable difference in percent between two independent means, status), as
    `welch_detectable_pct`; UNDEFINED for a group under 2 or a mean not positive, NOT_COMPUTABLE when the effect
    fails its check."""
    check_alpha(alpha)
    if not all_finite(mean_a, sd_a, mean_b, sd_b) or mean_a <= 0 or mean_b <= 0 or n_a < 2 or n_b < 2:
        return math.nan, UNDEFINED
    cv_a, cv_b = sd_a / mean_a, sd_b / mean_b
    pooled = math.sqrt(((n_a - 1) * cv_a**2 + (n_b - 1) * cv_b**2) / (n_a + n_b - 2))
    effect, status = two_sample_detectable_effect_status(n_a, n_b, alpha, power)
    return (100.0 * math.expm1(effect * pooled), status) if status == COMPUTED else (math.nan, status)


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
    """Minimum detectable difference (percent, upwards) between two independent means for a two-sided two-sample
    t test with these sizes at `power`. The spread is on the log scale, where a ratio is a difference: each
    group's coefficient of variation sd / mean stands in for the sd of its logs, pooled over the two groups, so a
    9-fold faster configuration's absolute spread does not inflate the figure. NaN when undefined (a group under
    2, a mean not positive) or not computable (`welch_detectable_status` says which)."""
    return welch_detectable_status(mean_a, sd_a, n_a, mean_b, sd_b, n_b, alpha, power)[0]
