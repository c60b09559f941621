"""Multiple comparisons: Holm's and Benjamini-Hochberg's adjustments over a family of p-values, computed as
statsmodels' multipletests computes them (tests/test_stats.py compares the two), keeping this library's NaN
policy."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from statsmodels.stats.multitest import multipletests

from archbench.stats.samples import DEFAULT_ALPHA, check_alpha


@dataclass(frozen=True)
class MultipleTestResult:
    """A family of p-values and their adjustment. `adjusted[i]` belongs to `p_values[i]`;
    `reject[i]` = adjusted[i] <= alpha. Undefined (NaN) p-values are not part of the family:
    their adjusted value is NaN and they are never rejected; `m` counts the defined ones."""

    method: str
    alpha: float
    p_values: tuple[float, ...]
    adjusted: tuple[float, ...]
    reject: tuple[bool, ...]
    m: int


_ADJUSTMENTS = {"holm": "holm", "bh": "bh", "fdr_bh": "bh", "benjamini-hochberg": "bh"}
_STATSMODELS_METHODS = {"holm": "holm", "bh": "fdr_bh"}


def adjust_pvalues(p_values: Iterable[float], method: str = "holm", alpha: float = DEFAULT_ALPHA) -> MultipleTestResult:
    """Holm's step-down (controls the family-wise error rate) or Benjamini-Hochberg's step-up
    (controls the false discovery rate) adjustment over the defined p-values: Holm's as
    statsmodels.stats.multitest.multipletests(method="holm") computes it, BH by that function (method="fdr_bh").

    Holm:  p_(i) -> max_{j <= i} min(1, (m - j + 1) p_(j))
    BH:    p_(i) -> min_{j >= i} min(1, m p_(j) / j)

    `reject` is read from the adjusted values (adjusted <= alpha), not taken from statsmodels, whose Holm
    compares the raw p with alpha / (m - j + 1) and could disagree with the printed adjusted p by a rounding.
    """
    check_alpha(alpha)
    if method not in _ADJUSTMENTS:
        raise ValueError(f"method must be one of {sorted(_ADJUSTMENTS)}, got {method!r}")
    kind = _ADJUSTMENTS[method]
    p = np.array([math.nan if v is None else float(v) for v in p_values], dtype=float)
    defined = ~np.isnan(p)
    if ((p[defined] < 0) | (p[defined] > 1)).any():
        raise ValueError("p-values must lie in [0, 1]")
    adjusted = np.full(p.shape, math.nan)
    m = int(defined.sum())
    if m:
        family = p[defined]
        if kind == "holm":
            adjusted[defined] = _holm_adjusted(family)
        else:
            _, adjusted[defined], _, _ = multipletests(family, alpha=alpha, method=_STATSMODELS_METHODS[kind])
    reject = tuple(bool(v <= alpha) if not math.isnan(v) else False for v in adjusted)
    return MultipleTestResult(kind, alpha, tuple(float(v) for v in p), tuple(float(v) for v in adjusted), reject, m)


def _holm_adjusted(p: np.ndarray) -> np.ndarray:
    """multipletests(p, method="holm")[1], with the same operations in the same order, so the same floats.
    Not that function itself: its Holm branch ends in a full gc.collect(), seconds on every call in a process
    holding a large heap (the report build adjusts a family per comparison table; a test session more)."""
    order = np.argsort(p)
    m = len(p)
    adjusted_sorted = np.maximum.accumulate(p[order] * np.arange(m, 0, -1))
    adjusted_sorted[adjusted_sorted > 1] = 1
    adjusted = np.empty_like(adjusted_sorted)
    adjusted[order] = adjusted_sorted
    return adjusted


def holm(p_values: Iterable[float], alpha: float = DEFAULT_ALPHA) -> MultipleTestResult:
    return adjust_pvalues(p_values, "holm", alpha)


def benjamini_hochberg(p_values: Iterable[float], alpha: float = DEFAULT_ALPHA) -> MultipleTestResult:
    return adjust_pvalues(p_values, "bh", alpha)
