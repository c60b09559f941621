"""The smallest difference a comparison of summary.csv rows with a reference row could detect, so that a "not
distinguishable" sentence without comparisons.csv at hand can say how large a difference it could have seen.

`detectable_against` gives each row the smallest relative difference of means a two-sided two-sample t test with
its and the reference's sizes and spreads detects at 80 % power and alpha / m, m the rows compared
(`archbench.stats.power.welch_detectable_pct`; alpha / m is Holm's strictest step, taken for every rank:
conservative). The planned comparisons of comparisons.csv carry their own minimum detectable difference, that of
their pre-declared test (archbench.report.studies.statistics.comparisons).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from archbench import stats
from archbench.stats.power import DEFAULT_POWER, holm_alpha, welch_detectable_pct


def detectable_against(
    rows: pd.DataFrame,
    reference: Mapping[str, Any],
    alpha: float = stats.DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
) -> pd.Series:
    """For summary.csv rows compared with one reference row (e.g. our architectures against nginx at a depth): the
    smallest detectable difference of each row's mean from the reference's, percent, at alpha / len(rows) (the
    family is the rows), from summary.csv's mean, sd and n. For a "not distinguishable" sentence that has no
    comparisons.csv at hand."""
    level = holm_alpha(alpha, len(rows))

    def one(row: Mapping[str, Any]) -> float:
        numbers = [pd.to_numeric(r.get(k), errors="coerce") for r in (row, reference) for k in ("mean", "sd", "n")]
        mean_a, sd_a, n_a, mean_b, sd_b, n_b = (float(v) for v in numbers)
        if math.isnan(n_a) or math.isnan(n_b):  # nothing measured
            return math.nan
        return welch_detectable_pct(mean_a, sd_a, int(n_a), mean_b, sd_b, int(n_b), level, power)

    return pd.Series([one(row) for _, row in rows.iterrows()], index=rows.index, dtype=float)
