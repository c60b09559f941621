"""Descriptive statistics, confidence intervals, tests and corrections for benchmark trials.

The rules of Hoefler & Belli, "Scientific Benchmarking of Parallel Computing
Systems" (SC '15, doi:10.1145/2807591.2807644) that this module serves:

* nondeterministic data get confidence intervals: `mean_ci_t` (Student t),
  `median_ci` (distribution-free, from order statistics), `bootstrap_ci` and
  its wrappers (seeded percentile and BCa bootstrap);
* normality is not assumed without a diagnostic check: `shapiro_wilk`, and
  `compare` picks Welch's t-test only when both groups pass it;
* comparisons are statistically sound: `compare` (test, p, effect size with its
  CI, difference with its CI), `adjust_pvalues` (Holm, Benjamini-Hochberg) over
  a family, `welch_from_stats` for published mean/sd/n tables;
* rates are summarised by the harmonic mean or total / total, not the
  arithmetic mean of rates: `harmonic_mean`, `harmonic_mean_ci`, `total_rate`;
* nothing is silently dropped: `tukey_outliers` reports (never removes) points
  beyond Tukey's fences, with their positions.

Every estimator is a plain function of one-dimensional samples (or of summary
statistics) returning a frozen dataclass; an interval is always a
`ConfidenceInterval` that names the method that produced it, and `summarize`
is the single place that decides which statistics summary.csv shows.

Degenerate samples never raise: a statistic that needs more observations than
there are is NaN, which pandas writes as an empty CSV cell and the LaTeX layer
prints as a dash, and the result's `note` says why. Benchmark campaigns
routinely end up with n = 1 (smoke runs) or n = 0 (every repetition failed)
for some configuration. Missing values (None, NaN) are not observations.
Invalid parameters (a level outside (0, 1), an unknown method) raise ValueError.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from scipy import optimize as scipy_optimize
from scipy import special as scipy_special
from scipy import stats as scipy_stats

DEFAULT_CONFIDENCE = 0.95
DEFAULT_ALPHA = 0.05
# Bootstrap defaults: reproducible for a given seed (numpy.random.default_rng(seed)).
DEFAULT_SEED = 20261121
DEFAULT_RESAMPLES = 9999


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


# =========================================================================== shared helpers


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")


def _finite(*values: float) -> bool:
    return all(value is not None and math.isfinite(float(value)) for value in values)


def _undefined(level: float, method: str) -> ConfidenceInterval:
    return ConfidenceInterval(math.nan, math.nan, level, method)


def mean_ci_from_stats(mean: float, sd: float, n: int, level: float = DEFAULT_CONFIDENCE) -> ConfidenceInterval:
    """`mean_ci_t` from published summary statistics (mean, sample sd, n): mean ± t(1 - α/2, n - 1) · sd / √n."""
    _check_level(level)
    method = "student-t"
    if not _finite(mean, sd, n) or n < 2:
        return _undefined(level, method)
    if sd < 0:
        raise ValueError(f"sd must be >= 0, got {sd}")
    half = float(scipy_stats.t.ppf(0.5 + level / 2.0, df=n - 1)) * sd / math.sqrt(n)
    return ConfidenceInterval(mean - half, mean + half, level, method)


# =========================================================================== median: order statistics


@dataclass(frozen=True)
class MedianInterval:
    """Distribution-free interval for the population median from two order statistics.

    `ci` is [x_(lower_rank), x_(upper_rank)] of the sorted sample (1-based ranks,
    symmetric: upper_rank = n + 1 - lower_rank). `coverage` is the interval's exact
    coverage for a continuous distribution, P(lower_rank <= B <= upper_rank - 1) with
    B ~ Binomial(n, 1/2) (with ties the closed interval covers at least that), so it
    is >= `ci.level` whenever `reaches_level`. When even [min, max] falls short of the
    level (n <= 5 at 95 %), `reaches_level` is False, the interval is [min, max] and
    `coverage` says how short it falls. n < 2: undefined (NaN bounds and coverage).
    """

    n: int
    median: float
    ci: ConfidenceInterval
    coverage: float
    reaches_level: bool
    lower_rank: int
    upper_rank: int
    note: str = ""


def order_statistic_coverage(n: int, lower_rank: int, upper_rank: int) -> float:
    """Coverage of [x_(lower_rank), x_(upper_rank)] for the median of a continuous distribution.

    x_(r) <= M exactly when at least r observations lie below the median M, and M <= x_(s)
    when at most s - 1 do; the count below M is Binomial(n, 1/2).
    """
    if not 1 <= lower_rank <= upper_rank <= n:
        raise ValueError(f"need 1 <= lower_rank <= upper_rank <= n, got {lower_rank}, {upper_rank}, {n}")
    return float(scipy_stats.binom.cdf(upper_rank - 1, n, 0.5) - scipy_stats.binom.cdf(lower_rank - 1, n, 0.5))


def median_ci(values: Iterable[float], level: float = DEFAULT_CONFIDENCE) -> MedianInterval:
    """Nonparametric interval for the median: the narrowest symmetric pair of order statistics
    whose exact binomial coverage is at least `level` (e.g. n = 10 at 95 %: [x_(2), x_(9)],
    coverage 1 - 22/1024 = 97.85 %). No distributional assumption beyond independent,
    identically distributed trials, which is why it suits skewed or heavy-tailed throughput data.
    """
    _check_level(level)
    sample = np.sort(as_sample(values))
    n = int(sample.size)
    method = "order statistics (binomial)"
    if n < 2:
        median = float(sample[0]) if n else math.nan
        return MedianInterval(n, median, _undefined(level, method), math.nan, False, 0, 0,
                              f"n = {n} < 2: no interval from order statistics")
    ranks = np.arange(1, n // 2 + 1)
    coverages = 1.0 - 2.0 * scipy_stats.binom.cdf(ranks - 1, n, 0.5)
    reaching = ranks[coverages >= level - 1e-12]
    median = float(np.median(sample))
    if reaching.size:
        rank = int(reaching.max())
        note = ""
    else:
        rank = 1
        needed = math.ceil(1.0 - math.log2(1.0 - level))
        note = (f"n = {n} is too small for a {level:.0%} distribution-free interval (n >= {needed} needed): "
                f"[min, max] covers the median with probability {1.0 - 2.0 ** (1 - n):.4f}")
    upper = n + 1 - rank
    coverage = order_statistic_coverage(n, rank, upper)
    ci = ConfidenceInterval(float(sample[rank - 1]), float(sample[upper - 1]), level, method)
    return MedianInterval(n, median, ci, coverage, bool(reaching.size), rank, upper, note)


# =========================================================================== bootstrap

# A bootstrap statistic takes the samples as arrays and reduces along `axis` (numpy style):
# statistic(*samples, axis=-1) -> array. np.mean and np.median qualify as one-sample statistics.
Statistic = Callable[..., Any]
BootstrapMethod = Literal["percentile", "bca"]
Center = Literal["mean", "median"]
_CENTERS: dict[str, Callable[..., Any]] = {"mean": np.mean, "median": np.median}
_BOOTSTRAP_LABELS = {"percentile": "bootstrap percentile", "bca": "bootstrap BCa"}


def _center(center: str) -> Callable[..., Any]:
    if center not in _CENTERS:
        raise ValueError(f"center must be 'mean' or 'median', got {center!r}")
    return _CENTERS[center]


@dataclass(frozen=True)
class BootstrapInterval:
    """A bootstrap interval and what is needed to reproduce it.

    `estimate` is the statistic on the original samples; `standard_error` the sd of
    the bootstrap distribution; `bias_correction` (z0) and `acceleration` (a) are the
    BCa constants (NaN for the percentile method). A NaN interval comes with a `note`.
    """

    estimate: float
    ci: ConfidenceInterval
    resamples: int
    seed: int | None
    sizes: tuple[int, ...]
    standard_error: float
    bias_correction: float = math.nan
    acceleration: float = math.nan
    note: str = ""


def bootstrap_ci(
    samples: Sequence[Iterable[float]],
    statistic: Statistic,
    *,
    level: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
    method: BootstrapMethod = "percentile",
) -> BootstrapInterval:
    """Seeded bootstrap interval of `statistic(*samples, axis=-1)`.

    Each sample is resampled independently, with replacement and at its own size: with
    rng = numpy.random.default_rng(seed), sample j (in order) is indexed by
    rng.integers(0, n_j, (resamples, n_j)). Those are exactly the draws of
    scipy.stats.bootstrap(samples, statistic, rng=default_rng(seed), n_resamples=resamples)
    (batch=None), and the intervals are computed as scipy does, so both agree to rounding
    (tests/test_stats.py checks it).

    * "percentile": the α/2 and 1 - α/2 quantiles of the bootstrap distribution.
    * "bca": bias-corrected and accelerated (Efron & Tibshirani 1993, ch. 14): z0 from the
      share of resamples below the estimate (ties count half), the acceleration from the
      jackknife of each sample in turn. Second-order accurate for smooth statistics (means,
      ratios of means); for a median of a handful of trials the bootstrap distribution has
      few distinct values and the percentile method is the safer choice.

    Undefined (NaN interval, with a `note`) when a sample has fewer than 2 observations,
    when the statistic is undefined on the data, or when any resample gives a non-finite
    statistic (e.g. a zero denominator): such resamples are reported, not dropped.
    """
    _check_level(level)
    if method not in _BOOTSTRAP_LABELS:
        raise ValueError(f"method must be 'percentile' or 'bca', got {method!r}")
    if resamples < 2:
        raise ValueError(f"resamples must be >= 2, got {resamples}")
    data = [as_sample(sample) for sample in samples]
    if not data:
        raise ValueError("bootstrap_ci needs at least one sample")
    sizes = tuple(int(d.size) for d in data)
    label = _BOOTSTRAP_LABELS[method]
    undefined = _undefined(level, label)

    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = float(statistic(*data, axis=-1)) if min(sizes) > 0 else math.nan
    if min(sizes) < 2:
        return BootstrapInterval(estimate, undefined, resamples, seed, sizes, math.nan,
                                 note=f"n = {min(sizes)} < 2 in a sample: no bootstrap interval")
    if not math.isfinite(estimate):
        return BootstrapInterval(estimate, undefined, resamples, seed, sizes, math.nan,
                                 note="the statistic is undefined on the samples")

    rng = np.random.default_rng(seed)
    resampled = [d[rng.integers(0, d.size, (resamples, d.size))] for d in data]
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.asarray(statistic(*resampled, axis=-1), dtype=float)
    nonfinite = int((~np.isfinite(theta)).sum())
    if nonfinite:
        return BootstrapInterval(estimate, undefined, resamples, seed, sizes, math.nan,
                                 note=f"{nonfinite} of {resamples} resamples gave an undefined statistic "
                                      "(e.g. a zero denominator): no interval rather than one from the others")
    standard_error = float(theta.std(ddof=1))
    tail = (1.0 - level) / 2.0
    if method == "percentile":
        low, high = np.percentile(theta, [100.0 * tail, 100.0 * (1.0 - tail)])
        return BootstrapInterval(estimate, ConfidenceInterval(float(low), float(high), level, label),
                                 resamples, seed, sizes, standard_error)

    share_below = ((theta < estimate).sum() + (theta <= estimate).sum()) / (2.0 * resamples)
    z0 = float(scipy_special.ndtri(share_below))
    acceleration = _jackknife_acceleration(data, statistic)
    if not (math.isfinite(z0) and math.isfinite(acceleration)):
        return BootstrapInterval(estimate, undefined, resamples, seed, sizes, standard_error, z0, acceleration,
                                 note="BCa undefined: the estimate lies outside the bootstrap distribution")
    bounds = []
    for z_tail in (float(scipy_special.ndtri(tail)), -float(scipy_special.ndtri(tail))):
        shifted = z0 + z_tail
        bounds.append(float(np.percentile(theta, 100.0 * scipy_special.ndtr(z0 + shifted / (1.0 - acceleration * shifted)))))
    return BootstrapInterval(estimate, ConfidenceInterval(bounds[0], bounds[1], level, label), resamples, seed,
                             sizes, standard_error, z0, acceleration)


def _jackknife_acceleration(data: list[np.ndarray], statistic: Statistic) -> float:
    """BCa acceleration from leave-one-out values of each sample in turn (Efron & Tibshirani
    1993, eq. 14.15; for several samples the sums over samples, as scipy.stats.bootstrap does)."""
    numerator = 0.0
    denominator = 0.0
    for j, sample in enumerate(data):
        n = sample.size
        keep = ~np.eye(n, dtype=bool)
        leave_one_out = np.broadcast_to(sample, (n, n))[keep].reshape(n, n - 1)
        arguments = [leave_one_out if k == j else np.broadcast_to(d, (n, d.size)) for k, d in enumerate(data)]
        with np.errstate(divide="ignore", invalid="ignore"):
            theta_i = np.asarray(statistic(*arguments, axis=-1), dtype=float)
        u = (n - 1) * (theta_i.mean() - theta_i)
        numerator += float((u**3).sum()) / n**3
        denominator += float((u**2).sum()) / n**2
    if denominator == 0.0:
        return 0.0  # the statistic does not move when one observation is left out: no skewness to correct
    return numerator / (6.0 * denominator**1.5)


def bootstrap_median_ci(
    values: Iterable[float],
    *,
    level: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
    method: BootstrapMethod = "percentile",
) -> BootstrapInterval:
    """Bootstrap interval of one sample's median (see `median_ci` for the exact distribution-free one)."""
    return bootstrap_ci([values], np.median, level=level, resamples=resamples, seed=seed, method=method)


def bootstrap_ratio_ci(
    numerator: Iterable[float],
    denominator: Iterable[float],
    *,
    center: Center = "mean",
    level: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
    method: BootstrapMethod = "percentile",
) -> BootstrapInterval:
    """Interval of center(numerator) / center(denominator) for two independent configurations,
    e.g. a server's mean throughput over nginx's. Both samples are resampled independently.

    One ratio of two measured centres, with its uncertainty, is what the report may state;
    averaging ratios across configurations is what Hoefler & Belli advise against.
    """
    f = _center(center)

    def ratio_of_centers(x: np.ndarray, y: np.ndarray, axis: int = -1) -> Any:
        return f(x, axis=axis) / f(y, axis=axis)

    return bootstrap_ci([numerator, denominator], ratio_of_centers, level=level, resamples=resamples, seed=seed,
                        method=method)


def bootstrap_difference_ci(
    a: Iterable[float],
    b: Iterable[float],
    *,
    center: Center = "median",
    level: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
    method: BootstrapMethod = "percentile",
) -> BootstrapInterval:
    """Interval of center(a) - center(b) for two independent samples (resampled independently)."""
    f = _center(center)

    def difference_of_centers(x: np.ndarray, y: np.ndarray, axis: int = -1) -> Any:
        return f(x, axis=axis) - f(y, axis=axis)

    return bootstrap_ci([a, b], difference_of_centers, level=level, resamples=resamples, seed=seed, method=method)


# =========================================================================== normality


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
    _check_alpha(alpha)
    sample = as_sample(values)
    n = int(sample.size)
    if n < 3:
        return NormalityCheck(n, math.nan, math.nan, alpha, False,
                              f"n = {n} < 3: Shapiro-Wilk needs at least 3 observations")
    if float(np.ptp(sample)) == 0.0:
        return NormalityCheck(n, math.nan, math.nan, alpha, False, "all observations are equal: no spread to check")
    w, p = scipy_stats.shapiro(sample)
    passes = bool(p >= alpha)
    relation = ">=" if passes else "<"
    return NormalityCheck(n, float(w), float(p), alpha, passes,
                          f"Shapiro-Wilk W = {float(w):.4f}, p = {float(p):.3g} {relation} alpha = {alpha:g}")


# =========================================================================== Welch's t from summary statistics


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
    if not _finite(sd_a, n_a, sd_b, n_b) or n_a < 2 or n_b < 2:
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
    _check_level(level)
    method = "welch-satterthwaite t"
    nan = math.nan
    if not _finite(mean_a, sd_a, n_a, mean_b, sd_b, n_b):
        return WelchResult(_int(n_a), mean_a, sd_a, _int(n_b), mean_b, sd_b, nan, nan, nan, nan, nan,
                           _undefined(level, method), "a summary statistic is missing")
    if sd_a < 0 or sd_b < 0:
        raise ValueError(f"standard deviations must be >= 0, got {sd_a}, {sd_b}")
    difference = float(mean_a - mean_b)
    if n_a < 2 or n_b < 2:
        return WelchResult(int(n_a), mean_a, sd_a, int(n_b), mean_b, sd_b, difference, nan, nan, nan, nan,
                           _undefined(level, method), f"n = {int(n_a)} and {int(n_b)}: Welch's t needs n >= 2 per group")
    se = math.sqrt(sd_a**2 / n_a + sd_b**2 / n_b)
    if se == 0.0:
        return WelchResult(int(n_a), mean_a, sd_a, int(n_b), mean_b, sd_b, difference, 0.0, nan, nan, nan,
                           _undefined(level, method), "both standard deviations are 0: Welch's t is undefined")
    df = welch_satterthwaite_df(sd_a, n_a, sd_b, n_b)
    t = difference / se
    p = float(2.0 * scipy_stats.t.sf(abs(t), df))
    half = float(scipy_stats.t.ppf(0.5 + level / 2.0, df)) * se
    return WelchResult(int(n_a), float(mean_a), float(sd_a), int(n_b), float(mean_b), float(sd_b), difference, se,
                       float(df), float(t), p, ConfidenceInterval(difference - half, difference + half, level, method))


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
    is asymmetric). Needs positive means and n >= 2; NaN interval otherwise."""
    _check_level(level)
    method = "delta method (log ratio, welch-satterthwaite df)"
    if not _finite(mean_a, sd_a, n_a, mean_b, sd_b, n_b) or mean_b == 0:
        return math.nan, _undefined(level, method)
    estimate = float(mean_a / mean_b)
    if mean_a <= 0 or mean_b <= 0 or n_a < 2 or n_b < 2:
        return estimate, _undefined(level, method)
    va, vb = (sd_a / mean_a) ** 2 / n_a, (sd_b / mean_b) ** 2 / n_b
    if va + vb == 0.0:
        return estimate, _undefined(level, method)
    df = (va + vb) ** 2 / (va**2 / (n_a - 1) + vb**2 / (n_b - 1))
    half = float(scipy_stats.t.ppf(0.5 + level / 2.0, df)) * math.sqrt(va + vb)
    return estimate, ConfidenceInterval(estimate * math.exp(-half), estimate * math.exp(half), level, method)


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return 0


# =========================================================================== effect sizes


@dataclass(frozen=True)
class EffectSize:
    """A standardised effect (`name`: "hedges_g" or "cliffs_delta") with its interval; the
    interval's `method` says how it was computed."""

    name: str
    estimate: float
    ci: ConfidenceInterval
    note: str = ""


HedgesCIMethod = Literal["noncentral-t", "normal"]


def hedges_correction(df: float) -> float:
    """Hedges' (1981) small-sample factor J(df) = Γ(df/2) / (√(df/2) · Γ((df - 1)/2)),
    ≈ 1 - 3 / (4 df - 1); df = n_a + n_b - 2. NaN for df <= 1."""
    if not _finite(df) or df <= 1:
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
      1997; the J scaling as in Hedges & Olkin 1985). Falls back to "normal" (and says so)
      if the root search fails.
    * "normal": g ± z · J · √((n_a + n_b)/(n_a n_b) + d² / (2 (n_a + n_b)))
      (Borenstein et al. 2009, Introduction to Meta-Analysis, eqs. 4.20-4.24).
    The pooled sd assumes equal variances; Welch's test does not, so g is a
    conventional scale for the effect, not part of the test.
    """
    _check_level(level)
    if ci_method not in ("noncentral-t", "normal"):
        raise ValueError(f"ci_method must be 'noncentral-t' or 'normal', got {ci_method!r}")
    name = "hedges_g"
    undefined = _undefined(level, ci_method)
    if not _finite(mean_a, sd_a, n_a, mean_b, sd_b, n_b):
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
            return EffectSize(name, g, ConfidenceInterval(j * low_ncp * scale, j * high_ncp * scale, level,
                                                          "noncentral-t"))
        except (ValueError, RuntimeError, ArithmeticError) as error:
            note = f"noncentral-t interval failed ({error}); normal approximation instead"
    se = j * math.sqrt((n_a + n_b) / (n_a * n_b) + d**2 / (2.0 * (n_a + n_b)))
    z = float(scipy_stats.norm.ppf(0.5 + level / 2.0))
    return EffectSize(name, g, ConfidenceInterval(g - z * se, g + z * se, level, "normal"), note)


def _noncentral_t_interval(t_observed: float, df: float, level: float) -> tuple[float, float]:
    """(λ_L, λ_U) with P(T_df,λ_L <= t) = 1 - α/2 and P(T_df,λ_U <= t) = α/2. The noncentral t
    cdf falls as λ grows, so each root is bracketed by stepping outwards from t."""
    tail = (1.0 - level) / 2.0

    def root(target: float) -> float:
        def f(ncp: float) -> float:
            return float(scipy_stats.nct.cdf(t_observed, df, ncp)) - target

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
        return float(scipy_optimize.brentq(f, low, high, xtol=1e-12, rtol=1e-12, maxiter=500))

    return root(1.0 - tail), root(tail)


def hedges_g(
    a: Iterable[float], b: Iterable[float], level: float = DEFAULT_CONFIDENCE, ci_method: HedgesCIMethod = "noncentral-t"
) -> EffectSize:
    """`hedges_g_from_stats` on two samples."""
    x, y = as_sample(a), as_sample(b)
    return hedges_g_from_stats(sample_mean(x), sample_sd(x), int(x.size), sample_mean(y), sample_sd(y), int(y.size),
                               level, ci_method)


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
    _check_level(level)
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
        return EffectSize(name, math.nan, _undefined(level, ci_method), "a group has no observations")
    dominance = np.sign(x[:, None] - y[None, :])
    d = float(dominance.mean())
    if m < 2 or n < 2:
        return EffectSize(name, d, _undefined(level, ci_method), f"n = {m} and {n}: no interval with n < 2 in a group")
    if ci_method == "newcombe":
        return EffectSize(name, d, _newcombe_delta_interval(d, m, n, level))
    row, column = dominance.mean(axis=1), dominance.mean(axis=0)
    if variance == "unbiased":
        s2 = (n**2 * float(((row - d) ** 2).sum()) + m**2 * float(((column - d) ** 2).sum())
              - float(((dominance - d) ** 2).sum())) / (m * n * (m - 1) * (n - 1))
        s2 = max(s2, (1.0 - d**2) / (m * n - 1))
    else:
        s_row = float(((row - d) ** 2).sum()) / (m - 1)
        s_column = float(((column - d) ** 2).sum()) / (n - 1)
        s_cell = float(((dominance - d) ** 2).sum()) / ((m - 1) * (n - 1))
        s2 = ((n - 1) * s_row + (m - 1) * s_column + s_cell) / (m * n)
    if s2 <= 0.0 or abs(d) == 1.0:
        return EffectSize(name, d, _newcombe_delta_interval(d, m, n, level),
                          "complete separation (|delta| = 1): Cliff's variance is 0, Newcombe's score interval instead")
    if quantile == "t":
        q = float(scipy_stats.t.ppf(0.5 + level / 2.0, m + n - 2))
    else:
        q = float(scipy_stats.norm.ppf(0.5 + level / 2.0))
    spread = q * math.sqrt(s2) * math.sqrt((1.0 - d**2) ** 2 + q**2 * s2)
    denominator = 1.0 - d**2 + q**2 * s2
    low = max(-1.0, (d - d**3 - spread) / denominator)
    high = min(1.0, (d - d**3 + spread) / denominator)
    return EffectSize(name, d, ConfidenceInterval(low, high, level, f"cliff ({variance} variance, {quantile} quantile)"))


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
        low = float(scipy_optimize.brentq(lambda t: theta_hat - t - z * sd(t), 0.0, min(theta_hat, 1.0 - edge),
                                          xtol=1e-14))
    if theta_hat >= 1.0:
        high = 1.0
    else:
        high = float(scipy_optimize.brentq(lambda t: theta_hat - t + z * sd(t), max(theta_hat, edge), 1.0,
                                           xtol=1e-14))
    return ConfidenceInterval(2.0 * low - 1.0, 2.0 * high - 1.0, level, "newcombe score (method 5)")


# =========================================================================== comparing two configurations


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
    _check_alpha(alpha)
    level = 1.0 - alpha if level is None else level
    _check_level(level)
    x, y = as_sample(a), as_sample(b)
    n_a, n_b = int(x.size), int(y.size)
    normality_a, normality_b = shapiro_wilk(x, normality_alpha), shapiro_wilk(y, normality_alpha)
    nan = math.nan

    if n_a < 2 or n_b < 2:
        center = "mean"
        return ComparisonResult(
            test="none", reason=f"n = {n_a} and {n_b}: a test needs at least 2 trials per group", n_a=n_a, n_b=n_b,
            normality_a=normality_a, normality_b=normality_b, statistic=nan, df=nan, p_value=nan, p_method="",
            alpha=alpha, level=level, center=center, estimate_a=sample_mean(x), estimate_b=sample_mean(y),
            difference=sample_mean(x) - sample_mean(y), difference_ci=_undefined(level, ""),
            ratio=ratio(sample_mean(x), sample_mean(y)), ratio_ci=_undefined(level, ""),
            effect_size=EffectSize("none", nan, _undefined(level, "")), seed=seed, resamples=resamples,
        )

    if normality_a.passes and normality_b.passes:
        welch = welch_test(x, y, level)
        ratio_interval = bootstrap_ratio_ci(x, y, center="mean", level=level, resamples=resamples, seed=seed,
                                            method=bootstrap_method)
        return ComparisonResult(
            test="welch_t",
            reason=(f"both groups pass Shapiro-Wilk (p = {normality_a.p_value:.3g} and {normality_b.p_value:.3g}, "
                    f">= {normality_alpha:g}): Welch's t-test"),
            n_a=n_a, n_b=n_b, normality_a=normality_a, normality_b=normality_b,
            statistic=welch.statistic, df=welch.df, p_value=welch.p_value, p_method="Welch t, two-sided",
            alpha=alpha, level=level, center="mean", estimate_a=welch.mean_a, estimate_b=welch.mean_b,
            difference=welch.difference, difference_ci=welch.ci,
            ratio=ratio_interval.estimate, ratio_ci=ratio_interval.ci,
            effect_size=hedges_g(x, y, level), seed=seed, resamples=resamples,
            notes=tuple(n for n in (welch.note, ratio_interval.note) if n),
        )

    failing = [f"group {name}: {check.reason}" for name, check in (("a", normality_a), ("b", normality_b))
               if not check.passes]
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
        notes.append(f"with n = {n_a} and {n_b} the smallest two-sided Mann-Whitney p is {smallest_p:.3g} > "
                     f"alpha = {alpha:g}: no outcome could be significant")
    difference = bootstrap_difference_ci(x, y, center="median", level=level, resamples=resamples, seed=seed,
                                         method=bootstrap_method)
    ratio_interval = bootstrap_ratio_ci(x, y, center="median", level=level, resamples=resamples, seed=seed,
                                        method=bootstrap_method)
    return ComparisonResult(
        test="mann_whitney_u", reason=reason, n_a=n_a, n_b=n_b, normality_a=normality_a, normality_b=normality_b,
        statistic=float(mwu.statistic), df=nan, p_value=float(mwu.pvalue), p_method=p_method,
        alpha=alpha, level=level, center="median", estimate_a=sample_median(x), estimate_b=sample_median(y),
        difference=difference.estimate, difference_ci=difference.ci,
        ratio=ratio_interval.estimate, ratio_ci=ratio_interval.ci,
        effect_size=cliffs_delta(x, y, level), seed=seed, resamples=resamples,
        notes=tuple(n for n in (*notes, difference.note, ratio_interval.note) if n),
    )


# =========================================================================== multiple comparisons


@dataclass(frozen=True)
class MultipleTestResult:
    """A family of p-values and their adjustment. `adjusted[i]` belongs to `p_values[i]`;
    `reject[i]` = adjusted[i] <= alpha. Undefined (NaN) p-values are not part of the family:
    their adjusted value is NaN and they are never rejected; `m` counts the defined ones."""

    method: str
    alpha: float
    p_values: tuple[float, ...]
    adjusted: tuple[float, ...]
    reject: tuple[bool, ...]
    m: int


_ADJUSTMENTS = {"holm": "holm", "bh": "bh", "fdr_bh": "bh", "benjamini-hochberg": "bh"}


def adjust_pvalues(p_values: Iterable[float], method: str = "holm", alpha: float = DEFAULT_ALPHA) -> MultipleTestResult:
    """Holm's step-down (controls the family-wise error rate) or Benjamini-Hochberg's step-up
    (controls the false discovery rate) adjustment; same values as
    statsmodels.stats.multitest.multipletests(method="holm" / "fdr_bh").

    Holm:  p_(i) -> max_{j <= i} min(1, (m - j + 1) p_(j))
    BH:    p_(i) -> min_{j >= i} min(1, m p_(j) / j)
    """
    _check_alpha(alpha)
    if method not in _ADJUSTMENTS:
        raise ValueError(f"method must be one of {sorted(_ADJUSTMENTS)}, got {method!r}")
    kind = _ADJUSTMENTS[method]
    p = np.array([math.nan if v is None else float(v) for v in p_values], dtype=float)
    defined = ~np.isnan(p)
    if ((p[defined] < 0) | (p[defined] > 1)).any():
        raise ValueError("p-values must lie in [0, 1]")
    adjusted = np.full(p.shape, math.nan)
    family = p[defined]
    m = int(family.size)
    if m:
        order = np.argsort(family, kind="stable")
        ranked = family[order]
        ranks = np.arange(1, m + 1)
        if kind == "holm":
            stepped = np.maximum.accumulate(np.minimum(1.0, (m - ranks + 1) * ranked))
        else:
            stepped = np.minimum.accumulate(np.minimum(1.0, m * ranked / ranks)[::-1])[::-1]
        back = np.empty(m)
        back[order] = stepped
        adjusted[defined] = back
    reject = tuple(bool(v <= alpha) if not math.isnan(v) else False for v in adjusted)
    return MultipleTestResult("holm" if kind == "holm" else "bh", alpha, tuple(float(v) for v in p),
                              tuple(float(v) for v in adjusted), reject, m)


def holm(p_values: Iterable[float], alpha: float = DEFAULT_ALPHA) -> MultipleTestResult:
    return adjust_pvalues(p_values, "holm", alpha)


def benjamini_hochberg(p_values: Iterable[float], alpha: float = DEFAULT_ALPHA) -> MultipleTestResult:
    return adjust_pvalues(p_values, "bh", alpha)


# =========================================================================== rates


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
    _check_level(level)
    method = "student-t on reciprocals"
    sample = as_sample(rates)
    if (sample < 0).any():
        raise ValueError("rates must be >= 0")
    if sample.size < 2 or (sample == 0).any():
        return _undefined(level, method)
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


# =========================================================================== outliers


@dataclass(frozen=True)
class OutlierReport:
    """Tukey's fences on one sample. Nothing is removed: the report lists what lies outside.

    Quartiles are numpy's default (linear interpolation, Hyndman & Fan type 7, R's default).
    `indices` are positions in the input sequence as given (missing values keep their
    positions, so indices map back to trial rows) of points strictly outside
    [q1 - k·IQR, q3 + k·IQR] ("outliers", far-out ones included); `far_indices` of those
    outside [q1 - far_k·IQR, q3 + far_k·IQR] ("far out"). With n <= 3 no point can lie
    outside the fences. n = 0: NaN fences.
    """

    n: int
    q1: float
    q3: float
    iqr: float
    k: float
    far_k: float
    lower_fence: float
    upper_fence: float
    far_lower_fence: float
    far_upper_fence: float
    indices: tuple[int, ...]
    values: tuple[float, ...]
    far_indices: tuple[int, ...]
    far_values: tuple[float, ...]

    @property
    def count(self) -> int:
        return len(self.indices)

    @property
    def far_count(self) -> int:
        return len(self.far_indices)


def tukey_outliers(values: Iterable[float], k: float = 1.5, far_k: float = 3.0) -> OutlierReport:
    """Points beyond Tukey's fences (k = 1.5 IQR: outliers; far_k = 3 IQR: far out), counted
    and listed with their positions, never dropped."""
    if not 0 < k <= far_k:
        raise ValueError(f"need 0 < k <= far_k, got {k}, {far_k}")
    array = np.array([math.nan if v is None else float(v) for v in values], dtype=float)
    present = ~np.isnan(array)
    sample = array[present]
    nan = math.nan
    if sample.size == 0:
        return OutlierReport(0, nan, nan, nan, k, far_k, nan, nan, nan, nan, (), (), (), ())
    q1, q3 = (float(q) for q in np.percentile(sample, [25, 75]))
    iqr = q3 - q1
    fences = (q1 - k * iqr, q3 + k * iqr, q1 - far_k * iqr, q3 + far_k * iqr)
    with np.errstate(invalid="ignore"):
        outside = present & ((array < fences[0]) | (array > fences[1]))
        far = present & ((array < fences[2]) | (array > fences[3]))
    where, far_where = np.flatnonzero(outside), np.flatnonzero(far)
    return OutlierReport(
        int(sample.size), q1, q3, iqr, k, far_k, *fences,
        tuple(int(i) for i in where), tuple(float(array[i]) for i in where),
        tuple(int(i) for i in far_where), tuple(float(array[i]) for i in far_where),
    )
