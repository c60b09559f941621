"""The latency knee against the floor of the same run (archbench.studies.latency.knee): the rank test, a
floor well under the threshold with a clear knee, a floor above it, and noisy trials that must not make a knee."""

from __future__ import annotations

import math

import pytest

from archbench.render.study import ReportOptions
from archbench.studies.latency import knee

INF = math.inf
MS = 1e-3


def ms(*values: float) -> list[float]:
    return [v * MS for v in values]


def decide(rates: dict[float, tuple[float, list[float]]], **criteria: float) -> knee.KneeDecision:
    return knee.decide_knee(rates, knee.Criteria(**criteria))


def verdicts(decision: knee.KneeDecision) -> list[str]:
    return [test.verdict for test in decision.rates]


def test_the_threshold_is_the_report_option_and_the_floor_limit_half_of_it():
    assert knee.Criteria().p99_s == ReportOptions.latency_knee_p99_ms / 1000 == knee.KNEE_P99_S
    assert knee.Criteria().floor_limit_s == pytest.approx(0.0005)
    assert knee.Criteria(p99_s=0.004).floor_limit_s == pytest.approx(0.002)


def test_rank_test_is_exact_and_ranks_a_trial_that_fell_behind_highest():
    # Complete separation: one split in C(n + m, n) is as extreme.
    assert knee.rank_test([4, 5, 6], [1, 2, 3]) == pytest.approx((1 / 20, 1.0))
    assert knee.rank_test([1, 2, 3], [4, 5, 6]) == pytest.approx((1.0, 1 / 20))
    assert knee.rank_test([4, 5, 6, INF], [1, 2, 3, 3.5])[0] == pytest.approx(1 / 70)
    # One overlap among 4 against 4: two of the 70 splits are at least as extreme.
    assert knee.rank_test([3, 5, 6, 7], [1, 2, 4, 2.5])[0] == pytest.approx(2 / 70)
    assert knee.smallest_p(3, 3) == pytest.approx(0.05) and knee.smallest_p(2, 2) == pytest.approx(1 / 6)


def test_floor_well_under_the_threshold_with_a_clear_knee():
    decision = decide(
        {
            10_000: (0.5, ms(0.20, 0.22, 0.21, 0.25)),
            14_000: (0.7, ms(0.30, 0.28, 0.33, 0.31)),  # within twice the floor: held
            18_000: (0.9, ms(2.0, 3.0, 1.5, INF)),  # one trial fell behind: counted as above any multiple
        }
    )
    assert decision.floor_state == knee.FLOOR_WELL_UNDER_STATE and decision.state == knee.KNEE
    assert decision.floor.p99_median_s == pytest.approx(0.000215)
    assert verdicts(decision) == [knee.RATE_FLOOR, knee.RATE_HELD, knee.RATE_RISEN]
    assert decision.knee.offered_rate == 18_000 and decision.below.offered_rate == 14_000
    assert decision.knee.p_risen == pytest.approx(1 / 70)


def test_the_knee_is_the_lowest_of_the_rates_that_all_rose_from_the_top():
    floor = ms(0.20, 0.22, 0.21, 0.25)
    risen = ms(1.0, 1.1, 1.2, 1.3)
    decision = decide({1: (0.5, floor), 2: (0.6, risen), 3: (0.7, ms(0.3, 2.0, 0.35, 1.5)), 4: (0.8, risen)})
    # 0.6 rose, but 0.7 did not decide: the run from the top stops there, and the knee is 0.8, above 0.7.
    assert verdicts(decision) == [knee.RATE_FLOOR, knee.RATE_RISEN, knee.RATE_UNDECIDED, knee.RATE_RISEN]
    assert decision.knee.offered_rate == 4 and decision.below.offered_rate == 3
    every = decide({1: (0.5, floor), 2: (0.6, risen), 3: (0.7, risen)})
    assert every.knee.offered_rate == 2 and every.below.offered_rate == 1  # right above the floor


def test_floor_above_the_threshold_measures_no_knee():
    decision = decide(
        {
            10_000: (0.5, ms(1.4, 1.3, 1.6, 1.5)),
            14_000: (0.7, ms(9.0, 10.0, 11.0, 12.0)),
            18_000: (0.9, ms(400, 500, INF, INF)),
        }
    )
    assert decision.floor_state == knee.FLOOR_DOMINATES and decision.state == knee.NOT_MEASURED
    assert decision.knee is None and verdicts(decision)[1:] == [knee.RATE_UNTESTED] * 2
    # Near the threshold is not well under it: a 0.6-ms floor leaves the server 0.4 ms.
    near = decide({1: (0.5, ms(0.6, 0.6, 0.6, 0.6)), 2: (0.9, ms(5, 5, 5, 5))})
    assert near.floor_state == knee.FLOOR_DOMINATES and near.state == knee.NOT_MEASURED
    # A floor whose trials mostly fell behind is infinite, not well under anything.
    behind = decide({1: (0.5, [INF, INF, 0.0002, INF]), 2: (0.9, ms(5, 5, 5, 5))})
    assert behind.floor.p99_median_s == INF and behind.floor_state == knee.FLOOR_DOMINATES
    # The threshold is a parameter: the same floor is well under 4 ms.
    assert decide({1: (0.5, ms(1.4, 1.3, 1.6, 1.5)), 2: (0.9, ms(9, 10, 11, 12))}, p99_s=0.004).state == knee.KNEE


def test_noisy_trials_make_no_knee():
    """A p99 that jumps 18x from one trial to the next at the same rate: single trials above twice the floor at
    every rate, but no rate whose trials lie above it as a set."""
    decision = decide(
        {
            10_000: (0.5, ms(0.20, 0.25, 0.22, 0.21)),
            14_000: (0.7, ms(0.30, 4.5, 0.25, 0.35)),
            18_000: (0.9, ms(0.30, 5.0, 0.28, 3.9)),
        }
    )
    assert decision.floor_state == knee.FLOOR_WELL_UNDER_STATE
    assert decision.state == knee.UNDECIDED and decision.knee is None
    assert verdicts(decision) == [knee.RATE_FLOOR, knee.RATE_UNDECIDED, knee.RATE_UNDECIDED]
    # A noisy floor (one stalled trial) does not make a knee either.
    noisy_floor = decide({1: (0.5, ms(0.2, 3.0, 0.22, 0.21)), 2: (0.9, ms(0.9, 1.0, 1.1, 0.95))})
    assert noisy_floor.state == knee.UNDECIDED


def test_highest_rate_held_means_no_knee_in_the_range():
    decision = decide({1: (0.5, ms(0.20, 0.22, 0.21, 0.25)), 2: (0.9, ms(0.25, 0.30, 0.27, 0.26))})
    assert decision.state == knee.NO_KNEE_IN_RANGE and decision.knee is None
    assert decision.highest.offered_rate == 2


def test_too_few_trials_decide_nothing_however_clear():
    decision = decide({1: (0.5, ms(0.2, 0.21, 0.2)), 2: (0.7, ms(0.3, 0.31)), 3: (0.9, ms(50, 60))})
    assert decision.state == knee.TOO_FEW and decision.knee is None  # 2 against 3: one split in 10
    assert verdicts(decision)[1:] == [knee.RATE_UNDECIDED, knee.RATE_UNDECIDED]
    assert decide({1: (0.5, ms(0.2, 0.21, 0.2)), 2: (0.9, ms(50, 60, 70))}).state == knee.KNEE  # 3 against 3
    # Two trials at the floor do not measure it, however low: a single trial's p99 would set its median.
    two = decide({1: (0.5, ms(0.2, 0.21)), 2: (0.9, ms(50, 60, 70, 80))})
    assert two.floor_state == knee.FLOOR_UNMEASURED and two.state == knee.NOT_MEASURED


def test_a_floor_without_a_counted_trial_is_unmeasured():
    decision = decide({1: (0.5, []), 2: (0.9, ms(5, 5, 5, 5))})
    assert decision.floor_state == knee.FLOOR_UNMEASURED and decision.state == knee.NOT_MEASURED
    assert decide({}).floor_state == knee.FLOOR_UNMEASURED
    without = decide({1: (0.5, ms(0.2, 0.2, 0.2, 0.2)), 2: (0.9, [])})
    assert verdicts(without) == [knee.RATE_FLOOR, knee.RATE_NO_TRIAL] and without.state == knee.TOO_FEW
