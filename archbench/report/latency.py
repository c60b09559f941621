"""The latency section of the report (issue 6, source 001): open-loop campaigns -> CSVs, macros, tables, figures.

Source 001 ran wrk2 (`-t16 -c2000 -d30s -R200000`) against a single-threaded server, a thread per
connection capped at 1000 threads, a single-threaded epoll server and a reactor, and found epoll
latencies of seconds. A closed-loop client (wrk) waits for each answer before it sends again, so a
stalled server stalls the client's clock and the stall never shows in its latencies (coordinated
omission); an open-loop client schedules every request at a fixed rate and measures from the
scheduled time: wrk2 with its corrected histogram, or oha with `--latency-correction`.

`make latency-study` (notebooks/latency_study.ipynb, archbench/latency.py) writes three campaigns:
`NAME-closed` (wrk, each server's saturation throughput), `NAME` (each server offered fractions of
its own saturation) and `NAME-001` (source 001's set-up: its four architectures at 2000 connections
and one fixed rate for all, a fraction of the highest of their saturations). The report takes `NAME`
(`latency_campaign`) and, when it exists, `NAME-001` (or `latency_001_campaign`). Which set-up a trial
belongs to is read from the data: a campaign with a `rate_reference` parameter, or a trial whose
`saturation_of` is not its own saturation key, offered one rate to every server (source 001's
set-up); the other open-loop trials are the fraction sweep.

Definitions (every one a parameter of `build_report`, stated in the generated text):

* client-bound trial: the load generator's CPUs were at least 95 % busy (`load.cpus_busy`, from
  /proc/stat) or its own CPU time was at least 95 % of its pinned CPUs' wall time
  (`load.cpu_utilisation`): the load generator, not the server, may have set the rate and the
  latencies. Client-bound trials are shown, marked and counted, and excluded from the knee.
* a trial meets a latency threshold T when it is a measured trial with status ok, not client-bound,
  not flagged (no socket error, timeout or non-2xx response), with p99 < T and an achieved rate of at
  least 99 % of the offered one;
* an offered rate qualifies when it has at least one such eligible trial and all of them meet T; the
  knee of a server under T is the highest qualifying offered rate; with none, the section says so and
  gives the lowest p99 measured (the measurement floor of that server);
* the load generator's floor: the lowest p99 measured at each server's lowest offered rate, the lowest
  of them across servers (an upper bound on what the tool itself adds: oha schedules its sends with
  tokio timers). When it is near or above the first threshold (1 ms), the text says that criterion
  cannot be met with this tool on this machine, and the knee table also gives the knee under the
  second threshold (10 ms).

CSV outputs in processed/: `latency-trials.csv` (one row per trial record of the campaigns),
`latency-summary.csv` (one row per configuration: server x offered rate) and `latency-knees.csv`
(one row per server of the fraction sweep and threshold).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

from archbench.analyze import analysis
from archbench import stats
from archbench.data import storage  # noqa: E402
from archbench.analyze.analysis import key_text, number  # noqa: E402
from archbench.report.figures import MARKERS, STYLE, FigureFile, save_figure  # noqa: E402
from archbench.report.latex import (  # noqa: E402
    CLIENT_BOUND_MARK,
    FLAGGED_MARK,
    MISSING,
    Column,
    MacroSet,
    adjusted_table,
    escape,
    escape_command,
    figure_block,
    format_count,
    format_interval,
    format_list,
    format_ms,
    format_percent,
    format_significant,
    is_missing,
    notes_block,
    notes_for_marks,
    render_longtable,
    render_tabular,
    row_marks,
    stacked,
)
from archbench.report.echo import (  # noqa: E402
    StudySource,
    ci_error_bars,
    colours_for,
    compact_tick,
    distinct_values,
    hide_unused_panels,
    include_path,
    insert_study_labels,
    join_list,
    load_busy,
    load_campaign_or_reason,
    load_command,
    no_campaign_macros,
    panel_grid,
    provenance_sentence,
    remove_stale_files,
    sorted_rows,
    study_trial_outcome,
    total_count,
    tt,
    write_study_csvs,
)
from archbench.config.plan import saturation_key
from archbench.report.latex import campaign_provenance

RATES_TABLE_FILE = "latency-table-rates.tex"
KNEES_TABLE_FILE = "latency-table-knees.tex"
SOURCE_001_TABLE_FILE = "latency-table-001.tex"
ACHIEVED_FIGURE_FILE = "latency-figure-achieved.tex"
PERCENTILES_FIGURE_FILE = "latency-figure-percentiles.tex"
GENERATED_FILES = (RATES_TABLE_FILE, KNEES_TABLE_FILE, SOURCE_001_TABLE_FILE, ACHIEVED_FIGURE_FILE,
                   PERCENTILES_FIGURE_FILE)
ACHIEVED_FIGURE = "latency-achieved.pdf"
PERCENTILES_FIGURE = "latency-percentiles.pdf"
TRIALS_CSV = "latency-trials.csv"
SUMMARY_CSV = "latency-summary.csv"
KNEES_CSV = "latency-knees.csv"

OPEN_LOOP_TOOLS = ("oha", "wrk2")
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

# Source 001's wrk2 results, quoted as cited facts (its README, /work/shared/seeds/001_*.txt):
# wrk2 -t16 -c2000 -d30s -R200000, latency avg and max as printed, requests/s and socket timeouts.
SOURCE_001_RATE = 200_000
SOURCE_001_CONNECTIONS = 2000
SOURCE_001_DURATION_S = 30
SOURCE_001_RESULTS: dict[str, dict[str, float]] = {
    "blocking": {"requests_per_sec": 97.96, "latency_avg_s": 1.12e-3, "latency_max_s": 5.66e-3, "timeouts": 28860},
    "thread_per_conn": {"requests_per_sec": 97015.23, "latency_avg_s": 1.76e-3, "latency_max_s": 33.41e-3,
                        "timeouts": 14000},
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
    row.update(
        load_cpu_utilisation=utilisation,
        load_cpus_busy=busy,
        server_cpus_busy=number(server.get("cpus_busy")),
        client_bound=bool((not math.isnan(busy) and busy >= criteria.client_bound_busy)
                          or (not math.isnan(utilisation) and utilisation >= criteria.client_bound_busy)),
        server_cpus=server.get("cpus"),
        load_cpus=load.get("cpus"),
        started_at=record.get("started_at"),
        finished_at=record.get("finished_at"),
    )
    eligible = row["status"] == "ok" and not row["warmup"] and not row["client_bound"]
    row["eligible"] = eligible
    for threshold in criteria.thresholds:
        p99 = row["latency_p99_s"]
        row[f"meets_{threshold_key(threshold)}"] = bool(
            eligible and not row["flagged"] and not math.isnan(p99) and p99 < threshold
            and not math.isnan(row["achieved_fraction"]) and row["achieved_fraction"] >= criteria.achieved_fraction
        )
    return row


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
        return pd.DataFrame(columns=["campaign", "trial_id", "config_id", "setup", "server_key", *analysis.CONFIG_FIELDS,
                                     "offered_rate", "warmup", "status", "flagged", "client_bound", "variant", "family"])
    insert_study_labels(frame)
    several = frame[frame["setup"] == SETUP_SWEEP]["connections"].nunique() > 1
    frame.insert(5, "server", [f"{v}, {int(c):,} conn." if several and s == SETUP_SWEEP else v
                               for v, c, s in zip(frame["variant"], frame["connections"], frame["setup"])])
    return frame


# --------------------------------------------------------------------------- summaries


def rate_summary(trials: pd.DataFrame, criteria: Criteria) -> pd.DataFrame:
    """One row per configuration (server x offered rate) of each set-up."""
    if trials.empty:
        return pd.DataFrame()
    rows = []
    for (campaign, config_id), group in trials.groupby(["campaign", "config_id"], sort=False):
        measured = group[~group["warmup"].astype(bool)]
        ok = measured[measured["status"] == "ok"]
        eligible = ok[~ok["client_bound"].astype(bool)]
        first = group.iloc[0]
        achieved = stats.summarize(ok["achieved_rate"])
        row: dict[str, Any] = {name: first.get(name) for name in (
            "campaign", "config_id", "setup", "server_key", "server", "variant", "family", *analysis.CONFIG_FIELDS,
            "offered_rate", "rate_fraction", "saturation_rate", "saturation_of", "saturation_source", "tool")}
        row.update(
            n_measured=len(measured),
            n=achieved.n,
            **analysis.outcome_counts(measured, ok),
            n_client_bound=int(ok["client_bound"].astype(bool).sum()),
            n_eligible=len(eligible),
            flags=analysis.FLAG_SEPARATOR.join(sorted({f for fs in ok["flags"] for f in str(fs).split(";") if f})),
            achieved_mean=achieved.mean,
            achieved_sd=achieved.sd,
            achieved_ci95_low=achieved.mean_ci.low,
            achieved_ci95_high=achieved.mean_ci.high,
            achieved_fraction_mean=stats.sample_mean(ok["achieved_fraction"]),
            latency_max_s_max=float(stats.as_sample(ok["latency_max_s"]).max())
            if stats.as_sample(ok["latency_max_s"]).size else math.nan,
            timeouts_mean=stats.sample_mean(ok["timeouts"]),
            socket_errors_mean=stats.sample_mean(ok["socket_errors"]),
            non_2xx_mean=stats.sample_mean(ok["non_2xx"]),
            load_cpus_busy_mean=stats.sample_mean(ok["load_cpus_busy"]),
            load_cpu_utilisation_mean=stats.sample_mean(ok["load_cpu_utilisation"]),
            eligible_p99_s_mean=stats.sample_mean(eligible["latency_p99_s"]),
            eligible_p99_s_min=float(stats.as_sample(eligible["latency_p99_s"]).min())
            if stats.as_sample(eligible["latency_p99_s"]).size else math.nan,
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
        server_trials = trials[(trials["server_key"] == key) & (trials["setup"] == SETUP_SWEEP)
                               & ~trials["warmup"].astype(bool) & (trials["status"] == "ok")]
        eligible = server_trials[~server_trials["client_bound"].astype(bool)]
        pool = eligible if not eligible.empty else server_trials
        p99 = pd.to_numeric(pool["latency_p99_s"], errors="coerce")
        lowest = pool.loc[p99.idxmin()] if p99.notna().any() else None
        with_eligible = group[group["n_eligible"] > 0]
        at_lowest = with_eligible.iloc[0] if not with_eligible.empty else None
        row: dict[str, Any] = {name: first.get(name) for name in (
            "campaign", "server_key", "server", "variant", "family", "architecture", "connections", "saturation_rate",
            "tool")}
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
                row[f"knee_{key_t}_fraction"] = stats.ratio(float(best["offered_rate"]), number(best["saturation_rate"]))
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


WHY_TEXT = {
    "errors": "socket errors or timeouts",
    "achieved": "an achieved rate below the criterion",
    "p99": "another trial's p99 above the threshold",
}


def share(fraction: Any) -> str:
    """A fraction as a percentage, one decimal, or two significant digits below 1 % (0.049 %, not 0.0 %)."""
    if is_missing(fraction):
        return MISSING
    percent = float(fraction) * 100.0
    text = format_significant(percent, 2) if 0 < abs(percent) < 1 else f"{percent:,.1f}"
    return text + r"\,\%"


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


# --------------------------------------------------------------------------- the study


@dataclass(frozen=True)
class LatencyStudy:
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

    @property
    def reason(self) -> str:
        return (self.sources[0].reason or "") if self.sources else "no latency campaign was given"

    def setup(self, name: str) -> pd.DataFrame:
        if self.summary.empty:
            return self.summary
        return self.summary[self.summary["setup"] == name]

    @property
    def floor(self) -> Floor:
        return load_generator_floor(self.knees)

    def outputs(self, macros: MacroSet, paper_dir: Path, figures_dir: Path) -> dict[str, str]:
        """What archbench.report.build writes for this section: macros into `macros`, {generated file: LaTeX}."""
        return latency_outputs(macros, self, paper_dir, figures_dir)


def process_latency_campaigns(requested: str | None, raw_root: Path, processed_dir: Path | None,
                              source_001: str | None = None, criteria: Criteria | None = None) -> LatencyStudy:
    """Read the latency campaign and its source-001 sibling (`<requested>-001` unless named) and write the CSVs."""
    criteria = criteria or Criteria()
    raw_root = Path(raw_root)
    main = load_campaign_or_reason(requested, raw_root, "latency", "latency-study")
    sources = [main]
    sibling = source_001 or (f"{requested}-001" if requested else None)
    if sibling and sibling != requested:
        if (raw_root / sibling / storage.CAMPAIGN_FILE).is_file():
            sources.append(load_campaign_or_reason(sibling, raw_root, "source-001", "latency-study"))
        elif source_001:
            sources.append(load_campaign_or_reason(source_001, raw_root, "source-001", "latency-study"))
    campaigns = [s.campaign for s in sources if s.campaign is not None]
    trials = latency_trials(campaigns, criteria)
    summary = rate_summary(trials, criteria)
    knee_table = knees(summary, trials, criteria)
    csv_files: dict[str, Path] = {}
    if processed_dir is not None and not campaigns:
        remove_stale_files(processed_dir, (TRIALS_CSV, SUMMARY_CSV, KNEES_CSV))
    if processed_dir is not None and campaigns:
        csv_files = write_study_csvs(processed_dir, campaigns,
                                     {TRIALS_CSV: trials, SUMMARY_CSV: summary, KNEES_CSV: knee_table})
    return LatencyStudy(tuple(sources), criteria, trials, summary, knee_table, csv_files)


# --------------------------------------------------------------------------- figures


def _kilo(value: float, _position: int) -> str:
    if value >= 1e6:
        return f"{value / 1e6:g}M"
    if value >= 1e3:
        return f"{value / 1e3:g}k"
    return f"{value:g}"


def achieved_figure(study: LatencyStudy) -> Figure | None:
    """Achieved against offered rate (log-log), one line per server of the sweep; y = x dashed."""
    sweep = study.setup(SETUP_SWEEP)
    sweep = sweep[sweep["achieved_mean"].notna()] if not sweep.empty else sweep
    if sweep.empty or sweep["offered_rate"].nunique() < 2:
        return None
    servers = list(dict.fromkeys(sweep["server"]))
    colours = colours_for(servers)
    with plt.rc_context(STYLE):
        figure, axes = plt.subplots(figsize=(5.6, 3.8))
        low = float(sweep["offered_rate"].min()) * 0.8
        high = float(sweep["offered_rate"].max()) * 1.25
        axes.plot([low, high], [low, high], color="0.6", linestyle="--", linewidth=0.9, label="achieved = offered")
        for index, server in enumerate(servers):
            rows = sweep[sweep["server"] == server].sort_values("offered_rate")
            mean, yerr = ci_error_bars(rows, "achieved")
            axes.errorbar(rows["offered_rate"], mean, yerr=yerr, marker=MARKERS[index % len(MARKERS)],
                          markersize=4, capsize=2, linewidth=1.1, color=colours[server], label=server)
            bound = rows[rows["n_client_bound"] > 0]
            if not bound.empty:
                axes.scatter(bound["offered_rate"], bound["achieved_mean"], s=70, facecolors="none",
                             edgecolors="black", linewidths=0.8, zorder=5)
        if (sweep["n_client_bound"] > 0).any():
            axes.scatter([], [], s=70, facecolors="none", edgecolors="black", linewidths=0.8,
                         label="with client-bound trials")
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlim(low, high)
        for axis in (axes.xaxis, axes.yaxis):
            axis.set_major_formatter(FuncFormatter(_kilo))
            axis.set_minor_formatter(NullFormatter())
        axes.set_xlabel("Offered rate (requests/s, log scale)")
        axes.set_ylabel("Achieved rate (requests/s, log scale)\nmean, 95 % CI")
        axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.17), frameon=False, ncol=2)
    return figure


def percentiles_figure(study: LatencyStudy) -> Figure | None:
    """p50/p90/p99/p99.9/max (log ms) against offered rate, one panel per server of the sweep, with the
    knee thresholds and each server's knees."""
    sweep = study.setup(SETUP_SWEEP)
    if sweep.empty:
        return None
    servers = [s for s in dict.fromkeys(sweep["server"])
               if sweep[(sweep["server"] == s)]["latency_p99_s_mean"].notna().sum() >= 1]
    if not servers or sweep["offered_rate"].nunique() < 2:
        return None
    rows_n, columns = panel_grid(len(servers))
    lines = [("latency_p50_s_mean", "p50", "-", "o"), ("latency_p90_s_mean", "p90", "-", "s"),
             ("latency_p99_s_mean", "p99", "-", "^"), ("latency_p99_9_s_mean", "p99.9", "-", "D"),
             ("latency_max_s_max", "max", ":", "v")]
    criteria = study.criteria
    with plt.rc_context(STYLE):
        figure, panels = plt.subplots(rows_n, columns, figsize=(5.9, 0.9 + 2.1 * rows_n), sharey=True, squeeze=False,
                                      layout="constrained")
        for index, server in enumerate(servers):
            axes = panels[index // columns][index % columns]
            rows = sweep[sweep["server"] == server].sort_values("offered_rate")
            for line_index, (column, label, style, marker) in enumerate(lines):
                axes.plot(rows["offered_rate"], rows[column].to_numpy(dtype=float) * 1e3, linestyle=style,
                          marker=marker, markersize=3, linewidth=1.0, label=label, color=f"C{line_index}")
            bound = rows[rows["n_client_bound"] > 0]
            if not bound.empty:
                axes.scatter(bound["offered_rate"], bound["latency_p99_s_mean"] * 1e3, s=60, facecolors="none",
                             edgecolors="black", linewidths=0.8, zorder=5, label="client-bound trials")
            for threshold, style in zip(criteria.thresholds, ("--", "-.")):
                axes.axhline(threshold * 1e3, color="0.35", linestyle=style, linewidth=0.8)
            knee_row = study.knees[study.knees["server"] == server]
            if not knee_row.empty:
                for threshold, colour in zip(criteria.thresholds, ("0.1", "0.5")):
                    knee = knee_row.iloc[0][f"knee_{threshold_key(threshold)}"]
                    if not is_missing(knee):
                        axes.axvline(float(knee), color=colour, linestyle=":", linewidth=1.0)
            axes.set_yscale("log")
            axes.set_title(server, fontsize=8)
            axes.xaxis.set_major_formatter(FuncFormatter(_kilo))
            axes.yaxis.set_major_formatter(FuncFormatter(compact_tick))
        hide_unused_panels(panels, len(servers))
        for axes in panels[-1]:
            axes.set_xlabel("Offered rate (requests/s)")
        for row in panels:
            row[0].set_ylabel("Latency (ms, log)")
        handles, labels = [], []
        for axes in panels.flat:
            for handle, label in zip(*axes.get_legend_handles_labels()):
                if label not in labels:
                    handles.append(handle)
                    labels.append(label)
        from matplotlib.lines import Line2D

        for threshold, style in zip(criteria.thresholds, ("--", "-.")):
            handles.append(Line2D([], [], color="0.35", linestyle=style, linewidth=0.8))
            labels.append(f"{ms_text(threshold)} ms")
        handles.append(Line2D([], [], color="0.1", linestyle=":"))
        labels.append("knee")
        figure.legend(handles, labels, loc="outside lower center", frameon=False, ncol=5)
    return figure


def make_latency_figures(study: LatencyStudy, figures_dir: Path) -> dict[str, FigureFile | None]:
    figures_dir = Path(figures_dir)
    made: dict[str, FigureFile | None] = {"achieved": None, "percentiles": None}
    remove_stale_files(figures_dir, (ACHIEVED_FIGURE, PERCENTILES_FIGURE))
    for key, build, name in (("achieved", achieved_figure, ACHIEVED_FIGURE),
                             ("percentiles", percentiles_figure, PERCENTILES_FIGURE)):
        figure = build(study)
        if figure is not None:
            servers = tuple(dict.fromkeys(study.setup(SETUP_SWEEP)["server"]))
            made[key] = FigureFile(save_figure(figure, figures_dir / name), servers)
    return made


# --------------------------------------------------------------------------- tables


def _rate(value: Any) -> str:
    return format_count(value)


def _marks(row: pd.Series) -> str:
    # The latency tables count unsupported trials but do not mark them.
    return row_marks(row, client_bound=True, unsupported=False)


LATENCY_FLAGGED_NOTE = (
    FLAGGED_MARK + r"\,flagged: at least one measured trial had socket errors, timeouts or non-2xx "
    r"responses; flagged trials are included in the means, never meet a knee criterion, and are "
    r"counted in the trials CSV."
)


def _notes(rows: pd.DataFrame, criteria: Criteria) -> list[str]:
    client_bound = (
        CLIENT_BOUND_MARK + r"\,client-bound: in at least one measured trial the load generator's CPU "
        + f"was at least {criteria.client_bound_busy * 100:.0f}" + r"\,\% busy (\texttt{load.cpus\_busy} "
        r"or \texttt{load.cpu\_utilisation}); such trials are included in the means shown but excluded "
        r"from the knee."
    )
    return notes_for_marks(rows, flagged=LATENCY_FLAGGED_NOTE, unsupported=None, client_bound=client_bound)


VERDICT = {"yes": "yes", "no": "no", "excluded": "excl.", "none": MISSING}


def rates_table(study: LatencyStudy) -> str:
    sweep = study.setup(SETUP_SWEEP)
    if sweep.empty:
        return (r"\noindent The latency campaigns have no fraction-sweep trial (each server offered fractions of its "
                r"own saturation), so there is no table of latency against offered rate." + "\n")
    criteria = study.criteria
    # One block per server under a heading row (names are too long for a narrow first column).
    columns = [
        Column(stacked("Offered", "(req/s)"), "r"),
        Column(stacked("of sat-", "uration"), "r"),
        Column("$n$", "r"),
        Column(stacked("Achieved", "(req/s)"), "r"),
        Column(stacked("of", "offered"), "r"),
        Column(stacked("p50", "(ms)"), "r"),
        Column(stacked("p90", "(ms)"), "r"),
        Column(stacked("p99", "(ms)"), "r"),
        Column(stacked("p99.9", "(ms)"), "r"),
        Column(stacked("max", "(ms)"), "r"),
        Column(stacked("Time-", "outs"), "r"),
        *[Column(stacked("p99 $<$", f"{ms_text(t)}\\,ms"), "c") for t in criteria.thresholds],
    ]
    body, breaks = [], []
    previous = None
    for _, row in sweep.iterrows():
        if row["server"] != previous:
            breaks.append(len(body))
            body.append([f"\\multicolumn{{{len(columns)}}}{{@{{}}l}}{{\\textit{{{escape(row['server'])}}}}}"])
            previous = row["server"]
        body.append([
            _rate(row["offered_rate"]),
            format_percent(row["rate_fraction"]),
            format_count(row["n"]),
            _rate(row["achieved_mean"]) + _marks(row),
            share(row["achieved_fraction_mean"]),
            format_ms(row["latency_p50_s_mean"]),
            format_ms(row["latency_p90_s_mean"]),
            format_ms(row["latency_p99_s_mean"]),
            format_ms(row["latency_p99_9_s_mean"]),
            format_ms(row["latency_max_s_max"]),
            format_significant(row["timeouts_mean"], 3) if not is_missing(row["timeouts_mean"]) else MISSING,
            *[VERDICT.get(row[f"qualifies_{threshold_key(t)}"], MISSING) for t in criteria.thresholds],
        ])
    caption = (
        r"Open-loop latency against offered rate, each server offered fractions of its own closed-loop saturation "
        r"throughput: achieved rate and latency percentiles are means over the measured trials with status ok "
        r"(max: the largest of them), latency measured from each request's scheduled send; timeouts: mean per trial. "
        r"The last columns say whether the offered rate meets each knee criterion (p99 below the threshold and at "
        f"least {criteria.achieved_fraction * 100:.0f}" + r"\,\% of the offered rate achieved in every eligible "
        r"trial; excl.: every trial there was client-bound)."
    )
    return render_longtable(columns, body, caption, "tab:latency-rates", breaks,
                            notes=notes_block(_notes(sweep, criteria)))


def knees_table(study: LatencyStudy) -> str:
    table = study.knees
    if table.empty:
        return r"\noindent Without a fraction sweep there is no knee to compute." + "\n"
    criteria = study.criteria
    columns = [Column("Server", "l"), Column(stacked("Saturation", "(req/s)"), "r"), Column("Rates", "r")]
    for threshold in criteria.thresholds:
        columns += [Column(stacked(f"Knee, p99 $<$ {ms_text(threshold)}\\,ms", "(req/s)"), "r"),
                    Column(stacked("of sat-", "uration"), "r")]
    columns += [Column(stacked("Lowest p99", "(ms)"), "r"), Column(stacked("at", "(req/s)"), "r"),
                Column(stacked("Client-bound", "trials"), "r")]
    body = []
    for _, row in table.iterrows():
        cells = [escape(row["server"]), _rate(row["saturation_rate"]), format_count(row["rates"])]
        for threshold in criteria.thresholds:
            key = threshold_key(threshold)
            knee = row[f"knee_{key}"]
            cells += ["none" if is_missing(knee) else _rate(knee), format_percent(row[f"knee_{key}_fraction"])]
        lowest = format_ms(row["lowest_p99_s"]) + (CLIENT_BOUND_MARK if row["lowest_p99_client_bound_only"] else "")
        cells += [lowest, _rate(row["lowest_p99_rate"]), format_count(row["n_client_bound"])]
        body.append(cells)
    caption = (
        r"Knee of each server: the highest offered rate at which every eligible trial (measured, status ok, not "
        r"flagged, not client-bound) had its p99 below the threshold and achieved at least "
        f"{criteria.achieved_fraction * 100:.0f}" + r"\,\% of the offered rate (none: no rate qualified); "
        r"lowest p99: the lowest measured in any eligible trial (the server's measurement floor) and the offered "
        r"rate it was measured at; client-bound trials are excluded from both and counted."
    )
    notes = []
    if table["lowest_p99_client_bound_only"].any():
        notes.append(CLIENT_BOUND_MARK + r"\,every trial of this server was client-bound, so its lowest p99 is from "
                     r"client-bound trials.")
    return adjusted_table(caption, "tab:latency-knees", render_tabular(columns, body), notes_block(notes)) + "\n"


def source_001_table(study: LatencyStudy) -> str:
    fixed = study.setup(SETUP_FIXED)
    if fixed.empty:
        return (r"\noindent The latency campaigns have no trial of source~001's set-up (one fixed rate for all "
                r"servers), so there is no comparison with source~001." + "\n")
    # Connections and the offered rate are one value for all in source 001's set-up: the caption gives them,
    # and a column appears only if the rows differ.
    several_connections = fixed["connections"].nunique() > 1
    several_rates = fixed["offered_rate"].nunique() > 1
    columns = [
        Column("Server", "l"),
        *([Column(stacked("Conn-", "ections"), "r")] if several_connections else []),
        Column("$n$", "r"),
        *([Column(stacked("Offered", "(req/s)"), "r")] if several_rates else []),
        Column(stacked("Achieved", "(req/s)"), "r"), Column(stacked(r"95\,\% CI", "(req/s)"), "r"),
        Column(stacked("of", "offered"), "r"), Column(stacked("p99", "(ms)"), "r"), Column(stacked("max", "(ms)"), "r"),
        Column(stacked("Timeouts", "per trial"), "r"),
        Column(stacked("001:", "req/s"), "r"), Column(stacked("001:", "of offered"), "r"),
        Column(stacked("001:", "max (ms)"), "r"), Column(stacked("001:", "timeouts"), "r"),
    ]
    body = []
    for _, row in fixed.iterrows():
        cited = SOURCE_001_RESULTS.get(key_text(row["architecture"]))
        cells = [
            escape(row["variant"]),
            *([format_count(row["connections"])] if several_connections else []),
            format_count(row["n"]),
            *([_rate(row["offered_rate"])] if several_rates else []),
            _rate(row["achieved_mean"]) + _marks(row),
            format_interval(row["achieved_ci95_low"], row["achieved_ci95_high"]),
            share(row["achieved_fraction_mean"]), format_ms(row["latency_p99_s_mean"]),
            format_ms(row["latency_max_s_max"]),
            format_significant(row["timeouts_mean"], 3) if not is_missing(row["timeouts_mean"]) else MISSING,
        ]
        if cited:
            cells += [format_count(cited["requests_per_sec"]),
                      share(cited["requests_per_sec"] / SOURCE_001_RATE),
                      format_ms(cited["latency_max_s"]), format_count(cited["timeouts"])]
        else:
            cells += [MISSING] * 4
        body.append(cells)
    offered = join_list([format_count(r) for r in sorted(set(fixed["offered_rate"].dropna()))])
    connections = join_list([format_count(c) for c in sorted(set(fixed["connections"].dropna()))])
    caption = (
        r"Source~001's set-up: its four architectures, each offered the same rate, " + offered + r"\,requests/s (a "
        r"fraction of the highest of their closed-loop saturation throughputs), over " + connections + r" connections; "
        r"achieved rate (mean over the "
        r"measured trials with status ok and its Student-$t$ 95\,\% confidence interval), p99 (mean over trials), "
        r"max (the largest of the trials) and timeouts (mean per trial). The last four columns are source~001's own "
        r"wrk2 results at 200{,}000 requests/s over 2000 connections for 30\,s~\cite{src001tooomasy}, quoted as "
        r"published (requests/s, its share of the offered 200{,}000, maximum latency, socket timeouts in the run)."
    )
    return adjusted_table(caption, "tab:latency-001", render_tabular(columns, body, [0]),
                          notes_block(_notes(fixed, study.criteria))) + "\n"


# --------------------------------------------------------------------------- macros


def _tool_sentence(study: LatencyStudy) -> str:
    trials = study.trials
    if trials.empty:
        return "The latency campaigns hold no open-loop trial."
    tools = sorted({str(t) for t in trials["tool"].dropna()})
    versions = []
    for campaign in study.campaigns:
        recorded = (campaign_provenance(campaign.meta, campaign.trials).get("tools") or {})
        for tool in tools:
            version = recorded.get(tool)
            if version:
                versions.append(f"\\texttt{{{escape(str(version).splitlines()[0])}}}")
    versions = list(dict.fromkeys(versions))
    counts = {t: int((trials["tool"] == t).sum()) for t in tools}
    described = join_list([f"\\texttt{{{escape(t)}}} ({format_count(n)} trials)" for t, n in counts.items()])
    text = f"Every open-loop trial ran {described}"
    if versions:
        text += f", version {join_list(versions)} as recorded with the campaign"
    text += "."
    if "wrk2" in counts:
        text += (" wrk2 was used: its latency histogram is the corrected one, measured from each request's intended "
                 "send time (with \\texttt{-U} it also prints the uncorrected one, which we do not use).")
    if "oha" in counts:
        text += (" oha ran with \\texttt{-{}-latency-correction}, so each latency is measured from the request's "
                 "scheduled start at the offered rate (\\texttt{-q}), which is wrk2's model, and with "
                 "\\texttt{-{}-wait-ongoing-requests-after-deadline}, so the requests in flight at the end are "
                 "counted, not dropped.")
    return text


def _client_bound_sentence(study: LatencyStudy) -> str:
    trials = study.trials
    measured = trials[~trials["warmup"].astype(bool) & (trials["status"] == "ok")] if not trials.empty else trials
    if measured.empty:
        return ""
    bound = measured[measured["client_bound"].astype(bool)]
    threshold = f"{study.criteria.client_bound_busy * 100:.0f}"
    if bound.empty:
        return (f"No measured trial was client-bound (load generator CPU at least {threshold}\\,\\% busy), so no "
                "trial was excluded from the knee.")
    names = join_list(sorted({escape(s) for s in bound["server"]}))
    return (f"{format_count(len(bound))} of the {format_count(len(measured))} measured open-loop trials were "
            f"client-bound (the load generator's CPU at least {threshold}\\,\\% busy: {names}); they are marked in the "
            "tables and figures and excluded from the knee, because there the load generator, not the server, may "
            "have set the rate and the latencies.")


def _floor_sentence(study: LatencyStudy) -> str:
    floor = study.floor
    criteria = study.criteria
    first = ms_text(criteria.p99_s)
    if not floor.known:
        return "Without an eligible trial at a low offered rate, the load generator's own latency floor is unknown."
    tool = join_list([f"\\texttt{{{escape(t)}}}" for t in sorted({str(t) for t in study.trials["tool"].dropna()})])
    text = (f"At each server's lowest offered rate, the lowest p99 was {format_ms(floor.p99_s)}\\,ms "
            f"({escape(floor.server)} offered {format_count(floor.rate)} requests/s): an upper bound on the floor "
            f"that the load generator ({tool}) and the loopback path add to any measurement on this machine. ")
    if floor.p99_s >= criteria.p99_s:
        text += (f"That floor is above the {first}\\,ms of the knee's first criterion, so that criterion cannot be met "
                 f"with this tool on this machine whatever the server: a missing knee under {first}\\,ms is a "
                 "statement about the measurement, not about the servers")
    elif floor.p99_s >= FLOOR_NEAR_FRACTION * criteria.p99_s:
        text += (f"That floor is near the {first}\\,ms of the knee's first criterion, so the criterion leaves little "
                 "room for the server's own latency and a missing knee under it says more about the measurement "
                 "than about the server")
    else:
        text += f"That floor is well below {first}\\,ms, so the knee's first criterion is measurable with this tool"
    if len(criteria.thresholds) > 1:
        text += f"; the knee table also gives each server's knee under p99 $<$ {ms_text(criteria.p99_alt_s)}\\,ms."
    else:
        text += "."
    return text


def _knee_finding(study: LatencyStudy) -> str:
    table = study.knees
    if table.empty:
        return ""
    sentences = []
    for threshold in study.criteria.thresholds:
        key = threshold_key(threshold)
        with_knee = table[table[f"knee_{key}"].notna()]
        without = table[table[f"knee_{key}"].isna()]
        limit = f"p99 $<$ {ms_text(threshold)}\\,ms"
        if with_knee.empty:
            lowest = join_list([_no_knee_text(r, key) for _, r in table.iterrows()])
            sentences.append(f"Under {limit} no server has a knee: no offered rate qualified for {lowest}")
            continue
        parts = [f"{escape(r['server'])} {format_count(r[f'knee_{key}'])} requests/s "
                 f"({format_percent(r[f'knee_{key}_fraction'])} of its saturation)" for _, r in with_knee.iterrows()]
        sentence = f"Under {limit} the knees are: {'; '.join(parts)}"
        if not without.empty:
            sentence += "; no offered rate qualified for " + join_list([_no_knee_text(r, key) for _, r in without.iterrows()])
        sentences.append(sentence)
    return ". ".join(sentences) + "."


def _no_knee_text(row: pd.Series, key: str) -> str:
    text = f"{escape(row['server'])} (lowest p99 {format_ms(row['lowest_p99_s'])}\\,ms"
    why = [WHY_TEXT[w] for w in str(row.get(f"why_no_knee_{key}") or "").split(";") if w in WHY_TEXT]
    if why:
        text += "; the rates with a p99 below the threshold failed on " + join_list(why)
    return text + ")"


def _setup_sentence(study: LatencyStudy) -> str:
    fixed = study.setup(SETUP_FIXED)
    if fixed.empty:
        return ("The latency campaigns hold no trial of source~001's set-up (one rate for every server; "
                "\\texttt{make latency-study} runs it as the campaign \\texttt{NAME-001}).")
    offered = sorted(set(fixed["offered_rate"].dropna()))
    connections = sorted(set(fixed["connections"].dropna()))
    first = fixed.iloc[0]
    saturation_of = tt(str(first.get("saturation_of") or "unknown"))
    fraction = first.get("rate_fraction")
    text = (f"Source~001's set-up was reproduced with {join_list([escape(v) for v in dict.fromkeys(fixed['variant'])])} "
            f"at {join_list([format_count(c) for c in connections])} connections, every one offered "
            f"{join_list([format_count(r) for r in offered])} requests/s")
    if not is_missing(fraction) and not is_missing(first.get("saturation_rate")):
        text += (f": {format_percent(fraction)} of {format_count(first['saturation_rate'])} requests/s, the highest "
                 f"closed-loop saturation throughput among them ({saturation_of})")
    return text + " (Table~\\ref{tab:latency-001})."


def _source_001_finding(study: LatencyStudy) -> str:
    fixed = study.setup(SETUP_FIXED)
    if fixed.empty:
        return ""
    ours = {key_text(r["architecture"]): r for _, r in fixed.iterrows()}
    sentences = []
    if "epoll" in ours and "reactor" in ours:
        epoll, reactor = ours["epoll"], ours["reactor"]
        if not is_missing(epoll["latency_max_s_max"]) and not is_missing(reactor["latency_max_s_max"]):
            same = float(epoll["latency_max_s_max"]) > float(reactor["latency_max_s_max"])
            cited_e, cited_r = SOURCE_001_RESULTS["epoll"], SOURCE_001_RESULTS["reactor"]
            sentences.append(
                ("As in source~001, " if same else "Unlike source~001, ")
                + f"the single-thread epoll server's largest latency ({format_ms(epoll['latency_max_s_max'])}\\,ms) "
                + ("exceeds" if same else "does not exceed")
                + f" the reactor's ({format_ms(reactor['latency_max_s_max'])}\\,ms); source~001 reported "
                f"{format_significant(cited_e['latency_max_s'], 3)}\\,s against "
                f"{format_significant(cited_r['latency_max_s'], 3)}\\,s at 200{{,}}000 requests/s")
    achieved = []
    for architecture in ("blocking", "thread_per_conn", "epoll", "reactor"):
        if architecture in ours and not is_missing(ours[architecture]["achieved_fraction_mean"]):
            achieved.append(f"{escape(ours[architecture]['variant'])} {share(ours[architecture]['achieved_fraction_mean'])}"
                            f" (001: {share(SOURCE_001_RESULTS[architecture]['requests_per_sec'] / SOURCE_001_RATE)})")
    if achieved:
        sentences.append("The share of the offered rate achieved was " + "; ".join(achieved))
    timeouts = [escape(r["variant"]) for _, r in fixed.iterrows() if not is_missing(r["timeouts_mean"])
                and float(r["timeouts_mean"]) > 0]
    if timeouts:
        sentences.append(f"Requests timed out with {join_list(timeouts)}, as source~001's blocking designs' did")
    elif not fixed.empty:
        sentences.append("No request timed out with any of the four servers")
    sentences.append("The machines, the load generators and the offered rates differ, so only the pattern, not the "
                     "numbers, can be compared")
    return ". ".join(sentences) + "."


def _saturation_sentence(study: LatencyStudy) -> str:
    sources = sorted({str(s) for s in study.trials.get("saturation_source", pd.Series(dtype=str)).dropna()})
    if not sources:
        return "The trials do not record where their saturation throughputs came from."
    return ("Each server's saturation throughput, of which the offered rates are fractions, is taken from "
            + join_list([escape(s) for s in sources]) + ".")


def _results_sentence(study: LatencyStudy, present: Mapping[str, bool]) -> str:
    parts = []
    if present.get("achieved"):
        parts.append("Figure~\\ref{fig:latency-achieved} plots the achieved against the offered rate")
    if present.get("percentiles"):
        parts.append("Figure~\\ref{fig:latency-percentiles} the latency percentiles against the offered rate")
    if not study.setup(SETUP_SWEEP).empty:
        parts.append("Table~\\ref{tab:latency-rates} gives the numbers")
    if not parts:
        return ""
    return "; ".join(parts) + "."


def latency_macros(macros: MacroSet, study: LatencyStudy, present: Mapping[str, bool] | None = None) -> None:
    """Every \\abLatency... macro sections/latency.tex uses, defined for any campaign (or none)."""
    present = dict(present or {})
    criteria = study.criteria
    macros.add("latency knee threshold", ms_text(criteria.p99_s), "first knee criterion: p99 below this, ms")
    macros.add("latency knee alt threshold", ms_text(criteria.p99_alt_s if criteria.p99_alt_s else criteria.p99_s),
               "second knee criterion: p99 below this, ms")
    macros.add("latency achieved threshold", f"{criteria.achieved_fraction * 100:.0f}",
               "knee: achieved at least this percent of the offered rate")
    macros.add("latency client bound threshold", f"{criteria.client_bound_busy * 100:.0f}",
               "load generator CPU busy percent from which an open-loop trial is client-bound")
    macros.add("latency has data", "1" if study.available else "0",
               "1: a latency campaign exists (sections/latency.tex \\ifnum)")
    if not study.available:
        no_campaign_macros(
            macros, "latency", study.sources[0].requested if study.sources else None, study.reason,
            missing=("latency connections", "latency fractions", "latency duration"),
            empty=("latency tool sentence", "latency command", "latency saturation sentence",
                   "latency client bound sentence", "latency floor sentence", "latency knee finding",
                   "latency results sentence", "latency source one setup", "latency source one finding"),
        )
        return
    macros.add("latency campaign", join_list([tt(c.meta.get('campaign') or c.path.name)
                                                for c in study.campaigns]), "latency campaigns")
    macros.add("latency campaign sentence", provenance_sentence(study.campaigns, "section"),
               "campaigns, host and dates of the latency numbers")
    sweep_trials = study.trials[study.trials["setup"] == SETUP_SWEEP] if not study.trials.empty else study.trials
    macros.add("latency connections", format_list(distinct_values(sweep_trials, "connections")),
               "connections of the sweep")
    fractions = distinct_values(sweep_trials, "rate_fraction")
    macros.add("latency fractions", join_list([f"{f * 100:g}" for f in fractions]) + (r"\,\%" if fractions else ""),
               "offered fractions of each server's saturation")
    macros.add("latency duration", format_list(distinct_values(study.trials, "duration_s")),
               "open-loop trial duration, s")
    macros.add("latency tool sentence", _tool_sentence(study), "which open-loop tool, its version and mode")
    record = None
    for campaign in study.campaigns:
        record = record or next((r for r in campaign.trials if (r.get("config") or {}).get("offered_rate") is not None
                                 and r.get("status") == "ok" and not r.get("warmup")), None)
    command = load_command(record)
    macros.add("latency command", escape_command(command) if command else "(no completed open-loop trial)",
               "exact load command of one open-loop trial")
    macros.add("latency saturation sentence", _saturation_sentence(study), "where the saturation rates come from")
    macros.add("latency client bound sentence", _client_bound_sentence(study), "client-bound trials, excluded")
    macros.add("latency floor sentence", _floor_sentence(study), "the load generator's floor against 1 ms")
    macros.add("latency knee finding", _knee_finding(study), "knees per server and threshold")
    macros.add("latency results sentence", _results_sentence(study, present), "cites the latency figures and table")
    macros.add("latency source one setup", _setup_sentence(study), "source 001's set-up as reproduced")
    macros.add("latency source one finding", _source_001_finding(study), "comparison with source 001's wrk2 numbers")


# --------------------------------------------------------------------------- entry point for report.py


def latency_outputs(macros: MacroSet, study: LatencyStudy, paper_dir: Path, figures_dir: Path) -> dict[str, str]:
    """Add the latency macros to `macros` and return {generated file name: LaTeX} (every file, always)."""
    made = make_latency_figures(study, figures_dir)
    present = {key: value is not None for key, value in made.items()}
    latency_macros(macros, study, present)
    if not study.available:
        return {name: "% no latency campaign: the section's first sentence says why\n" for name in GENERATED_FILES}
    thresholds = " and ".join(f"{ms_text(t)}\\,ms" for t in study.criteria.thresholds)
    achieved = figure_block(
        include_path(made["achieved"], paper_dir),
        "fig:latency-achieved",
        r"Achieved against offered rate for each server of the fraction sweep (both axes logarithmic): mean over "
        r"the measured trials with its 95\,\% confidence interval; the dashed line is achieved = offered, and a "
        r"ring marks rates with client-bound trials.",
        "The latency campaigns have no server measured at two or more offered rates, so there is no "
        "achieved-against-offered figure.",
    )
    percentiles = figure_block(
        include_path(made["percentiles"], paper_dir),
        "fig:latency-percentiles",
        r"Latency percentiles (means over the measured trials; max: the largest) against the offered rate, one panel "
        r"per server, logarithmic latency axis, measured from each request's scheduled send. Horizontal lines: the "
        f"knee thresholds ({thresholds}); dotted vertical lines: the server's knees (black: first threshold, grey: "
        r"second); rings: rates with client-bound trials.",
        "The latency campaigns have no server measured at two or more offered rates, so there is no latency "
        "figure.",
    )
    return {
        RATES_TABLE_FILE: rates_table(study),
        KNEES_TABLE_FILE: knees_table(study),
        SOURCE_001_TABLE_FILE: source_001_table(study),
        ACHIEVED_FIGURE_FILE: achieved,
        PERCENTILES_FIGURE_FILE: percentiles,
    }
