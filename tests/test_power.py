"""archbench.stats.power: smallest detectable differences, checked against statsmodels' power functions."""

from __future__ import annotations

import math

import pytest
from statsmodels.stats.power import TTestIndPower, TTestPower

from archbench.stats.power import holm_alpha, paired_detectable_effect, paired_detectable_pct, welch_detectable_pct


def test_holm_alpha_is_the_strictest_step() -> None:
    assert holm_alpha(0.05, 10) == pytest.approx(0.005)
    assert holm_alpha(0.05, 0) == pytest.approx(0.05)
    with pytest.raises(ValueError):
        holm_alpha(1.5, 3)


def test_paired_detectable_effect_has_the_requested_power() -> None:
    effect = paired_detectable_effect(6, 0.05, 0.8)
    # Plugging the effect back into the power function gives 80 %.
    achieved = TTestPower().power(effect_size=effect, nobs=6, alpha=0.05, alternative="two-sided")
    assert achieved == pytest.approx(0.8, abs=1e-6)
    assert paired_detectable_effect(12, 0.05) < effect  # more rounds detect less
    assert paired_detectable_effect(6, 0.005) > effect  # a stricter level needs more


def test_paired_detectable_pct_by_hand() -> None:
    sd_log = 0.02
    effect = paired_detectable_effect(8, 0.01)
    assert paired_detectable_pct(sd_log, 8, 0.01) == pytest.approx(100 * (math.exp(effect * sd_log) - 1))
    assert paired_detectable_pct(0.0, 8) == 0.0


@pytest.mark.parametrize(("sd_log", "n"), [(0.05, 1), (float("nan"), 5), (-0.1, 5)])
def test_paired_detectable_pct_undefined(sd_log: float, n: int) -> None:
    assert math.isnan(paired_detectable_pct(sd_log, n))


def test_welch_detectable_pct_uses_pooled_coefficients_of_variation() -> None:
    # cv 0.1 and 0.05 at n = 4 and 6: pooled cv by hand, effect from statsmodels.
    pooled = math.sqrt((3 * 0.1**2 + 5 * 0.05**2) / 8)
    effect = TTestIndPower().solve_power(nobs1=4, ratio=1.5, alpha=0.05, power=0.8, alternative="two-sided")
    expected = 100 * math.expm1(effect * pooled)
    assert welch_detectable_pct(1000.0, 100.0, 4, 200.0, 10.0, 6) == pytest.approx(expected, rel=1e-6)
    # Scaling one group leaves a relative figure unchanged.
    assert welch_detectable_pct(9000.0, 900.0, 4, 200.0, 10.0, 6) == pytest.approx(expected, rel=1e-6)


def test_welch_detectable_pct_undefined_for_small_groups() -> None:
    assert math.isnan(welch_detectable_pct(1.0, 0.1, 1, 1.0, 0.1, 5))
    assert math.isnan(welch_detectable_pct(0.0, 0.1, 4, 1.0, 0.1, 5))
