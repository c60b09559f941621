"""The latency knee, measured against the p99 floor of the same run.

* A design's *floor* is the p99 of its trials at its lowest offered rate, in the same campaign: the same server,
  work per request, connections and client, its trials interleaved in time with the other rates' (every round of
  a campaign is shuffled), so that whatever the client, the loopback and the machine add at light load is in it.
  It holds the server's own light-load latency too, so it is an upper bound on what the client and the machine
  add. A no-work (pong) run would separate the two, but it is another server without the work, at rates of its
  own, and its trials would come out of the short study's budget.
* The floor is *well under* the latency threshold when the median p99 of the floor's trials is at most
  `floor_well_under` of it. Only then is a knee a statement about the server; otherwise the client and the machine
  dominate and the design's knee is not measured. With fewer than `min_floor_trials` counted trials the floor is
  not measured: a single trial's p99 does not set it.
* A trial's p99, for the knee: its p99 when it kept up (see `Criteria.kept_up_fraction`) without errors; +inf when
  it fell behind (its latencies describe a queue that grew all run long); not counted when client-bound, disturbed
  or with too few samples for a p99 (archbench.analyze.open_loop_trials).
* An offered rate has *risen* when its trials' p99s lie above `rise_multiple` times the floor trials' p99s: the
  one-sided exact Mann-Whitney (permutation) test of the two samples, p <= alpha. It has *held* under the opposite
  one-sided test, and is *undecided* otherwise. A single trial's p99, or a p99 that differs from trial to trial by
  more than the multiple, decides nothing.
* The *knee* is found from the top (fixed-sequence testing, so that a knee where p99 never rose is found with
  probability at most alpha): the highest offered rate, then each rate below it while it has risen; the knee is the
  lowest of that run, and the rate below it (not shown to have risen, or the floor) bounds it from below. If the
  highest rate held, p99 stayed within the multiple up to it (no knee in the range); else the design is undecided.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from archbench import stats
from archbench.analyze.open_loop_trials import TrialCriteria
from archbench.render.study import ReportOptions

# The latency threshold's one definition is the report option (ReportOptions.latency_knee_p99_ms).
KNEE_P99_S = ReportOptions.latency_knee_p99_ms / 1000
# p99 twice the floor: the rise of queueing, well above the floor's trial-to-trial spread on a quiet machine
# (at most 1.8x in the shipped eight-design campaign).
RISE_MULTIPLE = 2.0
FLOOR_WELL_UNDER = 0.5
# The floor's median rests on at least this many trials, so that no single trial sets it.
MIN_FLOOR_TRIALS = 3
KNEE_ALPHA = 0.05
# Exact permutation distributions up to this many splits of the pooled trials (12 trials in two groups of 6: 924).
EXACT_SPLITS = 100_000

FLOOR_WELL_UNDER_STATE = "well_under"
FLOOR_DOMINATES = "dominates"
FLOOR_UNMEASURED = "unmeasured"

KNEE = "knee"
NO_KNEE_IN_RANGE = "beyond"
UNDECIDED = "undecided"
TOO_FEW = "too_few"
NOT_MEASURED = "not_measured"
KNEE_STATES = (KNEE, NO_KNEE_IN_RANGE, UNDECIDED, TOO_FEW, NOT_MEASURED)

RATE_FLOOR = "floor"
RATE_RISEN = "risen"
RATE_HELD = "held"
RATE_UNDECIDED = "undecided"
RATE_NO_TRIAL = "no_trial"
RATE_UNTESTED = "untested"


@dataclass(frozen=True)
class Criteria(TrialCriteria):
    """The knee's definition; every value is a report option (the threshold) or a constant, and appears in the text.
    The trial marks it rests on (`kept_up_fraction`, `client_bound_busy`) are TrialCriteria's
    (archbench.analyze.open_loop_trials), which the trials frame is built with."""

    p99_s: float = KNEE_P99_S
    rise_multiple: float = RISE_MULTIPLE
    floor_well_under: float = FLOOR_WELL_UNDER
    min_floor_trials: int = MIN_FLOOR_TRIALS
    alpha: float = KNEE_ALPHA

    @property
    def floor_limit_s(self) -> float:
        """The highest floor that is well under the threshold."""
        return self.floor_well_under * self.p99_s


@dataclass(frozen=True)
class RateTest:
    """One offered rate of a design, against the design's floor."""

    offered_rate: float
    fraction: float
    n: int
    p99_median_s: float
    verdict: str
    p_risen: float = math.nan
    p_held: float = math.nan


@dataclass(frozen=True)
class KneeDecision:
    """A design's floor, its knee (or why there is none) and every rate's verdict, lowest rate first."""

    floor_state: str
    state: str
    rates: tuple[RateTest, ...]
    knee: RateTest | None = None
    below: RateTest | None = None

    @property
    def floor(self) -> RateTest | None:
        return self.rates[0] if self.rates else None

    @property
    def highest(self) -> RateTest | None:
        return self.rates[-1] if len(self.rates) > 1 else None


def smallest_p(n: int, m: int) -> float:
    """The smallest one-sided p-value a rank test of n against m trials can reach: one split in C(n + m, n)."""
    return 1.0 / math.comb(n + m, n) if n and m else 1.0


def rank_test(values: Sequence[float], reference: Sequence[float]) -> tuple[float, float]:
    """One-sided p-values of the Mann-Whitney statistic of `values` against `reference`: (values lie above,
    values lie below). Exact (every split of the pooled trials) up to EXACT_SPLITS splits; +inf ranks highest."""
    if not len(values) or not len(reference):
        return math.nan, math.nan
    ranks = scipy_stats.rankdata(np.concatenate([np.asarray(values, float), np.asarray(reference, float)]))
    samples = (ranks[: len(values)], ranks[len(values) :])

    def rank_sum(x: np.ndarray, _: np.ndarray, axis: int) -> np.ndarray:
        return np.sum(x, axis=axis)

    p = [
        float(
            scipy_stats.permutation_test(
                samples,
                rank_sum,
                permutation_type="independent",
                alternative=alternative,
                n_resamples=EXACT_SPLITS,
                vectorized=True,
                rng=np.random.default_rng(0),
            ).pvalue
        )
        for alternative in ("greater", "less")
    ]
    return p[0], p[1]


def decide_knee(rates: Mapping[float, tuple[float, Sequence[float]]], criteria: Criteria) -> KneeDecision:
    """A design's knee from {offered rate: (fraction of saturation, its countable trials' p99s for the knee)}."""
    order = sorted(rates)
    if not order:
        return KneeDecision(FLOOR_UNMEASURED, NOT_MEASURED, ())

    def rate_test(rate: float, verdict: str, p_risen: float = math.nan, p_held: float = math.nan) -> RateTest:
        fraction, values = rates[rate]
        return RateTest(rate, fraction, len(values), stats.sample_median(values), verdict, p_risen, p_held)

    floor_values = rates[order[0]][1]
    floor = rate_test(order[0], RATE_FLOOR)
    if len(floor_values) < criteria.min_floor_trials:
        state = FLOOR_UNMEASURED
    elif floor.p99_median_s <= criteria.floor_limit_s:
        state = FLOOR_WELL_UNDER_STATE
    else:
        state = FLOOR_DOMINATES
    if state != FLOOR_WELL_UNDER_STATE:
        return KneeDecision(state, NOT_MEASURED, (floor, *(rate_test(rate, RATE_UNTESTED) for rate in order[1:])))
    level = [criteria.rise_multiple * v for v in floor_values]
    tested = []
    for rate in order[1:]:
        values = rates[rate][1]
        if not values:
            tested.append(rate_test(rate, RATE_NO_TRIAL))
            continue
        p_risen, p_held = rank_test(values, level)
        verdict = RATE_RISEN if p_risen <= criteria.alpha else RATE_HELD if p_held <= criteria.alpha else RATE_UNDECIDED
        tested.append(rate_test(rate, verdict, p_risen, p_held))
    every = (floor, *tested)
    risen_from_top = 0
    for test in reversed(tested):
        if test.verdict != RATE_RISEN:
            break
        risen_from_top += 1
    if risen_from_top:
        knee_index = len(every) - risen_from_top
        return KneeDecision(state, KNEE, every, every[knee_index], every[knee_index - 1])
    if tested and tested[-1].verdict == RATE_HELD:
        return KneeDecision(state, NO_KNEE_IN_RANGE, every)
    if not tested or smallest_p(tested[-1].n, floor.n) > criteria.alpha:
        return KneeDecision(state, TOO_FEW, every)
    return KneeDecision(state, UNDECIDED, every)
