"""Samples as the rest of the library sees them, the point statistics of one sample, and the checks every
estimator shares.

A missing value (None, NaN) is not an observation: `as_sample` drops it, and every estimator starts from it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

DEFAULT_CONFIDENCE = 0.95
DEFAULT_ALPHA = 0.05


def as_sample(values: Iterable[float]) -> np.ndarray:
    """A float array without NaNs: a missing measurement is not an observation."""
    array = np.asarray(list(values), dtype=float)
    return array[~np.isnan(array)]


def sample_mean(values: Iterable[float]) -> float:
    sample = as_sample(values)
    return float(sample.mean()) if sample.size else math.nan


def sample_sd(values: Iterable[float]) -> float:
    """Sample standard deviation (Bessel's n - 1), as source 000 reports it."""
    sample = as_sample(values)
    return float(sample.std(ddof=1)) if sample.size >= 2 else math.nan


def sample_median(values: Iterable[float]) -> float:
    sample = as_sample(values)
    return float(np.median(sample)) if sample.size else math.nan


def ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, NaN instead of an exception or ±inf when undefined."""
    if denominator == 0 or math.isnan(numerator) or math.isnan(denominator):
        return math.nan
    return numerator / denominator


def check_level(level: float) -> None:
    """Raise ValueError unless 0 < level < 1 (a confidence level)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")


def check_alpha(alpha: float) -> None:
    """Raise ValueError unless 0 < alpha < 1 (a significance level)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")


def all_finite(*values: float) -> bool:
    """Whether every value is present and finite (published summary statistics may have gaps)."""
    return all(value is not None and math.isfinite(float(value)) for value in values)


def int_or_zero(value: Any) -> int:
    """An n from a published table, 0 when it is missing or unreadable."""
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return 0
