"""The outcome of adaptive repetition: recorded by the runner, or derived from the trial records."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from archbench import stats
from archbench.analyze import outliers
from archbench.measure import adaptive

# =========================================================================== adaptive repetition


@dataclass(frozen=True)
class AdaptiveOutcome:
    """Whether the campaign used adaptive repetition, its target and what each configuration reached."""

    enabled: bool
    target_pct: float | None
    max_trials: int | None
    configs: dict[str, dict[str, Any]]
    source: str  # "recorded" (adaptive/adaptive-<UTC>.json), "derived" (from the trial records) or ""


def adaptive_outcome(campaign_dir: Path | None, meta: Mapping[str, Any], trials: pd.DataFrame) -> AdaptiveOutcome:
    """The adaptive phase's outcome: the latest recorded summary, else derived from the trials as the
    runner decides it (95 % t half-width of the ok, unflagged measured trials within ci_target % of the mean)."""
    parameters = meta.get("parameters") or {}
    target = parameters.get("ci_target")
    max_trials = parameters.get("max_trials")
    if target is None:
        return AdaptiveOutcome(False, None, None, {}, "")
    recorded = adaptive.latest_summary(campaign_dir) if campaign_dir is not None else None
    if recorded and isinstance(recorded.get("configs"), dict):
        return AdaptiveOutcome(True, float(target), max_trials, dict(recorded["configs"]), "recorded")
    configs: dict[str, dict[str, Any]] = {}
    if not trials.empty:
        measured = trials[~outliers.truthy(trials["warmup"])]
        for cid, rows in measured.groupby("config_id", sort=False):
            ok = rows[
                (rows["status"] == "ok") & ~outliers.truthy(rows.get("flagged", pd.Series(False, index=rows.index)))
            ]
            values = stats.as_sample(pd.to_numeric(ok["requests_per_sec"], errors="coerce"))
            interval = stats.mean_ci_t(values)
            mean = stats.sample_mean(values)
            half = stats.ratio(100.0 * interval.half_width, abs(mean)) if values.size >= 2 else math.nan
            met = not math.isnan(half) and half <= float(target)
            reached_max = max_trials is not None and len(rows) >= int(max_trials)
            configs[str(cid)] = {
                "trials": len(rows),
                "n": int(values.size),
                "mean": mean,
                "half_width_pct": half,
                "met": met,
                "stopped_by": "target" if met else ("max_trials" if reached_max else None),
            }
    return AdaptiveOutcome(True, float(target), max_trials, configs, "derived")
