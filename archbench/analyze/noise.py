"""Noise diagnostics of a campaign: drift across rounds, autocorrelation in execution order, steal and interrupts.

Every statistic of the report assumes a configuration's trials are independent draws from one distribution.
Three things would break that, and each is checked here over the measured trials with status ok (the trials
summary.csv uses):

* Drift across rounds. A campaign runs in rounds, each configuration once per round (archbench.config.plan),
  so a machine that changes slowly shows as a trend of a configuration's values against its round number:
  the least-squares slope per round relative to the configuration's mean, with its 95 % interval and the
  p-value of no trend (archbench.stats.drift), Holm-adjusted over the configurations of each metric. The
  campaign's summary is the median slope, the number of configurations that drift after Holm, and one
  pooled slope of all residuals against their round.
* Autocorrelation in execution order. A trial's residual is its value relative to its configuration's
  mean, minus one; ordered by start time over the whole campaign, residuals of a machine without memory
  are white noise: autocorrelation at lags 1..k and the Ljung-Box test (archbench.stats.autocorrelation).
  Configurations with a single trial have no residual and are left out. A machine whose state changes
  between rounds but not within one makes a round's residuals alike: the share of the residuals' variance
  between rounds (eta squared, with the one-way ANOVA F test) says how much, and the autocorrelation is
  also computed with each round's mean residual removed (what pairing trials within rounds removes).
* Steal and interrupts. Trial records since `cpu_shares` existed say which share of the load interval's
  ticks the hypervisor stole and went to interrupts (archbench.measure.cpustat); a trial whose machine or
  CPU sets lost STEAL_FLAG_SHARE or more to steal is flagged. Older campaigns have none: that part says
  so (`StealSummary.recorded` is 0) and the others still run.
* Interference (archbench.measure.interference). A trial that other work, steal or uncounted ticks disturbed is
  not among the trials above (archbench.analyze.outliers.measured_ok_undisturbed leaves it out); `interference_counts` says how
  many there were, how many re-runs the runner added for them (archbench.measure.reruns) and how many rounds of a
  configuration were still disturbed after them.

Both metrics the report compares are diagnosed: throughput and server CPU time per request.
Written beside trials.csv: noise-drift.csv (one row per metric and configuration), noise-autocorrelation.csv
(one row per metric and lag) and noise-trials.csv (one row per trial: round, position, residuals, shares).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict
from scipy import stats as scipy_stats

from archbench import stats
from archbench.analyze.outliers import measured_ok_undisturbed, truthy
from archbench.measure.reruns import attempt, original_id
from archbench.stats.autocorrelation import Autocorrelation, autocorrelation
from archbench.stats.drift import RelativeSlope, relative_slope

METRICS: tuple[str, ...] = ("requests_per_sec", "server_cpu_us_per_request")
ALPHA = 0.05
STEAL_FLAG_SHARE = 0.02  # 2 % of a trial's ticks not run at all: worth naming, whatever the metric did
MIN_DRIFT_ROUNDS = 3
DRIFT_CSV = "noise-drift.csv"
AUTOCORRELATION_CSV = "noise-autocorrelation.csv"
TRIALS_CSV = "noise-trials.csv"
SHARE_PARTS = ("machine", "server_cpus", "load_cpus")
SHARE_NAMES = ("steal", "irq", "softirq", "iowait")
CAMPAIGN_RESIDUALS = "configuration mean"  # noise-autocorrelation.csv's `residual`: value / config mean - 1
WITHIN_ROUND_RESIDUALS = "configuration and round means"  # ... minus its round's mean residual


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DriftRow(_Row):
    """One configuration's trend of one metric against round number (noise-drift.csv)."""

    metric: str
    config_id: str
    variant: str | None
    n: int
    first_round: int
    last_round: int
    mean: float
    slope_pct_per_round: float
    low_pct: float
    high_pct: float
    p_value: float
    p_holm: float
    drifting: bool  # Holm-adjusted p below ALPHA


class AutocorrelationRow(_Row):
    """The residuals' autocorrelation at one lag, with Ljung-Box over lags 1..lag (noise-autocorrelation.csv)."""

    metric: str
    residual: str  # CAMPAIGN_RESIDUALS or WITHIN_ROUND_RESIDUALS
    n: int
    lag: int
    acf: float
    band: float  # the white-noise band: |acf| beyond it is unusual at lag-by-lag 95 %
    ljung_box_q: float
    ljung_box_p: float


class TrialNoiseRow(_Row):
    """One measured ok trial (noise-trials.csv); a share is NaN where the record has none."""

    trial_id: str
    config_id: str
    architecture: str | None
    round: int
    position: int  # 1-based rank by start time among these trials
    started_at: str | None
    residual_requests_per_sec: float
    residual_server_cpu_us_per_request: float
    machine_steal: float
    machine_irq: float
    machine_softirq: float
    machine_iowait: float
    server_cpus_steal: float
    load_cpus_steal: float
    steal_max: float
    high_steal: bool


@dataclass(frozen=True)
class DriftSummary:
    """One metric's drift over the campaign: how many configurations had enough rounds, the median relative
    slope (% of the mean per round), how many drift after Holm, and the pooled slope of all residuals."""

    metric: str
    tested: int
    median_pct: float
    drifting: int
    pooled: RelativeSlope


@dataclass(frozen=True)
class RoundEffect:
    """How much of one metric's residual variance lies between rounds (eta squared, 0..1), and the one-way
    ANOVA F test of equal round means."""

    metric: str
    rounds: int
    n: int
    share: float
    f_statistic: float
    p_value: float


@dataclass(frozen=True)
class StealSummary:
    """Steal and interrupt shares over the trials whose records have them (fractions of ticks, 0..1)."""

    trials: int
    recorded: int
    median_steal: float
    max_steal: float
    median_interrupts: float
    max_interrupts: float
    flagged: int
    flagged_ids: tuple[str, ...]
    threshold: float = STEAL_FLAG_SHARE


@dataclass(frozen=True)
class InterferenceCounts:
    """The measured ok trials of a campaign and other work: how many carry a verdict (`judged`; `recorded` of them
    by the runner, the rest derived from older records), how many were disturbed, how many were re-runs of a
    disturbed trial, and how many configuration rounds were still disturbed after their re-runs (the round's last
    trial disturbed)."""

    trials: int
    judged: int
    recorded: int
    disturbed: int
    reruns: int
    still_disturbed: int


@dataclass(frozen=True)
class NoiseDiagnostics:
    drift: pd.DataFrame  # DriftRow columns
    drift_summary: Mapping[str, DriftSummary]
    autocorrelation: Mapping[str, Autocorrelation]  # residuals from the configuration mean, per metric
    within_rounds: Mapping[str, Autocorrelation]  # the same with each round's mean residual removed
    round_effect: Mapping[str, RoundEffect]
    trials: pd.DataFrame  # TrialNoiseRow columns, in execution order
    steal: StealSummary
    interference: InterferenceCounts = field(default_factory=lambda: InterferenceCounts(0, 0, 0, 0, 0, 0))

    def write(self, processed_dir: Path) -> list[Path]:
        """The three CSVs into `processed_dir` (each always written, so none is stale)."""
        processed_dir = Path(processed_dir)
        processed_dir.mkdir(parents=True, exist_ok=True)
        frames = {
            DRIFT_CSV: self.drift,
            AUTOCORRELATION_CSV: pd.concat(
                [
                    autocorrelation_frame(self.autocorrelation, CAMPAIGN_RESIDUALS),
                    autocorrelation_frame(self.within_rounds, WITHIN_ROUND_RESIDUALS),
                ],
                ignore_index=True,
            ),
            TRIALS_CSV: self.trials,
        }
        written = []
        for name, frame in frames.items():
            path = processed_dir / name
            frame.to_csv(path, index=False, lineterminator="\n")
            written.append(path)
        return written


def _frame(rows: Sequence[_Row], model: type[_Row]) -> pd.DataFrame:
    columns = list(model.model_fields)
    return pd.DataFrame([row.model_dump() for row in rows], columns=columns)


def _numbers(values: Iterable[Any]) -> pd.Series:
    return pd.to_numeric(pd.Series(list(values), dtype=object), errors="coerce").astype(float)


# --------------------------------------------------------------------------- execution order and residuals


def execution_order(trials: pd.DataFrame) -> pd.DataFrame:
    """The measured ok trials with a round number, sorted by start time (then by planned order)."""
    rows = measured_ok_undisturbed(trials).copy() if not trials.empty else trials.copy()
    if rows.empty or "repetition" not in rows:
        return rows.iloc[0:0]
    rows["round"] = _numbers(rows["repetition"]).to_numpy()
    rows = rows[rows["round"].notna()]
    started = pd.to_datetime(rows.get("started_at"), utc=True, errors="coerce", format="ISO8601")
    rows = rows.assign(_started=started, _order=_numbers(rows.get("order_index", pd.Series(np.nan, rows.index))))
    rows = rows.sort_values(["_started", "_order"], kind="stable", na_position="last")
    return rows.drop(columns=["_started", "_order"]).reset_index(drop=True)


def residuals(rows: pd.DataFrame, metric: str) -> pd.Series:
    """value / its configuration's mean - 1; NaN for configurations with fewer than two values."""
    if metric not in rows:
        return pd.Series(np.nan, index=rows.index)
    values = _numbers(rows[metric]).set_axis(rows.index)
    by_config = values.groupby(rows["config_id"])
    mean = by_config.transform("mean")
    count = by_config.transform("count")
    relative = values / mean - 1.0
    return relative.where((count >= 2) & (mean != 0))


# --------------------------------------------------------------------------- drift


def drift_rows(rows: pd.DataFrame, metric: str) -> list[DriftRow]:
    """Per configuration with MIN_DRIFT_ROUNDS or more values: slope against round, Holm over them."""
    if metric not in rows or rows.empty:
        return []
    fits: list[tuple[str, pd.DataFrame, RelativeSlope]] = []
    for config_id, group in rows.groupby("config_id", sort=False):
        values = _numbers(group[metric])
        present = values.notna().to_numpy()
        if int(present.sum()) < MIN_DRIFT_ROUNDS:
            continue
        fit = relative_slope(group["round"].to_numpy(dtype=float), values.to_numpy())
        if math.isnan(fit.p_value):
            continue
        fits.append((str(config_id), group[present], fit))
    adjusted = stats.adjust_pvalues([fit.p_value for _, _, fit in fits], "holm", ALPHA)
    out = []
    for (config_id, group, fit), p_holm, reject in zip(fits, adjusted.adjusted, adjusted.reject, strict=True):
        out.append(
            DriftRow(
                metric=metric,
                config_id=config_id,
                variant=str(group["variant"].iloc[0]) if "variant" in group else None,
                n=fit.n,
                first_round=int(group["round"].min()),
                last_round=int(group["round"].max()),
                mean=fit.mean,
                slope_pct_per_round=100.0 * fit.relative,
                low_pct=100.0 * fit.ci.low,
                high_pct=100.0 * fit.ci.high,
                p_value=fit.p_value,
                p_holm=float(p_holm),
                drifting=bool(reject),
            )
        )
    return out


def drift_summary(metric: str, rows: Sequence[DriftRow], ordered: pd.DataFrame) -> DriftSummary:
    slopes = [row.slope_pct_per_round for row in rows]
    relative = residuals(ordered, metric) if not ordered.empty else pd.Series(dtype=float)
    # Residuals are centred on 1 + residual = value / mean, so the pooled slope is already relative.
    pooled = relative_slope(
        ordered["round"].to_numpy(dtype=float) if not ordered.empty else [], (1.0 + relative).to_numpy()
    )
    return DriftSummary(
        metric=metric,
        tested=len(rows),
        median_pct=float(np.median(slopes)) if slopes else math.nan,
        drifting=sum(row.drifting for row in rows),
        pooled=pooled,
    )


# --------------------------------------------------------------------------- steal and interrupts


def share(record: Mapping[str, Any] | None, part: str, name: str) -> float:
    """One share of a trial record's `cpu_shares` (NaN when absent)."""
    shares = (record or {}).get("cpu_shares") or {}
    value = (shares.get(part) or {}).get(name)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def steal_summary(table: pd.DataFrame) -> StealSummary:
    recorded = table[table["steal_max"].notna()] if not table.empty else table
    if recorded.empty:
        nan = math.nan
        return StealSummary(len(table), 0, nan, nan, nan, nan, 0, ())
    interrupts = recorded["machine_irq"] + recorded["machine_softirq"]
    flagged = recorded[recorded["high_steal"]]
    return StealSummary(
        trials=len(table),
        recorded=len(recorded),
        median_steal=float(recorded["machine_steal"].median()),
        max_steal=float(recorded["steal_max"].max()),
        median_interrupts=float(interrupts.median()),
        max_interrupts=float(interrupts.max()),
        flagged=len(flagged),
        flagged_ids=tuple(str(t) for t in flagged["trial_id"]),
    )


def trial_rows(ordered: pd.DataFrame, records: Mapping[str, Mapping[str, Any]]) -> list[TrialNoiseRow]:
    residual = {metric: residuals(ordered, metric) for metric in METRICS}
    rows = []
    for position, (index, trial) in enumerate(ordered.iterrows(), start=1):
        record = records.get(str(trial["trial_id"]))
        steal = {part: share(record, part, "steal") for part in SHARE_PARTS}
        defined = [v for v in steal.values() if not math.isnan(v)]
        steal_max = max(defined) if defined else math.nan
        started = trial.get("started_at")
        rows.append(
            TrialNoiseRow(
                trial_id=str(trial["trial_id"]),
                config_id=str(trial["config_id"]),
                architecture=None if pd.isna(trial.get("architecture")) else str(trial.get("architecture")),
                round=int(trial["round"]),
                position=position,
                started_at=None if started is None or pd.isna(started) else str(started),
                residual_requests_per_sec=float(residual["requests_per_sec"].loc[index]),
                residual_server_cpu_us_per_request=float(residual["server_cpu_us_per_request"].loc[index]),
                machine_steal=steal["machine"],
                machine_irq=share(record, "machine", "irq"),
                machine_softirq=share(record, "machine", "softirq"),
                machine_iowait=share(record, "machine", "iowait"),
                server_cpus_steal=steal["server_cpus"],
                load_cpus_steal=steal["load_cpus"],
                steal_max=steal_max,
                high_steal=bool(not math.isnan(steal_max) and steal_max >= STEAL_FLAG_SHARE),
            )
        )
    return rows


def interference_counts(trials: pd.DataFrame) -> InterferenceCounts:
    """InterferenceCounts of a trials frame (trials.csv: `disturbed`, `interference_source`, `reruns`)."""
    if trials.empty or "status" not in trials:
        return InterferenceCounts(0, 0, 0, 0, 0, 0)
    rows = trials[(trials["status"] == "ok") & ~truthy(trials.get("warmup", pd.Series(False, index=trials.index)))]
    source = rows.get("interference_source", pd.Series("", index=rows.index)).fillna("").astype(str)
    disturbed = truthy(rows.get("disturbed", pd.Series(False, index=rows.index)))
    reruns = rows.get("reruns", pd.Series("", index=rows.index)).fillna("").astype(str) != ""
    # A configuration's round is its original trial and that trial's re-runs: the last attempt is what it kept.
    ids = rows["trial_id"].astype(str)
    latest = pd.DataFrame({"round": ids.map(original_id), "attempt": ids.map(attempt), "disturbed": disturbed})
    latest = latest.sort_values("attempt", kind="stable").groupby("round").tail(1)
    return InterferenceCounts(
        trials=len(rows),
        judged=int((source != "").sum()),
        recorded=int((source == "recorded").sum()),
        disturbed=int(disturbed.sum()),
        reruns=int(reruns.sum()),
        still_disturbed=int(latest["disturbed"].sum()),
    )


# --------------------------------------------------------------------------- rounds


def within_round(table: pd.DataFrame, column: str) -> pd.Series:
    """A residual column minus its round's mean residual."""
    values = table[column].astype(float)
    return values - values.groupby(table["round"]).transform("mean")


def round_effect(table: pd.DataFrame, metric: str) -> RoundEffect:
    column = f"residual_{metric}"
    values = table[[column, "round"]].dropna() if not table.empty else pd.DataFrame(columns=[column, "round"])
    groups = [g[column].to_numpy(dtype=float) for _, g in values.groupby("round")]
    groups = [g for g in groups if g.size]
    n = int(sum(g.size for g in groups))
    if len(groups) < 2 or n <= len(groups):
        return RoundEffect(metric, len(groups), n, math.nan, math.nan, math.nan)
    everything = np.concatenate(groups)
    total = float(((everything - everything.mean()) ** 2).sum())
    between = float(sum(g.size * (g.mean() - everything.mean()) ** 2 for g in groups))
    test = scipy_stats.f_oneway(*groups)
    return RoundEffect(
        metric=metric,
        rounds=len(groups),
        n=n,
        share=between / total if total > 0 else math.nan,
        f_statistic=float(test.statistic),
        p_value=float(test.pvalue),
    )


# --------------------------------------------------------------------------- everything


def autocorrelation_frame(results: Mapping[str, Autocorrelation], residual: str) -> pd.DataFrame:
    rows = [
        AutocorrelationRow(
            metric=metric, residual=residual, n=r.n, lag=lag, acf=a, band=r.band, ljung_box_q=q, ljung_box_p=p
        )
        for metric, r in results.items()
        for lag, a, q, p in zip(r.lags, r.acf, r.q, r.p_values, strict=True)
    ]
    return _frame(rows, AutocorrelationRow)


def noise_diagnostics(trials: pd.DataFrame, records: Iterable[Mapping[str, Any]]) -> NoiseDiagnostics:
    """The diagnostics of a campaign from its trials frame (trials.csv) and its raw trial records."""
    by_id = {str(r.get("trial_id")): r for r in records}
    ordered = execution_order(trials)
    table = _frame(trial_rows(ordered, by_id), TrialNoiseRow)
    drift: list[DriftRow] = []
    summaries: dict[str, DriftSummary] = {}
    correlations: dict[str, Autocorrelation] = {}
    within: dict[str, Autocorrelation] = {}
    effects: dict[str, RoundEffect] = {}
    for metric in METRICS:
        rows = drift_rows(ordered, metric)
        drift += rows
        summaries[metric] = drift_summary(metric, rows, ordered)
        column = table[f"residual_{metric}"] if not table.empty else pd.Series(dtype=float)
        correlations[metric] = autocorrelation(column.to_numpy(dtype=float))
        centred = within_round(table, f"residual_{metric}") if not table.empty else column
        within[metric] = autocorrelation(centred.to_numpy(dtype=float))
        effects[metric] = round_effect(table, metric)
    return NoiseDiagnostics(
        drift=_frame(drift, DriftRow),
        drift_summary=summaries,
        autocorrelation=correlations,
        within_rounds=within,
        round_effect=effects,
        trials=table,
        steal=steal_summary(table),
        interference=interference_counts(trials),
    )
