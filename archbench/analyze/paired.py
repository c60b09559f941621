"""paired-ratios.csv: every configuration against its reference measured in the same rounds.

Rounds as blocks (archbench.config.plan: round k is repetition k of every configuration, shuffled), so
the trial of a configuration and the reference's trial with the same `repetition` ran in the same round.
For each configuration and each metric of interest (throughput `requests_per_sec`; server CPU per request
`server_cpu_us_per_request`) the row holds:

* the paired ratio to the reference (`archbench.stats.paired.paired_log_ratio`: geometric mean of the
  per-round ratios, Student-t interval of the log ratios over rounds; rounds where either side has no
  ok measurement are dropped and counted in `n_dropped`), its half-width as % of the ratio, and a
  seeded bootstrap over rounds as a check (`bootstrap_low`, `bootstrap_high`);
* beside it the unpaired figures: the ratio of the two means with the delta-method interval of
  `archbench.stats.ratio_ci_from_stats` (two independent samples);
* the minimum detectable difference of each, the smallest true difference it detects with 80 % power
  (`archbench.stats.power`, each effect checked against that power after it is solved) at alpha / m, m the
  number of compared pairs with an interval (Holm's strictest step, for every comparison), and whether it was
  computed, is undefined (fewer than two rounds or trials) or was not computable (`detectable_status`,
  `unpaired_detectable_status`);
* `client_bound`: the load generator set the rate (trials.csv `client_bound`) in at least half of the
  paired rounds on either side; such a pair compares server CPU per request (client-independent), every
  other pair throughput. `compared` marks the metric the report compares, and the Holm-adjusted p
  (`p_holm`, `reject_holm`) is over the compared rows.

The reference at a point (pipeline depth and POINT_FIELDS: connections, wrk threads, duration,
response, load generator, protocol) is the reference floor "pong" when the campaign measured it there, else
nginx; among several configurations of it (worker counts) the one with the highest mean throughput, as
summary.csv's `nginx_reference`. Reference configurations are not compared with themselves; with pong as
the reference, nginx is compared with it like every other configuration.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict

from archbench import stats
from archbench.analyze import outliers
from archbench.analyze.fields import DEFAULT_PIPELINE, POINT_FIELDS
from archbench.analyze.values import key_text
from archbench.measure.adaptive import CLIENT_BOUND_SHARE, CPU_PER_REQUEST, REFERENCE_PREFERENCE, THROUGHPUT
from archbench.stats.paired import paired_log_ratio, paired_log_ratio_bootstrap
from archbench.stats.power import holm_alpha, paired_detectable_status, welch_detectable_status

PAIRED_CSV = "paired-ratios.csv"
# The reference floor (source 002's "pong") where measured, else nginx: the same preference adaptive stopping uses.
UPPER_BOUND_ARCHITECTURE = REFERENCE_PREFERENCE[0]
METRICS: tuple[str, ...] = (THROUGHPUT, CPU_PER_REQUEST)


class PairedRatioRow(BaseModel):
    """One row of paired-ratios.csv (NaN where a statistic is undefined)."""

    model_config = ConfigDict(extra="forbid")

    config_id: str
    variant: str
    architecture: str
    pipeline: int
    connections: int
    reference: str
    reference_variant: str
    reference_architecture: str
    metric: str
    compared: bool
    client_bound: bool
    n_rounds: int
    n_dropped: int
    ratio: float
    low: float
    high: float
    half_width_pct: float
    sd_log: float
    p_value: float
    p_holm: float
    reject_holm: bool
    family_size: int
    power_alpha: float
    detectable_pct: float
    detectable_status: str
    bootstrap_low: float
    bootstrap_high: float
    n_a: int
    n_b: int
    unpaired_ratio: float
    unpaired_low: float
    unpaired_high: float
    unpaired_half_width_pct: float
    unpaired_detectable_pct: float
    unpaired_detectable_status: str


COLUMNS: tuple[str, ...] = tuple(PairedRatioRow.model_fields)


def closed_loop_measured_ok(trials: pd.DataFrame) -> pd.DataFrame:
    """The measured ok trials summary.csv uses (flagged ones included), closed-loop only: an open-loop trial
    (offered_rate set) has no saturation throughput to compare."""
    if trials.empty or "repetition" not in trials:
        return trials.iloc[0:0]
    measured = outliers.measured_ok_undisturbed(trials)
    if "offered_rate" in measured:
        measured = measured[pd.to_numeric(measured["offered_rate"], errors="coerce").isna()]
    return measured


def point_key(row: Mapping[str, Any], fields: tuple[str, ...]) -> tuple[str, ...]:
    depth = key_text(row.get("pipeline")) or str(DEFAULT_PIPELINE)
    return (depth, *(key_text(row.get(f)) for f in fields))


def references(measured: pd.DataFrame) -> dict[tuple[str, ...], str]:
    """Point -> config id of its reference (pong preferred, then nginx; the fastest configuration of it)."""
    fields = tuple(f for f in POINT_FIELDS if f in measured)
    chosen: dict[tuple[str, ...], tuple[int, float, str]] = {}
    for config_id, rows in measured.groupby("config_id", sort=False):
        architecture = str(rows["architecture"].iloc[0])
        if architecture not in REFERENCE_PREFERENCE:
            continue
        rank = REFERENCE_PREFERENCE.index(architecture)
        mean = float(pd.to_numeric(rows[THROUGHPUT], errors="coerce").mean())
        if math.isnan(mean):
            continue
        key = point_key(rows.iloc[0], fields)
        candidate = (rank, -mean, str(config_id))
        if key not in chosen or candidate < chosen[key]:
            chosen[key] = candidate
    return {key: value[2] for key, value in chosen.items()}


def by_round(rows: pd.DataFrame, column: str) -> pd.Series:
    """Values of one configuration indexed by round (repetition). Disturbed trials (trials.csv `disturbed`) are left
    out: a round whose trial was disturbed and run again (archbench.measure.reruns) takes the undisturbed re-run, and
    a round with no undisturbed trial has no value. A round measured twice, neither disturbed, keeps its mean."""
    if "disturbed" in rows:
        rows = rows[~outliers.truthy(rows["disturbed"])]
    values = pd.to_numeric(rows[column], errors="coerce") if column in rows else pd.Series(math.nan, index=rows.index)
    rounds = pd.to_numeric(rows["repetition"], errors="coerce")
    return values.groupby(rounds).mean()


def _flag_by_round(rows: pd.DataFrame) -> pd.Series:
    flags = (
        rows["client_bound"].fillna(False).astype(bool)
        if "client_bound" in rows
        else pd.Series(False, index=rows.index)
    )
    return flags.groupby(pd.to_numeric(rows["repetition"], errors="coerce")).any()


def _pair_rows(
    config_rows: pd.DataFrame,
    reference_rows: pd.DataFrame,
    *,
    seed: int | None,
    resamples: int,
) -> list[dict[str, Any]]:
    first, reference = config_rows.iloc[0], reference_rows.iloc[0]
    rounds = sorted(set(config_rows["repetition"].dropna()) | set(reference_rows["repetition"].dropna()))
    bound_a = _flag_by_round(config_rows).reindex(rounds, fill_value=False)
    bound_b = _flag_by_round(reference_rows).reindex(rounds, fill_value=False)
    client_bound = bool(rounds) and float((bound_a | bound_b).mean()) >= CLIENT_BOUND_SHARE
    out = []
    for metric in METRICS:
        a = by_round(config_rows, metric).reindex(rounds)
        b = by_round(reference_rows, metric).reindex(rounds)
        paired = paired_log_ratio(a.to_numpy(), b.to_numpy())
        boot = paired_log_ratio_bootstrap(a.to_numpy(), b.to_numpy(), seed=seed, resamples=resamples)
        sample_a, sample_b = stats.as_sample(a), stats.as_sample(b)
        mean_a, mean_b = stats.sample_mean(sample_a), stats.sample_mean(sample_b)
        sd_a, sd_b = stats.sample_sd(sample_a), stats.sample_sd(sample_b)
        unpaired, interval = stats.ratio_ci_from_stats(mean_a, sd_a, sample_a.size, mean_b, sd_b, sample_b.size)
        out.append(
            {
                "config_id": str(first["config_id"]),
                "variant": str(first.get("variant") or first["config_id"]),
                "architecture": str(first["architecture"]),
                "pipeline": int(float(first.get("pipeline") or DEFAULT_PIPELINE)),
                "connections": int(float(first["connections"])),
                "reference": str(reference["config_id"]),
                "reference_variant": str(reference.get("variant") or reference["config_id"]),
                "reference_architecture": str(reference["architecture"]),
                "metric": metric,
                "compared": metric == (CPU_PER_REQUEST if client_bound else THROUGHPUT),
                "client_bound": client_bound,
                "n_rounds": paired.n,
                "n_dropped": paired.dropped,
                "ratio": paired.ratio,
                "low": paired.ci.low,
                "high": paired.ci.high,
                "half_width_pct": paired.half_width_pct,
                "sd_log": paired.sd_log,
                "p_value": paired.p_value,
                "bootstrap_low": boot.ci.low,
                "bootstrap_high": boot.ci.high,
                "n_a": int(sample_a.size),
                "n_b": int(sample_b.size),
                "unpaired_ratio": unpaired,
                "unpaired_low": interval.low,
                "unpaired_high": interval.high,
                "unpaired_half_width_pct": stats.ratio(100.0 * interval.half_width, unpaired),
                "_unpaired_sd": (mean_a, sd_a, int(sample_a.size), mean_b, sd_b, int(sample_b.size)),
            }
        )
    return out


def _with_power(rows: list[dict[str, Any]], alpha: float, power: float) -> list[dict[str, Any]]:
    """Holm over the compared rows; the minimum detectable differences at alpha / m (m = compared rows tested)."""
    compared = [r for r in rows if r["compared"]]
    holm = stats.holm([r["p_value"] for r in compared], alpha)
    family = max(1, sum(1 for r in compared if r["n_rounds"] >= 2))
    level = holm_alpha(alpha, family)
    adjusted = {id(r): (p, reject) for r, p, reject in zip(compared, holm.adjusted, holm.reject, strict=True)}
    for row in rows:
        row["p_holm"], row["reject_holm"] = adjusted.get(id(row), (math.nan, False))
        row["family_size"] = family
        row["power_alpha"] = level
        row["detectable_pct"], row["detectable_status"] = paired_detectable_status(
            row["sd_log"], row["n_rounds"], level, power
        )
        row["unpaired_detectable_pct"], row["unpaired_detectable_status"] = welch_detectable_status(
            *row.pop("_unpaired_sd"), level, power
        )
    return rows


def paired_ratios(
    trials: pd.DataFrame,
    *,
    alpha: float = stats.DEFAULT_ALPHA,
    power: float = 0.8,
    seed: int | None = stats.DEFAULT_SEED,
    resamples: int = stats.DEFAULT_RESAMPLES,
) -> pd.DataFrame:
    """paired-ratios.csv from trials.csv's frame: two rows (metrics) per configuration with a reference at its point."""
    measured = closed_loop_measured_ok(trials)
    if measured.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    fields = tuple(f for f in POINT_FIELDS if f in measured)
    reference_of = references(measured)
    groups = {str(cid): rows for cid, rows in measured.groupby("config_id", sort=False)}
    rows: list[dict[str, Any]] = []
    for config_id, config_rows in groups.items():
        reference = reference_of.get(point_key(config_rows.iloc[0], fields))
        if reference is None or reference == config_id:
            continue
        if str(config_rows["architecture"].iloc[0]) == UPPER_BOUND_ARCHITECTURE:
            continue  # another pong configuration is no comparison with the reference floor
        rows += _pair_rows(config_rows, groups[reference], seed=seed, resamples=resamples)
    if not rows:
        return pd.DataFrame(columns=list(COLUMNS))
    validated = [PairedRatioRow.model_validate(r).model_dump() for r in _with_power(rows, alpha, power)]
    return pd.DataFrame(validated, columns=list(COLUMNS))


def compared_half_widths(frame: pd.DataFrame, metric: str, paired: bool = True) -> pd.Series:
    """The defined half-widths (% of the ratio) of the rows of `metric`, paired or unpaired."""
    if frame.empty:
        return pd.Series(dtype=float)
    column = "half_width_pct" if paired else "unpaired_half_width_pct"
    rows = frame[frame["metric"] == metric]
    return pd.to_numeric(rows[column], errors="coerce").dropna()
