"""archbench.stats.power: minimum detectable differences, each checked against the power it was solved for.

The power function is checked on its own first (at effect 0 it is alpha; where scipy's noncentral t is defined the
two agree; a simulation of the t test agrees with both), then every solved effect against it and against
statsmodels' power function where that one is defined."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats
from statsmodels.stats.power import TTestIndPower, TTestPower

from archbench.stats.power import (
    COMPUTED,
    NOT_COMPUTABLE,
    POWER_TOLERANCE,
    UNDEFINED,
    holm_alpha,
    paired_detectable_effect,
    paired_detectable_effect_status,
    paired_detectable_pct,
    paired_detectable_status,
    paired_power,
    t_test_power,
    two_sample_detectable_effect_status,
    two_sample_power,
    verified_effect,
    welch_detectable_pct,
    welch_detectable_status,
)

STUDY_ALPHA = 0.05 / 58  # Holm's strictest level over a family of 58


def simulated_power(effect: float, n: int, alpha: float, draws: int = 400_000, seed: int = 11) -> float:
    """Share of simulated one-sample t tests (n normal values of mean `effect`, sd 1) that reject at alpha."""
    values = np.random.default_rng(seed).normal(effect, 1.0, size=(draws, n))
    t = values.mean(axis=1) / (values.std(axis=1, ddof=1) / math.sqrt(n))
    return float(np.mean(np.abs(t) > stats.t.isf(alpha / 2, n - 1)))


def noncentral_t_power(noncentrality: float, df: int, alpha: float) -> float:
    """The same power from scipy's noncentral t cdf (NaN over parts of the range where it fails)."""
    critical = stats.t.isf(alpha / 2, df)
    return float(1 - special.nctdtr(df, noncentrality, critical) + special.nctdtr(df, noncentrality, -critical))


def test_holm_alpha_is_the_strictest_step() -> None:
    assert holm_alpha(0.05, 10) == pytest.approx(0.005)
    assert holm_alpha(0.05, 0) == pytest.approx(0.05)
    with pytest.raises(ValueError):
        holm_alpha(1.5, 3)


@pytest.mark.parametrize("df", [1, 2, 4, 19, 199])
@pytest.mark.parametrize("alpha", [0.05, STUDY_ALPHA, 1e-8])
def test_power_at_no_effect_is_the_level(df: int, alpha: float) -> None:
    assert t_test_power(0.0, df, alpha) == pytest.approx(alpha, rel=1e-6)


def test_power_agrees_with_the_noncentral_t_where_scipy_defines_it() -> None:
    compared = 0
    for df in (1, 2, 4, 9, 19, 199):
        for alpha in (0.05, STUDY_ALPHA, 5e-5):
            for noncentrality in (0.1, 1.0, 3.0, 8.0, 20.0, 60.0):
                reference = noncentral_t_power(noncentrality, df, alpha)
                if math.isfinite(reference):
                    compared += 1
                    assert t_test_power(noncentrality, df, alpha) == pytest.approx(reference, abs=1e-9)
    assert compared > 60  # most of the grid has a reference to compare with


@pytest.mark.parametrize(("effect", "n", "alpha"), [(24.94, 3, STUDY_ALPHA), (11.55, 2, 0.05), (1.2, 10, 0.01)])
def test_power_agrees_with_a_simulated_t_test(effect: float, n: int, alpha: float) -> None:
    # 400,000 draws: the simulated share's standard error is at most 0.0008.
    assert paired_power(effect, n, alpha) == pytest.approx(simulated_power(effect, n, alpha), abs=0.004)


def test_three_rounds_at_the_studys_level_need_an_effect_of_about_25() -> None:
    # statsmodels' solve_power returns d = 5.5 here, whose power is 7.6 %; the checked answer is about 24.9.
    effect, status = paired_detectable_effect_status(3, STUDY_ALPHA)
    assert status == COMPUTED
    assert effect == pytest.approx(24.94, abs=0.01)
    assert paired_power(effect, 3, STUDY_ALPHA) == pytest.approx(0.8, abs=POWER_TOLERANCE)
    assert TTestPower().power(effect_size=effect, nobs=3, alpha=STUDY_ALPHA) == pytest.approx(0.8, abs=1e-6)
    assert simulated_power(effect, 3, STUDY_ALPHA) == pytest.approx(0.8, abs=0.004)
    assert paired_power(5.5, 3, STUDY_ALPHA) == pytest.approx(0.076, abs=0.001)  # the unchecked answer's power


def test_a_wrong_first_guess_is_solved_again_and_checked() -> None:
    def power_of(d: float) -> float:
        return paired_power(d, 3, STUDY_ALPHA)

    effect, status = verified_effect(power_of, 0.8, first_guess=5.5)
    assert status == COMPUTED and effect == pytest.approx(24.94, abs=0.01)
    right = paired_detectable_effect(3, STUDY_ALPHA)
    assert verified_effect(power_of, 0.8, first_guess=right) == (right, COMPUTED)  # a right guess is kept


@pytest.mark.parametrize("power_of", [lambda d: 0.5, lambda d: math.nan, lambda d: 0.79])
def test_an_effect_that_fails_its_check_is_not_computable(power_of) -> None:
    effect, status = verified_effect(power_of, 0.8, first_guess=3.0)
    assert math.isnan(effect) and status == NOT_COMPUTABLE


@pytest.mark.parametrize(
    ("n", "alpha"), [(2, 0.05), (2, STUDY_ALPHA), (3, 0.05), (4, 0.05 / 27), (5, STUDY_ALPHA), (8, 0.01), (40, 1e-4)]
)
def test_paired_detectable_effect_has_the_requested_power(n: int, alpha: float) -> None:
    effect, status = paired_detectable_effect_status(n, alpha, 0.8)
    assert status == COMPUTED
    assert paired_power(effect, n, alpha) == pytest.approx(0.8, abs=POWER_TOLERANCE)
    statsmodels_power = TTestPower().power(effect_size=effect, nobs=n, alpha=alpha, alternative="two-sided")
    if math.isfinite(statsmodels_power):  # an independent implementation, where scipy's noncentral t works
        assert statsmodels_power == pytest.approx(0.8, abs=1e-6)
    assert paired_detectable_effect(n + 4, alpha) < effect  # more rounds detect less
    assert paired_detectable_effect(n, alpha / 10) > effect  # a stricter level needs more


@pytest.mark.parametrize(
    ("n_a", "n_b", "alpha"), [(3, 3, STUDY_ALPHA), (2, 5, 0.05), (4, 6, 0.05 / 27), (16, 16, 0.002)]
)
def test_two_sample_detectable_effect_has_the_requested_power(n_a: int, n_b: int, alpha: float) -> None:
    effect, status = two_sample_detectable_effect_status(n_a, n_b, alpha, 0.8)
    assert status == COMPUTED
    assert two_sample_power(effect, n_a, n_b, alpha) == pytest.approx(0.8, abs=POWER_TOLERANCE)
    statsmodels_power = TTestIndPower().power(effect_size=effect, nobs1=n_a, ratio=n_b / n_a, alpha=alpha)
    if math.isfinite(statsmodels_power):
        assert statsmodels_power == pytest.approx(0.8, abs=1e-6)


def test_paired_detectable_pct_by_hand() -> None:
    sd_log = 0.02
    effect = paired_detectable_effect(8, 0.01)
    assert paired_detectable_pct(sd_log, 8, 0.01) == pytest.approx(100 * (math.exp(effect * sd_log) - 1))
    assert paired_detectable_pct(0.0, 8) == 0.0
    # Three rounds at the study's level: a spread of 1 % in the log ratios hides differences up to 28 %.
    assert paired_detectable_pct(0.01, 3, STUDY_ALPHA) == pytest.approx(100 * math.expm1(24.945 * 0.01), abs=0.01)


@pytest.mark.parametrize(("sd_log", "n"), [(0.05, 1), (float("nan"), 5), (-0.1, 5)])
def test_paired_detectable_pct_undefined(sd_log: float, n: int) -> None:
    assert math.isnan(paired_detectable_pct(sd_log, n))
    assert paired_detectable_status(sd_log, n)[1] == UNDEFINED


def test_welch_detectable_pct_uses_pooled_coefficients_of_variation() -> None:
    # cv 0.1 and 0.05 at n = 4 and 6: pooled cv by hand, the effect whose power is 80 %.
    pooled = math.sqrt((3 * 0.1**2 + 5 * 0.05**2) / 8)
    effect, _ = two_sample_detectable_effect_status(4, 6, 0.05, 0.8)
    assert two_sample_power(effect, 4, 6, 0.05) == pytest.approx(0.8, abs=POWER_TOLERANCE)
    expected = 100 * math.expm1(effect * pooled)
    assert welch_detectable_pct(1000.0, 100.0, 4, 200.0, 10.0, 6) == pytest.approx(expected, rel=1e-9)
    # Scaling one group leaves a relative figure unchanged.
    assert welch_detectable_pct(9000.0, 900.0, 4, 200.0, 10.0, 6) == pytest.approx(expected, rel=1e-9)


def test_welch_detectable_at_the_studys_level_is_checked() -> None:
    value, status = welch_detectable_status(100.0, 1.0, 3, 100.0, 1.0, 3, STUDY_ALPHA)
    effect, _ = two_sample_detectable_effect_status(3, 3, STUDY_ALPHA)
    assert status == COMPUTED and value == pytest.approx(100 * math.expm1(effect * 0.01))
    assert two_sample_power(effect, 3, 3, STUDY_ALPHA) == pytest.approx(0.8, abs=POWER_TOLERANCE)


def test_welch_detectable_pct_undefined_for_small_groups() -> None:
    assert math.isnan(welch_detectable_pct(1.0, 0.1, 1, 1.0, 0.1, 5))
    assert math.isnan(welch_detectable_pct(0.0, 0.1, 4, 1.0, 0.1, 5))
    assert welch_detectable_status(1.0, 0.1, 1, 1.0, 0.1, 5)[1] == UNDEFINED


def test_power_outside_alpha_and_one_is_refused() -> None:
    with pytest.raises(ValueError, match="power"):
        paired_detectable_effect(5, 0.05, 0.01)
