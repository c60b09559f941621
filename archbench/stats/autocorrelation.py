"""Autocorrelation of a series in time order and the Ljung-Box test that it is white noise.

Trials are meant to be independent draws; a machine whose state carries over from one trial to the next
(a noisy neighbour for a minute, a throttled CPU, a slowly filling page cache) makes neighbouring trials
alike whatever configuration they measured. Ordered by execution, residuals (a trial's value relative to
its configuration's mean) should then be uncorrelated: the sample autocorrelation at lags 1..k, and the
Ljung-Box Q statistic over those lags (statsmodels' acorr_ljungbox, chi-squared on k degrees of freedom),
test that. The lags stop at min(MAX_LAGS, n // 5), a common rule that keeps each lag's estimate on
enough pairs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm
from statsmodels.stats.diagnostic import acorr_ljungbox
from statsmodels.tsa.stattools import acf

from archbench.stats.samples import DEFAULT_CONFIDENCE, check_level

MAX_LAGS = 10
POINTS_PER_LAG = 5
MIN_POINTS = 2 * POINTS_PER_LAG  # below this not even lag 1 is tested


@dataclass(frozen=True)
class Autocorrelation:
    """Sample autocorrelations at lags 1..k (`lags[i]` has `acf[i]`), the approximate white-noise band
    ±z/sqrt(n) at `level`, and the Ljung-Box Q and p over lags 1..lag for every lag. Empty with `note`
    when the series is too short or constant."""

    n: int
    lags: tuple[int, ...]
    acf: tuple[float, ...]
    band: float
    q: tuple[float, ...]
    p_values: tuple[float, ...]
    level: float
    note: str = ""

    @property
    def max_lag(self) -> int:
        return self.lags[-1] if self.lags else 0

    @property
    def p_value(self) -> float:
        """Ljung-Box p over every lag computed (NaN without any)."""
        return self.p_values[-1] if self.p_values else math.nan

    @property
    def lag1(self) -> float:
        return self.acf[0] if self.acf else math.nan


def default_max_lag(n: int) -> int:
    return min(MAX_LAGS, n // POINTS_PER_LAG)


def autocorrelation(
    values: Iterable[float], max_lag: int | None = None, level: float = DEFAULT_CONFIDENCE
) -> Autocorrelation:
    """Autocorrelation and Ljung-Box tests of `values`, in the order given (missing values are dropped,
    which closes the gap: pass a series without holes if their position matters)."""
    check_level(level)
    series = np.asarray(list(values), dtype=float)
    series = series[~np.isnan(series)]
    n = int(series.size)
    lag_count = default_max_lag(n) if max_lag is None else min(int(max_lag), n - 1)
    z = float(norm.ppf(0.5 + level / 2.0))
    band = z / math.sqrt(n) if n else math.nan

    def empty(note: str) -> Autocorrelation:
        return Autocorrelation(n, (), (), band, (), (), level, note)

    if lag_count < 1:
        return empty(f"needs {MIN_POINTS} values, has {n}")
    if np.ptp(series) == 0:
        return empty("the series is constant")
    coefficients = acf(series, nlags=lag_count, fft=False)
    table = acorr_ljungbox(series, lags=lag_count, return_df=True)
    return Autocorrelation(
        n=n,
        lags=tuple(range(1, lag_count + 1)),
        acf=tuple(float(c) for c in coefficients[1:]),
        band=band,
        q=tuple(float(q) for q in table["lb_stat"]),
        p_values=tuple(float(p) for p in table["lb_pvalue"]),
        level=level,
    )
