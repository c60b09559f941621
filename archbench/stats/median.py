"""A distribution-free interval for the median, from two order statistics and the binomial distribution."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from archbench.stats.intervals import ConfidenceInterval, undefined_interval
from archbench.stats.samples import DEFAULT_CONFIDENCE, as_sample, check_level


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
    check_level(level)
    sample = np.sort(as_sample(values))
    n = int(sample.size)
    method = "order statistics (binomial)"
    if n < 2:
        median = float(sample[0]) if n else math.nan
        return MedianInterval(
            n,
            median,
            undefined_interval(level, method),
            math.nan,
            False,
            0,
            0,
            f"n = {n} < 2: no interval from order statistics",
        )
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
        note = (
            f"n = {n} is too small for a {level:.0%} distribution-free interval (n >= {needed} needed): "
            f"[min, max] covers the median with probability {1.0 - 2.0 ** (1 - n):.4f}"
        )
    upper = n + 1 - rank
    coverage = order_statistic_coverage(n, rank, upper)
    ci = ConfidenceInterval(float(sample[rank - 1]), float(sample[upper - 1]), level, method)
    return MedianInterval(n, median, ci, coverage, bool(reaching.size), rank, upper, note)
