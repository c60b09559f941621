"""Seeded bootstrap intervals (percentile and BCa) of any vectorised statistic of one or more independent samples,
as thin wrappers over scipy.stats.bootstrap that keep this library's NaN policy."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import special as scipy_special
from scipy import stats as scipy_stats

from archbench.stats.intervals import ConfidenceInterval, undefined_interval
from archbench.stats.samples import DEFAULT_CONFIDENCE, as_sample, check_level

# Bootstrap defaults: reproducible for a given seed (numpy.random.default_rng(seed)).
DEFAULT_SEED = 20261121
DEFAULT_RESAMPLES = 9999

# A bootstrap statistic takes the samples as arrays and reduces along `axis` (numpy style):
# statistic(*samples, axis=-1) -> array. np.mean and np.median qualify as one-sample statistics.
Statistic = Callable[..., Any]
BootstrapMethod = Literal["percentile", "bca"]
Center = Literal["mean", "median"]
_CENTERS: dict[str, Callable[..., Any]] = {"mean": np.mean, "median": np.median}
_BOOTSTRAP_LABELS = {"percentile": "bootstrap percentile", "bca": "bootstrap BCa"}
_SCIPY_METHODS = {"percentile": "percentile", "bca": "BCa"}


def _center(center: str) -> Callable[..., Any]:
    if center not in _CENTERS:
        raise ValueError(f"center must be 'mean' or 'median', got {center!r}")
    return _CENTERS[center]


@dataclass(frozen=True)
class BootstrapInterval:
    """A bootstrap interval and what is needed to reproduce it.

    `estimate` is the statistic on the original samples; `standard_error` the sd of
    the bootstrap distribution; `bias_correction` (z0) and `acceleration` (a) are the
    BCa constants (NaN for the percentile method). A NaN interval comes with a `note`.
    """

    estimate: float
    ci: ConfidenceInterval
    resamples: int
    seed: int | None
    sizes: tuple[int, ...]
    standard_error: float
    bias_correction: float = math.nan
    acceleration: float = math.nan
    note: str = ""


def bootstrap_ci(
    samples: Sequence[Iterable[float]],
    statistic: Statistic,
    *,
    level: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
    method: BootstrapMethod = "percentile",
) -> BootstrapInterval:
    """Seeded bootstrap interval of `statistic(*samples, axis=-1)`: scipy.stats.bootstrap(samples, statistic,
    rng=numpy.random.default_rng(seed), n_resamples=resamples), so each sample is resampled independently, with
    replacement and at its own size (sample j, in order, indexed by rng.integers(0, n_j, (resamples, n_j))).

    * "percentile": the α/2 and 1 - α/2 quantiles of the bootstrap distribution.
    * "bca": bias-corrected and accelerated (Efron & Tibshirani 1993, ch. 14): z0 from the
      share of resamples below the estimate (ties count half), the acceleration from the
      jackknife of each sample in turn. Second-order accurate for smooth statistics (means,
      ratios of means); for a median of a handful of trials the bootstrap distribution has
      few distinct values and the percentile method is the safer choice. The two constants
      are reported (scipy does not return them), and when no leave-one-out value moves the
      statistic the acceleration is 0 (scipy answers 0/0 = NaN there).

    Undefined (NaN interval, with a `note`) when a sample has fewer than 2 observations,
    when the statistic is undefined on the data, or when any resample gives a non-finite
    statistic (e.g. a zero denominator): such resamples are reported, not dropped.
    """
    check_level(level)
    if method not in _BOOTSTRAP_LABELS:
        raise ValueError(f"method must be 'percentile' or 'bca', got {method!r}")
    if resamples < 2:
        raise ValueError(f"resamples must be >= 2, got {resamples}")
    data = [as_sample(sample) for sample in samples]
    if not data:
        raise ValueError("bootstrap_ci needs at least one sample")
    sizes = tuple(int(d.size) for d in data)
    label = _BOOTSTRAP_LABELS[method]
    undefined = undefined_interval(level, label)

    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = float(statistic(*data, axis=-1)) if min(sizes) > 0 else math.nan
    if min(sizes) < 2:
        return BootstrapInterval(
            estimate,
            undefined,
            resamples,
            seed,
            sizes,
            math.nan,
            note=f"n = {min(sizes)} < 2 in a sample: no bootstrap interval",
        )
    if not math.isfinite(estimate):
        return BootstrapInterval(
            estimate, undefined, resamples, seed, sizes, math.nan, note="the statistic is undefined on the samples"
        )

    # Non-finite resamples and a degenerate BCa are answered below by this library's NaN policy, so scipy's
    # warnings about them would only be noise.
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy_stats.DegenerateDataWarning)
        result = scipy_stats.bootstrap(
            data,
            statistic,
            n_resamples=resamples,
            confidence_level=level,
            method=_SCIPY_METHODS[method],
            vectorized=True,
            rng=np.random.default_rng(seed),
        )
    theta = np.asarray(result.bootstrap_distribution, dtype=float)
    nonfinite = int((~np.isfinite(theta)).sum())
    if nonfinite:
        return BootstrapInterval(
            estimate,
            undefined,
            resamples,
            seed,
            sizes,
            math.nan,
            note=f"{nonfinite} of {resamples} resamples gave an undefined statistic "
            "(e.g. a zero denominator): no interval rather than one from the others",
        )
    standard_error = float(result.standard_error)
    low, high = (float(bound) for bound in result.confidence_interval)
    if method == "percentile":
        return BootstrapInterval(
            estimate, ConfidenceInterval(low, high, level, label), resamples, seed, sizes, standard_error
        )

    share_below = ((theta < estimate).sum() + (theta <= estimate).sum()) / (2.0 * resamples)
    z0 = float(scipy_special.ndtri(share_below))
    acceleration = _jackknife_acceleration(data, statistic)
    if not (math.isfinite(z0) and math.isfinite(acceleration)):
        return BootstrapInterval(
            estimate,
            undefined,
            resamples,
            seed,
            sizes,
            standard_error,
            z0,
            acceleration,
            note="BCa undefined: the estimate lies outside the bootstrap distribution",
        )
    if acceleration == 0.0 and not (math.isfinite(low) and math.isfinite(high)):
        # With a = 0, BCa's adjusted tail z0 + (z0 + z) / (1 - a (z0 + z)) is z0 + (z0 + z).
        tail = float(scipy_special.ndtri((1.0 - level) / 2.0))
        low, high = (float(np.percentile(theta, 100.0 * scipy_special.ndtr(z0 + (z0 + z)))) for z in (tail, -tail))
    return BootstrapInterval(
        estimate, ConfidenceInterval(low, high, level, label), resamples, seed, sizes, standard_error, z0, acceleration
    )


def _jackknife_acceleration(data: list[np.ndarray], statistic: Statistic) -> float:
    """BCa acceleration from leave-one-out values of each sample in turn (Efron & Tibshirani
    1993, eq. 14.15; for several samples the sums over samples, as scipy.stats.bootstrap does).
    scipy computes the same constant but does not return it; BootstrapInterval reports it."""
    numerator = 0.0
    denominator = 0.0
    for j, sample in enumerate(data):
        n = sample.size
        keep = ~np.eye(n, dtype=bool)
        leave_one_out = np.broadcast_to(sample, (n, n))[keep].reshape(n, n - 1)
        arguments = [leave_one_out if k == j else np.broadcast_to(d, (n, d.size)) for k, d in enumerate(data)]
        with np.errstate(divide="ignore", invalid="ignore"):
            theta_i = np.asarray(statistic(*arguments, axis=-1), dtype=float)
        u = (n - 1) * (theta_i.mean() - theta_i)
        numerator += float((u**3).sum()) / n**3
        denominator += float((u**2).sum()) / n**2
    if denominator == 0.0:
        return 0.0  # the statistic does not move when one observation is left out: no skewness to correct
    return numerator / (6.0 * denominator**1.5)


def bootstrap_median_ci(
    values: Iterable[float],
    *,
    level: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
    method: BootstrapMethod = "percentile",
) -> BootstrapInterval:
    """Bootstrap interval of one sample's median (see `median_ci` for the exact distribution-free one)."""
    return bootstrap_ci([values], np.median, level=level, resamples=resamples, seed=seed, method=method)


def bootstrap_ratio_ci(
    numerator: Iterable[float],
    denominator: Iterable[float],
    *,
    center: Center = "mean",
    level: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
    method: BootstrapMethod = "percentile",
) -> BootstrapInterval:
    """Interval of center(numerator) / center(denominator) for two independent configurations,
    e.g. a server's mean throughput over nginx's. Both samples are resampled independently.

    One ratio of two measured centres, with its uncertainty, is what the report may state;
    averaging ratios across configurations is what Hoefler & Belli advise against.
    """
    f = _center(center)

    def ratio_of_centers(x: np.ndarray, y: np.ndarray, axis: int = -1) -> Any:
        return f(x, axis=axis) / f(y, axis=axis)

    return bootstrap_ci(
        [numerator, denominator], ratio_of_centers, level=level, resamples=resamples, seed=seed, method=method
    )


def bootstrap_difference_ci(
    a: Iterable[float],
    b: Iterable[float],
    *,
    center: Center = "median",
    level: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
    method: BootstrapMethod = "percentile",
) -> BootstrapInterval:
    """Interval of center(a) - center(b) for two independent samples (resampled independently)."""
    f = _center(center)

    def difference_of_centers(x: np.ndarray, y: np.ndarray, axis: int = -1) -> Any:
        return f(x, axis=axis) - f(y, axis=axis)

    return bootstrap_ci([a, b], difference_of_centers, level=level, resamples=resamples, seed=seed, method=method)
