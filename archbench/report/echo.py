"""The echo section of the report (issue 4, source 004): raw echo campaign -> CSVs, macros, tables, figures.

Source 004 compared a blocking multithreaded, a poll and an epoll echo server against its own epoll
client at 100, 1000 and 10,000 clients; its graphs of bytes sent and received had broken time axes,
its "delay" came from a timestamp that wrapped every second and its 28,000-connection ceiling was
probably the client's ephemeral port range. The echo campaign (profile `echo`, `make echo-study`)
runs every server under `--proto echo` against `build/bin/echo_client` (docs/contracts.md section 6),
which verifies every echoed byte, measures each round trip from the message's intended send time on
CLOCK_MONOTONIC, binds its connections to 127.0.0.1..127.0.0.K (`--sources K`) so that ports never
bound the connection count, and prints one sample per second of the window.

What this module computes, from the raw records only (the campaign is read, never written):

* `echo-trials.csv`: one row per trial record (warm-ups, failed and flagged trials included);
* `echo-summary.csv`: one row per throughput configuration (architecture x clients). The statistics
  (received bytes per second: mean, sd, Student-t 95 % CI; RTT percentiles: means over trials; RTT
  max: the largest of the trials) are over the measured trials with status ok that echo_client did
  NOT flag. A flagged trial (verification errors, connect failures, connections closed early,
  unanswered messages, not every connection connected) measured something other than the
  configuration asked for, or wrong bytes; it is counted (`n_flagged`), marked in the table, its
  errors summed in the table's error columns, and never averaged;
* `echo-max-conns.csv`: one row per `--max-conns` configuration: connections reached (all ok measured
  trials, flagged ones included: a ceiling is where connections start failing), why the ramp
  stopped, server memory per connection, the open-file limits in force;
* `echo-series.csv`: every measured ok throughput trial's per-second series, with per-second rates.

Everything degrades: no echo campaign, a campaign without trials, without --max-conns trials or with
one client count each gives sentences instead of tables and figures, never a LaTeX error.

The helpers of the first section (`StudySource`, `provenance_sentence`, `load_campaign_or_reason`, the
trial-row, CSV, macro and figure helpers) are shared with `archbench.report.latency`.
"""
from __future__ import annotations

import math
import os
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

from archbench.analyze import analysis
from archbench import stats
from archbench.data import storage  # noqa: E402
from archbench.analyze.analysis import CLIENT_BOUND_THRESHOLD, Labeller, key_text, number  # noqa: E402
from archbench.report.figures import MARKERS, STYLE, FigureFile, save_figure  # noqa: E402
from archbench.report.latex import (  # noqa: E402
    CLIENT_BOUND_MARK,
    FAILED_MARK,
    FLAGGED_MARK,
    MISSING,
    Column,
    MacroSet,
    adjusted_table,
    escape,
    escape_command,
    figure_block,
    format_count,
    format_list,
    format_ms,
    format_significant,
    is_missing,
    notes_block,
    notes_for_marks,
    render_tabular,
    row_marks,
    stacked,
)
from archbench.parse import parse_file  # noqa: E402
from archbench.report.latex import campaign_provenance

# Files written by `echo_outputs` (generated/ and figures/) and `process_echo_campaign` (processed/).
TABLE_FILE = "echo-table.tex"
MAX_CONNS_TABLE_FILE = "echo-table-max-conns.tex"
SCALING_FIGURE_FILE = "echo-figure-scaling.tex"
TIME_SERIES_FIGURE_FILE = "echo-figure-time-series.tex"
GENERATED_FILES = (TABLE_FILE, MAX_CONNS_TABLE_FILE, SCALING_FIGURE_FILE, TIME_SERIES_FIGURE_FILE)
SCALING_FIGURE = "echo-scaling.pdf"
TIME_SERIES_FIGURE = "echo-time-series.pdf"
TRIALS_CSV = "echo-trials.csv"
SUMMARY_CSV = "echo-summary.csv"
MAX_CONNS_CSV = "echo-max-conns.csv"
SERIES_CSV = "echo-series.csv"

RTT_PERCENTILES: tuple[str, ...] = ("50", "90", "99", "99.9")
MODE_THROUGHPUT = "throughput"
MODE_MAX_CONNS = "max_conns"
MB = 1e6  # bytes per second are reported in MB/s (10^6 bytes)
KIB = 1024.0
# Source 004's numbers, quoted as cited facts (its report, /work/shared/seeds/004_*.txt).
SOURCE_004_CEILINGS = {"epoll": 28_000, "poll": 6_000}
# Linux's default ip_local_port_range, 32768-60999: the ports one source address can use.
DEFAULT_EPHEMERAL_PORTS = 60999 - 32768 + 1

FLAG_TEXT = {
    "verify_errors": "verification errors",
    "connect_failures": "connect failures",
    "closed_early": "connections closed early by the server",
    "unanswered": "unanswered messages",
    "not_all_connected": "not every connection connected",
    "no_echoes": "no echo at all",
    analysis.FLAG_UNPARSED: "unreadable echo\\_client output",
}
ECHO_FLAGGED_NOTE = (
    FLAGGED_MARK + r"\,flagged: at least one measured trial was flagged by echo\_client (verification errors, "
    r"connect failures, connections closed early, unanswered messages or not every client connected); "
    r"flagged trials are excluded from the means and intervals and counted in the flagged column; their "
    r"errors are in the error columns."
)
ECHO_CLIENT_BOUND_NOTE = (
    CLIENT_BOUND_MARK + r"\,client-bound: in at least one measured trial echo\_client's CPU time was at least "
    + f"{CLIENT_BOUND_THRESHOLD * 100:.0f}"
    + r"\,\% of its pinned CPU's wall time, so the client, not the server, may have set that rate."
)


# --------------------------------------------------------------------------- shared with report_latency


@dataclass(frozen=True)
class StudySource:
    """Which campaign a section's numbers come from, or why there is none."""

    requested: str | None  # the parameter as given (None: not given)
    campaign: storage.Campaign | None
    reason: str | None  # why there is no campaign (None when there is one)

    @property
    def name(self) -> str:
        return self.campaign.meta.get("campaign") or self.campaign.path.name if self.campaign else (self.requested or "")


def load_campaign_or_reason(requested: str | None, raw_root: Path, what: str, make_target: str) -> StudySource:
    """The named campaign under raw_root, or a sentence-ready reason why there is none (never raises:
    a missing study campaign makes its section a sentence, not a failed report)."""
    if not requested:
        return StudySource(None, None, f"no {what} campaign was given (make {make_target} measures one)")
    path = Path(raw_root) / requested
    if not (path / storage.CAMPAIGN_FILE).is_file():
        warnings.warn(f"{what} campaign {requested!r} not found under {raw_root}; its section says so", stacklevel=2)
        return StudySource(
            requested, None, f"the {what} campaign {requested} is not in the raw data (make {make_target} measures one)"
        )
    return StudySource(requested, storage.load_campaign(path), None)


def tt(text: Any) -> str:
    """A data-derived name (campaign, host, trial id) in typewriter type that may break after its hyphens,
    underscores and dots, so a long name never runs into the margin."""
    escaped = escape(text)
    return r"\texttt{" + escaped.replace("-", r"-\allowbreak{}").replace(r"\_", r"\_\allowbreak{}") + "}"


def provenance_facts(campaign: storage.Campaign) -> dict[str, str]:
    """Host, CPU, kernel, commit and the first and last trial times (UTC) of a campaign, escaped."""
    provenance = campaign_provenance(campaign.meta, campaign.trials)
    started = sorted(str(r["started_at"]) for r in campaign.trials if r.get("started_at"))
    finished = sorted(str(r["finished_at"]) for r in campaign.trials if r.get("finished_at"))
    created = str(campaign.meta.get("created_at") or "")
    return {
        "campaign": escape(campaign.meta.get("campaign") or campaign.path.name),
        "campaign_tt": tt(campaign.meta.get("campaign") or campaign.path.name),
        "host": escape(provenance.get("hostname") or "an unrecorded host"),
        "host_tt": tt(provenance.get("hostname") or "unrecorded"),
        "cpu": escape(str(provenance.get("cpu_model") or "unknown CPU").strip().splitlines()[0]),
        "cpus": escape(provenance.get("cpu_count") if provenance.get("cpu_count") is not None else "?"),
        "kernel": escape(provenance.get("kernel") or "unknown"),
        "commit": escape(str(provenance.get("git_commit") or "unknown")[:12]),
        "first": escape(started[0][:16].replace("T", " ") if started else created[:16].replace("T", " ") or "unknown"),
        "last": escape(finished[-1][:16].replace("T", " ") if finished else "unknown"),
        "date": escape((started[0] if started else created)[:10] or "unknown"),
    }


def provenance_sentence(campaigns: Sequence[storage.Campaign], section: str) -> str:
    """"The numbers of this section come from campaign X, measured on host H (...) from T1 to T2 UTC." """
    parts = []
    for campaign in campaigns:
        facts = provenance_facts(campaign)
        parts.append(
            f"campaign {facts['campaign_tt']}, measured on host {facts['host_tt']} "
            f"({facts['cpu']}, {facts['cpus']} logical CPUs, kernel {facts['kernel']}) from {facts['first']} to "
            f"{facts['last']} UTC at git commit \\texttt{{{facts['commit']}}}"
        )
    if not parts:
        return ""
    joined = parts[0] if len(parts) == 1 else "; ".join(parts[:-1]) + "; and " + parts[-1]
    return f"The numbers of this {section} come from {joined}."


def join_list(items: Sequence[str]) -> str:
    """"a, b and c" of LaTeX-ready items (latex.format_list escapes its items; these are escaped already)."""
    items = [str(i) for i in items]
    if not items:
        return MISSING
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def total_count(mapping: Any) -> float:
    """Sum of a {kind: count} object (echo_client's connect_errors, closed_early); NaN if absent."""
    if not isinstance(mapping, Mapping):
        return math.nan
    return float(sum(number(v) for v in mapping.values() if not math.isnan(number(v))))


def load_busy(load: Mapping[str, Any]) -> float:
    return number(load.get("cpus_busy"))


def load_command(record: Mapping[str, Any] | None) -> str:
    """A trial's exact load command with the ephemeral port and the server pid replaced by PORT and PID."""
    if not record:
        return ""
    argv = [str(a) for a in (record.get("load") or {}).get("argv") or []]
    out = []
    for index, arg in enumerate(argv):
        previous = argv[index - 1] if index else ""
        if previous == "--port":
            arg = "PORT"
        elif previous == "--server-pid":
            arg = "PID"
        arg = re.sub(r"(://[^/:]+):\d+", r"\1:PORT", arg)
        # The repository's binaries by their relative name; an absolute checkout path says nothing.
        arg = re.sub(r"^/.*/(build/bin/echo_client|\.tools/bin/oha)$", r"\1", arg)
        out.append(arg)
    return " ".join(out)


def study_trial_outcome(record: Mapping[str, Any], campaign_dir: Path,
                        tool: Any) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """(the trial's parsed load output or None, its outcome columns: repetition, warm-up and adaptive marks,
    order, status, why it failed or has no usable output, and its flags)."""
    status = record.get("status", "failed")
    parsed, parse_error = _parse_study_output(record.get("load") or {}, Path(campaign_dir), tool, status)
    flags = analysis.output_flags(parsed, status)
    return parsed, {
        "repetition": record.get("repetition"),
        "warmup": bool(record.get("warmup", False)),
        "adaptive": bool(record.get("adaptive", False)),
        "order_index": record.get("order_index"),
        "status": status,
        "failure_reason": record.get("failure_reason"),
        "parse_error": parse_error,
        "flags": analysis.FLAG_SEPARATOR.join(flags),
        "flagged": bool(flags),
    }


def _parse_study_output(load: Mapping[str, Any], campaign_dir: Path, tool: Any,
                        status: Any) -> tuple[dict[str, Any] | None, str | None]:
    """(parsed load output, why there is none). Study records always name their output file (unlike the
    main campaign's early ones, analysis._parse_load_output), so a missing name is only an error for an ok trial."""
    output = load.get("output_file")
    if not output:
        return None, "no load output file" if status == "ok" else None
    try:
        return parse_file(campaign_dir / output, tool), None
    except Exception as error:  # noqa: BLE001 - an unreadable output is a visible row, not a crash
        return None, f"{type(error).__name__}: {error}"


def insert_study_labels(trials: pd.DataFrame) -> None:
    """Insert the sentence-ready `variant` (study_label) and `family` columns after the three id columns."""
    labels = Labeller(trials)
    trials.insert(3, "variant", [study_label(r, labels) for _, r in trials.iterrows()])
    trials.insert(4, "family", [labels.family(r) for _, r in trials.iterrows()])


def remove_stale_files(directory: Path, names: Sequence[str]) -> None:
    """Delete these outputs of an earlier run, so none of them can pass for this run's."""
    for name in names:
        (Path(directory) / name).unlink(missing_ok=True)


def write_study_csvs(processed_dir: Path, campaigns: Sequence[storage.Campaign],
                     frames: Mapping[str, pd.DataFrame]) -> dict[str, Path]:
    """Write a study's CSVs into processed_dir, which must not be inside any of its (immutable) raw campaigns."""
    for campaign in campaigns:
        analysis.refuse_inside_raw(Path(processed_dir), campaign.path)
    return analysis.write_csvs(Path(processed_dir), frames)


def distinct_values(frame: pd.DataFrame, column: str) -> list[float]:
    """The distinct numbers of a column, ascending; none for an empty frame or a column it lacks."""
    if frame.empty or column not in frame:
        return []
    return sorted(set(stats.as_sample(frame[column]).tolist()))


def no_campaign_macros(macros: MacroSet, what: str, requested: str | None, reason: str,
                       missing: Sequence[str], empty: Sequence[str]) -> None:
    """The macros of a study section without a campaign: the campaign sentence says why, the `missing`
    values are MISSING and the `empty` sentences empty (the section tests \\ab...HasData before using them)."""
    macros.add(f"{what} campaign", escape(requested or "none"), f"{what} campaign (none)")
    macros.add(f"{what} campaign sentence",
               f"This section has no measurements: {escape(reason)}. The tables and figures of the {what} study are "
               "therefore absent.", f"where the {what} numbers come from")
    for words in missing:
        macros.add(words, MISSING, f"no {what} campaign")
    for words in empty:
        macros.add(words, "", f"no {what} campaign")


def sorted_rows(frame: pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    """Canonical architecture order (analysis.ARCHITECTURE_ORDER), then the variant fields, then `extra`."""
    if frame.empty:
        return frame
    ranked = frame.assign(
        _rank=[analysis.architecture_rank(a) for a in frame["architecture"]],
        _name=[key_text(a) for a in frame["architecture"]],
        _variant=frame["variant"].astype(str) if "variant" in frame else "",
    )
    keys = ["_rank", "_name", "_variant", *[c for c in extra if c in frame]]
    return ranked.sort_values(keys, kind="stable").drop(columns=["_rank", "_name", "_variant"])


def study_label(row: Mapping[str, Any], labels: Labeller) -> str:
    """The server's name for sentences: "reactor (2 threads)", "prefork (level, 2 workers)", "epoll (edge)"."""
    family = labels.family(row)
    units = analysis.THREAD_UNITS.get(key_text(row.get("architecture")))
    threads = number(row.get("threads"))
    if units is None or math.isnan(threads):
        return family
    count = f"{threads:.0f} {units[0] if threads == 1 else units[1]}"
    return family[:-1] + f", {count})" if family.endswith(")") else f"{family} ({count})"


def colours_for(labels: Sequence[str]) -> dict[str, Any]:
    palette = plt.get_cmap("tab10" if len(labels) <= 10 else "tab20")
    return {label: palette(index % palette.N) for index, label in enumerate(labels)}


def include_path(figure: FigureFile | None, paper_dir: Path) -> str | None:
    """The figure's path as \\includegraphics takes it (relative to the paper directory); None without a figure."""
    return None if figure is None else Path(os.path.relpath(figure.path, paper_dir)).as_posix()


def ci_error_bars(rows: pd.DataFrame, prefix: str, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(means, yerr) of `<prefix>_mean` and its `<prefix>_ci95_low/high` interval, divided by `scale`; yerr is
    what errorbar takes: the distances below and above each mean, 0 where the interval is undefined."""
    mean = rows[f"{prefix}_mean"].to_numpy(dtype=float) / scale
    low = np.nan_to_num(np.clip(mean - rows[f"{prefix}_ci95_low"].to_numpy(dtype=float) / scale, 0, None))
    high = np.nan_to_num(np.clip(rows[f"{prefix}_ci95_high"].to_numpy(dtype=float) / scale - mean, 0, None))
    return mean, np.vstack([low, high])


def panel_grid(count: int) -> tuple[int, int]:
    """(rows, columns) of a figure with one panel per server: two columns unless there is a single panel."""
    columns = 1 if count == 1 else 2
    return math.ceil(count / columns), columns


def hide_unused_panels(panels: np.ndarray, count: int) -> None:
    """Hide the grid's slots after the first `count` panels (an odd count leaves one empty)."""
    columns = panels.shape[1]
    for index in range(count, panels.size):
        panels[index // columns][index % columns].set_visible(False)


def _thousands(value: float, _position: int) -> str:
    return f"{value:,.0f}"


def compact_tick(value: float, _position: int) -> str:
    """A log axis's tick label: thousands separators from 1 up, plain decimals below (0.1, not 0)."""
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


# --------------------------------------------------------------------------- trials


def _config_value(config: Mapping[str, Any], name: str, default: Any = None) -> Any:
    value = config.get(name)
    return default if value is None else value


def echo_trial_row(record: Mapping[str, Any], campaign_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One echo trial record -> (echo-trials.csv row, its per-second series rows)."""
    config = dict(record.get("config") or {})
    load = dict(record.get("load") or {})
    server = dict(record.get("server") or {})
    server_stats = server.get("stats") or {}
    open_files = record.get("open_files") or {}
    parsed, outcome = study_trial_outcome(record, campaign_dir, "echo_client")
    row: dict[str, Any] = {
        "campaign": record.get("campaign"),
        "trial_id": record.get("trial_id"),
        "config_id": record.get("config_id"),
    }
    for name in analysis.CONFIG_FIELDS:
        row[name] = config.get(name)
    row["pipeline"] = _config_value(config, "pipeline", analysis.DEFAULT_PIPELINE)
    row["mode"] = _config_value(config, "mode", MODE_THROUGHPUT)
    row["cap"] = config.get("cap")
    row["message_size"] = config.get("message_size")
    row["sources"] = config.get("sources")
    row["connect_rate"] = config.get("connect_rate")
    row.update(outcome)
    p = parsed or {}
    rtt = (p.get("rtt_s") or {})
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
        connect_error_kinds=";".join(f"{k}:{v}" for k, v in sorted((connect_errors or {}).items())) if parsed else "",
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
    row.update(
        server_cpu_s=server_cpu_s,
        load_cpu_utilisation=utilisation,
        load_cpus_busy=load_busy(load),
        server_cpus_busy=number(server.get("cpus_busy")),
        client_bound=bool(not math.isnan(utilisation) and utilisation >= CLIENT_BOUND_THRESHOLD),
        server_connections_accepted=number(server_stats.get("connections_accepted")),
        server_bytes_echoed=number(server_stats.get("bytes_echoed")),
        server_errors=number(server_stats.get("errors")),
        server_cpus=server.get("cpus"),
        load_cpus=load.get("cpus"),
        started_at=record.get("started_at"),
        finished_at=record.get("finished_at"),
    )
    series_rows = []
    previous = 0.0
    for sample in series:
        second = number(sample.get("second"))
        interval = second - previous
        series_rows.append({
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
        })
        previous = second
    return row, series_rows


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
    trials = pd.DataFrame(rows)
    if trials.empty:
        trials = pd.DataFrame(columns=["campaign", "trial_id", "config_id", *analysis.CONFIG_FIELDS, "mode", "warmup",
                                       "status", "flagged", "variant", "family"])
    else:
        insert_study_labels(trials)
    series_frame = pd.DataFrame(series, columns=["trial_id", "config_id", "second", "interval_s", "bytes_sent",
                                                 "bytes_received", "echoes", "open_connections",
                                                 "bytes_sent_per_sec", "bytes_received_per_sec"])
    return trials, series_frame


# --------------------------------------------------------------------------- summaries


def _measured(group: pd.DataFrame) -> pd.DataFrame:
    return group[~group["warmup"].astype(bool)]


def _sum(values: pd.Series) -> float:
    sample = stats.as_sample(values)
    return float(sample.sum()) if sample.size else math.nan


def _flag_tally(rows: pd.DataFrame) -> dict[str, int]:
    """{flag: number of the rows that carry it}."""
    counts: dict[str, int] = {}
    for text in rows["flags"].fillna(""):
        for flag in str(text).split(analysis.FLAG_SEPARATOR):
            if flag:
                counts[flag] = counts.get(flag, 0) + 1
    return counts


def _flag_counts(rows: pd.DataFrame) -> str:
    return analysis.FLAG_SEPARATOR.join(f"{k}:{v}" for k, v in sorted(_flag_tally(rows).items()))


def _per_configuration(trials: pd.DataFrame, mode: str, fields: Sequence[str], sort_by: str,
                       statistics: Callable[[pd.DataFrame], dict[str, Any]]) -> pd.DataFrame:
    """One row per configuration of one echo_client mode: its ids, names and `fields` (from its first trial),
    then `statistics` of its measured trials; canonical architecture order, then `sort_by`."""
    if trials.empty:
        return pd.DataFrame()
    rows = []
    for config_id, group in trials[trials["mode"] == mode].groupby("config_id", sort=False):
        first = group.iloc[0]
        row: dict[str, Any] = {
            "campaign": first["campaign"], "config_id": config_id, "variant": first["variant"],
            "family": first["family"],
        }
        for name in fields:
            row[name] = first.get(name)
        row.update(statistics(_measured(group)))
        rows.append(row)
    summary = pd.DataFrame(rows)
    return sorted_rows(summary, [sort_by]).reset_index(drop=True) if not summary.empty else summary


def throughput_summary(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per throughput configuration; statistics over measured, ok, unflagged trials."""
    return _per_configuration(trials, MODE_THROUGHPUT,
                              (*analysis.CONFIG_FIELDS, "mode", "message_size", "sources", "connect_rate"),
                              "connections", _throughput_statistics)


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
        flags=_flag_counts(ok),
        n_verify_error_trials=int((ok["verify_errors"].fillna(0) > 0).sum()),
        verify_errors=_sum(ok["verify_errors"]),
        connect_errors=_sum(ok["connect_errors"]),
        not_attempted=_sum(ok["not_attempted"]),
        closed_early=_sum(ok["closed_early"]),
        unanswered_messages=_sum(ok["unanswered_messages"]),
        n_held_all=int(((ok["connections_connected"] == ok["connections"]) & (ok["open_at_end"] == ok["connections"])
                        & (ok["connect_errors"].fillna(0) == 0) & (ok["closed_early"].fillna(0) == 0)).sum()),
        bytes_received_per_sec_mean=received.mean,
        bytes_received_per_sec_sd=received.sd,
        bytes_received_per_sec_ci95_low=received.mean_ci.low,
        bytes_received_per_sec_ci95_high=received.mean_ci.high,
        bytes_sent_per_sec_mean=stats.sample_mean(clean["bytes_sent_per_sec"]),
        echoes_per_sec_mean=stats.sample_mean(clean["echoes_per_sec"]),
        all_connected_s_mean=stats.sample_mean(clean["all_connected_s"]),
        rtt_mean_s_mean=stats.sample_mean(clean["rtt_mean_s"]),
        rtt_max_s_max=float(stats.as_sample(clean["rtt_max_s"]).max()) if stats.as_sample(clean["rtt_max_s"]).size
        else math.nan,
        load_cpu_utilisation_mean=stats.sample_mean(ok["load_cpu_utilisation"]),
        load_cpus_busy_mean=stats.sample_mean(ok["load_cpus_busy"]),
        server_cpu_us_per_echo=stats.ratio(stats.sample_mean(clean["server_cpu_s"]) * 1e6,
                                           stats.sample_mean(clean["echoes"])),
    )
    for q in RTT_PERCENTILES:
        column = f"rtt_p{q.replace('.', '_')}_s"
        row[f"{column}_mean"] = stats.sample_mean(clean[column])
    return row


def max_conns_summary(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per --max-conns configuration over its measured ok trials (flagged ones included)."""
    return _per_configuration(trials, MODE_MAX_CONNS, (*analysis.CONFIG_FIELDS, "mode", "cap", "sources"), "cap",
                              _max_conns_statistics)


def _max_conns_statistics(measured: pd.DataFrame) -> dict[str, Any]:
    ok = measured[(measured["status"] == "ok") & measured["max_conns_reached"].notna()]
    reasons: dict[str, int] = {}
    for reason in ok["max_conns_stop_reason"].dropna():
        reasons[str(reason)] = reasons.get(str(reason), 0) + 1
    reached = stats.as_sample(ok["max_conns_reached"])
    per_conn = stats.as_sample(ok["server_rss_per_conn_bytes"])
    return dict(
        n_measured=len(measured),
        n=len(ok),
        **analysis.outcome_counts(measured, ok),
        flags=_flag_counts(ok),
        verify_errors=_sum(ok["verify_errors"]),
        reached_min=float(reached.min()) if reached.size else math.nan,
        reached_max=float(reached.max()) if reached.size else math.nan,
        reached_median=float(np.median(reached)) if reached.size else math.nan,
        alive_at_end_min=float(stats.as_sample(ok["max_conns_alive_at_end"]).min())
        if stats.as_sample(ok["max_conns_alive_at_end"]).size else math.nan,
        stop_reasons=analysis.FLAG_SEPARATOR.join(f"{k}:{v}" for k, v in sorted(reasons.items())),
        stop_s_median=stats.sample_median(ok["max_conns_stop_s"]),
        rss_per_conn_bytes_median=float(np.median(per_conn)) if per_conn.size else math.nan,
        rss_per_conn_bytes_min=float(per_conn.min()) if per_conn.size else math.nan,
        rss_per_conn_bytes_max=float(per_conn.max()) if per_conn.size else math.nan,
        open_files_soft=_unique_number(measured["open_files_soft"]),
        open_files_hard=_unique_number(measured["open_files_hard"]),
        open_files_needed=_unique_number(measured["open_files_needed"]),
    )


def _unique_number(values: pd.Series) -> float:
    """The one value of a column (NaN when absent or when trials disagree: then the table shows --)."""
    sample = stats.as_sample(values)
    unique = set(sample.tolist())
    return float(unique.pop()) if len(unique) == 1 else math.nan


def representative_trials(trials: pd.DataFrame, summary: pd.DataFrame, connections: float | None = None) -> pd.DataFrame:
    """Per throughput configuration at `connections` (default: the largest client count): the measured ok
    trial whose received bytes/s is the median of its configuration's unflagged trials (the lower of the two
    middle ones for an even count; a flagged trial only where no unflagged one exists, and then it says so)."""
    if summary.empty:
        return pd.DataFrame()
    if connections is None:
        connections = float(pd.to_numeric(summary["connections"]).max())
    chosen = []
    for _, config in summary[pd.to_numeric(summary["connections"]) == connections].iterrows():
        group = trials[(trials["config_id"] == config["config_id"]) & ~trials["warmup"].astype(bool)
                       & (trials["status"] == "ok")]
        if group.empty:
            continue
        clean = group[~group["flagged"].astype(bool)]
        pool = clean if not clean.empty else group
        pool = pool.assign(_rate=pd.to_numeric(pool["bytes_received_per_sec"], errors="coerce").fillna(-1.0))
        pool = pool.sort_values(["_rate", "repetition"], kind="stable")
        pick = pool.iloc[(len(pool) - 1) // 2].drop(labels="_rate")
        chosen.append(pick)
    return pd.DataFrame(chosen).reset_index(drop=True)


# --------------------------------------------------------------------------- the study


@dataclass(frozen=True)
class EchoStudy:
    source: StudySource
    trials: pd.DataFrame
    series: pd.DataFrame
    summary: pd.DataFrame
    max_conns: pd.DataFrame
    csv_files: dict[str, Path] = field(default_factory=dict)

    @property
    def available(self) -> bool:
        return self.source.campaign is not None

    @property
    def measured(self) -> pd.DataFrame:
        if self.trials.empty:
            return self.trials
        return self.trials[~self.trials["warmup"].astype(bool)]

    @property
    def measured_ok(self) -> pd.DataFrame:
        measured = self.measured
        return measured[measured["status"] == "ok"] if not measured.empty else measured

    def outputs(self, macros: MacroSet, paper_dir: Path, figures_dir: Path) -> dict[str, str]:
        """What archbench.report.build writes for this section: macros into `macros`, {generated file: LaTeX}."""
        return echo_outputs(macros, self, paper_dir, figures_dir)


def process_echo_campaign(requested: str | None, raw_root: Path, processed_dir: Path | None) -> EchoStudy:
    """Read the echo campaign (if any) and write its CSVs into processed_dir (when given)."""
    source = load_campaign_or_reason(requested, Path(raw_root), "echo", "echo-study")
    if source.campaign is None:
        if processed_dir is not None:
            remove_stale_files(processed_dir, (TRIALS_CSV, SUMMARY_CSV, MAX_CONNS_CSV, SERIES_CSV))
        empty = pd.DataFrame()
        return EchoStudy(source, empty, empty, empty, empty)
    trials, series = echo_trials(source.campaign)
    summary = throughput_summary(trials)
    max_conns = max_conns_summary(trials)
    csv_files: dict[str, Path] = {}
    if processed_dir is not None:
        csv_files = write_study_csvs(processed_dir, [source.campaign], {
            TRIALS_CSV: trials, SUMMARY_CSV: summary, MAX_CONNS_CSV: max_conns, SERIES_CSV: series})
    return EchoStudy(source, trials, series, summary, max_conns, csv_files)


# --------------------------------------------------------------------------- figures


def _family_colours(study: EchoStudy) -> dict[str, Any]:
    labels = list(dict.fromkeys(list(study.summary.get("variant", [])) + list(study.max_conns.get("variant", []))))
    return colours_for(labels)


def scaling_figure(study: EchoStudy) -> Figure | None:
    """Received MB/s (mean, 95 % CI) and RTT p50/p99 against clients, log x; None without two client counts."""
    summary = study.summary
    if summary.empty:
        return None
    lines = [(variant, rows.sort_values("connections")) for variant, rows in summary.groupby("variant", sort=False)]
    lines = [(v, r[r["bytes_received_per_sec_mean"].notna()]) for v, r in lines]
    lines = [(v, r) for v, r in lines if r["connections"].nunique() >= 2]
    if not lines:
        return None
    colours = _family_colours(study)
    with plt.rc_context(STYLE):
        figure, (top, bottom) = plt.subplots(2, 1, figsize=(5.6, 4.6), sharex=True,
                                             gridspec_kw={"height_ratios": [1, 1]})
        for index, (variant, rows) in enumerate(lines):
            marker = MARKERS[index % len(MARKERS)]
            colour = colours.get(variant)
            mean, yerr = ci_error_bars(rows, "bytes_received_per_sec", MB)
            top.errorbar(rows["connections"], mean, yerr=yerr, marker=marker, markersize=4,
                         capsize=3, linewidth=1.2, color=colour, label=variant)
            flagged = rows[rows["n_flagged"] > 0]
            if not flagged.empty:
                top.scatter(flagged["connections"], flagged["bytes_received_per_sec_mean"] / MB, s=60,
                            facecolors="none", edgecolors="red", linewidths=0.8, zorder=5)
            p99 = rows["rtt_p99_s_mean"].to_numpy(dtype=float) * 1e3
            p50 = rows["rtt_p50_s_mean"].to_numpy(dtype=float) * 1e3
            bottom.plot(rows["connections"], p99, marker=marker, markersize=4, linewidth=1.2, color=colour)
            bottom.plot(rows["connections"], p50, marker=marker, markersize=3, linewidth=0.9, linestyle="--",
                        color=colour, alpha=0.8)
        top.set_xscale("log")
        top.set_ylabel("Received (MB/s)\nmean, 95 % CI")
        top.set_ylim(bottom=0)
        bottom.set_yscale("log")
        bottom.set_ylabel("RTT (ms, log)\np99 solid, p50 dashed")
        bottom.set_xlabel("Concurrent echo clients (log scale)")
        bottom.xaxis.set_major_formatter(FuncFormatter(_thousands))
        bottom.xaxis.set_minor_formatter(NullFormatter())
        bottom.yaxis.set_major_formatter(FuncFormatter(compact_tick))
        handles, labels = top.get_legend_handles_labels()
        if (summary["n_flagged"] > 0).any():
            from matplotlib.lines import Line2D

            handles.append(Line2D([], [], marker="o", linestyle="none", markerfacecolor="none", markeredgecolor="red",
                                  markersize=7))
            labels.append("flagged trials (excluded from the mean)")
        bottom.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.28), frameon=False, ncol=2)
    return figure


def time_series_figure(study: EchoStudy) -> tuple[Figure | None, pd.DataFrame]:
    """Bytes sent and received per second against seconds since echo_client started connecting, one panel
    per architecture, for the representative trial at the largest client count."""
    picks = representative_trials(study.trials, study.summary)
    if picks.empty or study.series.empty:
        return None, picks
    picks = picks[picks["trial_id"].isin(set(study.series["trial_id"]))]
    if picks.empty:
        return None, picks
    picks = sorted_rows(picks).reset_index(drop=True)
    count = len(picks)
    rows_n, columns = panel_grid(count)
    with plt.rc_context(STYLE):
        figure, panels = plt.subplots(rows_n, columns, figsize=(5.8, 0.6 + 1.85 * rows_n), sharex=True, sharey=True,
                                      squeeze=False, layout="constrained")
        for index, (_, pick) in enumerate(picks.iterrows()):
            axes = panels[index // columns][index % columns]
            samples = study.series[study.series["trial_id"] == pick["trial_id"]].sort_values("second")
            # Each sample covers (previous second, second]: a step that starts at 0, the start of connecting.
            x = np.concatenate([[0.0], samples["second"].to_numpy(dtype=float)])
            for column, style, label in (("bytes_sent_per_sec", "-", "sent"),
                                         ("bytes_received_per_sec", "--", "received")):
                values = samples[column].to_numpy(dtype=float) / MB
                y = np.concatenate([values[:1], values])
                axes.step(x, y, where="pre", linestyle=style, linewidth=1.2, label=label,
                          color="C0" if label == "sent" else "C3")
            connected = number(pick.get("all_connected_s"))
            if not math.isnan(connected):
                axes.axvline(connected, color="0.5", linestyle=":", linewidth=0.9)
            flagged = " (flagged)" if bool(pick.get("flagged")) else ""
            axes.set_title(f"{pick['variant']}{flagged}", fontsize=8)
        hide_unused_panels(panels, count)
        # Shared axes: limits once, after every panel is drawn (an earlier set_ylim would freeze the first's).
        shown = study.series[study.series["trial_id"].isin(set(picks["trial_id"]))]
        top = float(np.nanmax(shown[["bytes_sent_per_sec", "bytes_received_per_sec"]].to_numpy(dtype=float))) / MB
        panels[0][0].set_ylim(0, top * 1.12 if top > 0 else 1.0)  # headroom: a flat series is not the frame
        panels[0][0].set_xlim(left=0)
        for axes in panels[-1]:
            axes.set_xlabel("Seconds since the first connect")
        if count % columns:  # the panel above the empty slot carries the axis too
            panels[-2][-1].set_xlabel("Seconds since the first connect")
            panels[-2][-1].xaxis.set_tick_params(labelbottom=True)
        for row in panels:
            row[0].set_ylabel("MB/s")
        handles, labels = panels[0][0].get_legend_handles_labels()
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], color="0.5", linestyle=":"))
        labels.append("all clients connected")
        figure.legend(handles, labels, loc="outside lower center", frameon=False, ncol=3)
    return figure, picks


def make_echo_figures(study: EchoStudy, figures_dir: Path) -> dict[str, FigureFile | None]:
    figures_dir = Path(figures_dir)
    made: dict[str, FigureFile | None] = {"scaling": None, "time_series": None}
    remove_stale_files(figures_dir, (SCALING_FIGURE, TIME_SERIES_FIGURE))
    figure = scaling_figure(study)
    if figure is not None:
        made["scaling"] = FigureFile(save_figure(figure, figures_dir / SCALING_FIGURE),
                                     tuple(study.summary["variant"].unique()))
    figure, picks = time_series_figure(study)
    if figure is not None:
        made["time_series"] = FigureFile(save_figure(figure, figures_dir / TIME_SERIES_FIGURE),
                                         tuple(picks["trial_id"]))
    return made


# --------------------------------------------------------------------------- tables


def _mb(value: Any) -> str:
    return MISSING if is_missing(value) else format_significant(float(value) / MB, 3)


def _mb_interval(low: Any, high: Any) -> str:
    if is_missing(low) or is_missing(high):
        return MISSING
    lo, hi = float(low) / MB, float(high) / MB
    text_lo = format_significant(lo, 3) if lo >= 0 else "$-$" + format_significant(-lo, 3)
    return f"{text_lo}--{format_significant(hi, 3)}"


def _count_or_dash(value: Any) -> str:
    return format_count(value)


def throughput_table(study: EchoStudy) -> str:
    summary = study.summary
    if summary.empty:
        return r"\noindent The echo campaign has no measured throughput configuration, so there is no echo table." + "\n"
    columns = [
        Column("Server", "l"),
        Column("Clients", "r"),
        Column("$n$", "r"),
        Column(stacked("Received", "(MB/s)"), "r"),
        Column(stacked(r"95\,\% CI", "(MB/s)"), "r"),
        Column(stacked("RTT p50", "(ms)"), "r"),
        Column(stacked("p99", "(ms)"), "r"),
        Column(stacked("p99.9", "(ms)"), "r"),
        Column(stacked("max", "(ms)"), "r"),
        Column(stacked("Flagged/", "failed"), "r"),
        Column(stacked("Verify", "errors"), "r"),
        Column(stacked("Connect", "failures"), "r"),
    ]
    body, breaks = [], []
    previous = None
    for index, (_, row) in enumerate(summary.iterrows()):
        if row["variant"] != previous:
            breaks.append(index)
            previous = row["variant"]
        # The echo tables count unsupported trials but do not mark them.
        marks = row_marks(row, client_bound=True, unsupported=False)
        connect = row["connect_errors"]
        if not is_missing(row.get("not_attempted")) and float(row["not_attempted"]) > 0:
            connect = (0.0 if is_missing(connect) else float(connect)) + float(row["not_attempted"])
        body.append([
            escape(row["variant"]),
            format_count(row["connections"]),
            format_count(row["n"]),
            _mb(row["bytes_received_per_sec_mean"]) + marks,
            _mb_interval(row["bytes_received_per_sec_ci95_low"], row["bytes_received_per_sec_ci95_high"]),
            format_ms(row["rtt_p50_s_mean"]),
            format_ms(row["rtt_p99_s_mean"]),
            format_ms(row["rtt_p99_9_s_mean"]),
            format_ms(row["rtt_max_s_max"]),
            f"{format_count(row['n_flagged'])}/{format_count(row['n_failed'])}",
            _count_or_dash(row["verify_errors"]),
            _count_or_dash(connect),
        ])
    notes = notes_for_marks(summary, flagged=ECHO_FLAGGED_NOTE, unsupported=None,
                            client_bound=ECHO_CLIENT_BOUND_NOTE)
    caption = (
        r"Echo throughput and round-trip time by server and number of concurrent clients: echoed bytes received "
        r"per second within the timed window (mean over the measured, unflagged trials with its Student-$t$ "
        r"95\,\% confidence interval; -- where $n<2$), RTT percentiles (means over those trials; max: the largest "
        r"of them), each RTT measured from the message's intended send time on a monotonic clock. Flagged/failed "
        r"count measured trials; verify errors (bytes that differed from those sent) and connect failures "
        r"(connect errors and connections never attempted) are totals over every measured trial with status ok."
    )
    return adjusted_table(caption, "tab:echo", render_tabular(columns, body, breaks), notes_block(notes)) + "\n"


# What each --max-conns stop reason means (contracts.md section 6), for the generated sentences.
STOP_REASONS = {
    "cap_reached": "every connection up to the cap was held",
    "client_EMFILE": "echo\\_client ran out of descriptors: its own open-file limit",
    "client_ENFILE": "the system ran out of file descriptors",
    "connect_ECONNREFUSED": "the server refused connections (its backlog was full or it stopped accepting)",
    "connect_EADDRNOTAVAIL": "no free local port: the ephemeral port range was exhausted",
    "connect_ETIMEDOUT": "connects timed out",
    "connect_timeout": "connects timed out",
    "echo_timeout": "a connection was accepted by the kernel but never served, typically a server out of descriptors",
    "server_closed": "the server closed connections",
    "verify_error": "an echo came back wrong",
    "duration_elapsed": "the ramp's time limit ran out",
    "interrupted": "the run was interrupted",
}


def stop_reason_text(reason: str) -> str:
    if reason in STOP_REASONS:
        return STOP_REASONS[reason]
    if reason.startswith("server_"):
        return f"the server failed connections with {escape(reason[len('server_'):])}"
    if reason.startswith("connect_"):
        return f"connects failed with {escape(reason[len('connect_'):])}"
    return "a reason echo\\_client does not explain"


def plural(count: Any, singular: str, plural_form: str | None = None) -> str:
    """"1 trial", "3 trials" (with the count formatted)."""
    word = singular if not is_missing(count) and float(count) == 1 else (plural_form or singular + "s")
    return f"{format_count(count)} {word}"


def _reasons_text(reasons: str) -> str:
    """"cap_reached:2;echo_timeout:1" -> "cap\\_reached (2), echo\\_timeout (1)"; one reason alone without its count."""
    items = [item.rsplit(":", 1) for item in str(reasons or "").split(analysis.FLAG_SEPARATOR) if item]
    if not items:
        return MISSING
    if len(items) == 1:
        return r"\texttt{" + escape(items[0][0]) + "}"
    return ", ".join(r"\texttt{" + escape(name) + "}" + f" ({count})" for name, count in items)


def _range(low: Any, high: Any) -> str:
    if is_missing(low):
        return MISSING
    if is_missing(high) or float(low) == float(high):
        return format_count(low)
    return f"{format_count(low)}--{format_count(high)}"


def _kib(value: Any) -> str:
    return MISSING if is_missing(value) else format_significant(float(value) / KIB, 3)


def max_conns_table(study: EchoStudy) -> str:
    table = study.max_conns
    if table.empty:
        return (r"\noindent The echo campaign has no \texttt{-{}-max-conns} trial, so there is no connection-ceiling "
                r"table." + "\n")
    columns = [
        Column("Server", "l"),
        Column("Cap", "r"),
        Column("$n$", "r"),
        Column(stacked("Connections", "held"), "r"),
        Column(stacked("Alive at", "the end"), "r"),
        Column("Why it stopped", r">{\raggedright\arraybackslash}p{3.1cm}"),
        Column(stacked("Server RSS per", "connection (KiB)"), "r"),
        Column(stacked("Open files", "soft/hard"), "r"),
        Column(stacked("Flagged/", "failed"), "r"),
    ]
    body = []
    for _, row in table.iterrows():
        marks = row_marks(row, unsupported=False)
        body.append([
            escape(row["variant"]),
            format_count(row["cap"]),
            format_count(row["n"]),
            _range(row["reached_min"], row["reached_max"]) + marks,
            format_count(row["alive_at_end_min"]),
            _reasons_text(row["stop_reasons"]),
            _kib(row["rss_per_conn_bytes_median"]),
            f"{format_count(row['open_files_soft'])}/{format_count(row['open_files_hard'])}",
            f"{format_count(row['n_flagged'])}/{format_count(row['n_failed'])}",
        ])
    flags = "; ".join(escape(f"{r['variant']}: {r['flags']}") for _, r in table.iterrows() if r["n_flagged"] > 0)
    flagged_note = (
        FLAGGED_MARK + r"\,at least one \texttt{-{}-max-conns} trial was flagged by echo\_client (flags: " + flags
        + r"); a ramp is expected to end in failures, so these trials are included and their stop reason says why."
    )
    failed_note = FAILED_MARK + r"\,at least one trial failed; failed trials are excluded and counted."
    notes = notes_for_marks(table, flagged=flagged_note, failed=failed_note, unsupported=None)
    caption = (
        r"Connection ceiling per server: echo\_client \texttt{-{}-max-conns} opens connections up to the cap, each "
        r"verified alive by one echo, and stops at the cap or at the first failure, naming it. Connections held: "
        r"the range over the measured trials with status ok; alive at the end: the fewest that echoed once more "
        r"after the ramp; server RSS per connection: the server's resident memory (VmRSS) once all were held, minus "
        r"before the first, divided by the connections held (median; -- without a reading); open files: the "
        r"RLIMIT\_NOFILE soft/hard limit the server and echo\_client inherited, from the trial records."
    )
    return adjusted_table(caption, "tab:echo-max-conns", render_tabular(columns, body), notes_block(notes)) + "\n"


# --------------------------------------------------------------------------- macros


def _variant_at(summary: pd.DataFrame, architecture: str, connections: float) -> pd.Series | None:
    rows = summary[(summary["architecture"] == architecture) & (pd.to_numeric(summary["connections"]) == connections)]
    rows = rows[rows["bytes_received_per_sec_mean"].notna()]
    return None if rows.empty else rows.iloc[0]


def _trial_sentence(study: EchoStudy) -> str:
    measured = study.measured
    if measured.empty:
        return "The echo campaign holds no measured trial."
    status = measured["status"]
    ok = measured[status == "ok"]
    flagged = ok[ok["flagged"].astype(bool)]
    parts = [
        f"The echo campaign holds {format_count(len(measured))} measured trials "
        f"({format_count((measured['mode'] == MODE_THROUGHPUT).sum())} throughput, "
        f"{format_count((measured['mode'] == MODE_MAX_CONNS).sum())} \\texttt{{-{{}}-max-conns}}) and "
        f"{plural(study.trials['warmup'].astype(bool).sum(), 'warm-up trial')}, excluded from every statistic"
    ]
    failed = int((status == "failed").sum())
    unsupported = int((status == "unsupported").sum())
    parts.append(f"{plural(failed, 'measured trial')} failed"
                 + (f" and {format_count(unsupported)} were unsupported" if unsupported else ""))
    text = "; ".join(parts) + ". "
    throughput_flagged = flagged[flagged["mode"] == MODE_THROUGHPUT]
    if flagged.empty:
        text += "echo\\_client flagged none of them."
    else:
        tally = sorted(_flag_tally(flagged).items())
        listed = join_list([f"{FLAG_TEXT.get(k, escape(k))} in {v}" for k, v in tally])
        text += (f"echo\\_client flagged {format_count(len(flagged))} of the {format_count(len(ok))} measured trials "
                 f"with status ok ({listed}); the {format_count(len(throughput_flagged))} flagged throughput trials are "
                 "counted and marked in Table~\\ref{tab:echo}, never averaged.")
    return text


def _verify_sentence(study: EchoStudy) -> str:
    ok = study.measured_ok
    if ok.empty:
        return "No echo trial completed, so no echoed byte was verified."
    with_errors = ok[ok["verify_errors"].fillna(0) > 0]
    total_bytes = _sum(ok["bytes_received_total"])
    if with_errors.empty:
        return (f"echo\\_client compared every one of the {format_count(total_bytes)} echoed bytes of the "
                f"{format_count(len(ok))} measured trials with the bytes it had sent: not one differed.")
    names = join_list(sorted({escape(v) for v in with_errors["variant"]}))
    first = with_errors.iloc[0]
    return (f"echo\\_client compared every echoed byte with the byte it had sent: "
            f"{format_count(len(with_errors))} of the {format_count(len(ok))} measured trials had verification errors "
            f"({format_count(_sum(with_errors['verify_errors']))} bytes in total; {names}); these trials are flagged, "
            f"shown in the tables and excluded from every mean (the first was "
            f"{tt(first['trial_id'])}).")


def _connect_sentence(study: EchoStudy) -> str:
    ok = study.measured_ok
    if ok.empty:
        return ""
    throughput = ok[ok["mode"] == MODE_THROUGHPUT]
    failures = throughput[(throughput["connect_errors"].fillna(0) > 0) | (throughput["not_attempted"].fillna(0) > 0)
                          | (throughput["closed_early"].fillna(0) > 0)]
    if throughput.empty:
        return ""
    if failures.empty:
        return (f"In every one of the {format_count(len(throughput))} measured throughput trials every client "
                "connected, none was closed early and none failed to connect.")
    kinds: dict[str, float] = {}
    for text in failures["connect_error_kinds"].fillna(""):
        for item in str(text).split(";"):
            if item:
                name, _, value = item.rpartition(":")
                kinds[name] = kinds.get(name, 0.0) + number(value)
    detail = join_list([f"\\texttt{{{escape(k)}}} {format_count(v)}" for k, v in sorted(kinds.items())])
    return (f"{format_count(len(failures))} of the {format_count(len(throughput))} measured throughput trials had "
            f"connect failures or connections closed early ({format_count(_sum(failures['connect_errors']))} connect "
            f"errors{': ' + detail if kinds else ''}; {format_count(_sum(failures['not_attempted']))} connections never "
            f"attempted; {format_count(_sum(failures['closed_early']))} closed early): "
            + join_list(sorted({escape(f'{v} at {int(c):,} clients') for v, c in
                                  zip(failures['variant'], failures['connections'])})) + ".")


def _scaling_finding(study: EchoStudy) -> str:
    summary = study.summary
    defined = summary[summary["bytes_received_per_sec_mean"].notna()] if not summary.empty else summary
    if defined.empty:
        return "No echo configuration has an unflagged measured trial, so there is no throughput to compare."
    largest = float(pd.to_numeric(defined["connections"]).max())
    at_largest = defined[pd.to_numeric(defined["connections"]) == largest]
    best = at_largest.loc[at_largest["bytes_received_per_sec_mean"].idxmax()]
    worst = at_largest.loc[at_largest["bytes_received_per_sec_mean"].idxmin()]
    text = (f"At {format_count(largest)} clients the most echoed bytes per second came from "
            f"{escape(best['variant'])} ({_mb(best['bytes_received_per_sec_mean'])}\\,MB/s, p99 RTT "
            f"{format_ms(best['rtt_p99_s_mean'])}\\,ms)")
    if best["config_id"] != worst["config_id"]:
        text += (f" and the fewest from {escape(worst['variant'])} ({_mb(worst['bytes_received_per_sec_mean'])}\\,MB/s, "
                 f"p99 RTT {format_ms(worst['rtt_p99_s_mean'])}\\,ms)")
    text += "."
    overlapping = []
    if len(at_largest) >= 2:
        best_low = best["bytes_received_per_sec_ci95_low"]
        for _, row in at_largest.iterrows():
            if row["config_id"] == best["config_id"] or is_missing(best_low) or is_missing(row["bytes_received_per_sec_ci95_high"]):
                continue
            if float(row["bytes_received_per_sec_ci95_high"]) >= float(best_low):
                overlapping.append(escape(row["variant"]))
    if overlapping:
        text += (f" The confidence interval of {escape(best['variant'])} overlaps those of {join_list(overlapping)}, "
                 "so at this client count the data do not order them.")
    smallest = float(pd.to_numeric(defined["connections"]).min())
    if smallest != largest:
        growth = []
        for variant, rows in defined.groupby("variant", sort=False):
            low = rows[pd.to_numeric(rows["connections"]) == smallest]
            high = rows[pd.to_numeric(rows["connections"]) == largest]
            if low.empty or high.empty or is_missing(low.iloc[0]["rtt_p99_s_mean"]) or is_missing(high.iloc[0]["rtt_p99_s_mean"]):
                continue
            growth.append((float(high.iloc[0]["rtt_p99_s_mean"]) / float(low.iloc[0]["rtt_p99_s_mean"]), variant))
        if growth:
            growth.sort()
            low_g, low_v = growth[0]
            high_g, high_v = growth[-1]
            text += (f" From {format_count(smallest)} to {format_count(largest)} clients the p99 RTT grew by a factor "
                     f"of {format_significant(low_g, 2)} ({escape(low_v)})")
            text += (f" to {format_significant(high_g, 2)} ({escape(high_v)})." if len(growth) > 1 else ".")
    return text


def _poll_epoll_finding(study: EchoStudy) -> str:
    summary = study.summary
    if summary.empty:
        return ""
    counts = sorted(set(pd.to_numeric(summary["connections"]).dropna()))
    sentences = []
    for connections in counts:
        poll = _variant_at(summary, "poll", connections)
        epoll = _variant_at(summary, "epoll", connections)
        if poll is None or epoll is None:
            continue
        ratio = stats.ratio(float(poll["bytes_received_per_sec_mean"]), float(epoll["bytes_received_per_sec_mean"]))
        sentences.append(f"{format_count(connections)} clients: {format_significant(ratio, 3)} of epoll's bytes per "
                         f"second, p99 RTT {format_ms(poll['rtt_p99_s_mean'])} against "
                         f"{format_ms(epoll['rtt_p99_s_mean'])}\\,ms")
    if not sentences:
        return "The echo campaign did not measure poll and epoll at the same client count."
    return "Poll against epoll (source 004's comparison) at " + "; ".join(sentences) + "."


def _source_004_finding(study: EchoStudy) -> str:
    summary = study.summary
    if summary.empty:
        return ""
    parts = []
    for architecture, name in (("thread_per_conn", "the thread-per-connection server"), ("poll", "poll"),
                               ("epoll", "epoll")):
        rows = summary[(summary["architecture"] == architecture) & summary["rtt_p50_s_mean"].notna()]
        if rows.empty:
            continue
        values = ", ".join(f"{format_ms(r['rtt_p50_s_mean'])}\\,ms at {format_count(r['connections'])}"
                           for _, r in rows.sort_values("connections").iterrows())
        parts.append(f"{name} {values} clients")
    if not parts:
        return ""
    return "Our median RTTs were: " + "; ".join(parts) + "."


def _max_conns_finding(study: EchoStudy) -> str:
    table = study.max_conns
    if table.empty:
        return ("The campaign has no \\texttt{-{}-max-conns} trial, so the connection ceiling of the servers was not "
                "measured here.")
    held = table[table["n"] > 0]
    if held.empty:
        return "No \\texttt{-{}-max-conns} trial completed, so the connection ceiling is unknown."
    at_cap = held[held["stop_reasons"].fillna("").map(lambda s: set(x.rsplit(":", 1)[0] for x in s.split(";") if x)
                                                      == {"cap_reached"})]
    others = held[~held.index.isin(at_cap.index)]
    sentences = []
    if not at_cap.empty:
        caps = sorted(set(pd.to_numeric(at_cap["cap"]).dropna()))
        names = join_list([escape(v) for v in at_cap["variant"]])
        one = len(at_cap) == 1
        sentences.append(
            f"{names} held every connection up to the cap of {join_list([format_count(c) for c in caps])} "
            f"(\\texttt{{cap\\_reached}}): {'its' if one else 'their'} ceiling is above it, and the cap, chosen "
            "below the open-file limit, bounded the measurement")
    for _, row in others.iterrows():
        reasons = [r.rsplit(":", 1)[0] for r in str(row["stop_reasons"] or "").split(analysis.FLAG_SEPARATOR) if r]
        sentences.append(
            f"{escape(row['variant'])} stopped at {_range(row['reached_min'], row['reached_max'])} connections "
            f"(cap {format_count(row['cap'])}) because of {_reasons_text(row['stop_reasons'])} ("
            + "; ".join(stop_reason_text(r) for r in reasons) + ")")
    failed = table[(table["n"] == 0) & (table["n_failed"] > 0)]
    for _, row in failed.iterrows():
        sentences.append(f"the \\texttt{{-{{}}-max-conns}} trial of {escape(row['variant'])} failed, so its ceiling "
                         "is unknown")
    text = "; ".join(sentences) + "."
    return text[0].upper() + text[1:] if text and text[0].islower() else text


def _memory_finding(study: EchoStudy) -> str:
    table = study.max_conns
    if table.empty:
        return ""
    known = table[table["rss_per_conn_bytes_median"].notna()]
    if known.empty:
        return "No \\texttt{-{}-max-conns} trial recorded the server's memory, so memory per connection is unknown."
    low = known.loc[known["rss_per_conn_bytes_median"].idxmin()]
    high = known.loc[known["rss_per_conn_bytes_median"].idxmax()]
    if low["config_id"] == high["config_id"]:
        return (f"The server's resident memory grew by {_kib(low['rss_per_conn_bytes_median'])}\\,KiB per held "
                f"connection ({escape(low['variant'])}).")
    return (f"The server's resident memory grew by {_kib(low['rss_per_conn_bytes_median'])}\\,KiB per held connection "
            f"for {escape(low['variant'])} up to {_kib(high['rss_per_conn_bytes_median'])}\\,KiB for "
            f"{escape(high['variant'])}.")


def _open_files_sentence(study: EchoStudy) -> str:
    measured = study.measured
    if measured.empty:
        return "The echo campaign records no open-file limit."
    soft = distinct_values(measured, "open_files_soft")
    hard = distinct_values(measured, "open_files_hard")
    if not hard:
        provenance = campaign_provenance(study.source.campaign.meta, study.source.campaign.trials)
        limit = provenance.get("open_files_limit")
        if isinstance(limit, (list, tuple)) and len(limit) == 2:
            soft, hard = [float(limit[0])], [float(limit[1])]
    if not hard:
        return "The echo campaign records no open-file limit."
    sources = distinct_values(measured, "sources")
    source_text = ""
    if sources and sources[-1] > 0:
        k = int(sources[-1])
        source_text = (f" With \\texttt{{-{{}}-sources {k}}} echo\\_client bound its connections to 127.0.0.1 to "
                       f"127.0.0.{k}, so the ephemeral ports allowed {format_count(k * DEFAULT_EPHEMERAL_PORTS)} "
                       f"connections ({format_count(DEFAULT_EPHEMERAL_PORTS)} per source address with Linux's default "
                       "port range) and were never the limit.")
    return (f"Server and echo\\_client each need one descriptor per connection, and each inherited an open-file limit "
            f"(RLIMIT\\_NOFILE) of {join_list([format_count(s) for s in soft])} (soft) and "
            f"{join_list([format_count(h) for h in hard])} (hard), recorded with every trial: that limit, not the "
            f"architecture, is the ceiling a server that holds every connection reaches on this machine."
            + source_text)


def _time_series_sentence(study: EchoStudy, picks: pd.DataFrame, present: bool) -> str:
    if not present or picks.empty:
        return ""
    connections = format_count(picks["connections"].iloc[0])
    return (f"Figure~\\ref{{fig:echo-time-series}} plots, for one trial per server at {connections} clients (the trial "
            "whose bytes per second are the median of its configuration's unflagged trials), the bytes sent and "
            "received in each second, against the seconds since echo\\_client started connecting.")


def echo_macros(macros: MacroSet, study: EchoStudy, figures_present: Mapping[str, bool] | None = None,
                picks: pd.DataFrame | None = None) -> None:
    """Every \\abEcho... macro sections/echo.tex uses, defined for any campaign (or none)."""
    figures_present = dict(figures_present or {})
    macros.add("echo has data", "1" if study.available else "0", "1: the echo campaign exists (sections/echo.tex \\ifnum)")
    if not study.available:
        no_campaign_macros(
            macros, "echo", study.source.requested, study.source.reason or "no echo campaign",
            missing=("echo client counts", "echo message size", "echo sources", "echo duration"),
            empty=("echo load command", "echo trials sentence", "echo verify sentence", "echo connect sentence",
                   "echo table sentence", "echo scaling finding", "echo poll epoll finding",
                   "echo source four finding", "echo time series sentence", "echo open files sentence",
                   "echo max conns finding", "echo memory finding"),
        )
        return
    campaign = study.source.campaign
    measured = study.measured
    macros.add("echo campaign", escape(study.source.name), "echo campaign name")
    macros.add("echo campaign sentence", provenance_sentence([campaign], "section"),
               "campaign, host and dates of the echo numbers")
    throughput = measured[measured["mode"] == MODE_THROUGHPUT] if not measured.empty else measured
    macros.add("echo client counts", format_list(distinct_values(throughput, "connections")),
               "echo_client --connections")
    macros.add("echo message size", format_list(distinct_values(measured, "message_size")),
               "echo_client --size, bytes")
    macros.add("echo sources", format_list(distinct_values(measured, "sources")), "echo_client --sources")
    macros.add("echo duration", format_list(distinct_values(throughput, "duration_s")), "echo_client --duration, s")
    record = next((r for r in campaign.trials if (r.get("config") or {}).get("proto") == "echo"
                   and (r.get("config") or {}).get("mode", MODE_THROUGHPUT) == MODE_THROUGHPUT
                   and r.get("status") == "ok" and not r.get("warmup")), None)
    command = load_command(record)
    macros.add("echo load command", escape_command(command) if command else "(no completed throughput trial)",
               "exact echo_client command of one trial")
    macros.add("echo trials sentence", _trial_sentence(study), "trials, failures and flags")
    macros.add("echo verify sentence", _verify_sentence(study), "verification errors")
    macros.add("echo connect sentence", _connect_sentence(study), "connect failures")
    table_sentence = ("Table~\\ref{tab:echo} gives the numbers" if not study.summary.empty else "")
    if table_sentence and figures_present.get("scaling"):
        table_sentence += " and Figure~\\ref{fig:echo-scaling} plots them against the number of clients"
    macros.add("echo table sentence", table_sentence + ("." if table_sentence else ""), "cites the echo table/figure")
    macros.add("echo scaling finding", _scaling_finding(study), "throughput and RTT at the largest client count")
    macros.add("echo poll epoll finding", _poll_epoll_finding(study), "poll against epoll")
    macros.add("echo source four finding", _source_004_finding(study), "our median RTTs beside 004's delays")
    macros.add("echo time series sentence",
               _time_series_sentence(study, picks if picks is not None else pd.DataFrame(),
                                     bool(figures_present.get("time_series"))),
               "cites the time-series figure")
    macros.add("echo open files sentence", _open_files_sentence(study), "the open-file limit in force")
    macros.add("echo max conns finding", _max_conns_finding(study), "connection ceilings and why they stopped")
    macros.add("echo memory finding", _memory_finding(study), "server memory per connection")


# --------------------------------------------------------------------------- entry point for report.py


def echo_outputs(macros: MacroSet, study: EchoStudy, paper_dir: Path, figures_dir: Path) -> dict[str, str]:
    """Add the echo macros to `macros` and return {generated file name: LaTeX} (every file, always)."""
    made = make_echo_figures(study, figures_dir)
    present = {key: value is not None for key, value in made.items()}
    picks = representative_trials(study.trials, study.summary) if study.available else pd.DataFrame()
    echo_macros(macros, study, present, picks)
    if not study.available:
        return {name: "% no echo campaign: the section's first sentence says why\n" for name in GENERATED_FILES}
    scaling = figure_block(
        include_path(made["scaling"], paper_dir),
        "fig:echo-scaling",
        r"Echo servers against the number of concurrent clients (logarithmic axis): received bytes per second "
        r"(top; mean of the unflagged measured trials with its 95\,\% confidence interval, a red ring where "
        r"flagged trials were left out) and the RTT's 99th percentile (bottom, solid) and median (dashed), means "
        r"over the same trials, logarithmic axis.",
        "The echo campaign has no server measured at two or more client counts, so there is no scaling figure.",
    )
    series = figure_block(
        include_path(made["time_series"], paper_dir),
        "fig:echo-time-series",
        r"Bytes sent (solid) and received (dashed) by echo\_client in each second of one representative trial per "
        r"server at the largest client count, against the seconds since echo\_client started connecting (each step "
        r"covers the second that ends at its right edge; the last may be shorter); the dotted line marks the moment "
        r"the last client connected.",
        "The echo campaign has no completed throughput trial with a per-second series, so there is no time-series "
        "figure.",
    )
    return {
        TABLE_FILE: throughput_table(study),
        MAX_CONNS_TABLE_FILE: max_conns_table(study),
        SCALING_FIGURE_FILE: scaling,
        TIME_SERIES_FIGURE_FILE: series,
    }
