"""Tukey's fences: points outside them are counted and listed with their positions, never removed."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class OutlierReport:
    """Tukey's fences on one sample. Nothing is removed: the report lists what lies outside.

    Quartiles are numpy's default (linear interpolation, Hyndman & Fan type 7, R's default).
    `indices` are positions in the input sequence as given (missing values keep their
    positions, so indices map back to trial rows) of points strictly outside
    [q1 - k·IQR, q3 + k·IQR] ("outliers", far-out ones included); `far_indices` of those
    outside [q1 - far_k·IQR, q3 + far_k·IQR] ("far out"). With n <= 3 no point can lie
    outside the fences. n = 0: NaN fences.
    """

    n: int
    q1: float
    q3: float
    iqr: float
    k: float
    far_k: float
    lower_fence: float
    upper_fence: float
    far_lower_fence: float
    far_upper_fence: float
    indices: tuple[int, ...]
    values: tuple[float, ...]
    far_indices: tuple[int, ...]
    far_values: tuple[float, ...]

    @property
    def count(self) -> int:
        return len(self.indices)

    @property
    def far_count(self) -> int:
        return len(self.far_indices)


def tukey_outliers(values: Iterable[float], k: float = 1.5, far_k: float = 3.0) -> OutlierReport:
    """Points beyond Tukey's fences (k = 1.5 IQR: outliers; far_k = 3 IQR: far out), counted
    and listed with their positions, never dropped."""
    if not 0 < k <= far_k:
        raise ValueError(f"need 0 < k <= far_k, got {k}, {far_k}")
    array = np.array([math.nan if v is None else float(v) for v in values], dtype=float)
    present = ~np.isnan(array)
    sample = array[present]
    nan = math.nan
    if sample.size == 0:
        return OutlierReport(0, nan, nan, nan, k, far_k, nan, nan, nan, nan, (), (), (), ())
    q1, q3 = (float(q) for q in np.percentile(sample, [25, 75]))
    iqr = q3 - q1
    fences = (q1 - k * iqr, q3 + k * iqr, q1 - far_k * iqr, q3 + far_k * iqr)
    with np.errstate(invalid="ignore"):
        outside = present & ((array < fences[0]) | (array > fences[1]))
        far = present & ((array < fences[2]) | (array > fences[3]))
    where, far_where = np.flatnonzero(outside), np.flatnonzero(far)
    return OutlierReport(
        int(sample.size),
        q1,
        q3,
        iqr,
        k,
        far_k,
        *fences,
        tuple(int(i) for i in where),
        tuple(float(array[i]) for i in where),
        tuple(int(i) for i in far_where),
        tuple(float(array[i]) for i in far_where),
    )
