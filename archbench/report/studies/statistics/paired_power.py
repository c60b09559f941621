"""The smallest difference each unpaired comparison of comparisons.csv could detect, and the facts that let a
"not significant" sentence say how large a difference it could have seen.

Every comparison of a family of m (comparisons.csv's `family_size`) gets `detectable_pct`: the smallest
relative difference of means a two-sided two-sample t test with its groups' sizes and spreads detects at
80 % power and alpha / m (`archbench.stats.power.welch_detectable_pct`; alpha / m is Holm's strictest step,
taken for every rank: conservative). `power_alpha` says which level that was.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from archbench import stats
from archbench.report.formats import fmt_pct, truthy
from archbench.stats.power import DEFAULT_POWER, holm_alpha, welch_detectable_pct

POWER_PCT = round(100 * DEFAULT_POWER)  # the power every detectable difference is stated at, in percent


def add_detectable_differences(
    frame: pd.DataFrame,
    values: Mapping[str, np.ndarray],
    alpha: float = stats.DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
) -> pd.DataFrame:
    """comparisons.csv's frame with `power_alpha` and `detectable_pct` per row (`values`: config id -> trials)."""
    if frame.empty:
        return frame
    frame = frame.copy()
    empty = np.array([])
    levels, detectable = [], []
    for _, row in frame.iterrows():
        level = holm_alpha(alpha, int(row.get("family_size") or 0))
        a, b = values.get(str(row["config_a"]), empty), values.get(str(row["config_b"]), empty)
        levels.append(level)
        detectable.append(
            welch_detectable_pct(
                stats.sample_mean(a),
                stats.sample_sd(a),
                a.size,
                stats.sample_mean(b),
                stats.sample_sd(b),
                b.size,
                level,
                power,
            )
        )
    frame["power_alpha"] = levels
    frame["detectable_pct"] = detectable
    return frame


def detectable_facts(frame: pd.DataFrame, power: float = DEFAULT_POWER) -> dict[str, Any]:
    """For the tested comparisons not significant after Holm: how many have a detectable difference, and its
    median and range (formatted), for the "it could have detected differences of X % or more" phrase."""
    if frame.empty or "detectable_pct" not in frame:
        return {"undetected": 0}
    tested = frame[frame["test"] != "none"]
    kept = tested[~tested["reject_holm"].map(truthy)]
    values = pd.to_numeric(kept["detectable_pct"], errors="coerce").dropna()
    if values.empty:
        return {"undetected": 0}
    return {
        "undetected": len(values),
        "detectable_median": fmt_pct(values.median(), 0),
        "detectable_min": fmt_pct(values.min(), 0),
        "detectable_max": fmt_pct(values.max(), 0),
        "power_pct": round(100 * power),
    }


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
