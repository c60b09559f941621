"""archbench.stats against hand-computed textbook values, scipy and statsmodels.

Reference values: textbook intervals computed by hand in the comments (Student t, binomial
order statistics in exact arithmetic), Borenstein et al. (2009) for Hedges' g, the R
package effsize's documented example for Cliff's delta, scipy.stats (ttest_ind,
ttest_ind_from_stats, mannwhitneyu, shapiro, bootstrap, hmean) and
statsmodels.stats.multitest.multipletests for Holm and Benjamini-Hochberg.
"""

import gc
import itertools
import math
import statistics
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from archbench import stats


def test_sample_sd_uses_bessel_correction():
    # Σ(x - 5)² = 32 over n - 1 = 7: s = √(32/7), not the population √(32/8) = 2.
    values = [2, 4, 4, 4, 5, 5, 7, 9]
    assert stats.sample_mean(values) == 5.0
    assert stats.sample_sd(values) == pytest.approx(math.sqrt(32 / 7), rel=1e-12)
    assert stats.sample_sd(values) == pytest.approx(np.std(values, ddof=1), rel=1e-12)


def test_t_interval_of_a_known_sample():
    # 1..5: mean 3, s = √2.5, se = √0.5, t(0.975, 4) = 2.7764451 -> 3 ± 1.9632432.
    interval = stats.mean_ci_t([1, 2, 3, 4, 5])
    assert interval.low == pytest.approx(3 - 2.7764451052 * math.sqrt(0.5), abs=1e-9)
    assert interval.high == pytest.approx(3 + 2.7764451052 * math.sqrt(0.5), abs=1e-9)
    assert interval.low == pytest.approx(1.0367568, abs=1e-6)
    assert interval.high == pytest.approx(4.9632432, abs=1e-6)
    assert interval.level == 0.95
    assert interval.method == "student-t"
    assert interval.half_width == pytest.approx(1.9632432, abs=1e-6)


def test_t_interval_matches_scipy_for_other_levels_and_sizes():
    rng = np.random.default_rng(20261121)
    for n in (2, 3, 10, 30):
        sample = rng.normal(100_000, 5_000, size=n)
        for level in (0.9, 0.95, 0.99):
            expected = scipy_stats.t.interval(level, n - 1, loc=sample.mean(), scale=scipy_stats.sem(sample))
            interval = stats.mean_ci_t(sample, level)
            assert (interval.low, interval.high) == pytest.approx(expected, rel=1e-12)


def test_source_000_linux_table_row_gives_its_interval():
    # Source 000 reports mean 621,257 and sd 2,669 over ten trials at 10 threads; the
    # 95% CI half-width is t(0.975, 9) · 2669 / √10 = 2.2621572 · 844.0 ≈ 1,909.3.
    half_width = scipy_stats.t.ppf(0.975, 9) * 2669 / math.sqrt(10)
    assert half_width == pytest.approx(1909.3, abs=0.1)


def test_degenerate_samples_are_nan_not_errors():
    one = stats.summarize([42.0])
    assert one.n == 1 and one.mean == 42.0 and one.median == 42.0 and one.min == one.max == 42.0
    assert math.isnan(one.sd)
    # One trial: its range is the point itself, named as a range, never a t interval.
    assert (one.mean_ci.low, one.mean_ci.high, one.mean_ci.method) == (42.0, 42.0, stats.RANGE_METHOD)

    empty = stats.summarize([])
    assert empty.n == 0
    assert all(math.isnan(v) for v in (empty.mean, empty.sd, empty.median, empty.min, empty.max))


def test_missing_values_are_not_observations():
    summary = stats.summarize([1.0, float("nan"), 3.0, None])
    assert summary.n == 2
    assert summary.mean == 2.0


LOG_T_TWO_SIDED = math.exp(scipy_stats.t.ppf(0.975, 2) * math.sqrt(1.0 / 3.0))


@pytest.mark.parametrize(
    ("values", "low", "high", "method"),
    [
        # Two trials: the t quantile is 12.7 and a t interval goes below zero; the range is shown instead.
        ([100.0, 10_000.0], 100.0, 10_000.0, stats.RANGE_METHOD),
        ([5.0], 5.0, 5.0, stats.RANGE_METHOD),
        # Three positive trials: the t interval of the logs, exponentiated (geometric mean 100, log sd ln 10).
        (
            [10.0, 100.0, 1000.0],
            100.0 / LOG_T_TWO_SIDED ** math.log(10),
            100.0 * LOG_T_TWO_SIDED ** math.log(10),
            "log-t",
        ),
        ([7.0, 7.0, 7.0], 7.0, 7.0, "log-t"),
        # A zero trial has no log: the t interval clipped at zero.
        ([0.0, 1.0, 1000.0], 0.0, None, "student-t clipped at zero"),
        # Negative values: not a rate, the plain t interval.
        ([-1.0, 0.0, 1.0], -2.4841377118, 2.4841377118, "student-t"),
    ],
)
def test_rate_interval_rule(values, low, high, method):
    interval = stats.rate_ci(values)
    assert interval.method == method
    assert interval.low == pytest.approx(low)
    if high is not None:
        assert interval.high == pytest.approx(high)
    if min(values) >= 0:
        assert interval.low >= 0


def test_rate_interval_of_wildly_different_positive_trials_stays_above_zero():
    interval = stats.rate_ci([1.0, 1.0, 50_000.0])
    assert interval.method == "log-t" and 0 < interval.low < 1.0 < interval.high
    assert not stats.rate_ci([]).is_defined


def test_rate_interval_from_published_statistics_is_on_the_log_scale():
    interval = stats.rate_ci_from_stats(100.0, 90.0, 3)
    half = scipy_stats.t.ppf(0.975, 2) * 0.9 / math.sqrt(3)
    assert (interval.low, interval.high) == pytest.approx((100.0 * math.exp(-half), 100.0 * math.exp(half)))
    assert interval.low > 0
    assert stats.mean_ci_from_stats(100.0, 90.0, 3).low < 0  # what the Student-t interval gave
    assert not stats.rate_ci_from_stats(100.0, 1.0, 2).is_defined
    assert not stats.rate_ci_from_stats(0.0, 1.0, 5).is_defined


def test_constant_sample_has_a_zero_width_interval():
    interval = stats.mean_ci_t([5.0, 5.0, 5.0])
    assert (interval.low, interval.high) == (5.0, 5.0)


def test_summary_columns_and_values():
    summary = stats.summarize([10.0, 20.0, 30.0, 40.0])
    row = summary.as_dict()
    assert list(row) == ["n", "mean", "sd", "median", "min", "max", "ci95_low", "ci95_high", "ci95_method"]
    assert row["n"] == 4
    assert row["median"] == 25.0
    assert row["sd"] == pytest.approx(12.909944487, rel=1e-9)
    # The rate interval: t on the logs, exponentiated.
    logs = [math.log(v) for v in (10.0, 20.0, 30.0, 40.0)]
    log_mean, log_sd = sum(logs) / 4, statistics.stdev(logs)
    assert row["ci95_low"] == pytest.approx(math.exp(log_mean - 3.182446305 * log_sd / 2), rel=1e-9)
    assert row["ci95_method"] == "log-t"


def test_invalid_level_is_rejected():
    with pytest.raises(ValueError, match="level"):
        stats.mean_ci_t([1, 2, 3], level=95)


def test_interval_overlap():
    a = stats.ConfidenceInterval(1.0, 3.0, 0.95, "student-t")
    b = stats.ConfidenceInterval(2.5, 4.0, 0.95, "student-t")
    c = stats.ConfidenceInterval(3.5, 4.0, 0.95, "student-t")
    undefined = stats.ConfidenceInterval(float("nan"), float("nan"), 0.95, "student-t")
    assert a.overlaps(b) and b.overlaps(a)
    assert not a.overlaps(c)
    assert not a.overlaps(undefined)


def test_ratio_is_nan_when_undefined():
    assert stats.ratio(1.0, 4.0) == 0.25
    assert math.isnan(stats.ratio(1.0, 0.0))
    assert math.isnan(stats.ratio(float("nan"), 2.0))


# =========================================================================== helpers shared by the tests below


def exact_median_coverage(n: int, rank: int) -> Fraction:
    """P(rank <= B <= n - rank), B ~ Binomial(n, 1/2), in exact arithmetic (independent of scipy)."""
    return Fraction(sum(math.comb(n, i) for i in range(rank, n - rank + 1)), 2**n)


# =========================================================================== summary-statistic intervals


def test_mean_ci_from_stats_equals_the_interval_from_the_sample():
    sample = [1.0, 2.0, 3.0, 4.0, 5.0]
    from_stats = stats.mean_ci_from_stats(3.0, math.sqrt(2.5), 5)
    from_sample = stats.mean_ci_t(sample)
    assert (from_stats.low, from_stats.high) == pytest.approx((from_sample.low, from_sample.high), rel=1e-12)
    assert not stats.mean_ci_from_stats(3.0, 1.0, 1).is_defined
    assert not stats.mean_ci_from_stats(float("nan"), 1.0, 5).is_defined


# =========================================================================== median: order statistics


def test_median_interval_n10_is_x2_x9_with_textbook_coverage():
    # Distribution-free median interval tables (e.g. Conover, Practical Nonparametric Statistics):
    # n = 10 at 95 %: (x_(2), x_(9)), confidence 1 - 2·11/1024 = 0.978515625.
    values = [7.0, 3.0, 9.0, 1.0, 5.0, 10.0, 2.0, 8.0, 4.0, 6.0]
    result = stats.median_ci(values)
    assert (result.lower_rank, result.upper_rank) == (2, 9)
    assert (result.ci.low, result.ci.high) == (2.0, 9.0)
    assert result.coverage == pytest.approx(1 - 22 / 1024, abs=1e-15)
    assert result.coverage == float(exact_median_coverage(10, 2))
    assert result.reaches_level and result.median == 5.5
    assert result.ci.method == "order statistics (binomial)"


def test_median_interval_n20_is_x6_x15():
    # n = 20: P(B <= 5) = 21700/2^20 = 0.0207, P(B <= 6) = 0.0577: ranks (6, 15), coverage 0.9586.
    result = stats.median_ci(np.arange(1.0, 21.0))
    assert (result.lower_rank, result.upper_rank) == (6, 15)
    assert result.coverage == pytest.approx(float(exact_median_coverage(20, 6)), abs=1e-14)
    assert result.coverage == pytest.approx(0.9586, abs=5e-5)


def test_median_interval_is_the_narrowest_reaching_the_level_for_many_n():
    for n in range(6, 61):
        for level in (0.9, 0.95, 0.99):
            result = stats.median_ci(np.arange(float(n)), level)
            if not result.reaches_level:
                assert exact_median_coverage(n, 1) < Fraction(level).limit_denominator(1000)
                continue
            rank = result.lower_rank
            assert result.upper_rank == n + 1 - rank
            assert exact_median_coverage(n, rank) >= Fraction(level).limit_denominator(1000)
            if rank + 1 <= n + 1 - (rank + 1):  # one rank narrower falls short
                assert exact_median_coverage(n, rank + 1) < Fraction(level).limit_denominator(1000)
            assert result.coverage == pytest.approx(float(exact_median_coverage(n, rank)), abs=1e-12)


def test_median_interval_too_small_a_sample_is_flagged_with_its_coverage():
    result = stats.median_ci([5.0, 1.0, 4.0, 2.0, 3.0])
    assert not result.reaches_level
    assert (result.ci.low, result.ci.high) == (1.0, 5.0)
    assert result.coverage == pytest.approx(15 / 16)
    assert "n >= 6" in result.note
    six = stats.median_ci([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    assert six.reaches_level and six.coverage == pytest.approx(31 / 32)


def test_median_interval_degenerate_samples():
    one = stats.median_ci([4.0, float("nan")])
    assert one.n == 1 and one.median == 4.0 and not one.ci.is_defined and math.isnan(one.coverage)
    empty = stats.median_ci([])
    assert empty.n == 0 and math.isnan(empty.median) and not empty.ci.is_defined
    with pytest.raises(ValueError, match="level"):
        stats.median_ci([1, 2, 3], level=1.5)


# =========================================================================== bootstrap


def _scipy_method(method: str) -> str:
    return "BCa" if method == "bca" else "percentile"


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_median_matches_scipy_for_the_same_seed(method):
    sample = np.random.default_rng(7).lognormal(11.0, 0.2, size=12)
    ours = stats.bootstrap_median_ci(sample, resamples=2000, seed=42, method=method)
    theirs = scipy_stats.bootstrap(
        (sample,), np.median, n_resamples=2000, method=_scipy_method(method), rng=np.random.default_rng(42)
    )
    assert (ours.ci.low, ours.ci.high) == pytest.approx(tuple(theirs.confidence_interval), rel=1e-12)
    assert ours.standard_error == pytest.approx(theirs.standard_error, rel=1e-12)
    assert ours.estimate == float(np.median(sample))
    assert ours.resamples == 2000 and ours.seed == 42 and ours.sizes == (12,)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_ratio_of_means_matches_scipy_two_sample(method):
    rng = np.random.default_rng(11)
    a, b = rng.normal(120_000, 4_000, size=8), rng.normal(100_000, 6_000, size=6)
    ours = stats.bootstrap_ratio_ci(a, b, center="mean", resamples=3000, seed=5, method=method)

    def ratio_of_means(x, y, axis=-1):
        return np.mean(x, axis=axis) / np.mean(y, axis=axis)

    theirs = scipy_stats.bootstrap(
        (a, b), ratio_of_means, n_resamples=3000, method=_scipy_method(method), rng=np.random.default_rng(5)
    )
    assert (ours.ci.low, ours.ci.high) == pytest.approx(tuple(theirs.confidence_interval), rel=1e-12)
    assert ours.estimate == pytest.approx(a.mean() / b.mean(), rel=1e-15)
    assert ours.ci.low < ours.estimate < ours.ci.high
    if method == "bca":
        assert math.isfinite(ours.bias_correction) and math.isfinite(ours.acceleration)


def test_bootstrap_is_reproducible_and_depends_on_the_seed():
    sample = np.random.default_rng(3).normal(10.0, 2.0, size=10)
    first = stats.bootstrap_median_ci(sample, resamples=500, seed=1)
    again = stats.bootstrap_median_ci(sample, resamples=500, seed=1)
    other = stats.bootstrap_median_ci(sample, resamples=500, seed=2)
    assert first == again
    assert (first.ci.low, first.ci.high) != (
        other.ci.low,
        other.ci.high,
    ) or first.standard_error != other.standard_error


def test_bootstrap_difference_of_medians_and_degenerate_cases():
    a, b = [10.0, 11.0, 12.0, 13.0, 14.0], [1.0, 2.0, 3.0, 4.0, 5.0]
    diff = stats.bootstrap_difference_ci(a, b, resamples=1000, seed=3)
    assert diff.estimate == 9.0 and diff.ci.low <= 9.0 <= diff.ci.high
    # n < 2: no interval, a note
    short = stats.bootstrap_median_ci([1.0], resamples=100)
    assert short.estimate == 1.0 and not short.ci.is_defined and "n = 1" in short.note
    # a zero denominator in resamples: reported, never silently dropped
    zero = stats.bootstrap_ratio_ci([1.0, 2.0, 3.0], [0.0, 0.0, 1.0], center="median", resamples=200, seed=1)
    assert not zero.ci.is_defined
    assert "undefined" in zero.note
    # a constant sample: the point, for both methods
    for method in ("percentile", "bca"):
        point = stats.bootstrap_median_ci([5.0, 5.0, 5.0], resamples=100, method=method)
        assert (point.ci.low, point.ci.high) == (5.0, 5.0)
    with pytest.raises(ValueError, match="method"):
        stats.bootstrap_median_ci([1.0, 2.0], method="basic")
    with pytest.raises(ValueError, match="center"):
        stats.bootstrap_ratio_ci([1.0, 2.0], [1.0, 2.0], center="mode")


def test_bootstrap_bca_when_no_single_observation_moves_the_statistic():
    # Leaving out any one of 1, 5, 5, 5, 9 leaves the median at 5: the jackknife has no spread, scipy's
    # acceleration is 0/0 (a NaN interval), ours is 0, and BCa is then the bias-corrected percentile interval.
    sample = np.array([1.0, 5.0, 5.0, 5.0, 9.0])
    with np.errstate(invalid="ignore"), pytest.warns(scipy_stats.DegenerateDataWarning):
        scipy_bca = scipy_stats.bootstrap(
            (sample,), np.median, n_resamples=2000, method="BCa", rng=np.random.default_rng(4)
        )
    assert math.isnan(scipy_bca.confidence_interval.low)
    ours = stats.bootstrap_median_ci(sample, resamples=2000, seed=4, method="bca")
    assert ours.acceleration == 0.0 and ours.ci.is_defined and ours.note == ""
    theta = scipy_stats.bootstrap(
        (sample,), np.median, n_resamples=2000, method="percentile", rng=np.random.default_rng(4)
    ).bootstrap_distribution
    z0 = scipy_stats.norm.ppf(((theta < 5.0).sum() + (theta <= 5.0).sum()) / (2.0 * theta.size))
    assert ours.bias_correction == pytest.approx(z0, rel=1e-12)
    z = scipy_stats.norm.ppf(0.975)
    expected = np.percentile(
        theta, [100.0 * scipy_stats.norm.cdf(2 * z0 - z), 100.0 * scipy_stats.norm.cdf(2 * z0 + z)]
    )
    assert (ours.ci.low, ours.ci.high) == pytest.approx(tuple(expected), rel=1e-12)


# =========================================================================== normality


def test_shapiro_wilk_matches_scipy_and_applies_the_rule():
    # normal scores (Blom's plotting positions) look as normal as 30 points can; cubed exponential
    # scores are strongly skewed
    positions = (np.arange(1, 31) - 0.375) / 30.25
    normal = scipy_stats.norm.ppf(positions)
    skewed = scipy_stats.expon.ppf(positions) ** 3
    for sample in (normal, skewed):
        check = stats.shapiro_wilk(sample)
        expected = scipy_stats.shapiro(sample)
        assert check.statistic == pytest.approx(expected.statistic, rel=1e-12)
        assert check.p_value == pytest.approx(expected.pvalue, rel=1e-12)
        assert check.passes == (expected.pvalue >= 0.05)
    assert stats.shapiro_wilk(normal).passes
    assert not stats.shapiro_wilk(skewed).passes
    # The rule is p >= alpha: a stricter alpha passes more.
    p = stats.shapiro_wilk(skewed).p_value
    assert stats.shapiro_wilk(skewed, alpha=p / 2).passes


def test_shapiro_wilk_needs_three_observations_and_spread():
    two = stats.shapiro_wilk([1.0, 2.0, float("nan")])
    assert two.n == 2 and not two.passes and math.isnan(two.p_value) and "n = 2 < 3" in two.reason
    constant = stats.shapiro_wilk([3.0, 3.0, 3.0, 3.0])
    assert not constant.passes and "equal" in constant.reason
    with pytest.raises(ValueError, match="alpha"):
        stats.shapiro_wilk([1, 2, 3], alpha=0)


# =========================================================================== Welch from summary statistics


@pytest.mark.parametrize(
    "a, b",
    [
        ((148726, 9319, 5), (364409, 15646, 5)),  # source 000: Windows vs Linux, 4 threads
        ((146494, 2382, 5), (148726, 9319, 5)),  # macOS vs Windows, 4 threads
        ((364409, 15646, 5), (273615, 8849, 10)),  # separate client vs loopback, unequal n
        ((10.0, 1.0, 3), (10.5, 4.0, 40)),
    ],
)
def test_welch_from_stats_matches_scipy(a, b):
    result = stats.welch_from_stats(*a, *b)
    expected = scipy_stats.ttest_ind_from_stats(*a, *b, equal_var=False)
    assert result.statistic == pytest.approx(expected.statistic, rel=1e-12)
    assert result.p_value == pytest.approx(expected.pvalue, rel=1e-9, abs=1e-300)
    assert result.difference == a[0] - b[0]
    # Welch-Satterthwaite by hand
    va, vb = a[1] ** 2 / a[2], b[1] ** 2 / b[2]
    df = (va + vb) ** 2 / (va**2 / (a[2] - 1) + vb**2 / (b[2] - 1))
    assert result.df == pytest.approx(df, rel=1e-12)
    assert stats.welch_satterthwaite_df(a[1], a[2], b[1], b[2]) == pytest.approx(df, rel=1e-12)
    half = scipy_stats.t.ppf(0.975, df) * math.sqrt(va + vb)
    assert (result.ci.low, result.ci.high) == pytest.approx((result.difference - half, result.difference + half))
    # the interval excludes 0 exactly when p < 0.05
    assert (result.ci.low > 0 or result.ci.high < 0) == (result.p_value < 0.05)


def test_welch_textbook_df_and_t():
    # Source 000, Windows vs Linux at 4 threads, by hand: se = √(9319²/5 + 15646²/5) = 8144.34,
    # t = -215683 / 8144.34 = -26.483, df = 6.52.
    result = stats.welch_from_stats(148726, 9319, 5, 364409, 15646, 5)
    assert result.standard_error == pytest.approx(math.sqrt((9319**2 + 15646**2) / 5), rel=1e-12)
    assert result.statistic == pytest.approx(-26.483, abs=5e-4)
    assert result.df == pytest.approx(6.5208, abs=5e-4)


def test_welch_from_samples_matches_scipy_ttest_ind():
    rng = np.random.default_rng(9)
    a, b = rng.normal(5, 1, size=7), rng.normal(6, 3, size=11)
    result = stats.welch_test(a, b)
    expected = scipy_stats.ttest_ind(a, b, equal_var=False)
    assert result.statistic == pytest.approx(expected.statistic, rel=1e-12)
    assert result.p_value == pytest.approx(expected.pvalue, rel=1e-12)
    assert result.df == pytest.approx(expected.df, rel=1e-12)
    low, high = expected.confidence_interval(0.95)
    assert (result.ci.low, result.ci.high) == pytest.approx((low, high), rel=1e-12)


def test_welch_degenerate_inputs():
    assert math.isnan(stats.welch_from_stats(1.0, 1.0, 1, 2.0, 1.0, 5).p_value)
    zero = stats.welch_from_stats(1.0, 0.0, 5, 2.0, 0.0, 5)
    assert math.isnan(zero.p_value) and "0" in zero.note and zero.difference == -1.0
    assert math.isnan(stats.welch_from_stats(float("nan"), 1.0, 5, 2.0, 1.0, 5).statistic)
    with pytest.raises(ValueError):
        stats.welch_from_stats(1.0, -1.0, 5, 2.0, 1.0, 5)


def test_ratio_interval_from_stats_by_the_delta_method():
    estimate, ci = stats.ratio_ci_from_stats(200.0, 10.0, 5, 100.0, 5.0, 5)
    assert estimate == 2.0
    assert ci.low < 2.0 < ci.high
    assert math.log(ci.high / 2.0) == pytest.approx(-math.log(ci.low / 2.0), rel=1e-12)  # symmetric on logs
    se = math.sqrt((10 / 200) ** 2 / 5 + (5 / 100) ** 2 / 5)
    assert math.log(ci.high / 2.0) == pytest.approx(scipy_stats.t.ppf(0.975, 8) * se, rel=1e-12)  # equal cv: df 8
    # close to the bootstrap interval for large normal samples
    rng = np.random.default_rng(4)
    a, b = rng.normal(200, 10, size=400), rng.normal(100, 5, size=400)
    _, delta = stats.ratio_ci_from_stats(a.mean(), a.std(ddof=1), 400, b.mean(), b.std(ddof=1), 400)
    boot = stats.bootstrap_ratio_ci(a, b, resamples=4000, seed=1)
    assert delta.low == pytest.approx(boot.ci.low, rel=2e-3)
    assert delta.high == pytest.approx(boot.ci.high, rel=2e-3)
    assert not stats.ratio_ci_from_stats(1.0, 1.0, 1, 1.0, 1.0, 5)[1].is_defined


# =========================================================================== effect sizes


def test_hedges_g_matches_borenstein_worked_example():
    # Borenstein, Hedges, Higgins & Rothstein (2009), Introduction to Meta-Analysis, ch. 4:
    # means 103 and 100, sds 5.5 and 4.5, n = 50 each: S_within = 5.0249, d = 0.5970,
    # V_d = 0.0418, J = 0.9923, g = 0.5924, V_g = 0.0411, SE_g = 0.2028.
    normal = stats.hedges_g_from_stats(103, 5.5, 50, 100, 4.5, 50, ci_method="normal")
    assert normal.estimate == pytest.approx(0.5924, abs=5e-5)
    se = (normal.ci.high - normal.ci.low) / 2 / scipy_stats.norm.ppf(0.975)
    assert se == pytest.approx(0.2028, abs=5e-5)
    assert se**2 == pytest.approx(0.0411, abs=5e-5)
    assert stats.hedges_correction(98) == pytest.approx(0.9923, abs=5e-5)
    exact = stats.hedges_g_from_stats(103, 5.5, 50, 100, 4.5, 50)
    assert exact.estimate == normal.estimate and exact.ci.method == "noncentral-t"
    # at n = 100 the exact and approximate intervals nearly agree
    assert exact.ci.low == pytest.approx(normal.ci.low, abs=0.005)
    assert exact.ci.high == pytest.approx(normal.ci.high, abs=0.005)


def test_hedges_correction_exact_and_approximation():
    for df in (2, 5, 8, 18, 98):
        exact = math.gamma(df / 2) / (math.sqrt(df / 2) * math.gamma((df - 1) / 2))
        assert stats.hedges_correction(df) == pytest.approx(exact, rel=1e-12)
        assert stats.hedges_correction(df) == pytest.approx(1 - 3 / (4 * df - 1), abs=0.01)
    assert math.isnan(stats.hedges_correction(1))


def test_hedges_g_noncentral_interval_inverts_the_noncentral_t():
    a, b = (148726, 9319, 5), (146494, 2382, 5)
    g = stats.hedges_g_from_stats(*a, *b)
    df = 8
    pooled = math.sqrt((4 * 9319**2 + 4 * 2382**2) / df)
    d = (148726 - 146494) / pooled
    j = stats.hedges_correction(df)
    assert g.estimate == pytest.approx(j * d, rel=1e-12)
    scale = math.sqrt(1 / 5 + 1 / 5)
    t_observed = d / scale
    low_ncp, high_ncp = g.ci.low / (j * scale), g.ci.high / (j * scale)
    assert scipy_stats.nct.cdf(t_observed, df, low_ncp) == pytest.approx(0.975, abs=1e-9)
    assert scipy_stats.nct.cdf(t_observed, df, high_ncp) == pytest.approx(0.025, abs=1e-9)
    # large effects (typical of benchmarks) still get an interval
    big = stats.hedges_g_from_stats(148726, 9319, 5, 364409, 15646, 5)
    assert big.ci.method == "noncentral-t" and big.ci.low < big.estimate < big.ci.high < 0


def test_hedges_g_noncentral_bounds_are_checked_after_solving(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each bound of the worked example, solved, has its target cdf.
    exact = stats.hedges_g_from_stats(103, 5.5, 50, 100, 4.5, 50)
    assert exact.ci.method == "noncentral-t" and exact.ci.is_defined and exact.note == ""
    # A cdf that jumps across its targets instead of passing through them: Brent's method stops at the jump, where
    # the cdf is 1 or 0, not 0.975. That bound fails its check, so the interval is NaN and the note says why.
    monkeypatch.setattr(scipy_stats.nct, "cdf", lambda t, df, ncp: 1.0 if ncp < t else 0.0)
    jumped = stats.hedges_g_from_stats(103, 5.5, 50, 100, 4.5, 50)
    assert jumped.estimate == exact.estimate
    assert jumped.ci.method == "noncentral-t" and not jumped.ci.is_defined
    assert math.isnan(jumped.ci.low) and math.isnan(jumped.ci.high)
    assert "did not check" in jumped.note and "not 0.975" in jumped.note


def test_hedges_g_from_samples_and_degenerate_cases():
    rng = np.random.default_rng(2)
    a, b = rng.normal(10, 2, size=9), rng.normal(8, 2, size=7)
    from_samples = stats.hedges_g(a, b)
    from_stats = stats.hedges_g_from_stats(a.mean(), a.std(ddof=1), 9, b.mean(), b.std(ddof=1), 7)
    assert from_samples.estimate == pytest.approx(from_stats.estimate, rel=1e-12)
    assert math.isnan(stats.hedges_g([1.0], [2.0, 3.0]).estimate)
    assert math.isnan(stats.hedges_g([1.0, 1.0], [2.0, 2.0]).estimate)


EFFSIZE_TREATMENT = [10, 10, 20, 20, 20, 30, 30, 30, 40, 50]
EFFSIZE_CONTROL = [10, 20, 30, 40, 40, 50]


def test_cliffs_delta_matches_the_effsize_reference_example():
    # The R package effsize (cliff.delta) documents this example: delta = -0.25, 95 % interval
    # (-0.7265846, 0.3890062): Cliff's asymmetric interval with the unbiased variance and the
    # t quantile with n1 + n2 - 2 df (the package's defaults).
    result = stats.cliffs_delta(EFFSIZE_TREATMENT, EFFSIZE_CONTROL)
    assert result.estimate == -0.25
    assert (result.ci.low, result.ci.high) == pytest.approx((-0.7265846, 0.3890062), abs=5e-8)
    assert result.ci.method == "cliff (unbiased variance, t quantile)"


def test_cliffs_delta_consistent_variance_from_the_published_terms():
    # effsize's source gives the three terms of the consistent variance for this example:
    # S_i. = 0.2669753, S_.j = 0.447, S_ij = 1.0055556 (Cliff 1996; Long, Feng & Cliff 2003).
    n1, n2, d = 10, 6, -0.25
    s2 = ((n2 - 1) * 0.2669753 + (n1 - 1) * 0.447 + 1.0055556) / (n1 * n2)
    z = scipy_stats.norm.ppf(0.975)
    spread = z * math.sqrt(s2) * math.sqrt((1 - d**2) ** 2 + z**2 * s2)
    expected = ((d - d**3 - spread) / (1 - d**2 + z**2 * s2), (d - d**3 + spread) / (1 - d**2 + z**2 * s2))
    result = stats.cliffs_delta(EFFSIZE_TREATMENT, EFFSIZE_CONTROL, variance="consistent", quantile="normal")
    assert (result.ci.low, result.ci.high) == pytest.approx(expected, abs=1e-6)


def test_cliffs_delta_is_the_mann_whitney_u_rescaled():
    rng = np.random.default_rng(6)
    a, b = rng.normal(0, 1, size=9), rng.normal(0.7, 1, size=12)
    u = scipy_stats.mannwhitneyu(a, b).statistic
    assert stats.cliffs_delta(a, b).estimate == pytest.approx(2 * u / (9 * 12) - 1, rel=1e-12)
    swapped = stats.cliffs_delta(b, a)
    assert swapped.estimate == pytest.approx(-stats.cliffs_delta(a, b).estimate)


def test_cliffs_delta_at_complete_separation_uses_newcombes_interval():
    a, b = np.arange(10.0, 20.0), np.arange(0.0, 10.0)
    result = stats.cliffs_delta(a, b)
    assert result.estimate == 1.0
    assert result.ci.method == "newcombe score (method 5)" and "separation" in result.note
    assert result.ci.high == 1.0 and 0.0 < result.ci.low < 1.0
    # the lower end solves Newcombe's equation (θ̂ - θ)² = z² V(θ) with θ̂ = 1
    theta = (result.ci.low + 1) / 2
    m = n = 10
    k = (m + n) / 2 - 1
    variance = theta * (1 - theta) * (1 + k * ((1 - theta) / (2 - theta) + theta / (1 + theta))) / (m * n)
    assert (1 - theta) ** 2 == pytest.approx(scipy_stats.norm.ppf(0.975) ** 2 * variance, rel=1e-9)
    mirrored = stats.cliffs_delta(b, a)
    assert (mirrored.ci.low, mirrored.ci.high) == pytest.approx((-result.ci.high, -result.ci.low))


@pytest.mark.parametrize("ci_method", ["cliff", "newcombe"])
def test_cliffs_delta_interval_coverage_by_simulation(ci_method):
    # Normal groups one sd apart: delta = 2Φ(1/√2) - 1 = 0.5205. Coverage of 300 simulated
    # 95 % intervals with n = 8 and 10 must be near 95 % (binomial sd 1.3 %).
    shift = 1.0
    true_delta = 2 * scipy_stats.norm.cdf(shift / math.sqrt(2)) - 1
    rng = np.random.default_rng(2015)
    covered = 0
    for _ in range(300):
        a, b = rng.normal(shift, 1, size=8), rng.normal(0, 1, size=10)
        ci = stats.cliffs_delta(a, b, ci_method=ci_method).ci
        covered += ci.low <= true_delta <= ci.high
    assert 0.90 <= covered / 300 <= 0.995


def test_cliffs_delta_degenerate_groups():
    one = stats.cliffs_delta([1.0], [0.0, 2.0])
    assert one.estimate == 0.0 and not one.ci.is_defined
    assert math.isnan(stats.cliffs_delta([], [1.0]).estimate)


# =========================================================================== compare


def test_compare_uses_welch_when_both_groups_pass_shapiro_wilk():
    rng = np.random.default_rng(21)
    a, b = rng.normal(100_000, 2_000, size=8), rng.normal(96_000, 3_000, size=8)
    result = stats.compare(a, b, seed=1, resamples=500)
    assert result.normality_a.passes and result.normality_b.passes
    assert result.test == "welch_t" and "Welch" in result.reason
    expected = scipy_stats.ttest_ind(a, b, equal_var=False)
    assert result.statistic == pytest.approx(expected.statistic, rel=1e-12)
    assert result.p_value == pytest.approx(expected.pvalue, rel=1e-12)
    assert result.center == "mean" and result.difference == pytest.approx(a.mean() - b.mean())
    assert result.effect_size.name == "hedges_g" and result.effect_size.ci.method == "noncentral-t"
    assert result.ratio == pytest.approx(a.mean() / b.mean())
    assert result.ratio_ci.low < result.ratio < result.ratio_ci.high
    assert result.level == 0.95 and result.difference_ci.level == 0.95
    assert (result.difference_ci.low > 0 or result.difference_ci.high < 0) == result.significant


def test_compare_uses_mann_whitney_when_a_group_fails_and_says_why():
    a = [100.0, 101.0, 102.0, 103.0, 180.0]  # one wild trial: Shapiro-Wilk fails
    b = [90.0, 91.0, 92.0, 93.0, 94.0]
    result = stats.compare(a, b, seed=3, resamples=500)
    assert not result.normality_a.passes and result.normality_b.passes
    assert result.test == "mann_whitney_u"
    assert result.reason.startswith("group a: Shapiro-Wilk") and "Mann-Whitney" in result.reason
    expected = scipy_stats.mannwhitneyu(a, b, alternative="two-sided", method="exact")
    assert result.statistic == expected.statistic == 25.0
    assert result.p_value == pytest.approx(expected.pvalue) == pytest.approx(2 / math.comb(10, 5))
    assert result.p_method == "exact U distribution" and math.isnan(result.df)
    assert result.center == "median" and (result.estimate_a, result.estimate_b) == (102.0, 92.0)
    assert result.difference == 10.0 and result.difference_ci.method == "bootstrap percentile"
    assert result.effect_size.name == "cliffs_delta" and result.effect_size.estimate == 1.0
    assert result.effect_size.ci.high == 1.0 and result.effect_size.ci.low > 0


def test_compare_with_ties_uses_an_exact_permutation_test():
    a, b = [1.0, 1.0, 1.0, 2.0, 9.0], [3.0, 3.0, 4.0, 5.0, 6.0]
    result = stats.compare(a, b, seed=1, resamples=1000)
    assert result.test == "mann_whitney_u" and not result.normality_a.passes
    assert "permutation (exact enumeration" in result.p_method
    # p by enumerating all C(10, 5) = 252 splits of the pooled trials (ties count half in U)
    pooled = np.array(a + b)

    def u_of(first):
        x, y = pooled[list(first)], np.delete(pooled, list(first))
        return sum(float(xi > yj) + 0.5 * float(xi == yj) for xi in x for yj in y)

    observed = u_of(range(5))
    assert result.statistic == observed == 5.0
    us = np.array([u_of(split) for split in itertools.combinations(range(10), 5)])
    expected = min(1.0, 2 * min(np.mean(us <= observed), np.mean(us >= observed)))
    assert result.p_value == pytest.approx(expected, rel=1e-12)


def test_compare_small_groups():
    none = stats.compare([1.0], [2.0, 3.0])
    assert none.test == "none" and math.isnan(none.p_value) and not none.significant
    assert "at least 2" in none.reason
    two = stats.compare([1.0, 2.0], [3.0, 4.0], resamples=200)
    assert two.test == "mann_whitney_u" and "n = 2 < 3" in two.reason
    assert two.p_value == pytest.approx(2 / 6)
    assert "no outcome could be significant" in two.as_dict()["notes"]


def test_compare_is_reproducible_and_flat():
    rng = np.random.default_rng(8)
    a, b = rng.normal(10, 1, size=6), rng.exponential(1, size=6) + 9
    first, again = stats.compare(a, b, seed=7, resamples=300), stats.compare(a, b, seed=7, resamples=300)
    assert first == again
    row = first.as_dict("x_")
    assert row["x_test"] == first.test and row["x_p_value"] == first.p_value
    assert row["x_effect_size_ci_low"] == first.effect_size.ci.low
    assert all(isinstance(k, str) and k.startswith("x_") for k in row)
    assert stats.compare(a, b, alpha=0.01, resamples=300).level == 0.99
    with pytest.raises(ValueError, match="alpha"):
        stats.compare(a, b, alpha=5)


# =========================================================================== multiple comparisons


def test_holm_and_bh_textbook_values():
    holm = stats.holm([0.01, 0.04, 0.03, 0.005])
    # sorted 0.005, 0.01, 0.03, 0.04 -> 4·0.005, 3·0.01, 2·0.03, max(0.06, 1·0.04)
    assert holm.adjusted == pytest.approx((0.03, 0.06, 0.06, 0.02))
    assert holm.reject == (True, False, False, True) and holm.m == 4
    bh = stats.benjamini_hochberg([0.01, 0.02, 0.03, 0.04, 0.05])
    assert bh.adjusted == pytest.approx((0.05,) * 5) and all(bh.reject)


@pytest.mark.parametrize("method, theirs", [("holm", "holm"), ("bh", "fdr_bh")])
def test_adjustments_match_statsmodels(method, theirs, monkeypatch):
    # statsmodels' Holm ends each call with a full gc.collect(), which takes seconds in a test session's heap
    # and changes nothing it returns.
    monkeypatch.setattr(gc, "collect", lambda generation=2: 0)
    rng = np.random.default_rng(12)
    families = [rng.uniform(0, 0.2, size=m) for m in (1, 2, 5, 12, 40)]
    families.append(np.array([0.01, 0.01, 0.02, 0.02, 0.5, 0.04, 0.04]))  # ties
    for p in families:
        for alpha in (0.05, 0.1):
            ours = stats.adjust_pvalues(p, method, alpha)
            reject, adjusted, _, _ = multipletests(p, alpha=alpha, method=theirs)
            assert ours.adjusted == pytest.approx(tuple(adjusted), rel=1e-12)
            assert ours.reject == tuple(bool(r) for r in reject)


def test_adjustment_leaves_undefined_p_values_out_of_the_family():
    result = stats.holm([0.01, float("nan"), 0.04, None])
    assert result.m == 2
    assert result.adjusted[0] == pytest.approx(0.02) and result.adjusted[2] == pytest.approx(0.04)
    assert math.isnan(result.adjusted[1]) and math.isnan(result.adjusted[3])
    assert result.reject == (True, False, True, False)
    assert stats.holm([]).m == 0
    with pytest.raises(ValueError, match="p-values"):
        stats.holm([1.5])
    with pytest.raises(ValueError, match="method"):
        stats.adjust_pvalues([0.1], "bonferroni-ish")


# =========================================================================== rates


def test_harmonic_mean_matches_scipy_and_is_total_over_total_for_equal_work():
    rates = [100.0, 200.0, 400.0]
    assert stats.harmonic_mean(rates) == pytest.approx(scipy_stats.hmean(rates), rel=1e-15)
    # same work W = 1200 requests per trial: times 12, 6, 3 s -> 3600 / 21 s
    work, times = [1200.0] * 3, [1200.0 / r for r in rates]
    assert stats.total_rate(work, times) == pytest.approx(stats.harmonic_mean(rates), rel=1e-15)
    assert stats.harmonic_mean(rates) < stats.sample_mean(rates)


def test_total_rate_equals_the_arithmetic_mean_for_equal_durations():
    # wrk's case: every trial runs 5 s; the pooled rate is then the arithmetic mean of the rates.
    rates = np.array([100.0, 200.0, 400.0])
    assert stats.total_rate(rates * 5.0, [5.0, 5.0, 5.0]) == pytest.approx(rates.mean(), rel=1e-15)
    assert stats.total_rate([10.0, float("nan"), 30.0], [1.0, 1.0, None]) == 10.0  # incomplete trials left out
    assert math.isnan(stats.total_rate([], []))
    with pytest.raises(ValueError, match="same length"):
        stats.total_rate([1.0], [1.0, 2.0])


def test_harmonic_mean_edge_cases_and_interval():
    assert math.isnan(stats.harmonic_mean([]))
    assert stats.harmonic_mean([0.0, 10.0]) == 0.0
    assert stats.harmonic_mean([float("nan"), 10.0]) == 10.0
    with pytest.raises(ValueError, match=">= 0"):
        stats.harmonic_mean([-1.0, 2.0])
    rates = [980.0, 1010.0, 1000.0, 995.0, 1020.0]
    ci = stats.harmonic_mean_ci(rates)
    reciprocal = stats.mean_ci_t([1 / r for r in rates])
    assert (ci.low, ci.high) == pytest.approx((1 / reciprocal.high, 1 / reciprocal.low), rel=1e-12)
    assert ci.low < stats.harmonic_mean(rates) < ci.high
    assert not stats.harmonic_mean_ci([5.0]).is_defined
    assert not stats.harmonic_mean_ci([0.0, 5.0]).is_defined


# =========================================================================== outliers


def test_tukey_fences_by_hand():
    values = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 40.0, 100.0]
    # type-7 quartiles: q1 = x(1 + 0.25·9) = 12.25, q3 = x(1 + 0.75·9) = 16.75, IQR = 4.5
    report = stats.tukey_outliers(values)
    assert (report.q1, report.q3, report.iqr) == pytest.approx((12.25, 16.75, 4.5))
    assert (report.lower_fence, report.upper_fence) == pytest.approx((5.5, 23.5))
    assert (report.far_lower_fence, report.far_upper_fence) == pytest.approx((-1.25, 30.25))
    assert report.indices == (8, 9) and report.values == (40.0, 100.0) and report.count == 2
    assert report.far_indices == (8, 9) and report.far_count == 2


def test_tukey_indices_are_positions_in_the_input_and_nothing_is_dropped():
    values = [float("nan"), 10.0, 10.5, 9.5, 10.2, None, 9.8, 11.8]
    report = stats.tukey_outliers(values)
    assert report.n == 6
    assert report.indices == (7,) and report.values == (11.8,)
    # mild, not far out: 11.8 is beyond 1.5 IQR but within 3 IQR
    assert report.upper_fence < 11.8 <= report.far_upper_fence and report.far_count == 0
    assert stats.summarize(values).n == 6  # the summary still uses every observation
    assert stats.tukey_outliers([1.0, 2.0, 1000.0]).count == 0  # n <= 3: nothing can lie outside
    assert stats.tukey_outliers([]).n == 0
    with pytest.raises(ValueError):
        stats.tukey_outliers([1.0], k=3.0, far_k=1.5)
