"""archbench.stats against hand-computed textbook values and scipy."""
import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

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
    assert not one.mean_ci.is_defined

    empty = stats.summarize([])
    assert empty.n == 0
    assert all(math.isnan(v) for v in (empty.mean, empty.sd, empty.median, empty.min, empty.max))


def test_missing_values_are_not_observations():
    summary = stats.summarize([1.0, float("nan"), 3.0, None])
    assert summary.n == 2
    assert summary.mean == 2.0


def test_constant_sample_has_a_zero_width_interval():
    interval = stats.mean_ci_t([5.0, 5.0, 5.0])
    assert (interval.low, interval.high) == (5.0, 5.0)


def test_summary_columns_and_values():
    summary = stats.summarize([10.0, 20.0, 30.0, 40.0])
    row = summary.as_dict()
    assert list(row) == ["n", "mean", "sd", "median", "min", "max", "ci95_low", "ci95_high"]
    assert row["n"] == 4
    assert row["median"] == 25.0
    assert row["sd"] == pytest.approx(12.909944487, rel=1e-9)
    assert row["ci95_low"] == pytest.approx(25 - 3.182446305 * 12.909944487 / 2, rel=1e-9)


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
