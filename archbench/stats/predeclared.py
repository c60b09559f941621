"""The pre-declared test of a planned comparison: one rule fixed before any data is seen, never picked by a check.

A campaign runs in rounds (every configuration once per round, in a fresh random order), so the test of a planned
comparison of a with b is the paired t test on the per-round log ratios log(a_i / b_i) (`paired_log_ratio`): the
ratio is their geometric mean, its interval Student's t. Only when the two sides cannot be aligned by round (a
campaign recorded without rounds, or a side with a value that has no round) does the one fallback apply: Welch's
t test on the logs of the two independent samples. Which of the two applies depends on how the campaign was run,
never on the values; Shapiro-Wilk stays a diagnostic of the log ratios and chooses nothing.

A test that cannot succeed is not run. A t test's p reaches any level once the mean log ratio is large enough
against its spread, so no smallest achievable p bars it (unlike a rank test, whose smallest p at 5 against 5 is
0.0079); what bars it is too few observations: under MIN_ROUNDS paired rounds (or trials per group, unpaired) the
test is not run, and the result says why and how many rounds it would need.

The minimum detectable difference of a test (`minimum_detectable_pct`) is the smallest ratio it calls significant
at level a' given the observed spread and n: exp(t_{1 - a'/2, df} * se) - 1, se the standard error of the mean
log ratio (sd / sqrt(n) paired; sqrt(s_a^2 / n_a + s_b^2 / n_b) of the logs unpaired). With Holm's correction over
a family of m, a' = alpha / m: a p below alpha / m is rejected whatever the other p-values are (every smaller p is
then below it too, so each step's (m - j + 1) p_(j) stays under alpha), so a ratio beyond this difference is
significant after the correction, and one inside it cannot be at that rank or later ranks.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from archbench.stats.intervals import ConfidenceInterval, undefined_interval
from archbench.stats.normality import NormalityCheck, shapiro_wilk
from archbench.stats.paired import aligned_pairs, paired_log_ratio
from archbench.stats.samples import DEFAULT_ALPHA, DEFAULT_CONFIDENCE, check_alpha, check_level
from archbench.stats.welch import welch_test

PAIRED_TEST = "paired_t_log"  # the pre-declared test of every planned comparison
UNPAIRED_TEST = "welch_t_log"  # the one fallback, when the two sides cannot be aligned by round
NOT_RUN = "not_run"  # too few observations for the test to succeed
MIN_ROUNDS = 3  # fewest paired rounds (or trials per group, unpaired) a test is run with
MAX_ROUNDS_NEEDED = 10_000  # the search for the rounds a not-run comparison needs stops here
_UNCHECKED = NormalityCheck(0, math.nan, math.nan, DEFAULT_ALPHA, False, "no log ratios: unpaired comparison")


@dataclass(frozen=True)
class PlannedComparison:
    """The pre-declared test of a against b (ratio a / b).

    `test` is PAIRED_TEST, UNPAIRED_TEST or NOT_RUN and `reason` says why in words. `paired` says whether the sides
    were aligned by round (a not-run comparison may be either). `n` is the rounds paired (paired) or the smaller group
    (unpaired); `dropped` the rounds left out because a side is missing there. `ratio` and `ci` are the geometric
    mean ratio and its Student-t interval at `level`; `mean_log`, `sd_log` the mean and sd of the log ratios
    (unpaired, sd_log is sqrt(s_a^2 + s_b^2) of the logs, the sd of one difference, for the rounds-needed search),
    `standard_error` and `df` those of the mean log ratio; `statistic` and `p_value` the two-sided t test (NaN when
    not run). `log_ratios` are the paired log ratios (empty unpaired) and `normality` Shapiro-Wilk on them: a
    diagnostic printed beside the test, which it never chooses (unpaired: not checked)."""

    test: str
    reason: str
    paired: bool
    n: int
    n_a: int
    n_b: int
    dropped: int
    ratio: float
    ci: ConfidenceInterval
    mean_log: float
    sd_log: float
    standard_error: float
    df: float
    statistic: float
    p_value: float
    normality: NormalityCheck
    log_ratios: tuple[float, ...] = ()

    @property
    def run(self) -> bool:
        return self.test != NOT_RUN


def aligned_by_round(values: Iterable[float], rounds: Iterable[Hashable | None] | None) -> dict[Hashable, float] | None:
    """round -> value (the mean when a round holds several), or None when a value has no round (cannot be aligned).
    Missing values (NaN) are kept out; a round whose only value is missing is absent."""
    if rounds is None:
        return None
    values, rounds = list(values), list(rounds)
    if len(values) != len(rounds):
        raise ValueError(f"each value needs its round: {len(values)} values, {len(rounds)} rounds")
    by_round: dict[Hashable, list[float]] = {}
    for value, label in zip(values, rounds, strict=True):
        if label is None or (isinstance(label, float) and math.isnan(label)):
            return None
        if value is not None and not math.isnan(float(value)):
            by_round.setdefault(label, []).append(float(value))
    return {label: float(np.mean(group)) for label, group in by_round.items()}


def planned_comparison(
    a: Iterable[float],
    b: Iterable[float],
    *,
    rounds_a: Iterable[Hashable | None] | None = None,
    rounds_b: Iterable[Hashable | None] | None = None,
    level: float = DEFAULT_CONFIDENCE,
) -> PlannedComparison:
    """The pre-declared test of a against b: paired within rounds when both sides carry their rounds, else Welch on
    the logs; not run under MIN_ROUNDS (see the module docstring). rounds_a[i] is the round of a[i]."""
    check_level(level)
    a, b = list(a), list(b)
    aligned_a, aligned_b = aligned_by_round(a, rounds_a), aligned_by_round(b, rounds_b)
    if aligned_a is not None and aligned_b is not None:
        return _paired(aligned_a, aligned_b, level)
    return _unpaired(a, b, level)


def _paired(a: dict[Hashable, float], b: dict[Hashable, float], level: float) -> PlannedComparison:
    rounds = sorted(set(a) | set(b), key=str)
    x = [a.get(r, math.nan) for r in rounds]
    y = [b.get(r, math.nan) for r in rounds]
    result = paired_log_ratio(x, y, level)
    kept_a, kept_b, _ = aligned_pairs(x, y)
    logs = tuple(float(v) for v in np.log(kept_a / kept_b))
    normality = shapiro_wilk(logs)
    n_a = sum(1 for v in x if math.isfinite(v) and v > 0)
    n_b = sum(1 for v in y if math.isfinite(v) and v > 0)
    standard_error = result.sd_log / math.sqrt(result.n) if result.n >= 2 else math.nan
    common = (result.n, n_a, n_b, result.dropped, result.ratio)
    if result.n < MIN_ROUNDS or math.isnan(result.p_value):
        missing = f" (a side failed or is missing in {result.dropped} more)" if result.dropped else ""
        reason = (
            f"{result.n} paired round{'s' if result.n != 1 else ''}{missing}: the paired t test needs at least "
            f"{MIN_ROUNDS}"
            if result.n < MIN_ROUNDS
            else f"the log ratios of the {result.n} rounds do not vary: the t statistic is undefined"
        )
        return PlannedComparison(
            NOT_RUN,
            reason,
            True,
            *common,
            undefined_interval(level, result.ci.method),
            result.mean_log,
            result.sd_log,
            standard_error,
            result.df,
            math.nan,
            math.nan,
            normality,
            logs,
        )
    reason = f"paired t test on the log ratios of {result.n} rounds (pre-declared)"
    return PlannedComparison(
        PAIRED_TEST,
        reason,
        True,
        *common,
        result.ci,
        result.mean_log,
        result.sd_log,
        standard_error,
        result.df,
        result.statistic,
        result.p_value,
        normality,
        logs,
    )


def _unpaired(a: Sequence[float], b: Sequence[float], level: float) -> PlannedComparison:
    x, y = (np.asarray(v, dtype=float) for v in (a, b))
    x, y = np.log(x[np.isfinite(x) & (x > 0)]), np.log(y[np.isfinite(y) & (y > 0)])
    n_a, n_b = int(x.size), int(y.size)
    n = min(n_a, n_b)
    method = "welch t on logs"
    mean_log = float(x.mean() - y.mean()) if n else math.nan
    ratio = math.exp(mean_log) if n else math.nan
    if n < MIN_ROUNDS:
        reason = (
            f"no rounds to pair on, and {n_a} and {n_b} trials: Welch's t test on the logs needs at least "
            f"{MIN_ROUNDS} per group"
        )
        sd = _equivalent_sd(x, y)
        se = sd / math.sqrt(n) if n >= 2 else math.nan
        return PlannedComparison(
            NOT_RUN,
            reason,
            False,
            n,
            n_a,
            n_b,
            0,
            ratio,
            undefined_interval(level, method),
            mean_log,
            sd,
            se,
            math.nan,
            math.nan,
            math.nan,
            _UNCHECKED,
        )
    welch = welch_test(x, y, level)
    ci = (
        ConfidenceInterval(math.exp(welch.ci.low), math.exp(welch.ci.high), level, method)
        if welch.ci.is_defined
        else undefined_interval(level, method)
    )
    reason = f"no rounds to pair on: Welch's t test on the logs of {n_a} and {n_b} trials (the one fallback)"
    return PlannedComparison(
        UNPAIRED_TEST,
        reason,
        False,
        n,
        n_a,
        n_b,
        0,
        ratio,
        ci,
        mean_log,
        _equivalent_sd(x, y),
        welch.standard_error,
        welch.df,
        welch.statistic,
        welch.p_value,
        _UNCHECKED,
    )


def _equivalent_sd(x: np.ndarray, y: np.ndarray) -> float:
    """sqrt(s_a^2 + s_b^2) of the logs: the sd a difference of two single draws has (NaN under 2 per group)."""
    if x.size < 2 or y.size < 2:
        return math.nan
    return math.sqrt(float(x.var(ddof=1)) + float(y.var(ddof=1)))


def minimum_detectable_pct(standard_error: float, df: float, alpha: float = DEFAULT_ALPHA) -> float:
    """Smallest ratio, as percent above 1, a two-sided t test with this standard error of the mean log ratio and df
    calls significant at level alpha: 100 (exp(t_{1 - alpha/2, df} se) - 1). Symmetric on the log scale: the ratio
    below 1 it detects is the reciprocal. NaN when undefined (se or df missing, df < 1)."""
    check_alpha(alpha)
    if not (math.isfinite(standard_error) and math.isfinite(df)) or df < 1 or standard_error < 0:
        return math.nan
    return 100.0 * math.expm1(float(scipy_stats.t.ppf(1.0 - alpha / 2.0, df)) * standard_error)


def rounds_needed(mean_log: float, sd_log: float, alpha: float = DEFAULT_ALPHA) -> float:
    """Fewest rounds n >= MIN_ROUNDS at which a paired t test with this sd of the log ratios calls this mean log
    ratio significant at level alpha (t_{1 - alpha/2, n-1} sd / sqrt(n) <= |mean_log|). NaN when the spread is
    unknown (fewer than 2 rounds): MIN_ROUNDS is then all that can be said; inf when no n up to MAX_ROUNDS_NEEDED
    is enough (a ratio of 1, or a spread far above the ratio)."""
    check_alpha(alpha)
    if not (math.isfinite(sd_log) and math.isfinite(mean_log)):
        return math.nan
    if sd_log == 0.0:
        return float(MIN_ROUNDS) if mean_log != 0.0 else math.inf
    target = abs(mean_log)

    def enough(n: int) -> bool:
        return float(scipy_stats.t.ppf(1.0 - alpha / 2.0, n - 1)) * sd_log / math.sqrt(n) <= target

    if not enough(MAX_ROUNDS_NEEDED):
        return math.inf
    low, high = MIN_ROUNDS, MAX_ROUNDS_NEEDED  # the threshold shrinks as n grows: bisect for the first n enough
    while low < high:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle + 1
    return float(low)
