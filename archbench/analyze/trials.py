"""trials.csv: one row per trial record, warm-ups and failed or unsupported trials included, so nothing that was
run disappears between the raw record and the report.

Records of later schema revisions are read as follows:

* `config.pipeline` (wrk pipeline depth D) missing means 1.
* Load-generator CPU utilisation is `load.cpu_utilisation` when the record has
  it, else (user + sys) / wall / number of CPUs in `load.cpus` (taskset list); `load_cpus_busy` is the busy
  share of those CPUs (`load.cpus_busy`, softirq included). A trial where either reaches
  CLIENT_BOUND_THRESHOLD is *client-bound* (archbench.measure.load_bound): the client, not the server, may
  have set the rate. `bottleneck` says which side set the rate: server, client, both, wait or neither
  (archbench.analyze.bottleneck).
* Server CPU seconds are `server.cpu_user_s + server.cpu_sys_s` (wait4 rusage of
  the launched process tree) unless `server.cpu_source` names the server's own
  numbers in `server.stats`. The runner writes "stats" (nginx: nginx's master
  and workers without the launcher) or "tree"; other spellings are read
  leniently ("nginx-alone", "server.stats" -> stats; "launcher tree" -> tree).
  `server_cpu_source` in trials.csv says which numbers were used.
* Latency percentiles (`latency_source` says which): from wrk's dumped histogram when the output has one
  ("histogram"; archbench.analyze.histogram), else wrk's own printed percentiles ("wrk"). Placement ssh with
  several client hosts: their histograms summed, `latency_hosts` of them, when every host's output has one;
  else no latency (percentiles of different hosts do not combine). `latency_p99_9_s` exists only from a
  histogram (wrk prints no p99.9).
* Counters a server does not report are null in its record (nginx:
  connections_served, bad_requests, connection_resets): not measured, so NaN,
  never 0 and never "all starved".
* A trial with a warm-up (the record's `load_warmup`, archbench.measure.warmup) loaded the same server twice,
  and the server prints its counters only at exit, so they cover both runs (`load_runs` 2). Server CPU seconds
  leave the warm-up's out (`server.warmup_cpu_s`), so CPU per request stays the measured load's;
  `starved_connections` is the mean over the runs (each opened `connections`), and `requests_served`,
  `connections_accepted` and `connections_served` include the warm-up's (`warmup_requests` says how many
  requests it completed).
* Interference (archbench.measure.interference): `disturbed` says whether other work, steal or uncounted ticks took
  at least the campaign's `interference_share` of the server's or the load generator's CPU ticks during the load,
  `disturbed_reasons` why, `server_cpus_taken_share` and `load_cpus_taken_share` how much, and `interference_source`
  where the verdict comes from: "recorded" (the record's own `interference`), "derived" (a record written before it,
  judged after the fact from its `cpu_shares`, busy fractions, own CPU times and load wall time) or "" (the record
  holds too little: not disturbed, as far as anyone can tell). `reruns` names the disturbed trial a re-run was run
  again for (archbench.measure.reruns), empty otherwise. A disturbed trial stays a row; the statistics leave it out
  as they leave out failed ones (archbench.analyze.outliers.measured_ok_undisturbed, summary.csv).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from archbench import parse as parsers
from archbench import stats
from archbench.analyze import bottleneck
from archbench.analyze.fields import (
    CONFIG_FIELDS,
    CPU_SOURCE_STATS,
    CPU_SOURCE_TREE,
    DEFAULT_PIPELINE,
    FLAG_SEPARATOR,
    FLAG_UNPARSED,
    LATENCY_PERCENTILES,
    PROVENANCE_COLUMNS,
    SOCKET_ERROR_KINDS,
)
from archbench.analyze.histogram import LatencyHistogram, merge
from archbench.analyze.labels import Labeller
from archbench.analyze.values import key_text, number, sum_or_nan
from archbench.config.params import DEFAULT_INTERFERENCE_SHARE
from archbench.data import storage
from archbench.measure.interference import CPU_SETS, record_interference
from archbench.measure.load_bound import client_bound, load_busy_share, load_cpu_utilisation, parse_cpu_list
from archbench.measure.warmup import WARMUP_KEY, load_runs, without_warmup
from archbench.parse.combine import combine_outputs

ParsedRecord = dict[str, Any]
Parser = Callable[[Path], ParsedRecord]
# Checked in this order: explicit "own numbers" words, then "tree" words, then a bare server name.
_CPU_SOURCE_STATS_WORDS = ("stats", "alone", "own", "self", "only")
_CPU_SOURCE_TREE_WORDS = ("tree", "launcher", "children", "wait4", "rusage", "runner")
_CPU_SOURCE_SERVER_WORDS = ("nginx",)
# Our servers' response (servers_c/core/responses.c, format_response): status line and headers in
# this order, then the body. tests/test_analysis.py checks the C format string against this one.
OK_RESPONSE_FORMAT = (
    "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: {length}\r\nContent-Type: {content_type}\r\n\r\n"
)
# From a histogram: wrk's four, and p99.9, which wrk does not print.
HISTOGRAM_PERCENTILES = (*LATENCY_PERCENTILES, "99.9")
RESPONSE_BODIES: dict[str, tuple[str, bytes]] = {
    "test": ("text/html", b"test"),
    "hello": ("text/plain", b"Hello World!"),
}


def default_parser() -> Parser:
    return parsers.parse_file


def trial_row(
    record: Mapping[str, Any], campaign_dir: Path, parse: Parser, max_share: float = DEFAULT_INTERFERENCE_SHARE
) -> dict[str, Any]:
    """Flatten one trial record plus its parsed load output into a trials.csv row; `max_share` is the campaign's
    interference_share, which judges records written before the runner judged them."""
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
        **interference_columns(record, max_share),
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
    from_histogram = histogram_latency(parsed)
    if from_histogram is not None:
        row.update(from_histogram)
    else:
        valid, invalid = _checked_percentiles(percentiles, number(latency.get("max")))
        for p in LATENCY_PERCENTILES:
            row[f"latency_p{p}_s"] = valid.get(p, math.nan)
        row["latency_p99_9_s"] = math.nan
        # wrk sometimes prints 0.00us for percentiles it did not fill (wg/wrk#354, and under pipelining #236):
        # such a value is not a latency, so it is left out of every statistic and counted here.
        row["latency_invalid_percentiles"] = FLAG_SEPARATOR.join(invalid)
        row["latency_source"] = "wrk" if valid else ""
        row["latency_hosts"] = 1 if valid else math.nan
    for kind in SOCKET_ERROR_KINDS:
        row[f"socket_errors_{kind}"] = number(socket_errors.get(kind))
    row["non_2xx"] = number(parsed.get("non_2xx"))

    server_cpu_s, cpu_source = server_cpu_seconds(server)
    load_cpu_s = sum_or_nan(load.get("cpu_user_s"), load.get("cpu_sys_s"))
    load_cpu_count = len(parse_cpu_list(load.get("cpus") or ""))
    utilisation = load_cpu_utilisation(load)
    load_busy = load_busy_share(load)
    server_cpu_count = len(parse_cpu_list(server.get("cpus") or ""))
    busy_server = bottleneck.server_busy(server, server_cpu_s, number(parsed.get("duration_s")), server_cpu_count)
    capacity = bottleneck.wait_capacity(config)
    connections = number(config.get("connections"))
    connections_served = number(server_stats.get("connections_served"))
    runs = load_runs(record)
    bytes_read = number(parsed.get("bytes_read"))
    row.update(
        server_cpu_s=server_cpu_s,
        server_cpu_source=cpu_source,
        server_cpu_us_per_request=stats.ratio(server_cpu_s * 1e6, total_requests),
        # Over the load window alone (server.load_cpu_s: no start-up, connection set-up before the load, or
        # shutdown); missing in records older than it.
        server_window_cpu_s=number(server.get("load_cpu_s")),
        server_window_cpu_us_per_request=stats.ratio(number(server.get("load_cpu_s")) * 1e6, total_requests),
        load_cpu_s=load_cpu_s,
        load_cpu_count=load_cpu_count or math.nan,
        # wrk's own CPU time over its pinned CPUs' wall time, and those CPUs' busy share (softirq included): either
        # near 1.0, the client, not the server, may have set the rate (archbench.measure.load_bound).
        load_cpu_utilisation=utilisation,
        load_cpus_busy=number(load.get("cpus_busy")),
        load_busy_share=load_busy,  # the higher of the two: what the client-bound rule reads
        client_bound=client_bound(load),
        server_cpus_busy=busy_server,
        wait_capacity_per_sec=capacity,
        bottleneck=bottleneck.classify(busy_server, load_busy, number(parsed.get("requests_per_sec")), capacity)
        if status == "ok"
        else "",
        # What the server says its response is (nginx), and what wrk read per completed request.
        response_bytes=number(server_stats.get("response_bytes")),
        bytes_per_response=stats.ratio(bytes_read, total_requests),
        load_runs=runs,
        warmup_requests=number((record.get(WARMUP_KEY) or {}).get("requests")),
        connections_accepted=number(server_stats.get("connections_accepted")),
        connections_served=connections_served,
        # wrk never reports a connection that is never answered (contracts.md section 1).
        # Reconnections after errors can make served exceed configured; starved is never negative.
        # After a warm-up the server's count covers two runs of `connections` each and cannot be split
        # between them (it reports only at exit): the mean per run, not the measured run's own.
        starved_connections=max(0.0, connections * runs - connections_served) / runs
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


def interference_columns(record: Mapping[str, Any], max_share: float) -> dict[str, Any]:
    """disturbed, disturbed_reasons, interference_source, the taken share of each CPU set, and reruns."""
    verdict, source = record_interference(record, max_share)
    verdict = verdict or {}
    return {
        "disturbed": bool(verdict.get("disturbed")),
        "disturbed_reasons": "; ".join(verdict.get("reasons") or ()),
        "interference_source": source,
        **{f"{name}_taken_share": number((verdict.get(name) or {}).get("taken_share")) for name in CPU_SETS},
        "reruns": str(record.get("reruns") or ""),
    }


def histogram_latency(parsed: Mapping[str, Any]) -> dict[str, Any] | None:
    """The latency columns from wrk's dumped histogram, or from the sum of every client host's (placement ssh:
    `latency_histograms`, one per host); None when there is none, or some host's output lacks one."""
    histograms = parsed.get("latency_histograms", [parsed.get("latency_histogram")])
    if not histograms or any(h is None for h in histograms):
        return None
    total = merge(LatencyHistogram.from_wrk(h) for h in histograms)
    if total.total == 0:
        return None
    columns: dict[str, Any] = {
        f"latency_p{p.replace('.', '_')}_s": total.percentile(float(p)) / 1e9 for p in HISTOGRAM_PERCENTILES
    }
    return {
        **columns,
        "latency_max_s": total.percentile(100) / 1e9,
        "latency_invalid_percentiles": "",
        "latency_source": "histogram",
        "latency_hosts": len(histograms),
    }


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
    hold whatever launched nginx. Either leaves out a warm-up's CPU (archbench.measure.warmup.without_warmup).
    """
    server_stats = server.get("stats") or {}
    # Both cover the server's whole life; a warm-up on it (server.warmup_cpu_s) is not the measured load.
    tree = without_warmup(sum_or_nan(server.get("cpu_user_s"), server.get("cpu_sys_s")), server)
    own = without_warmup(sum_or_nan(server_stats.get("cpu_user_s"), server_stats.get("cpu_sys_s")), server)
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
    if load.get("hosts"):  # placement ssh: one load generator per client host, each output kept verbatim
        try:
            each = [parse(campaign_dir / host["output_file"]) for host in load["hosts"]]
            if len(each) == 1:
                return each[0], None
            # The hosts' histograms, which add up where their percentiles do not (histogram_latency).
            return {**combine_outputs(each), "latency_histograms": [one.get("latency_histogram") for one in each]}, None
        except Exception as error:  # noqa: BLE001 - as below: a visible row, not a crash
            return None, f"{type(error).__name__}: {error}"
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
    max_share = (campaign.meta.get("parameters") or {}).get("interference_share", DEFAULT_INTERFERENCE_SHARE)
    rows = [trial_row(record, campaign.path, parse, float(max_share)) for record in campaign.trials]
    frame = pd.DataFrame(rows)
    if frame.empty:
        frame = pd.DataFrame(columns=["campaign", "trial_id", "config_id", *CONFIG_FIELDS, "warmup", "status"])
    else:
        labels = Labeller(frame)
        frame.insert(
            frame.columns.get_loc("config_id") + 1, "variant", [labels.variant(r) for _, r in frame.iterrows()]
        )
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
