"""The selection of the best (archbench.stats.selection): the Dunnett critical value checked after it is solved,
MCB's verdicts, and the procedure's guarantees measured by simulation with a known truth: simultaneous coverage of
the intervals, and over several looks no false statement and a correct selection when the best stands delta apart.

The simulations draw rounds as the campaigns run them: a round effect shared by every design of the round, and
independent noise per trial, on the log scale. They are seeded, so each test is deterministic; the bounds leave
room only for the Monte Carlo error of the estimate (its standard error is given beside each)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from archbench.stats import selection
from archbench.stats.selection import OPEN, SLOWER, WITHIN

DELTA = 0.10
ZONE = -math.log1p(-DELTA)  # delta as a log-ratio gap
NAMES = tuple("abcdef")


def draw_rounds(rng: np.random.Generator, rounds: int, gaps, sigma: float, round_sd: float = 0.05) -> np.ndarray:
    """Rates of len(gaps) designs over `rounds` rounds: design i's log mean is -gaps[i] (design 0 the best)."""
    gaps = np.asarray(gaps, dtype=float)
    logs = -gaps + rng.normal(0.0, round_sd, (rounds, 1)) + rng.normal(0.0, sigma, (rounds, gaps.size))
    return np.exp(logs)


def true_differences(gaps) -> np.ndarray:
    """D_i = mu_i - max_{j != i} mu_j for the log means -gaps."""
    mu = -np.asarray(gaps, dtype=float)
    return np.array([mu[i] - np.max(np.delete(mu, i)) for i in range(mu.size)])


def monte_carlo_floor(p: float, reps: int) -> float:
    """p less three standard errors of a proportion estimated from reps draws."""
    return p - 3.0 * math.sqrt(p * (1.0 - p) / reps)


# --------------------------------------------------------------------------- the critical value


def test_one_comparison_is_students_t():
    assert selection.dunnett_one_sided_quantile(1, 7.0, 0.05) == pytest.approx(scipy_stats.t.ppf(0.95, 7))
    assert selection.dunnett_one_sided_quantile(1, math.inf, 0.05) == pytest.approx(scipy_stats.norm.ppf(0.95))


def test_dunnett_quantile_matches_the_tables_and_the_multivariate_t():
    # Dunnett (1955), one-sided, alpha 0.05: 2 comparisons, 10 df: 2.15; infinite df: 1.92; 4 comparisons: 2.16.
    assert selection.dunnett_one_sided_quantile(2, 10.0, 0.05) == pytest.approx(2.15, abs=0.005)
    assert selection.dunnett_one_sided_quantile(2, math.inf, 0.05) == pytest.approx(1.916, abs=0.001)
    assert selection.dunnett_one_sided_quantile(4, math.inf, 0.05) == pytest.approx(2.160, abs=0.001)
    d = selection.dunnett_one_sided_quantile(5, 12.0, 0.01)
    correlation = np.full((5, 5), 0.5) + 0.5 * np.eye(5)
    distribution = scipy_stats.multivariate_t(loc=np.zeros(5), shape=correlation, df=12)
    assert distribution.cdf(np.full(5, d), random_state=1) == pytest.approx(0.99, abs=1e-3)


def test_the_solved_quantile_is_checked(monkeypatch):
    # A probability with a jump across 1 - alpha: Brent's method "converges" on the jump, where no d gives 0.95.
    selection.dunnett_one_sided_quantile.cache_clear()
    monkeypatch.setattr(selection, "dunnett_one_sided_probability", lambda d, comparisons, df: 0.9 if d < 2 else 0.99)
    with pytest.raises(selection.SolverCheckError):
        selection.dunnett_one_sided_quantile(3, 20.0, 0.05)
    selection.dunnett_one_sided_quantile.cache_clear()


# --------------------------------------------------------------------------- MCB


def test_verdicts_follow_the_intervals():
    rng = np.random.default_rng(7)
    rates = draw_rounds(rng, 6, [0.0, 0.02, 0.5], sigma=0.01, round_sd=0.1)
    result = selection.mcb(np.log(rates), ["best", "close", "far"], delta=DELTA)
    assert result.df == (6 - 1) * (3 - 1) and result.critical > 0
    by_name = {c.name: c for c in result.designs}
    assert by_name["far"].verdict == SLOWER and by_name["far"].high == 0.0
    assert by_name["best"].verdict == WITHIN and by_name["close"].verdict == WITHIN
    assert all(c.low <= 0.0 <= c.high for c in result.designs) and result.resolved
    # A design within delta and shown not the best is still within delta: a pick.
    assert by_name["close"].low > math.log1p(-DELTA)


def test_a_design_the_data_cannot_place_is_open():
    rng = np.random.default_rng(3)
    rates = draw_rounds(rng, 3, [0.0, 0.05], sigma=0.2)
    result = selection.mcb(np.log(rates), ["a", "b"], delta=DELTA)
    assert {c.verdict for c in result.designs} == {OPEN} and not result.resolved


def test_mcb_refuses_what_it_cannot_compute():
    with pytest.raises(ValueError, match="residual degree of freedom"):
        selection.mcb(np.array([[0.0, np.nan], [0.1, 0.2]]), ["a", "b"])
    with pytest.raises(ValueError, match="every design measured"):
        selection.mcb(np.array([[0.0, np.nan], [0.1, np.nan], [0.2, np.nan]]), ["a", "b"])
    with pytest.raises(ValueError, match="at least 2 rounds"):
        selection.mcb(np.zeros((1, 3)), ["a", "b", "c"])
    with pytest.raises(ValueError, match="delta"):
        selection.mcb(np.zeros((3, 2)), ["a", "b"], delta=1.5)


@pytest.mark.parametrize(
    "gaps",
    [
        [0.0, 0.0, ZONE / 2, ZONE / 2, 2 * ZONE, 2 * ZONE],  # two best, half a zone, two zones
        [0.0, ZONE, ZONE, 2 * ZONE, 2 * ZONE, 3 * ZONE],  # one best a zone ahead: the least favourable spacing
    ],
)
def test_mcb_intervals_cover_the_truth_simultaneously(gaps):
    rng = np.random.default_rng(2026)
    reps, truth, covered = 3000, true_differences(gaps), 0
    for _ in range(reps):
        result = selection.mcb(np.log(draw_rounds(rng, 5, gaps, sigma=0.05)), NAMES, delta=DELTA)
        covered += all(c.low <= truth[i] <= c.high for i, c in enumerate(result.designs))
    # Nominal 95 %; the Monte Carlo standard error of the estimate is 0.4 %.
    assert covered / reps >= monte_carlo_floor(0.95, reps)


# --------------------------------------------------------------------------- several looks


def _sequential(rng, gaps, sigma, reps, max_rounds=15):
    truth = true_differences(gaps)
    false, correct, resolved = 0, 0, 0
    for _ in range(reps):
        rates = draw_rounds(rng, max_rounds, gaps, sigma=sigma)
        outcome = selection.select_sequentially(rates, NAMES, first_look=3, max_rounds=max_rounds, delta=DELTA)
        verdicts = {name: outcome.final[name].verdict for name in NAMES}
        wrong = any(
            (verdicts[n] == WITHIN and truth[i] <= math.log1p(-DELTA)) or (verdicts[n] == SLOWER and truth[i] > 0)
            for i, n in enumerate(NAMES)
        )
        false += wrong
        picks = {n for n in NAMES if verdicts[n] == WITHIN}
        correct += verdicts["a"] != SLOWER and all(truth[NAMES.index(n)] > math.log1p(-DELTA) for n in picks)
        resolved += outcome.resolved
    return 1 - false / reps, correct / reps, resolved / reps


def test_over_several_looks_no_statement_is_false():
    rng = np.random.default_rng(11)
    reps = 1500
    error_free, _, resolved = _sequential(rng, [0.0, 0.0, ZONE / 2, ZONE / 2, 2 * ZONE, 2 * ZONE], 0.05, reps)
    assert error_free >= monte_carlo_floor(0.95, reps)
    assert resolved > 0.5  # rounds go where the answer is open: most replications end decided within 15 rounds


def test_a_best_a_zone_ahead_is_selected():
    rng = np.random.default_rng(12)
    reps = 1500
    error_free, correct, resolved = _sequential(rng, [0.0, ZONE, ZONE, 2 * ZONE, 2 * ZONE, 3 * ZONE], 0.05, reps)
    assert correct >= monte_carlo_floor(0.95, reps) and error_free >= monte_carlo_floor(0.95, reps)
    assert resolved >= 0.95


def test_a_design_shown_slower_leaves_and_is_not_measured_again():
    rng = np.random.default_rng(5)
    rates = draw_rounds(rng, 12, [0.0, 0.01, 1.0], sigma=0.03)
    outcome = selection.select_sequentially(rates, ["a", "b", "c"], first_look=3, max_rounds=12, delta=0.02)
    assert outcome.final["c"].verdict == SLOWER and outcome.decided_at["c"] == 3
    assert "c" not in outcome.still_in and outcome.looks[0].rounds == 3
    # Later looks compare only the designs still in: c's later rounds (NaN, never run) do not block them.
    rates[3:, 2] = np.nan
    again = selection.select_sequentially(rates, ["a", "b", "c"], first_look=3, max_rounds=12, delta=0.02)
    assert [look.rounds for look in again.looks] == [look.rounds for look in outcome.looks]
    assert again.alpha_per_look == pytest.approx(0.05 / 10)


def test_a_design_without_a_usable_value_leaves_without_a_verdict_and_the_others_are_compared():
    """A server that cannot run here (io_uring where the kernel refuses it) must not stop the others' comparison."""
    rng = np.random.default_rng(8)
    rates = draw_rounds(rng, 4, [0.0, 0.5, 0.0], sigma=0.01)
    rates[:, 2] = np.nan
    outcome = selection.select_sequentially(rates, ["a", "b", "c"], first_look=3, max_rounds=4)
    assert outcome.looks and "c" not in outcome.final and "c" not in outcome.still_in
    assert outcome.final["a"].verdict == WITHIN and outcome.final["b"].verdict == SLOWER


def test_an_open_point_says_how_many_rounds_it_would_need():
    rng = np.random.default_rng(9)
    rates = draw_rounds(rng, 4, [0.0, ZONE / 2, 3 * ZONE], sigma=0.06)
    outcome = selection.select_sequentially(rates, ["a", "b", "c"], first_look=3, max_rounds=4, delta=DELTA)
    assert not outcome.resolved and outcome.rounds_needed is not None and outcome.rounds_needed > 4
    last = outcome.looks[-1].result
    designs = len(outcome.still_in)
    open_ones = [c for c in last.designs if c.verdict == OPEN and c.name in outcome.still_in]
    each = {
        c.name: selection.rounds_needed(c.estimate, last.sigma, designs, delta=DELTA, alpha=outcome.alpha_per_look)
        for c in open_ones
    }
    assert outcome.rounds_needed == max(each.values())
    hardest = next(c for c in open_ones if each[c.name] == outcome.rounds_needed)
    distance = max(hardest.estimate - math.log1p(-DELTA), -hardest.estimate)

    def half_width(n: int) -> float:
        d = selection.dunnett_one_sided_quantile(designs - 1, float((n - 1) * (designs - 1)), outcome.alpha_per_look)
        return d * last.sigma * math.sqrt(2.0 / n)

    # The fewest rounds whose interval would be narrower than the distance to the nearer decision.
    assert half_width(outcome.rounds_needed) < distance <= half_width(outcome.rounds_needed - 1)


def test_the_schedule_is_checked():
    with pytest.raises(ValueError, match="first look"):
        selection.looks_allowed(1, 5)
    with pytest.raises(ValueError, match="below the first look"):
        selection.looks_allowed(5, 4)
    assert selection.looks_allowed(3, 8) == 6


def test_complete_rounds_give_the_two_way_anova_and_dunnett():
    rng = np.random.default_rng(21)
    logs = np.log(draw_rounds(rng, 5, [0.0, 0.03, 0.2, 0.4], sigma=0.05))
    result = selection.mcb(logs, list("abcd"))
    residuals = logs - logs.mean(axis=0) - logs.mean(axis=1, keepdims=True) + logs.mean()
    assert result.sigma == pytest.approx(math.sqrt((residuals**2).sum() / (4 * 3)))
    assert result.critical_method == selection.DUNNETT and result.df == 12
    # Every difference has the balanced standard error sigma * sqrt(2 / n): the observed best's lower end shows it.
    means = logs.mean(axis=0)
    gap = means[0] - means[1]
    expected_low = min(0.0, gap - result.critical * result.sigma * math.sqrt(2 / 5))
    assert result.designs[0].low == pytest.approx(expected_low)


def test_intervals_still_cover_with_cells_missing():
    """A disturbed trial whose re-runs were disturbed too leaves its cell empty: the round's other values still count,
    and the intervals (Sidak's or Bonferroni's critical value) still cover the truth together."""
    rng = np.random.default_rng(31)
    gaps = [0.0, ZONE, ZONE, 2 * ZONE, 2 * ZONE, 3 * ZONE]
    reps, truth, covered, methods = 2000, true_differences(gaps), 0, set()
    for _ in range(reps):
        logs = np.log(draw_rounds(rng, 6, gaps, sigma=0.05))
        logs[rng.random(logs.shape) < 0.1] = np.nan
        result = selection.mcb(logs, NAMES, delta=DELTA)
        methods.add(result.critical_method)
        covered += all(c.low <= truth[i] <= c.high for i, c in enumerate(result.designs))
    assert methods <= {selection.SIDAK, selection.BONFERRONI, selection.DUNNETT} and selection.SIDAK in methods
    assert covered / reps >= monte_carlo_floor(0.95, reps)
