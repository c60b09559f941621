"""Raw campaign -> processed tables (contracts.md sections 2-4).

`data/raw/<campaign>/` is read, never written. The two outputs are regenerable:

* `trials.csv`: one row per trial record, warm-ups and failed or unsupported
  trials included, so nothing that was run disappears between the raw record
  and the report.
* `summary.csv`: one row per configuration. Statistics are over the measured
  (non-warm-up) trials whose status is ok. Flagged trials (socket errors,
  non-2xx responses, no requests) ARE in those statistics, because for the
  starving architectures every trial is flagged and dropping them would hide
  exactly what the study wants to show; `n_flagged` says how many there were
  and the tables mark the row. Failed trials are counted in `n_failed`.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from archbench import parsers, stats, storage

ParsedRecord = dict[str, Any]
Parser = Callable[[Path], ParsedRecord]

# The configuration fields in the order config ids are built from; fields a
# campaign adds later (e.g. max_threads) follow, sorted, after these.
CONFIG_FIELDS: tuple[str, ...] = (
    "architecture",
    "dispatch",
    "handoff",
    "threads",
    "connections",
    "load_threads",
    "duration_s",
    "response",
    "load_generator",
    "pipeline",
)
# What identifies a line in a figure or a table: everything but the two swept axes.
SERIES_FIELDS: tuple[str, ...] = tuple(f for f in CONFIG_FIELDS if f not in ("threads", "connections"))
LATENCY_PERCENTILES: tuple[str, ...] = ("50", "75", "90", "99")
SOCKET_ERROR_KINDS: tuple[str, ...] = ("connect", "read", "write", "timeout")
# A flag analysis adds to the parser's: the trial says ok but its load output is unusable.
FLAG_UNPARSED = "unparsed_output"
FLAG_SEPARATOR = ";"


@dataclass(frozen=True)
class ProcessedCampaign:
    campaign: storage.Campaign
    trials: pd.DataFrame
    summary: pd.DataFrame
    trials_csv: Path
    summary_csv: Path


# --------------------------------------------------------------------------- loading


def list_campaigns(raw_root: Path) -> list[str]:
    """Campaign names under raw_root (directories holding a campaign.json)."""
    return list(storage.list_campaigns(Path(raw_root)))


def load_raw_campaign(campaign_dir: Path) -> storage.Campaign:
    """The campaign as archbench.storage reads it (contracts.md section 5)."""
    return storage.load_campaign(Path(campaign_dir))


def default_parser() -> Parser:
    return parsers.parse_file


# --------------------------------------------------------------------------- trials.csv


def trial_row(record: Mapping[str, Any], campaign_dir: Path, parse: Parser) -> dict[str, Any]:
    """Flatten one trial record plus its parsed load output into a trials.csv row."""
    config = dict(record.get("config") or {})
    server = dict(record.get("server") or {})
    load = dict(record.get("load") or {})
    server_stats = server.get("stats") or {}
    status = record.get("status", "failed")

    parsed, parse_error = _parse_load_output(load, record, campaign_dir, parse)
    flags = list(parsed.get("flags") or []) if parsed else []
    if status == "ok" and parsed is None:
        flags.append(FLAG_UNPARSED)

    row: dict[str, Any] = {
        "campaign": record.get("campaign"),
        "trial_id": record.get("trial_id"),
        "config_id": record.get("config_id"),
    }
    for name in CONFIG_FIELDS:
        row[name] = config.get(name)
    for name in sorted(set(config) - set(CONFIG_FIELDS)):
        row[name] = config[name]
    row.update(
        repetition=record.get("repetition"),
        warmup=bool(record.get("warmup", False)),
        order_index=record.get("order_index"),
        status=status,
        failure_reason=record.get("failure_reason"),
        flags=FLAG_SEPARATOR.join(flags),
        flagged=bool(flags),
        parse_error=parse_error,
    )

    parsed = parsed or {}
    latency = parsed.get("latency_s") or {}
    percentiles = latency.get("percentiles") or {}
    socket_errors = parsed.get("socket_errors") or {}
    total_requests = _number(parsed.get("total_requests"))
    row.update(
        requests_per_sec=_number(parsed.get("requests_per_sec")),
        total_requests=total_requests,
        # The configured duration is the config field duration_s; this is what wrk measured.
        measured_duration_s=_number(parsed.get("duration_s")),
        bytes_read=_number(parsed.get("bytes_read")),
        latency_avg_s=_number(latency.get("avg")),
        latency_stdev_s=_number(latency.get("stdev")),
        latency_max_s=_number(latency.get("max")),
    )
    for p in LATENCY_PERCENTILES:
        row[f"latency_p{p}_s"] = _number(percentiles.get(p))
    for kind in SOCKET_ERROR_KINDS:
        row[f"socket_errors_{kind}"] = _number(socket_errors.get(kind))
    row["non_2xx"] = _number(parsed.get("non_2xx"))

    server_cpu_s = _sum_or_nan(server.get("cpu_user_s"), server.get("cpu_sys_s"))
    load_cpu_s = _sum_or_nan(load.get("cpu_user_s"), load.get("cpu_sys_s"))
    connections = _number(config.get("connections"))
    connections_served = _number(server_stats.get("connections_served"))
    row.update(
        server_cpu_s=server_cpu_s,
        server_cpu_us_per_request=stats.ratio(server_cpu_s * 1e6, total_requests),
        load_cpu_s=load_cpu_s,
        # Fraction of one core: wrk pinned to a single CPU near 1.0 means the client was the bottleneck.
        load_cpu_utilisation=stats.ratio(load_cpu_s, _number(load.get("wall_s"))),
        connections_accepted=_number(server_stats.get("connections_accepted")),
        connections_served=connections_served,
        # wrk never reports a connection that is never answered (contracts.md section 1).
        # Reconnections after errors can make served exceed configured; starved is never negative.
        starved_connections=max(0.0, connections - connections_served)
        if not (math.isnan(connections) or math.isnan(connections_served))
        else math.nan,
        requests_served=_number(server_stats.get("requests_served")),
        server_errors=_number(server_stats.get("errors")),
        server_exit_code=server.get("exit_code"),
        load_exit_code=load.get("exit_code"),
        server_cpus=server.get("cpus"),
        load_cpus=load.get("cpus"),
        started_at=record.get("started_at"),
    )
    return row


def _parse_load_output(
    load: Mapping[str, Any], record: Mapping[str, Any], campaign_dir: Path, parse: Parser
) -> tuple[ParsedRecord | None, str | None]:
    output_file = load.get("output_file")
    if not output_file:
        tool = load.get("tool") or (record.get("config") or {}).get("load_generator") or "wrk"
        output_file = f"{record.get('trial_id')}.{tool}.txt"
    path = campaign_dir / output_file
    if not path.is_file():
        return None, f"missing {output_file}"
    try:
        return parse(path), None
    except Exception as error:  # noqa: BLE001 - any parse failure must become a visible row, not a crash
        return None, f"{type(error).__name__}: {error}"


def trials_frame(campaign: storage.Campaign, parse: Parser | None = None) -> pd.DataFrame:
    parse = parse or default_parser()
    rows = [trial_row(record, campaign.path, parse) for record in campaign.trials]
    frame = pd.DataFrame(rows)
    if frame.empty:
        frame = pd.DataFrame(columns=["campaign", "trial_id", "config_id", *CONFIG_FIELDS, "warmup", "status"])
    # Which columns are configuration fields, for summary_frame; extras (e.g. max_threads) follow the fixed ones.
    extras = sorted({key for record in campaign.trials for key in (record.get("config") or {})} - set(CONFIG_FIELDS))
    frame.attrs["config_columns"] = [*CONFIG_FIELDS, *extras]
    return frame


# --------------------------------------------------------------------------- summary.csv


def summary_frame(trials: pd.DataFrame, planned_trial_ids: Iterable[str] = ()) -> pd.DataFrame:
    """One row per configuration; statistics over measured trials with status ok."""
    planned_measured = _planned_measured_per_config(planned_trial_ids)
    config_columns = trials.attrs.get("config_columns") or [c for c in CONFIG_FIELDS if c in trials]
    rows = []
    for config_id, group in trials.groupby("config_id", sort=False, dropna=False):
        measured = group[~group["warmup"].astype(bool)]
        ok = measured[measured["status"] == "ok"]
        throughput = stats.summarize(ok["requests_per_sec"], level=stats.DEFAULT_CONFIDENCE)
        row: dict[str, Any] = {"campaign": group["campaign"].iloc[0], "config_id": config_id}
        for column in config_columns:
            row[column] = group[column].iloc[0]
        row.update(
            n_planned=planned_measured.get(str(config_id), math.nan),
            n_measured=len(measured),
            n_warmup=int(group["warmup"].astype(bool).sum()),
        )
        row.update(throughput.as_dict())
        row.update(
            n_flagged=int(ok["flagged"].astype(bool).sum()),
            n_failed=int((measured["status"] == "failed").sum()),
            n_unsupported=int((measured["status"] == "unsupported").sum()),
            flags=FLAG_SEPARATOR.join(sorted({f for fs in ok["flags"] for f in str(fs).split(FLAG_SEPARATOR) if f})),
            server_cpu_us_per_request=stats.sample_mean(ok["server_cpu_us_per_request"]),
            timeouts_mean=stats.sample_mean(ok["socket_errors_timeout"]),
            socket_errors_mean=stats.sample_mean(
                ok[[f"socket_errors_{k}" for k in SOCKET_ERROR_KINDS]].sum(axis=1, min_count=1)
            ),
            non_2xx_mean=stats.sample_mean(ok["non_2xx"]),
            starved_connections_mean=stats.sample_mean(ok["starved_connections"]),
            starved_connections_max=_max_or_nan(ok["starved_connections"]),
            latency_p50_s_mean=stats.sample_mean(ok["latency_p50_s"]),
            latency_p99_s_mean=stats.sample_mean(ok["latency_p99_s"]),
            load_cpu_utilisation_mean=stats.sample_mean(ok["load_cpu_utilisation"]),
        )
        row["n_missing"] = (
            max(0, row["n_planned"] - row["n_measured"]) if not math.isnan(row["n_planned"]) else math.nan
        )
        rows.append(row)
    summary = pd.DataFrame(rows)
    if summary.empty:
        return summary
    return sort_configurations(summary).reset_index(drop=True)


def sort_configurations(frame: pd.DataFrame) -> pd.DataFrame:
    """Architecture, then dispatch/handoff, then the swept axes ascending."""
    keys = [c for c in ("architecture", "dispatch", "handoff", "load_threads", "connections", "threads") if c in frame]
    return frame.sort_values(keys, kind="stable", na_position="first")


def _planned_measured_per_config(planned_trial_ids: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for trial_id in planned_trial_ids:
        config_id, _, suffix = str(trial_id).rpartition("-")
        if suffix.startswith("r") and suffix[1:].isdigit():
            counts[config_id] = counts.get(config_id, 0) + 1
    return counts


# --------------------------------------------------------------------------- series
# A series is what one line of a figure or one block of a table shows: the
# configurations that differ only in the swept axis (threads or connections).


@dataclass(frozen=True)
class Series:
    key: tuple[Any, ...]
    label: str
    rows: pd.DataFrame  # summary rows, sorted by the swept axis

    @property
    def first(self) -> pd.Series:
        return self.rows.iloc[0]


def architecture_label(architecture: str, dispatch: Any = None, handoff: Any = None, short: bool = False) -> str:
    """Human names for the architectures; the thread pool's two dispatch modes are different designs."""
    if architecture == "thread_pool":
        dispatch = key_text(dispatch) or "request"
        handoff = key_text(handoff) or "queue"
        handoff_name = {"queue": "FIFO queue", "stack": "LIFO stack"}.get(handoff, handoff)
        if short:
            return f"pool ({dispatch}, {handoff})"
        return f"thread pool, {dispatch} dispatch, {handoff_name}"
    names = {"blocking": "blocking", "thread_per_conn": "thread-per-connection"}
    if short:
        names["thread_per_conn"] = "thread/conn."
    return names.get(architecture, architecture.replace("_", " "))


def series_of(summary: pd.DataFrame, swept: str, min_points: int = 2) -> list[Series]:
    """Groups of configurations that differ only in `swept` ("threads" or "connections").

    The other swept axis is part of the key, so a pool-size series has one
    connection count and a connection series one pool size.
    """
    if summary.empty or swept not in summary:
        return []
    other = "connections" if swept == "threads" else "threads"
    key_fields = [f for f in SERIES_FIELDS if f in summary] + [other]
    varying = _varying_fields(summary)
    keyed = summary.assign(_key=[tuple(key_text(row[f]) for f in key_fields) for _, row in summary.iterrows()])
    series = []
    for key, rows in keyed.groupby("_key", sort=False):
        rows = rows.drop(columns="_key").sort_values(swept, kind="stable")
        if rows[swept].nunique() < min_points:
            continue
        first = rows.iloc[0]
        label = architecture_label(first["architecture"], first.get("dispatch"), first.get("handoff"))
        extras = []
        if other == "connections":
            extras.append(f"{int(first['connections'])} connections")
        elif first["architecture"] == "thread_pool":
            extras.append(f"N = {int(first['threads'])}")
        extras += [_describe_field(f, first[f]) for f in varying if f in first.index]
        if extras:
            label += " (" + ", ".join(extras) + ")"
        series.append(Series(key=key, label=label, rows=rows))
    return series


def main_pool_series(summary: pd.DataFrame) -> Series | None:
    """The pool-size sweep the report leads with: request dispatch with a FIFO queue
    (source 000's design) if measured, most pool sizes first, then most connections."""
    candidates = [s for s in series_of(summary, "threads") if s.first["architecture"] == "thread_pool"]
    if not candidates:
        return None

    def preference(one: Series) -> tuple[int, int, int, float]:
        first = one.first
        return (
            int(key_text(first.get("dispatch")) == "request"),
            int(key_text(first.get("handoff")) in ("queue", "")),
            len(one.rows),
            float(first["connections"]),
        )

    return max(candidates, key=preference)


def _varying_fields(summary: pd.DataFrame) -> list[str]:
    # Only fields that differ within the campaign need to appear in labels.
    ignored = {"architecture", "dispatch", "handoff"}
    return [f for f in SERIES_FIELDS if f in summary and f not in ignored and summary[f].map(key_text).nunique() > 1]


def _describe_field(name: str, value: Any) -> str:
    described = {
        "load_threads": lambda v: f"wrk -t{v}",
        "duration_s": lambda v: f"{v} s",
        "response": lambda v: f"response {v}",
        "pipeline": lambda v: f"pipeline {v}",
        "load_generator": lambda v: f"{v}",
    }
    return described.get(name, lambda v: f"{name} {v}")(key_text(value))


def key_text(value: Any) -> str:
    """A stable string for grouping: NaN/None (architectures without the field) become ''."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# --------------------------------------------------------------------------- pipeline


def process_campaign(
    campaign_dir: Path, processed_dir: Path, parse: Parser | None = None
) -> ProcessedCampaign:
    """Read a raw campaign and (re)write trials.csv and summary.csv in processed_dir."""
    campaign_dir = Path(campaign_dir).resolve()
    processed_dir = Path(processed_dir).resolve()
    if processed_dir == campaign_dir or campaign_dir in processed_dir.parents:
        raise ValueError(f"processed_dir {processed_dir} is inside the immutable raw campaign {campaign_dir}")
    campaign = load_raw_campaign(campaign_dir)
    trials = trials_frame(campaign, parse)
    summary = summary_frame(trials, campaign.meta.get("plan") or ())
    processed_dir.mkdir(parents=True, exist_ok=True)
    trials_csv = processed_dir / "trials.csv"
    summary_csv = processed_dir / "summary.csv"
    trials.to_csv(trials_csv, index=False, lineterminator="\n")
    summary.to_csv(summary_csv, index=False, lineterminator="\n")
    return ProcessedCampaign(campaign, trials, summary, trials_csv, summary_csv)


# --------------------------------------------------------------------------- helpers


def _number(value: Any) -> float:
    if value is None or isinstance(value, bool):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _sum_or_nan(*values: Any) -> float:
    numbers = [_number(v) for v in values]
    return math.nan if any(math.isnan(n) for n in numbers) else sum(numbers)


def _max_or_nan(values: pd.Series) -> float:
    sample = stats.as_sample(values)
    return float(sample.max()) if sample.size else math.nan
