"""Can an open_loop run's latencies be taken as the server's? Four checks of a parsed record.

- sustained: the kept-up ratio (kept_up_ratio) within +-5% of 1; else the server (or the client) did not sustain
  the load and the percentiles describe a queue that grew all run long ("did_not_sustain"). The ratio is completed
  over scheduled requests where the client counts them (open_loop; a count ratio cannot exceed 1, so at least 95%
  completed), else achieved over offered rate (wrk2, oha): a one-second Poisson schedule varies its own rate by
  about 1%, so the rate mixes the schedule's noise into the server's verdict and the counts do not. The same ratio
  at least 1 - 5% is `kept_up` (the latency knee's "did not fall behind": no upper bound).
- client_bound: the client's CPU time over its wall time, per CPU its threads could use, at or over
  95%: the client, not the server, may be what saturated ("client_bound").
- trend: the least-squares slope of the per-second completions (archbench.stats.drift), flagged when
  it is significant (p < 0.01) and moves the rate by 5% or more over the window ("rate_trend"): a
  run that had not settled, or a server that fell behind.
- enough samples: a percentile q rests on the samples above it; with fewer than 10 of them,
  N * (1 - q/100) < 10, it is flagged ("few_samples_p99_9" ...): p99 needs 1,000 samples, p99.9
  10,000.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from archbench.measure.load_bound import CLIENT_BOUND_BUSY
from archbench.stats.drift import relative_slope

RATE_TOLERANCE = 0.05
TREND_P_VALUE = 0.01
TREND_CHANGE = 0.05
TAIL_SAMPLES = 10
PERCENTILES = {"50": 50.0, "90": 90.0, "99": 99.0, "99.9": 99.9}


def achieved_ratio(record: Mapping[str, Any]) -> float:
    """Achieved over offered rate (NaN without an offered rate)."""
    offered = record.get("offered_rate")
    achieved = record.get("requests_per_sec")
    if not offered or achieved is None:
        return math.nan
    return achieved / offered


def counted(record: Mapping[str, Any]) -> bool:
    """Whether the record has the client's request counts, scheduled and completed (open_loop's)."""
    counts = record.get("counts") or {}
    try:
        scheduled, completed = float(counts["scheduled"]), float(counts["completed"])
    except (KeyError, TypeError, ValueError):
        return False
    return scheduled > 0 and not math.isnan(completed)


def kept_up_ratio(record: Mapping[str, Any], offered_rate: float | None = None) -> float:
    """Completed over scheduled requests where the client counts them (counted), else achieved over offered rate
    (`offered_rate` when given: the runner's, for clients whose output lacks it; NaN without one)."""
    if counted(record):
        counts = record["counts"]
        return float(counts["completed"]) / float(counts["scheduled"])
    if offered_rate is not None:
        record = {**record, "offered_rate": offered_rate}
    return achieved_ratio(record)


def kept_up(ratio: float, tolerance: float = RATE_TOLERANCE) -> bool:
    """A kept_up_ratio of at least 1 - tolerance: the server did not fall behind (NaN: it did)."""
    return ratio >= 1.0 - tolerance - 1e-12  # 475 of 500 is 95%, rounding aside


def ratio_sustained(ratio: float, tolerance: float = RATE_TOLERANCE) -> bool:
    """A kept_up_ratio within +-tolerance of 1: kept up, and (for the rate a client without counts reports) not
    over the offered rate by more than the tolerance either."""
    return kept_up(ratio, tolerance) and ratio <= 1.0 + tolerance + 1e-12


def sustained(record: Mapping[str, Any], tolerance: float = RATE_TOLERANCE) -> bool:
    return ratio_sustained(kept_up_ratio(record), tolerance)


def client_bound(record: Mapping[str, Any], busy: float = CLIENT_BOUND_BUSY) -> bool:
    fraction = record.get("cpu_busy_fraction")
    return fraction is not None and fraction >= busy


def full_seconds(record: Mapping[str, Any]) -> list[int]:
    """The per-second completions, without a last second the window only partly covers."""
    series = list(record["per_second"]["completed"])
    duration = float(record["duration_s"])
    if series and duration < len(series):
        series = series[:-1]
    return series


def rate_trend(record: Mapping[str, Any]) -> dict[str, Any]:
    """The trend of the per-second completions: relative slope per second, p-value, change over the
    window, and whether it is flagged."""
    series = full_seconds(record)
    fit = relative_slope(range(len(series)), series)
    change = fit.relative * max(len(series) - 1, 0)
    flagged = not math.isnan(fit.p_value) and fit.p_value < TREND_P_VALUE and abs(change) >= TREND_CHANGE
    return {"relative_slope_per_s": fit.relative, "p_value": fit.p_value, "change": change, "flagged": flagged}


def samples_needed(q: float, tail: int = TAIL_SAMPLES) -> int:
    """Samples for `tail` of them to lie above the q-th percentile: 1,000 for p99, 10,000 for p99.9."""
    return math.ceil(round(tail / (1 - q / 100), 6))


def enough_samples(record: Mapping[str, Any]) -> dict[str, bool]:
    n = record["latency_ns"]["count"]
    return {key: n >= samples_needed(q) for key, q in PERCENTILES.items()}


def assess(record: Mapping[str, Any], tolerance: float = RATE_TOLERANCE) -> dict[str, Any]:
    """Every check of the record, and `flags` naming those it fails (empty: the run can be trusted)."""
    trend = rate_trend(record)
    samples = enough_samples(record)
    result = {
        "achieved_ratio": achieved_ratio(record),
        "kept_up_ratio": kept_up_ratio(record),
        "sustained": sustained(record, tolerance),
        "cpu_busy_fraction": record.get("cpu_busy_fraction"),
        "client_bound": client_bound(record),
        "trend": trend,
        "enough_samples": samples,
    }
    flags = []
    if not result["sustained"]:
        flags.append("did_not_sustain")
    if result["client_bound"]:
        flags.append("client_bound")
    if trend["flagged"]:
        flags.append("rate_trend")
    flags.extend(f"few_samples_p{key.replace('.', '_')}" for key, ok in samples.items() if not ok)
    result["flags"] = flags
    return result
