"""The latency study's data (source 001): open-loop trial records -> trials, one summary row per
configuration (server x offered rate) of each set-up, and each server's knee.

Definitions (every one a parameter of `build_report`, stated in the generated text):

* client-bound trial: the load generator's CPUs were at least 95 % busy (`load.cpus_busy`, from
  /proc/stat) or its own CPU time was at least 95 % of its pinned CPUs' wall time
  (`load.cpu_utilisation`, or open_loop's own `cpu_busy_fraction`): the load generator, not the server,
  may have set the rate and the latencies. Client-bound trials are shown, marked and counted, and
  excluded from the knee.
* usable trial: a measured ok trial, not flagged, not client-bound and sustained (its achieved rate within
  +-5 % of the offered one, archbench.analyze.open_loop_checks); open_loop's trials also carry the other
  checks of that module (`checks`: a trend in the per-second rate, too few samples for a percentile).
* a trial meets a latency threshold T when it is a measured trial with status ok, not client-bound,
  not flagged (no socket error, timeout or non-2xx response), with p99 < T and an achieved rate of at
  least 99 % of the offered one;
* an offered rate qualifies when it has at least one such eligible trial and all of them meet T; the
  knee of a server under T is the highest qualifying offered rate; with none, the section says so and
  gives the lowest p99 measured (the measurement floor of that server);
* the load generator's floor: the lowest p99 measured at each server's lowest offered rate, the lowest
  of them across servers (an upper bound on what the tool itself adds: oha schedules its sends with
  tokio timers).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from archbench import stats
from archbench.analyze import analysis, open_loop_checks
from archbench.analyze.analysis import number
from archbench.config.plan import saturation_key
from archbench.data import storage
from archbench.report.common import (
    StudySource,
    insert_study_labels,
    load_busy,
    sorted_rows,
    study_trial_outcome,
    total_count,
)

PERCENTILES: tuple[str, ...] = ("50", "90", "99", "99.9")
SETUP_SWEEP = "sweep"
SETUP_FIXED = "source_001"

# Defaults of build_report's parameters (the definitions).
KNEE_P99_S = 0.001
KNEE_P99_ALT_S = 0.010
KNEE_ACHIEVED_FRACTION = 0.99
CLIENT_BOUND_BUSY = 0.95
# A floor at or above this fraction of the first threshold is "near" it: the criterion is barely measurable.
FLOOR_NEAR_FRACTION = 0.5

# Source 001's wrk2 results, quoted as cited facts (its README, cited as src001tooomasy in paper/references.bib):
# wrk2 -t16 -c2000 -d30s -R200000, latency avg and max as printed, requests/s and socket timeouts.
SOURCE_001_RATE = 200_000
SOURCE_001_CONNECTIONS = 2000
SOURCE_001_DURATION_S = 30
SOURCE_001_RESULTS: dict[str, dict[str, float]] = {
    "blocking": {"requests_per_sec": 97.96, "latency_avg_s": 1.12e-3, "latency_max_s": 5.66e-3, "timeouts": 28860},
    "thread_per_conn": {
        "requests_per_sec": 97015.23,
        "latency_avg_s": 1.76e-3,
        "latency_max_s": 33.41e-3,
        "timeouts": 14000,
    },
    "epoll": {"requests_per_sec": 117496.10, "latency_avg_s": 8.18, "latency_max_s": 13.74, "timeouts": 11},
    "reactor": {"requests_per_sec": 190965.36, "latency_avg_s": 16.64e-3, "latency_max_s": 1.01, "timeouts": 0},
}


@dataclass(frozen=True)
class Criteria:
    """The knee's definition; every value is a build_report parameter and appears in the text."""

    p99_s: float = KNEE_P99_S
    p99_alt_s: float = KNEE_P99_ALT_S
    achieved_fraction: float = KNEE_ACHIEVED_FRACTION
    client_bound_busy: float = CLIENT_BOUND_BUSY

    @property
    def thresholds(self) -> tuple[float, ...]:
        return (self.p99_s,) if self.p99_alt_s is None or self.p99_alt_s == self.p99_s else (self.p99_s, self.p99_alt_s)


def threshold_key(threshold_s: float) -> str:
    """0.001 -> "1ms" (a column-name and text fragment)."""
    return f"{threshold_s * 1000:g}ms"


def ms_text(threshold_s: float) -> str:
    """0.001 -> "1", 0.0005 -> "0.5": a threshold as the reader would write it."""
    return f"{threshold_s * 1000:g}"


def percent_text(fraction: float) -> str:
    """0.99 -> "99": a criterion's fraction as the text states it."""
    return f"{fraction * 100:.0f}"


@dataclass(frozen=True)
class Floor:
    p99_s: float
    server: str
    rate: float

    @property
    def known(self) -> bool:
        return not math.isnan(self.p99_s)


def load_generator_floor(knee_table: pd.DataFrame) -> Floor:
    """The lowest, across servers, of the p99 at each server's lowest offered rate (eligible trials)."""
    if knee_table.empty or knee_table["lowest_rate_p99_s"].isna().all():
        return Floor(math.nan, "", math.nan)
    best = knee_table.loc[knee_table["lowest_rate_p99_s"].idxmin()]
    return Floor(float(best["lowest_rate_p99_s"]), str(best["server"]), float(best["lowest_rate"]))


@dataclass(frozen=True)
class LatencyResults:
    """The latency campaigns read into frames (all empty without a campaign)."""

    sources: tuple[StudySource, ...]  # the fraction-sweep campaign, then source 001's (when found)
    criteria: Criteria
    trials: pd.DataFrame
    summary: pd.DataFrame
    knees: pd.DataFrame
    csv_files: dict[str, Path] = field(default_factory=dict)

    @property
    def campaigns(self) -> list[storage.Campaign]:
        return [s.campaign for s in self.sources if s.campaign is not None]

    @property
    def available(self) -> bool:
        return bool(self.campaigns)

    def setup(self, name: str) -> pd.DataFrame:
        if self.summary.empty:
            return self.summary
        return self.summary[self.summary["setup"] == name]

    @property
    def floor(self) -> Floor:
        return load_generator_floor(self.knees)


# --------------------------------------------------------------------------- trials


def _own_key(config: Mapping[str, Any]) -> str:
    try:
        return saturation_key(config)
    except (KeyError, ValueError, TypeError):
        return str(config.get("architecture"))


def latency_trial_row(record: Mapping[str, Any], campaign: storage.Campaign, criteria: Criteria) -> dict[str, Any]:
    config = dict(record.get("config") or {})
    load = dict(record.get("load") or {})
    server = dict(record.get("server") or {})
    tool = load.get("tool") or config.get("load_generator")
    parsed, outcome = study_trial_outcome(record, campaign.path, tool)
    parameters = campaign.meta.get("parameters") or {}
    own = _own_key(config)
    saturation_of = config.get("saturation_of") or own
    fixed = bool(parameters.get("rate_reference")) or saturation_of != own
    row: dict[str, Any] = {
        "campaign": record.get("campaign") or campaign.meta.get("campaign"),
        "trial_id": record.get("trial_id"),
        "config_id": record.get("config_id"),
        "setup": SETUP_FIXED if fixed else SETUP_SWEEP,
        "server_key": own,
    }
    for name in analysis.CONFIG_FIELDS:
        row[name] = config.get(name)
    row["pipeline"] = config.get("pipeline") or analysis.DEFAULT_PIPELINE
    offered = number(config.get("offered_rate"))
    row.update(
        offered_rate=offered,
        rate_fraction=number(config.get("rate_fraction")),
        saturation_rate=number(config.get("saturation_rate")),
        saturation_of=saturation_of,
        saturation_source=config.get("saturation_source"),
        tool=tool,
        work_us=number(config.get("work_us")),
        arrival=config.get("arrival") or ("fixed" if tool == "open_loop" else None),
    )
    row.update(outcome)
    p = parsed or {}
    latency = p.get("latency_s") or {}
    percentiles = latency.get("percentiles") or {}
    socket_errors = p.get("socket_errors") or {}
    achieved = number(p.get("requests_per_sec"))
    row.update(
        achieved_rate=achieved,
        achieved_fraction=stats.ratio(achieved, offered),
        total_requests=number(p.get("total_requests")),
        measured_duration_s=number(p.get("duration_s")),
        latency_max_s=number(latency.get("max")),
        latency_avg_s=number(latency.get("avg")),
        timeouts=number(socket_errors.get("timeout")),
        socket_errors=total_count(socket_errors) if socket_errors else math.nan,
        non_2xx=number(p.get("non_2xx")),
    )
    for q in PERCENTILES:
        row[f"latency_p{q.replace('.', '_')}_s"] = number(percentiles.get(q))
    utilisation = analysis.load_cpu_utilisation(load)
    busy = load_busy(load)
    own_busy = number(p.get("cpu_busy_fraction"))
    row.update(
        load_cpu_utilisation=utilisation,
        load_cpus_busy=busy,
        client_cpu_busy=own_busy,
        client_cpu_per_request_s=number(p.get("cpu_per_request_s")),
        send_lag_p99_s=number((p.get("send_lag_ns") or {}).get("p99")) / 1e9,
        # Whole life without a warm-up on it (analysis.server_cpu_seconds), over the window's responses.
        server_cpu_per_request_s=stats.ratio(analysis.server_cpu_seconds(server)[0], number(p.get("total_requests"))),
        server_cpus_busy=number(server.get("cpus_busy")),
        client_bound=any(
            not math.isnan(value) and value >= criteria.client_bound_busy for value in (busy, utilisation, own_busy)
        ),
        server_cpus=server.get("cpus"),
        load_cpus=load.get("cpus"),
        started_at=record.get("started_at"),
        finished_at=record.get("finished_at"),
    )
    eligible = row["status"] == "ok" and not row["warmup"] and not row["client_bound"]
    row["eligible"] = eligible
    row["sustained"] = bool(
        not math.isnan(row["achieved_fraction"])
        and abs(row["achieved_fraction"] - 1.0) <= open_loop_checks.RATE_TOLERANCE + 1e-12
    )
    row["checks"] = _checks(p, row["sustained"], row["client_bound"])
    row["usable"] = bool(eligible and not row["flagged"] and row["sustained"])
    for threshold in criteria.thresholds:
        p99 = row["latency_p99_s"]
        row[f"meets_{threshold_key(threshold)}"] = bool(
            eligible
            and not row["flagged"]
            and not math.isnan(p99)
            and p99 < threshold
            and not math.isnan(row["achieved_fraction"])
            and row["achieved_fraction"] >= criteria.achieved_fraction
        )
    return row


def _checks(parsed: Mapping[str, Any], sustained: bool, client_bound: bool) -> str:
    """The failed checks of a trial, `;`-separated: open_loop_checks.assess's for open_loop output (the rate, the
    client's CPU, the per-second trend, samples per percentile), else the rate and client checks alone."""
    flags: list[str] = []
    if parsed.get("tool") == "open_loop" and parsed.get("per_second") and parsed.get("latency_ns"):
        flags = list(open_loop_checks.assess(parsed)["flags"])
    if not sustained and "did_not_sustain" not in flags:
        flags.insert(0, "did_not_sustain")
    if client_bound and "client_bound" not in flags:
        flags.append("client_bound")
    return ";".join(flags)


def latency_trials(campaigns: Sequence[storage.Campaign], criteria: Criteria) -> pd.DataFrame:
    rows = []
    for campaign in campaigns:
        for record in campaign.trials:
            config = record.get("config") or {}
            if config.get("offered_rate") is None or config.get("proto", "http") != "http":
                continue  # closed-loop (saturation) and echo trials are not this section's
            rows.append(latency_trial_row(record, campaign, criteria))
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(
            columns=[
                "campaign",
                "trial_id",
                "config_id",
                "setup",
                "server_key",
                *analysis.CONFIG_FIELDS,
                "offered_rate",
                "warmup",
                "status",
                "flagged",
                "client_bound",
                "variant",
                "family",
            ]
        )
    insert_study_labels(frame)
    several = frame[frame["setup"] == SETUP_SWEEP]["connections"].nunique() > 1
    frame.insert(
        5,
        "server",
        [
            f"{v}, {int(c):,} conn." if several and s == SETUP_SWEEP else v
            for v, c, s in zip(frame["variant"], frame["connections"], frame["setup"], strict=True)
        ],
    )
    return frame


# --------------------------------------------------------------------------- summaries


def rate_summary(trials: pd.DataFrame, criteria: Criteria) -> pd.DataFrame:
    """One row per configuration (server x offered rate) of each set-up."""
    if trials.empty:
        return pd.DataFrame()
    rows = []
    for _, group in trials.groupby(["campaign", "config_id"], sort=False):
        measured = group[~group["warmup"].astype(bool)]
        ok = measured[measured["status"] == "ok"]
        eligible = ok[~ok["client_bound"].astype(bool)]
        first = group.iloc[0]
        achieved = stats.summarize(ok["achieved_rate"])
        row: dict[str, Any] = {
            name: first.get(name)
            for name in (
                "campaign",
                "config_id",
                "setup",
                "server_key",
                "server",
                "variant",
                "family",
                *analysis.CONFIG_FIELDS,
                "offered_rate",
                "rate_fraction",
                "saturation_rate",
                "saturation_of",
                "saturation_source",
                "tool",
            )
        }
        row.update(
            n_measured=len(measured),
            n=achieved.n,
            **analysis.outcome_counts(measured, ok),
            n_client_bound=int(ok["client_bound"].astype(bool).sum()),
            n_eligible=len(eligible),
            n_usable=int(ok["usable"].astype(bool).sum()),
            checks=analysis.FLAG_SEPARATOR.join(sorted({f for cs in ok["checks"] for f in str(cs).split(";") if f})),
            flags=analysis.FLAG_SEPARATOR.join(sorted({f for fs in ok["flags"] for f in str(fs).split(";") if f})),
            achieved_mean=achieved.mean,
            achieved_sd=achieved.sd,
            achieved_ci95_low=achieved.mean_ci.low,
            achieved_ci95_high=achieved.mean_ci.high,
            achieved_fraction_mean=stats.sample_mean(ok["achieved_fraction"]),
            latency_max_s_max=float(stats.as_sample(ok["latency_max_s"]).max())
            if stats.as_sample(ok["latency_max_s"]).size
            else math.nan,
            timeouts_mean=stats.sample_mean(ok["timeouts"]),
            socket_errors_mean=stats.sample_mean(ok["socket_errors"]),
            non_2xx_mean=stats.sample_mean(ok["non_2xx"]),
            load_cpus_busy_mean=stats.sample_mean(ok["load_cpus_busy"]),
            load_cpu_utilisation_mean=stats.sample_mean(ok["load_cpu_utilisation"]),
            eligible_p99_s_mean=stats.sample_mean(eligible["latency_p99_s"]),
            eligible_p99_s_min=float(stats.as_sample(eligible["latency_p99_s"]).min())
            if stats.as_sample(eligible["latency_p99_s"]).size
            else math.nan,
        )
        for q in PERCENTILES:
            column = f"latency_p{q.replace('.', '_')}_s"
            row[f"{column}_mean"] = stats.sample_mean(ok[column])
        for threshold in criteria.thresholds:
            key = threshold_key(threshold)
            if ok.empty:
                verdict = "none"
            elif eligible.empty:
                verdict = "excluded"
            else:
                verdict = "yes" if bool(eligible[f"meets_{key}"].all()) else "no"
            row[f"qualifies_{key}"] = verdict
        rows.append(row)
    summary = pd.DataFrame(rows)
    return sorted_rows(summary, ["setup", "connections", "offered_rate"]).reset_index(drop=True)


def knees(summary: pd.DataFrame, trials: pd.DataFrame, criteria: Criteria) -> pd.DataFrame:
    """One row per server of the fraction sweep: its knee under each threshold, floor and exclusions."""
    sweep = summary[summary["setup"] == SETUP_SWEEP] if not summary.empty else summary
    if sweep.empty:
        return pd.DataFrame()
    rows = []
    for key, group in sweep.groupby("server_key", sort=False):
        group = group.sort_values("offered_rate")
        first = group.iloc[0]
        server_trials = trials[
            (trials["server_key"] == key)
            & (trials["setup"] == SETUP_SWEEP)
            & ~trials["warmup"].astype(bool)
            & (trials["status"] == "ok")
        ]
        eligible = server_trials[~server_trials["client_bound"].astype(bool)]
        pool = eligible if not eligible.empty else server_trials
        p99 = pd.to_numeric(pool["latency_p99_s"], errors="coerce")
        lowest = pool.loc[p99.idxmin()] if p99.notna().any() else None
        with_eligible = group[group["n_eligible"] > 0]
        at_lowest = with_eligible.iloc[0] if not with_eligible.empty else None
        row: dict[str, Any] = {
            name: first.get(name)
            for name in (
                "campaign",
                "server_key",
                "server",
                "variant",
                "family",
                "architecture",
                "connections",
                "saturation_rate",
                "tool",
            )
        }
        row.update(
            rates=len(group),
            offered_min=float(group["offered_rate"].min()),
            offered_max=float(group["offered_rate"].max()),
            n_trials=int(group["n"].sum()),
            n_client_bound=int(group["n_client_bound"].sum()),
            n_flagged=int(group["n_flagged"].sum()),
            n_failed=int(group["n_failed"].sum()),
            n_excluded_rates=int((group[f"qualifies_{threshold_key(criteria.p99_s)}"] == "excluded").sum()),
            lowest_p99_s=float(p99.min()) if p99.notna().any() else math.nan,
            lowest_p99_rate=float(lowest["offered_rate"]) if lowest is not None else math.nan,
            lowest_p99_client_bound_only=bool(eligible.empty and not server_trials.empty),
            lowest_rate_p99_s=float(at_lowest["eligible_p99_s_mean"]) if at_lowest is not None else math.nan,
            lowest_rate=float(at_lowest["offered_rate"]) if at_lowest is not None else math.nan,
        )
        for threshold in criteria.thresholds:
            key_t = threshold_key(threshold)
            row[f"why_no_knee_{key_t}"] = _why_not(eligible, threshold, criteria)
            qualifying = group[group[f"qualifies_{key_t}"] == "yes"]
            if qualifying.empty:
                row[f"knee_{key_t}"] = math.nan
                row[f"knee_{key_t}_fraction"] = math.nan
                row[f"knee_{key_t}_p99_s"] = math.nan
            else:
                best = qualifying.loc[qualifying["offered_rate"].idxmax()]
                row[f"knee_{key_t}"] = float(best["offered_rate"])
                row[f"knee_{key_t}_fraction"] = stats.ratio(
                    float(best["offered_rate"]), number(best["saturation_rate"])
                )
                row[f"knee_{key_t}_p99_s"] = float(best["eligible_p99_s_mean"])
        rows.append(row)
    return sorted_rows(pd.DataFrame(rows), ["connections"]).reset_index(drop=True)


def _why_not(eligible: pd.DataFrame, threshold: float, criteria: Criteria) -> str:
    """Why the rates at which some eligible trial had its p99 below `threshold` still did not qualify
    (empty when no trial came below it): what the knee's other conditions caught."""
    key = threshold_key(threshold)
    p99 = pd.to_numeric(eligible["latency_p99_s"], errors="coerce")
    rates = set(eligible.loc[p99 < threshold, "offered_rate"])
    reasons = []
    for rate in sorted(rates):
        at = eligible[eligible["offered_rate"] == rate]
        if bool(at[f"meets_{key}"].all()):
            continue
        if at["flagged"].astype(bool).any():
            reasons.append("errors")
        if (pd.to_numeric(at["achieved_fraction"], errors="coerce") < criteria.achieved_fraction).any():
            reasons.append("achieved")
        if (pd.to_numeric(at["latency_p99_s"], errors="coerce") >= threshold).any():
            reasons.append("p99")
    return ";".join(dict.fromkeys(reasons))
