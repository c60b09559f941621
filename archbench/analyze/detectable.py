"""The difference a comparison of summary.csv rows with a reference row could detect with 80 % power, so that a
"not distinguishable" sentence without comparisons.csv at hand can say how large a difference it could have seen.

`detectable_against` gives each row the difference detectable with 80 % power: the smallest relative difference of
means a two-sided two-sample t test with its and the reference's sizes and spreads detects with that power at
alpha / m (`archbench.stats.power.welch_detectable_status`, each effect checked against that power after it is
solved; alpha / m is Holm's strictest step, taken for every rank: conservative), m the family's size, by default
the rows. Beside it, whether it was computed, is undefined or was not computable. The planned comparisons of
comparisons.csv carry their own minimum detectable difference, the smallest ratio their pre-declared test calls
significant (archbench.analyze.planned_comparisons): another quantity, under another name. Analyze stage: how the
report prints the difference is archbench.report.formats.detectable_number.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from archbench import stats
from archbench.stats.power import DEFAULT_POWER, UNDEFINED, holm_alpha, welch_detectable_status

VALUE, STATUS = "detectable_pct", "detectable_status"


def detectable_with_status(
    rows: pd.DataFrame,
    reference: Mapping[str, Any],
    alpha: float = stats.DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
    family_size: int | None = None,
) -> pd.DataFrame:
    """For summary.csv rows compared with one reference row (e.g. our architectures against nginx at a depth): the
    difference of each row's mean from the reference's detectable with `power`, percent, at alpha / m (m:
    `family_size`, by default the rows), from summary.csv's mean, sd and n, and its status
    (archbench.stats.power: computed, undefined, not computable)."""
    level = holm_alpha(alpha, len(rows) if family_size is None else family_size)

    def one(row: Mapping[str, Any]) -> tuple[float, str]:
        numbers = [pd.to_numeric(r.get(k), errors="coerce") for r in (row, reference) for k in ("mean", "sd", "n")]
        mean_a, sd_a, n_a, mean_b, sd_b, n_b = (float(v) for v in numbers)
        if math.isnan(n_a) or math.isnan(n_b):  # nothing measured
            return math.nan, UNDEFINED
        return welch_detectable_status(mean_a, sd_a, int(n_a), mean_b, sd_b, int(n_b), level, power)

    results = [one(row) for _, row in rows.iterrows()]
    return pd.DataFrame(
        {VALUE: [value for value, _ in results], STATUS: [status for _, status in results]}, index=rows.index
    )


def detectable_against(
    rows: pd.DataFrame,
    reference: Mapping[str, Any],
    alpha: float = stats.DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
    family_size: int | None = None,
) -> pd.Series:
    """`detectable_with_status`'s values alone (NaN where undefined or not computable)."""
    return detectable_with_status(rows, reference, alpha, power, family_size)[VALUE].astype(float)
