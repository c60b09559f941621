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
  and the tables mark the row. Failed trials are counted in `n_failed`,
  unsupported ones (e.g. io_uring on a kernel without it) in `n_unsupported`;
  neither is ever averaged or dropped silently.

Records of later schema revisions are read as follows:

* `config.pipeline` (wrk pipeline depth D) missing means 1.
* Load-generator CPU utilisation is `load.cpu_utilisation` when the record has
  it, else (user + sys) / wall / number of CPUs in `load.cpus` (taskset list).
  A trial at or above CLIENT_BOUND_THRESHOLD is *client-bound*: wrk's own cores
  were saturated, so the client, not the server, set the rate.
* Server CPU seconds are `server.cpu_user_s + server.cpu_sys_s` (wait4 rusage of
  the launched process tree) unless `server.cpu_source` names the server's own
  numbers in `server.stats`. The runner writes "stats" (nginx: nginx's master
  and workers without the launcher) or "tree"; other spellings are read
  leniently ("nginx-alone", "server.stats" -> stats; "launcher tree" -> tree).
  `server_cpu_source` in trials.csv says which numbers were used.
* Counters a server does not report are null in its record (nginx:
  connections_served, bad_requests, connection_resets): not measured, so NaN,
  never 0 and never "all starved".
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from archbench import parse as parsers
from archbench import stats
from archbench.data import storage

ParsedRecord = dict[str, Any]
Parser = Callable[[Path], ParsedRecord]

# The configuration fields in the order config ids are built from; fields a
# campaign adds later (e.g. max_threads) follow, sorted, after these.
CONFIG_FIELDS: tuple[str, ...] = (
    "architecture",
    "dispatch",
    "handoff",
    "trigger",
    "max_threads",
    "threads",
    "connections",
    "load_threads",
    "duration_s",
    "response",
    "load_generator",
    "pipeline",
    "proto",  # http (default) or echo (source 004's protocol): never mixed in one series or comparison
)
# Provenance fields copied from each trial record into trials.csv (contracts.md section 4).
PROVENANCE_COLUMNS: tuple[str, ...] = (
    "os", "os_family", "hostname", "cpu_model", "cpu_count", "memory_bytes", "kernel", "compiler",
)
# What identifies a line in a figure or a table: everything but the two swept axes.
SERIES_FIELDS: tuple[str, ...] = tuple(f for f in CONFIG_FIELDS if f not in ("threads", "connections"))
LATENCY_PERCENTILES: tuple[str, ...] = ("50", "75", "90", "99")
SOCKET_ERROR_KINDS: tuple[str, ...] = ("connect", "read", "write", "timeout")
# A flag analysis adds to the parser's: the trial says ok but its load output is unusable.
FLAG_UNPARSED = "unparsed_output"
FLAG_SEPARATOR = ";"
DEFAULT_PIPELINE = 1  # records written before pipelining existed sent one request per write
# wrk's cores at least this busy (fraction of the CPUs it was pinned to): the client set the rate.
CLIENT_BOUND_THRESHOLD = 0.95
# Canonical order of the architectures in tables and figures: the sources' designs from simplest
# to the multi-loop ones, the reference (nginx) last. Unknown architectures follow, alphabetically.
ARCHITECTURE_ORDER: tuple[str, ...] = (
    "blocking",
    "thread_per_conn",
    "thread_pool",
    "poll",
    "epoll",
    "reactor",
    "reuseport",
    "prefork",
    "io_uring",
    "nginx",
)
REFERENCE_ARCHITECTURE = "nginx"
# Architectures whose `threads` is a number of loops, workers or pool threads worth sweeping.
MULTI_LOOP_ARCHITECTURES: tuple[str, ...] = ("thread_pool", "reactor", "reuseport", "prefork", "io_uring", "nginx")
# What `threads` counts, per architecture (singular, plural).
THREAD_UNITS: dict[str, tuple[str, str]] = {
    "thread_pool": ("thread", "threads"),
    "reactor": ("thread", "threads"),
    "reuseport": ("thread", "threads"),
    "io_uring": ("thread", "threads"),
    "prefork": ("worker", "workers"),
    "nginx": ("worker", "workers"),
}
# Default epoll notification per architecture (what the servers use without --trigger).
DEFAULT_TRIGGER = {"epoll": "level", "reactor": "edge", "reuseport": "edge", "prefork": "level"}
# Fields that identify a family: an architecture variant whatever its thread count.
FAMILY_FIELDS: tuple[str, ...] = ("architecture", "dispatch", "handoff", "trigger", "max_threads")
# Fields that identify a point of comparison between architectures (besides the pipeline depth).
POINT_FIELDS: tuple[str, ...] = ("connections", "load_threads", "duration_s", "response", "load_generator", "proto")
# Server CPU sources a record's `server.cpu_source` may name.
CPU_SOURCE_STATS = "stats"
CPU_SOURCE_TREE = "tree"
# Checked in this order: explicit "own numbers" words, then "tree" words, then a bare server name.
_CPU_SOURCE_STATS_WORDS = ("stats", "alone", "own", "self", "only")
_CPU_SOURCE_TREE_WORDS = ("tree", "launcher", "children", "wait4", "rusage", "runner")
_CPU_SOURCE_SERVER_WORDS = ("nginx",)

# Our servers' response (servers_c/core/responses.c, format_response): status line and headers in
# this order, then the body. tests/test_analysis.py checks the C format string against this one.
OK_RESPONSE_FORMAT = "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: {length}\r\nContent-Type: {content_type}\r\n\r\n"
RESPONSE_BODIES: dict[str, tuple[str, bytes]] = {
    "test": ("text/html", b"test"),
    "hello": ("text/plain", b"Hello World!"),
}


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
    """The campaign as archbench.data.storage reads it (contracts.md section 5)."""
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
    flags = output_flags(parsed, status)

    row: dict[str, Any] = {
        "campaign": record.get("campaign"),
        "trial_id": record.get("trial_id"),
        "config_id": record.get("config_id"),
    }
    for name in CONFIG_FIELDS:
        row[name] = config.get(name)
    for name in sorted(set(config) - set(CONFIG_FIELDS)):
        row[name] = config[name]
    if row["pipeline"] is None:
        row["pipeline"] = DEFAULT_PIPELINE
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
    total_requests = number(parsed.get("total_requests"))
    row.update(
        requests_per_sec=number(parsed.get("requests_per_sec")),
        total_requests=total_requests,
        # The configured duration is the config field duration_s; this is what wrk measured.
        measured_duration_s=number(parsed.get("duration_s")),
        bytes_read=number(parsed.get("bytes_read")),
        latency_avg_s=number(latency.get("avg")),
        latency_stdev_s=number(latency.get("stdev")),
        latency_max_s=number(latency.get("max")),
    )
    valid, invalid = _checked_percentiles(percentiles, number(latency.get("max")))
    for p in LATENCY_PERCENTILES:
        row[f"latency_p{p}_s"] = valid.get(p, math.nan)
    # wrk sometimes prints 0.00us for percentiles it did not fill (wg/wrk#354, and under pipelining #236):
    # such a value is not a latency, so it is left out of every statistic and counted here.
    row["latency_invalid_percentiles"] = FLAG_SEPARATOR.join(invalid)
    for kind in SOCKET_ERROR_KINDS:
        row[f"socket_errors_{kind}"] = number(socket_errors.get(kind))
    row["non_2xx"] = number(parsed.get("non_2xx"))

    server_cpu_s, cpu_source = server_cpu_seconds(server)
    load_cpu_s = _sum_or_nan(load.get("cpu_user_s"), load.get("cpu_sys_s"))
    load_cpu_count = len(parse_cpu_list(load.get("cpus") or ""))
    utilisation = load_cpu_utilisation(load)
    connections = number(config.get("connections"))
    connections_served = number(server_stats.get("connections_served"))
    bytes_read = number(parsed.get("bytes_read"))
    row.update(
        server_cpu_s=server_cpu_s,
        server_cpu_source=cpu_source,
        server_cpu_us_per_request=stats.ratio(server_cpu_s * 1e6, total_requests),
        load_cpu_s=load_cpu_s,
        load_cpu_count=load_cpu_count or math.nan,
        # Fraction of the CPUs wrk was pinned to: near 1.0 the client, not the server, was the bottleneck.
        load_cpu_utilisation=utilisation,
        client_bound=bool(not math.isnan(utilisation) and utilisation >= CLIENT_BOUND_THRESHOLD),
        # What the server says its response is (nginx), and what wrk read per completed request.
        response_bytes=number(server_stats.get("response_bytes")),
        bytes_per_response=stats.ratio(bytes_read, total_requests),
        connections_accepted=number(server_stats.get("connections_accepted")),
        connections_served=connections_served,
        # wrk never reports a connection that is never answered (contracts.md section 1).
        # Reconnections after errors can make served exceed configured; starved is never negative.
        starved_connections=max(0.0, connections - connections_served)
        if not (math.isnan(connections) or math.isnan(connections_served))
        else math.nan,
        requests_served=number(server_stats.get("requests_served")),
        bad_requests=number(server_stats.get("bad_requests")),
        connection_resets=number(server_stats.get("connection_resets")),
        server_errors=number(server_stats.get("errors")),
        server_exit_code=server.get("exit_code"),
        load_exit_code=load.get("exit_code"),
        server_cpus=server.get("cpus"),
        load_cpus=load.get("cpus"),
        started_at=record.get("started_at"),
    )
    return row


def _checked_percentiles(percentiles: Mapping[str, Any], latency_max: float) -> tuple[dict[str, float], list[str]]:
    """(plausible percentiles, names of impossible ones): a percentile is impossible when it is zero while
    some request took time, or below a lower percentile of the same distribution."""
    valid: dict[str, float] = {}
    invalid: list[str] = []
    floor = 0.0
    for p in sorted(percentiles, key=lambda k: float(k)):
        value = number(percentiles.get(p))
        if math.isnan(value):
            continue
        if (value <= 0 and not (latency_max <= 0)) or value < floor:
            invalid.append(str(p))
            continue
        valid[str(p)] = value
        floor = value
    return valid, invalid


def server_cpu_seconds(server: Mapping[str, Any]) -> tuple[float, str]:
    """(user + sys CPU seconds of the server, which numbers they are: "tree" or "stats").

    The runner's numbers (`server.cpu_user_s/cpu_sys_s`, wait4 rusage of the launched
    process tree) are the default. A record whose `server.cpu_source` names the server's
    own numbers (nginx alone, in `server.stats`) uses those, because the tree would also
    hold whatever launched nginx.
    """
    server_stats = server.get("stats") or {}
    tree = _sum_or_nan(server.get("cpu_user_s"), server.get("cpu_sys_s"))
    own = _sum_or_nan(server_stats.get("cpu_user_s"), server_stats.get("cpu_sys_s"))
    source = str(server.get("cpu_source") or "").lower()
    if source and not math.isnan(own):
        if any(word in source for word in _CPU_SOURCE_STATS_WORDS):
            return own, CPU_SOURCE_STATS
        if any(word in source for word in _CPU_SOURCE_TREE_WORDS):
            return tree, CPU_SOURCE_TREE
        if any(word in source for word in _CPU_SOURCE_SERVER_WORDS):
            return own, CPU_SOURCE_STATS
    if math.isnan(tree) and not math.isnan(own):
        return own, CPU_SOURCE_STATS
    return tree, CPU_SOURCE_TREE


def load_cpu_utilisation(load: Mapping[str, Any]) -> float:
    """Busy fraction of the CPUs the load generator was pinned to, from its record.

    `load.cpu_utilisation` when the record has it; else (user + sys) / wall / CPUs in `load.cpus`.
    """
    recorded = number(load.get("cpu_utilisation"))
    if not math.isnan(recorded):
        return recorded
    cpus = len(parse_cpu_list(load.get("cpus") or "")) or 1
    cpu_s = _sum_or_nan(load.get("cpu_user_s"), load.get("cpu_sys_s"))
    return stats.ratio(cpu_s, number(load.get("wall_s")) * cpus)


def parse_cpu_list(text: Any) -> set[int]:
    """taskset's CPU list syntax ("0", "0-3", "0,2") as a set; unparseable parts are ignored."""
    cpus: set[int] = set()
    for part in str(text).split(","):
        part = part.strip()
        if re.fullmatch(r"\d+", part):
            cpus.add(int(part))
        elif re.fullmatch(r"\d+-\d+", part):
            low, high = (int(x) for x in part.split("-"))
            cpus.update(range(low, high + 1))
    return cpus


def our_response_bytes(response: Any = "test") -> int | None:
    """Length of our servers' 200 response for a `--response` value (None if it cannot be known here)."""
    response = key_text(response) or "test"
    if response in RESPONSE_BODIES:
        content_type, body = RESPONSE_BODIES[response]
    else:
        return None
    head = OK_RESPONSE_FORMAT.format(length=len(body), content_type=content_type)
    return len(head.encode("ascii")) + len(body)


def output_flags(parsed: ParsedRecord | None, status: Any) -> list[str]:
    """The parser's flags of a trial's load output, plus FLAG_UNPARSED when the trial says ok but its
    output could not be parsed (its numbers are unusable, so it must never pass for a clean trial)."""
    flags = list(parsed.get("flags") or []) if parsed else []
    if status == "ok" and parsed is None:
        flags.append(FLAG_UNPARSED)
    return flags


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
    else:
        labels = Labeller(frame)
        frame.insert(frame.columns.get_loc("config_id") + 1, "variant", [labels.variant(r) for _, r in frame.iterrows()])
        frame.insert(frame.columns.get_loc("variant") + 1, "family", [labels.family(r) for _, r in frame.iterrows()])
    # Where each trial ran (contracts.md section 4): its record's provenance, else campaign.json's, so
    # campaigns from several machines can be grouped and compared (archbench.analyze.crossos, report_stats).
    fallback = campaign.meta.get("provenance") or {}
    for name in PROVENANCE_COLUMNS:
        frame[name] = [(record.get("provenance") or fallback).get(name) for record in campaign.trials]
    # Which columns are configuration fields, for summary_frame; extras (e.g. a new option) follow the fixed ones.
    extras = sorted({key for record in campaign.trials for key in (record.get("config") or {})} - set(CONFIG_FIELDS))
    frame.attrs["config_columns"] = [*CONFIG_FIELDS, *extras]
    return frame


# --------------------------------------------------------------------------- summary.csv


def summary_frame(trials: pd.DataFrame, planned_trial_ids: Iterable[str] = ()) -> pd.DataFrame:
    """One row per configuration; statistics over measured trials with status ok."""
    planned_measured = _planned_measured_per_config(planned_trial_ids)
    config_columns = trials.attrs.get("config_columns") or [c for c in CONFIG_FIELDS if c in trials]
    labels = Labeller(trials) if not trials.empty else None
    rows = []
    for config_id, group in trials.groupby("config_id", sort=False, dropna=False):
        measured = group[~group["warmup"].astype(bool)]
        ok = measured[measured["status"] == "ok"]
        throughput = stats.summarize(ok["requests_per_sec"], level=stats.DEFAULT_CONFIDENCE)
        cpu = stats.summarize(_column(ok, "server_cpu_us_per_request"), level=stats.DEFAULT_CONFIDENCE)
        row: dict[str, Any] = {"campaign": group["campaign"].iloc[0], "config_id": config_id}
        first = group.iloc[0]
        row["variant"] = labels.variant(first) if labels else ""
        row["family"] = labels.family(first) if labels else ""
        for column in config_columns:
            row[column] = group[column].iloc[0] if column in group else None
        row.update(
            n_planned=planned_measured.get(str(config_id), math.nan),
            n_measured=len(measured),
            n_warmup=int(group["warmup"].astype(bool).sum()),
        )
        row.update(throughput.as_dict())
        row.update(distribution_columns(ok))
        socket_errors = ok[[f"socket_errors_{k}" for k in SOCKET_ERROR_KINDS]]
        utilisation = _column(ok, "load_cpu_utilisation")
        row.update(
            **outcome_counts(measured, ok),
            n_client_bound=int(_column(ok, "client_bound").fillna(False).astype(bool).sum()),
            n_latency_invalid=int((_column(ok, "latency_invalid_percentiles").fillna("").astype(str) != "").sum()),
            flags=FLAG_SEPARATOR.join(sorted({f for fs in ok["flags"] for f in str(fs).split(FLAG_SEPARATOR) if f})),
            server_cpu_us_per_request=cpu.mean,
            server_cpu_us_per_request_ci95_low=cpu.mean_ci.low,
            server_cpu_us_per_request_ci95_high=cpu.mean_ci.high,
            server_cpu_source=FLAG_SEPARATOR.join(sorted({str(v) for v in _column(ok, "server_cpu_source").dropna()})),
            timeouts_mean=stats.sample_mean(ok["socket_errors_timeout"]),
            socket_errors_mean=stats.sample_mean(socket_errors.sum(axis=1, min_count=1)),
            # Errors other than timeouts: connect/read/write socket errors and non-2xx responses, per trial.
            errors_mean=stats.sample_mean(
                pd.concat([socket_errors.drop(columns="socket_errors_timeout"), ok[["non_2xx"]]], axis=1).sum(
                    axis=1, min_count=1
                )
            ),
            non_2xx_mean=stats.sample_mean(ok["non_2xx"]),
            starved_connections_mean=stats.sample_mean(ok["starved_connections"]),
            starved_connections_max=_max_or_nan(ok["starved_connections"]),
            load_cpu_utilisation_mean=stats.sample_mean(utilisation),
            load_cpu_utilisation_max=_max_or_nan(utilisation),
            response_bytes=stats.sample_mean(_column(ok, "response_bytes")),
            bytes_per_response_mean=stats.sample_mean(_column(ok, "bytes_per_response")),
        )
        for p in LATENCY_PERCENTILES:
            row[f"latency_p{p}_s_mean"] = stats.sample_mean(ok[f"latency_p{p}_s"])
        row["n_missing"] = (
            max(0, row["n_planned"] - row["n_measured"]) if not math.isnan(row["n_planned"]) else math.nan
        )
        rows.append(row)
    summary = pd.DataFrame(rows)
    if summary.empty:
        return summary
    summary = _with_nginx_ratio(summary)
    return sort_configurations(summary).reset_index(drop=True)


def outcome_counts(measured: pd.DataFrame, ok: pd.DataFrame) -> dict[str, int]:
    """How a configuration's measured trials ended: ok but flagged, failed, unsupported (each counted,
    never averaged; `ok` is the measured trials with status ok)."""
    return {
        "n_flagged": int(ok["flagged"].astype(bool).sum()),
        "n_failed": int((measured["status"] == "failed").sum()),
        "n_unsupported": int((measured["status"] == "unsupported").sum()),
    }


def distribution_columns(ok: pd.DataFrame) -> dict[str, Any]:
    """summary.csv's columns beyond the mean and its t interval, over one configuration's measured ok trials:
    the median's distribution-free interval (order statistics, with its exact coverage), the CI half-width as a
    percentage of the mean, the rate summaries of Hoefler & Belli's rule 3 (harmonic mean; total requests over
    total measured seconds, the rate of the trials together), Shapiro-Wilk W and p, and Tukey outlier counts
    (reported, never removed)."""
    values = pd.to_numeric(_column(ok, "requests_per_sec"), errors="coerce")
    median = stats.median_ci(values, stats.DEFAULT_CONFIDENCE)
    interval = stats.mean_ci_t(values, stats.DEFAULT_CONFIDENCE)
    mean = stats.sample_mean(values)
    normality = stats.shapiro_wilk(values)
    tukey = stats.tukey_outliers(values.tolist())
    sample = stats.as_sample(values)
    return {
        "median_ci95_low": median.ci.low,
        "median_ci95_high": median.ci.high,
        "median_ci_coverage": median.coverage,
        "ci95_half_width_pct": stats.ratio(100.0 * interval.half_width, abs(mean)),
        "harmonic_mean": stats.harmonic_mean(sample) if (sample >= 0).all() else math.nan,
        "total_rate": stats.total_rate(_column(ok, "total_requests"), _column(ok, "measured_duration_s")),
        "shapiro_w": normality.statistic,
        "shapiro_p": normality.p_value,
        "n_outliers": tukey.count,
        "n_far_out": tukey.far_count,
    }


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    """A column, or an all-NaN one for frames from records that predate it."""
    return frame[name] if name in frame else pd.Series(math.nan, index=frame.index, dtype=float)


def _with_nginx_ratio(summary: pd.DataFrame) -> pd.DataFrame:
    """`ratio_to_nginx`: mean over the mean of the fastest nginx configuration at the same
    pipeline depth and comparison point (connections, wrk threads, duration, response);
    `nginx_reference` names that configuration. NaN/empty where nginx was not measured there."""
    summary = summary.copy()
    summary["nginx_reference"] = ""
    summary["ratio_to_nginx"] = math.nan
    keys = [f for f in ("pipeline", *POINT_FIELDS) if f in summary]
    point_of = [tuple(key_text(r[f]) for f in keys) for _, r in summary.iterrows()]
    references: dict[tuple[str, ...], pd.Series] = {}
    for point, (_, row) in zip(point_of, summary.iterrows()):
        if row["architecture"] != REFERENCE_ARCHITECTURE or is_nan(row["mean"]):
            continue
        if point not in references or row["mean"] > references[point]["mean"]:
            references[point] = row
    for index, point in zip(summary.index, point_of):
        reference = references.get(point)
        if reference is not None:
            summary.at[index, "nginx_reference"] = reference["config_id"]
            summary.at[index, "ratio_to_nginx"] = stats.ratio(float(summary.at[index, "mean"]), float(reference["mean"]))
    return summary


def architecture_rank(architecture: Any) -> int:
    name = key_text(architecture)
    return ARCHITECTURE_ORDER.index(name) if name in ARCHITECTURE_ORDER else len(ARCHITECTURE_ORDER)


def sort_configurations(frame: pd.DataFrame) -> pd.DataFrame:
    """Architecture (canonical order), its variant fields, then pipeline depth and the swept axes ascending."""
    ranked = frame.assign(
        _rank=[architecture_rank(a) for a in frame["architecture"]],
        _name=[key_text(a) for a in frame["architecture"]],
    )
    keys = ["_rank", "_name"] + [
        c
        for c in ("dispatch", "handoff", "trigger", "max_threads", "pipeline", "load_threads", "connections", "threads")
        if c in frame
    ]
    return ranked.sort_values(keys, kind="stable", na_position="first").drop(columns=["_rank", "_name"])


def _planned_measured_per_config(planned_trial_ids: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for trial_id in planned_trial_ids:
        config_id, _, suffix = str(trial_id).rpartition("-")
        if suffix.startswith("r") and suffix[1:].isdigit():
            counts[config_id] = counts.get(config_id, 0) + 1
    return counts


# --------------------------------------------------------------------------- labels


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
    return names.get(architecture, str(architecture).replace("_", " ") if architecture != "io_uring" else "io_uring")


class Labeller:
    """Names of configurations, knowing the campaign: the epoll trigger is named for epoll always
    ("epoll (edge)") and for the other loops only when the campaign measured more than one."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.multiple_triggers: set[str] = set()
        if "trigger" in frame and not frame.empty:
            for architecture, rows in frame.groupby("architecture"):
                if len({t for t in rows["trigger"].map(key_text) if t}) > 1:
                    self.multiple_triggers.add(str(architecture))

    def family(self, row: Mapping[str, Any]) -> str:
        """The architecture variant without its thread count: "thread pool (request, queue)", "epoll (edge)"."""
        architecture = key_text(row.get("architecture"))
        if architecture == "thread_pool":
            dispatch = key_text(row.get("dispatch")) or "request"
            handoff = key_text(row.get("handoff")) or "queue"
            return f"thread pool ({dispatch}, {handoff})"
        if architecture == "thread_per_conn":
            cap = number(row.get("max_threads"))
            return "thread-per-connection" + (f" (max {cap:.0f})" if not math.isnan(cap) and cap > 0 else "")
        name = architecture_label(architecture)
        trigger = key_text(row.get("trigger"))
        if trigger and (architecture == "epoll" or architecture in self.multiple_triggers):
            name += f" ({trigger})"
        return name

    def variant(self, row: Mapping[str, Any]) -> str:
        """The family with its thread or worker count: "reactor, 2 threads", "nginx, 1 worker"."""
        family = self.family(row)
        units = THREAD_UNITS.get(key_text(row.get("architecture")))
        threads = number(row.get("threads"))
        if units is None or math.isnan(threads):
            return family
        return f"{family}, {threads:.0f} {units[0] if threads == 1 else units[1]}"


def family_key(row: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(key_text(row.get(f)) for f in FAMILY_FIELDS)


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


ORIGINAL_ARCHITECTURES = ("blocking", "thread_per_conn", "thread_pool")


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
    labels = Labeller(summary)
    keyed = summary.assign(_key=[tuple(key_text(row[f]) for f in key_fields) for _, row in summary.iterrows()])
    series = []
    for key, rows in keyed.groupby("_key", sort=False):
        rows = rows.drop(columns="_key").sort_values(swept, kind="stable")
        if rows[swept].nunique() < min_points:
            continue
        first = rows.iloc[0]
        architecture = key_text(first["architecture"])
        if architecture in ORIGINAL_ARCHITECTURES:
            label = architecture_label(architecture, first.get("dispatch"), first.get("handoff"))
        else:
            label = labels.family(first)
        extras = []
        if other == "connections":
            extras.append(f"{int(first['connections'])} connections")
        elif architecture == "thread_pool":
            extras.append(f"N = {int(first['threads'])}")
        elif architecture in THREAD_UNITS and not is_nan(first.get("threads")):
            label = labels.variant(first)
        extras += [_describe_field(f, first[f]) for f in varying if f in first.index]
        if extras:
            label += " (" + ", ".join(extras) + ")"
        series.append(Series(key=key, label=label, rows=rows))
    return series


def main_pool_series(summary: pd.DataFrame) -> Series | None:
    """The pool-size sweep the report leads with: request dispatch with a FIFO queue
    (source 000's design) if measured, without pipelining, most pool sizes first, then most connections."""
    candidates = [s for s in series_of(summary, "threads") if s.first["architecture"] == "thread_pool"]
    if not candidates:
        return None

    def preference(one: Series) -> tuple[int, int, int, int, float]:
        first = one.first
        return (
            int(key_text(first.get("pipeline")) in ("", "1")),
            int(key_text(first.get("dispatch")) == "request"),
            int(key_text(first.get("handoff")) in ("queue", "")),
            len(one.rows),
            float(first["connections"]),
        )

    return max(candidates, key=preference)


def _varying_fields(summary: pd.DataFrame) -> list[str]:
    # Only fields that differ within the campaign need to appear in labels; the family fields are in the name.
    ignored = set(FAMILY_FIELDS)
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


def is_nan(value: Any) -> bool:
    """Whether a value is missing: None, NaN, NaT or pd.NA (latex.is_missing is this function)."""
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


# --------------------------------------------------------------------------- architecture comparison
# One table per pipeline depth: every architecture family once, at one point
# (connections, wrk threads, duration, response), nginx as the reference.


@dataclass(frozen=True)
class Comparison:
    pipeline: int
    point: dict[str, Any]  # the POINT_FIELDS values every row shares
    rows: pd.DataFrame  # our architectures: one summary row per family, canonical order
    reference: pd.Series | None  # the fastest nginx configuration at the point, if measured

    @property
    def all_rows(self) -> pd.DataFrame:
        """Our rows, then the reference."""
        if self.reference is None:
            return self.rows
        return pd.concat([self.rows, self.reference.to_frame().T], ignore_index=True)

    @property
    def connections(self) -> int:
        return int(float(self.point["connections"]))

    def fastest(self) -> pd.Series | None:
        """The configuration with the highest mean throughput, nginx included."""
        rows = self.all_rows
        rows = rows[pd.to_numeric(rows["mean"], errors="coerce").notna()]
        if rows.empty:
            return None
        return rows.loc[pd.to_numeric(rows["mean"]).idxmax()]


def pipeline_depths(summary: pd.DataFrame) -> list[int]:
    if summary.empty or "pipeline" not in summary:
        return []
    depths = pd.to_numeric(summary["pipeline"], errors="coerce").fillna(DEFAULT_PIPELINE)
    return sorted({int(d) for d in depths})


def _has_data(row: Mapping[str, Any]) -> bool:
    """A configuration the comparison can show: measured (n > 0) or at least tried and unsupported."""
    return number(row.get("n")) > 0 or number(row.get("n_unsupported")) > 0


def comparison(summary: pd.DataFrame, pipeline: int) -> Comparison | None:
    """The architecture comparison at one pipeline depth, or None when nothing was measured at it.

    The point is the (connections, wrk threads, duration, response) combination at which the most
    architecture families were measured; ties go to the one with nginx, then to more connections.
    A family measured at several thread counts there is represented by its fastest count (the
    thread-count figure shows the others).
    """
    if summary.empty:
        return None
    depth = pd.to_numeric(summary["pipeline"], errors="coerce").fillna(DEFAULT_PIPELINE)
    has_data = pd.Series([_has_data(r) for _, r in summary.iterrows()], index=summary.index, dtype=bool)
    at_depth = summary[(depth == pipeline) & has_data]
    if at_depth.empty:
        return None
    fields = [f for f in POINT_FIELDS if f in at_depth]
    points = at_depth.assign(_point=[tuple(key_text(r[f]) for f in fields) for _, r in at_depth.iterrows()])

    def score(item: tuple[tuple[str, ...], pd.DataFrame]) -> tuple[int, int, float]:
        _, rows = item
        families = {family_key(r) for _, r in rows.iterrows()}
        return (
            len(families),
            int((rows["architecture"] == REFERENCE_ARCHITECTURE).any()),
            float(pd.to_numeric(rows["connections"], errors="coerce").max()),
        )

    _, chosen = max(points.groupby("_point", sort=False), key=score)
    chosen = chosen.drop(columns="_point")
    picked = []
    for _, rows in chosen.groupby([chosen[f].map(key_text) for f in FAMILY_FIELDS if f in chosen], sort=False):
        means = pd.to_numeric(rows["mean"], errors="coerce")
        picked.append(rows.loc[means.idxmax()] if means.notna().any() else rows.iloc[0])
    picked_frame = sort_configurations(pd.DataFrame(picked)).reset_index(drop=True)
    is_reference = picked_frame["architecture"] == REFERENCE_ARCHITECTURE
    ours = picked_frame[~is_reference].reset_index(drop=True)
    references = picked_frame[is_reference]
    reference = None
    if not references.empty:
        means = pd.to_numeric(references["mean"], errors="coerce")
        reference = references.loc[means.idxmax()] if means.notna().any() else references.iloc[0]
    point = {f: chosen.iloc[0][f] for f in fields}
    return Comparison(pipeline=pipeline, point=point, rows=ours, reference=reference)


def comparisons(summary: pd.DataFrame) -> list[Comparison]:
    """One comparison per pipeline depth with data, shallowest first."""
    made = [comparison(summary, depth) for depth in pipeline_depths(summary)]
    return [c for c in made if c is not None]


def at_point(summary: pd.DataFrame, one: Comparison, vary: str) -> pd.DataFrame:
    """Configurations at the comparison's depth and point, except that `vary` may differ."""
    depth = pd.to_numeric(summary["pipeline"], errors="coerce").fillna(DEFAULT_PIPELINE)
    mask = depth == one.pipeline
    for field_name, value in one.point.items():
        if field_name != vary:
            mask &= summary[field_name].map(key_text) == key_text(value)
    return summary[mask]


def family_sweeps(summary: pd.DataFrame, one: Comparison, swept: str, architectures: Iterable[str] | None = None,
                  min_points: int = 2) -> list[tuple[str, pd.DataFrame]]:
    """(family label, rows sorted by `swept`) for each family of the comparison measured at two or more values.

    Sweeping connections keeps each family's thread count from the comparison table; sweeping threads
    keeps the comparison's connection count. Only configurations with a measured mean are plotted.
    """
    allowed = set(architectures) if architectures is not None else None
    candidates = at_point(summary, one, "connections" if swept == "connections" else "")
    labels = Labeller(summary)
    sweeps = []
    for _, row in one.all_rows.iterrows():
        if allowed is not None and row["architecture"] not in allowed:
            continue
        same = candidates[[family_key(r) == family_key(row) for _, r in candidates.iterrows()]]
        if swept == "connections":
            same = same[same["threads"].map(key_text) == key_text(row["threads"])]
            label = labels.variant(row)
        else:
            label = labels.family(row)
        same = same[pd.to_numeric(same["mean"], errors="coerce").notna()].sort_values(swept, kind="stable")
        if same[swept].nunique() >= min_points:
            sweeps.append((label, same))
    return sweeps


# --------------------------------------------------------------------------- pipeline


def process_campaign(
    campaign_dir: Path, processed_dir: Path, parse: Parser | None = None
) -> ProcessedCampaign:
    """Read a raw campaign and (re)write trials.csv and summary.csv in processed_dir."""
    campaign_dir = Path(campaign_dir).resolve()
    processed_dir = Path(processed_dir).resolve()
    refuse_inside_raw(processed_dir, campaign_dir)
    campaign = load_raw_campaign(campaign_dir)
    trials = trials_frame(campaign, parse)
    summary = summary_frame(trials, campaign.meta.get("plan") or ())
    written = write_csvs(processed_dir, {"trials.csv": trials, "summary.csv": summary})
    return ProcessedCampaign(campaign, trials, summary, written["trials.csv"], written["summary.csv"])


def refuse_inside_raw(processed_dir: Path, campaign_dir: Path) -> None:
    """Raise ValueError when processed_dir is campaign_dir or inside it: a raw campaign is never written."""
    processed, raw = Path(processed_dir).resolve(), Path(campaign_dir).resolve()
    if processed == raw or raw in processed.parents:
        raise ValueError(f"processed_dir {processed_dir} is inside the immutable raw campaign {campaign_dir}")


def write_csvs(processed_dir: Path, frames: Mapping[str, pd.DataFrame]) -> dict[str, Path]:
    """Write each frame as processed_dir/<name>, with LF line ends whatever the OS (so regenerated files
    compare byte for byte); {name: path written}."""
    processed_dir = Path(processed_dir)
    processed_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for name, frame in frames.items():
        path = processed_dir / name
        frame.to_csv(path, index=False, lineterminator="\n")
        written[name] = path
    return written


# --------------------------------------------------------------------------- helpers


def number(value: Any) -> float:
    """A float, NaN for None/bool/unparseable (a missing measurement is not zero)."""
    if value is None or isinstance(value, bool):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _sum_or_nan(*values: Any) -> float:
    numbers = [number(v) for v in values]
    return math.nan if any(math.isnan(n) for n in numbers) else sum(numbers)


def _max_or_nan(values: pd.Series) -> float:
    sample = stats.as_sample(values)
    return float(sample.max()) if sample.size else math.nan
