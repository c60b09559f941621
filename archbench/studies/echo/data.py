"""The echo study's data (source 004): raw echo trial records -> trials, per-second series and the
per-configuration summaries of the throughput and --max-conns modes.

* trials: one row per trial record (warm-ups, failed and flagged trials included);
* throughput summary: one row per throughput configuration (architecture x clients). The statistics
  (received bytes per second: mean, sd, Student-t 95 % CI; RTT percentiles: means over trials; RTT
  max: the largest of the trials) are over the measured trials with status ok that echo_client did
  NOT flag. A flagged trial (verification errors, connect failures, connections closed early,
  unanswered messages, not every connection connected) measured something other than the
  configuration asked for, or wrong bytes; it is counted (`n_flagged`), marked in the table, its
  errors summed in the table's error columns, and never averaged;
* max-conns summary: one row per `--max-conns` configuration: connections reached (all ok measured
  trials, flagged ones included: a ceiling is where connections start failing), why the ramp
  stopped, server memory per connection, the open-file limits in force;
* series: every measured ok throughput trial's per-second series, with per-second rates.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from archbench import stats
from archbench.analyze import analysis
from archbench.analyze.analysis import number
from archbench.analyze.study_trials import (
    study_trial_ids,
    study_trial_outcome,
    study_trial_placement,
    study_trials_frame,
    total_count,
)
from archbench.data import storage
from archbench.measure.load_bound import client_bound
from archbench.render.common import (
    StudySource,
    measured_ok_including_disturbed,
    per_configuration,
    sample_max,
    sample_min,
)

RTT_PERCENTILES: tuple[str, ...] = ("50", "90", "99", "99.9")
MODE_THROUGHPUT = "throughput"
MODE_MAX_CONNS = "max_conns"
MB = 1e6  # bytes per second are reported in MB/s (10^6 bytes)
KIB = 1024.0
# Linux's default ip_local_port_range, 32768-60999: the ports one source address can use.
DEFAULT_EPHEMERAL_PORTS = 60999 - 32768 + 1
SERIES_COLUMNS = [
    "trial_id",
    "config_id",
    "second",
    "interval_s",
    "bytes_sent",
    "bytes_received",
    "echoes",
    "open_connections",
    "bytes_sent_per_sec",
    "bytes_received_per_sec",
]


@dataclass(frozen=True)
class EchoResults:
    """An echo campaign read into frames (all empty without a campaign)."""

    source: StudySource
    trials: pd.DataFrame
    series: pd.DataFrame
    summary: pd.DataFrame
    max_conns: pd.DataFrame

    @property
    def available(self) -> bool:
        return self.source.campaign is not None

    @property
    def measured(self) -> pd.DataFrame:
        if self.trials.empty:
            return self.trials
        return self.trials[~self.trials["warmup"].astype(bool)]

    @property
    def measured_ok_including_disturbed(self) -> pd.DataFrame:
        return measured_ok_including_disturbed(self.trials) if not self.trials.empty else self.trials


# --------------------------------------------------------------------------- trials


def echo_trial_row(record: Mapping[str, Any], campaign_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One echo trial record -> (echo-trials.csv row, its per-second series rows)."""
    config = dict(record.get("config") or {})
    load = dict(record.get("load") or {})
    server = dict(record.get("server") or {})
    server_stats = server.get("stats") or {}
    open_files = record.get("open_files") or {}
    parsed, outcome = study_trial_outcome(record, campaign_dir, "echo_client")
    row = study_trial_ids(record, record.get("campaign"))
    row["mode"] = MODE_THROUGHPUT if config.get("mode") is None else config["mode"]
    row["cap"] = config.get("cap")
    row["message_size"] = config.get("message_size")
    row["sources"] = config.get("sources")
    row["connect_rate"] = config.get("connect_rate")
    row.update(outcome)
    p = parsed or {}
    rtt = p.get("rtt_s") or {}
    percentiles = rtt.get("percentiles") or {}
    series = list(p.get("series") or [])
    window_s = number(p.get("window_s"))
    window_sent = sum(number(s.get("bytes_sent")) for s in series) if series else math.nan
    window_received = sum(number(s.get("bytes_received")) for s in series) if series else math.nan
    connect_errors = p.get("connect_errors")
    max_conns = p.get("max_conns") or load.get("max_conns") or {}
    row.update(
        connections_connected=number(p.get("connected")),
        all_connected_s=number(p.get("all_connected_s")),
        open_at_end=number(p.get("open_at_end")),
        not_attempted=number(p.get("not_attempted")),
        connect_errors=total_count(connect_errors),
        connect_error_kinds=_tally_text(connect_errors or {}) if parsed else "",
        closed_early=total_count(p.get("closed_early")),
        unanswered_messages=number(p.get("unanswered_messages")),
        verify_errors=number(p.get("verify_errors")),
        echoes=number(p.get("echoes")),
        window_echoes=number(p.get("window_echoes")),
        echoes_per_sec=number(p.get("echoes_per_sec")),
        window_s=window_s,
        bytes_sent_total=number(p.get("bytes_sent")),
        bytes_received_total=number(p.get("bytes_received")),
        # Within the timed window (the series covers exactly the window): what source 004 plotted.
        bytes_sent_per_sec=stats.ratio(window_sent, window_s),
        bytes_received_per_sec=stats.ratio(window_received, window_s),
        rtt_count=number((p.get("rtt_ns") or {}).get("count")),
        rtt_mean_s=number(rtt.get("mean")),
        rtt_max_s=number(rtt.get("max")),
        echo_client_exit_status=p.get("exit_status"),
        echo_client_nofile_soft=number(p.get("nofile_soft")),
        echo_client_nofile_hard=number(p.get("nofile_hard")),
    )
    for q in RTT_PERCENTILES:
        row[f"rtt_p{q.replace('.', '_')}_s"] = number(percentiles.get(q))
    row.update(
        max_conns_reached=number(max_conns.get("reached")),
        max_conns_alive_at_end=number(max_conns.get("alive_at_end")),
        max_conns_stop_reason=max_conns.get("stop_reason"),
        max_conns_stop_s=number(max_conns.get("stop_s")),
        max_conns_echo_timeouts=number(max_conns.get("echo_timeouts")),
        server_rss_before_bytes=number(max_conns.get("server_rss_before_bytes")),
        server_rss_after_bytes=number(max_conns.get("server_rss_after_bytes")),
        server_rss_per_conn_bytes=number(max_conns.get("server_rss_per_conn_bytes")),
        open_files_soft=number(open_files.get("soft")),
        open_files_hard=number(open_files.get("hard")),
        open_files_needed=number(open_files.get("needed")),
    )
    server_cpu_s, _ = analysis.server_cpu_seconds(server)
    utilisation = analysis.load_cpu_utilisation(load)
    busy = number(load.get("cpus_busy"))
    row.update(
        server_cpu_s=server_cpu_s,
        load_cpu_utilisation=utilisation,
        load_cpus_busy=busy,
        server_cpus_busy=number(server.get("cpus_busy")),
        # echo_client's own CPU time, or its pinned CPUs' busy share, which also holds the loopback's softirq work
        # done on them: either saturated, the client may have set the rate (the latency study's rule too).
        client_bound=client_bound(load),
        server_connections_accepted=number(server_stats.get("connections_accepted")),
        server_bytes_echoed=number(server_stats.get("bytes_echoed")),
        server_errors=number(server_stats.get("errors")),
        **study_trial_placement(record),
    )
    return row, _series_rows(record, series)


def _series_rows(record: Mapping[str, Any], series: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The per-second samples of one trial with their rates; each covers (previous second, second]."""
    rows = []
    previous = 0.0
    for sample in series:
        second = number(sample.get("second"))
        interval = second - previous
        rows.append(
            {
                "trial_id": record.get("trial_id"),
                "config_id": record.get("config_id"),
                "second": second,
                "interval_s": interval,
                "bytes_sent": number(sample.get("bytes_sent")),
                "bytes_received": number(sample.get("bytes_received")),
                "echoes": number(sample.get("echoes")),
                "open_connections": number(sample.get("open_connections")),
                "bytes_sent_per_sec": stats.ratio(number(sample.get("bytes_sent")), interval),
                "bytes_received_per_sec": stats.ratio(number(sample.get("bytes_received")), interval),
            }
        )
        previous = second
    return rows


def echo_trials(campaign: storage.Campaign) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(trials, series) of an echo campaign; records of other protocols are left out."""
    rows, series = [], []
    for record in campaign.trials:
        if (record.get("config") or {}).get("proto", "http") != "echo":
            continue
        row, samples = echo_trial_row(record, campaign.path)
        rows.append(row)
        if row["status"] == "ok" and not row["warmup"] and row["mode"] == MODE_THROUGHPUT:
            series.extend(samples)
    empty_columns = [
        "campaign",
        "trial_id",
        "config_id",
        *analysis.CONFIG_FIELDS,
        "mode",
        "warmup",
        "status",
        "flagged",
    ]
    return study_trials_frame(rows, empty_columns), pd.DataFrame(series, columns=SERIES_COLUMNS)


# --------------------------------------------------------------------------- summaries


def column_sum(values: pd.Series) -> float:
    """The sum of a column's numbers; NaN when it has none."""
    sample = stats.as_sample(values)
    return float(sample.sum()) if sample.size else math.nan


def flag_tally(rows: pd.DataFrame) -> dict[str, int]:
    """{flag: number of the rows that carry it}."""
    flags = (f for text in rows["flags"].fillna("") for f in str(text).split(analysis.FLAG_SEPARATOR) if f)
    return dict(Counter(flags))


def _tally_text(counts: Mapping[str, Any]) -> str:
    """{"a": 2, "b": 1} -> "a:2;b:1" (by name)."""
    return analysis.FLAG_SEPARATOR.join(f"{k}:{v}" for k, v in sorted(counts.items()))


def tally_items(text: Any) -> list[list[str]]:
    """ "a:2;b:1" -> [["a", "2"], ["b", "1"]]: a tally column (stop reasons, connect error kinds) read back."""
    return [item.rsplit(":", 1) for item in str(text or "").split(analysis.FLAG_SEPARATOR) if item]


def _per_mode(
    trials: pd.DataFrame, mode: str, fields: Sequence[str], sort_by: str, statistics: Callable[..., dict[str, Any]]
) -> pd.DataFrame:
    """One row per configuration of one echo_client mode: its ids, names and `fields` (from its first trial),
    then `statistics` of its measured trials; canonical architecture order, then `sort_by`."""
    return per_configuration(
        trials[trials["mode"] == mode] if not trials.empty else trials,
        ("campaign", "config_id", "variant", "family", *fields),
        lambda group: statistics(group[~group["warmup"].astype(bool)]),
        [sort_by],
    )


def throughput_summary(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per throughput configuration; statistics over measured, ok, unflagged trials."""
    return _per_mode(
        trials,
        MODE_THROUGHPUT,
        (*analysis.CONFIG_FIELDS, "mode", "message_size", "sources", "connect_rate"),
        "connections",
        _throughput_statistics,
    )


def _throughput_statistics(measured: pd.DataFrame) -> dict[str, Any]:
    ok = measured[measured["status"] == "ok"]
    clean = ok[~ok["flagged"].astype(bool)]
    received = stats.summarize(clean["bytes_received_per_sec"])
    row: dict[str, Any] = dict(
        n_measured=len(measured),
        n_ok=len(ok),
        n=received.n,
        **analysis.outcome_counts(measured, ok),
        n_client_bound=int(ok["client_bound"].astype(bool).sum()),
        flags=_tally_text(flag_tally(ok)),
        n_verify_error_trials=int((ok["verify_errors"].fillna(0) > 0).sum()),
        verify_errors=column_sum(ok["verify_errors"]),
        connect_errors=column_sum(ok["connect_errors"]),
        not_attempted=column_sum(ok["not_attempted"]),
        closed_early=column_sum(ok["closed_early"]),
        unanswered_messages=column_sum(ok["unanswered_messages"]),
        n_held_all=int(
            (
                (ok["connections_connected"] == ok["connections"])
                & (ok["open_at_end"] == ok["connections"])
                & (ok["connect_errors"].fillna(0) == 0)
                & (ok["closed_early"].fillna(0) == 0)
            ).sum()
        ),
        bytes_received_per_sec_mean=received.mean,
        bytes_received_per_sec_sd=received.sd,
        bytes_received_per_sec_ci95_low=received.mean_ci.low,
        bytes_received_per_sec_ci95_high=received.mean_ci.high,
        bytes_sent_per_sec_mean=stats.sample_mean(clean["bytes_sent_per_sec"]),
        echoes_per_sec_mean=stats.sample_mean(clean["echoes_per_sec"]),
        all_connected_s_mean=stats.sample_mean(clean["all_connected_s"]),
        rtt_mean_s_mean=stats.sample_mean(clean["rtt_mean_s"]),
        rtt_max_s_max=sample_max(clean["rtt_max_s"]),
        load_cpu_utilisation_mean=stats.sample_mean(ok["load_cpu_utilisation"]),
        load_cpus_busy_mean=stats.sample_mean(ok["load_cpus_busy"]),
        server_cpu_us_per_echo=stats.ratio(
            stats.sample_mean(clean["server_cpu_s"]) * 1e6, stats.sample_mean(clean["echoes"])
        ),
    )
    for q in RTT_PERCENTILES:
        column = f"rtt_p{q.replace('.', '_')}_s"
        row[f"{column}_mean"] = stats.sample_mean(clean[column])
    return row


def max_conns_summary(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per --max-conns configuration over its measured ok trials (flagged ones included)."""
    return _per_mode(
        trials, MODE_MAX_CONNS, (*analysis.CONFIG_FIELDS, "mode", "cap", "sources"), "cap", _max_conns_statistics
    )


def _max_conns_statistics(measured: pd.DataFrame) -> dict[str, Any]:
    ok = measured[(measured["status"] == "ok") & measured["max_conns_reached"].notna()]
    per_conn = ok["server_rss_per_conn_bytes"]
    return dict(
        n_measured=len(measured),
        n=len(ok),
        **analysis.outcome_counts(measured, ok),
        flags=_tally_text(flag_tally(ok)),
        verify_errors=column_sum(ok["verify_errors"]),
        reached_min=sample_min(ok["max_conns_reached"]),
        reached_max=sample_max(ok["max_conns_reached"]),
        reached_median=stats.sample_median(ok["max_conns_reached"]),
        alive_at_end_min=sample_min(ok["max_conns_alive_at_end"]),
        stop_reasons=_tally_text(Counter(str(reason) for reason in ok["max_conns_stop_reason"].dropna())),
        stop_s_median=stats.sample_median(ok["max_conns_stop_s"]),
        rss_per_conn_bytes_median=stats.sample_median(per_conn),
        rss_per_conn_bytes_min=sample_min(per_conn),
        rss_per_conn_bytes_max=sample_max(per_conn),
        open_files_soft=_unique_number(measured["open_files_soft"]),
        open_files_hard=_unique_number(measured["open_files_hard"]),
        open_files_needed=_unique_number(measured["open_files_needed"]),
    )


def _unique_number(values: pd.Series) -> float:
    """The one value of a column (NaN when absent or when trials disagree: then the table shows --)."""
    sample = stats.as_sample(values)
    unique = set(sample.tolist())
    return float(unique.pop()) if len(unique) == 1 else math.nan


def representative_trials(
    trials: pd.DataFrame, summary: pd.DataFrame, connections: float | None = None
) -> pd.DataFrame:
    """Per throughput configuration at `connections` (default: the largest client count): the measured ok
    trial whose received bytes/s is the median of its configuration's unflagged trials (the lower of the two
    middle ones for an even count; a flagged trial only where no unflagged one exists, and then it says so)."""
    if summary.empty:
        return pd.DataFrame()
    if connections is None:
        connections = float(pd.to_numeric(summary["connections"]).max())
    chosen = []
    for _, config in summary[pd.to_numeric(summary["connections"]) == connections].iterrows():
        group = measured_ok_including_disturbed(trials[trials["config_id"] == config["config_id"]])
        if group.empty:
            continue
        clean = group[~group["flagged"].astype(bool)]
        pool = clean if not clean.empty else group
        pool = pool.assign(_rate=pd.to_numeric(pool["bytes_received_per_sec"], errors="coerce").fillna(-1.0))
        pool = pool.sort_values(["_rate", "repetition"], kind="stable")
        pick = pool.iloc[(len(pool) - 1) // 2].drop(labels="_rate")
        chosen.append(pick)
    return pd.DataFrame(chosen).reset_index(drop=True)
