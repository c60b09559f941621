"""Parser of `build/bin/echo_client --json` stdout (contracts.md section 6).

With `--json`, echo_client's stdout is exactly one JSON object on one line
(servers_c/clients/echo_report.c `print_json`); its per-second table and text summary go
to stderr. A file that holds both streams (stderr text before or after the
object) still parses: lines outside the object are ignored, but there must be
exactly one object and it must be echo_client's (`"tool": "echo_client"`) with
every field of section 6. Anything else fails loudly, naming the line.

The record is the JSON object as printed, field for field (so `rtt_ns` stays in
nanoseconds), with `rtt_s` added right after `rtt_ns` (mean, min, max and
percentiles in seconds, converted through Decimal so that 294938.2 ns is exactly
the float 0.0002949382; all null when no RTT was measured, where echo_client
prints zeros) and `flags` at the end, listing why the trial must not be averaged
silently:

    verify_errors      a received byte differed from the one sent (verify_errors > 0)
    connect_failures   any connect error (`connect_errors` not empty)
    closed_early       the server ended an established connection (`closed_early` not empty)
    unanswered         a message never came back, or (--rate) was due but never sent
    not_all_connected  throughput mode: fewer connections connected than asked for
    no_echoes          not a single echo came back
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from archbench.parse.common import LoadOutputError
from archbench.parse.tool_json import find_tool_object

TOOL = "echo_client"
NS = Decimal("1e-9")

# Every field of contracts.md section 6, in the order echo_client prints them.
FIELDS = (
    "tool",
    "mode",
    "host",
    "port",
    "connections",
    "threads",
    "duration_s",
    "size",
    "depth",
    "rate",
    "connect_rate",
    "connect_timeout_s",
    "sources",
    "seed",
    "nofile_soft",
    "nofile_hard",
    "elapsed_s",
    "window_s",
    "interrupted",
    "connected",
    "all_connected_s",
    "open_at_end",
    "not_attempted",
    "connect_errors",
    "closed_early",
    "bytes_sent",
    "bytes_received",
    "echoes",
    "window_echoes",
    "echoes_per_sec",
    "unanswered_messages",
    "due_unsent_messages",
    "verify_errors",
    "first_verify_error",
    "rtt_ns",
    "series",
    "max_conns",
    "exit_status",
)
RTT_FIELDS = ("count", "mean", "min", "max", "percentiles")
MAX_CONNS_FIELDS = (
    "cap",
    "reached",
    "alive_at_end",
    "stop_reason",
    "stop_s",
    "echo_timeouts",
    "server_pid",
    "server_rss_before_bytes",
    "server_rss_after_bytes",
    "server_rss_per_conn_bytes",
)
MODES = ("throughput", "max_conns")


def seconds_from_ns(value: int | float) -> float:
    """294938.2 (ns) -> 0.0002949382 exactly: repr() gives back the digits echo_client printed."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LoadOutputError(f"not an echo_client time in ns: {value!r}")
    return float(Decimal(repr(value)) * NS)


def _check(report: dict[str, Any], line: int) -> None:
    missing = [field for field in FIELDS if field not in report]
    if missing:
        raise LoadOutputError(f"line {line}: incomplete echo_client JSON: no {', '.join(missing)}")
    if report["mode"] not in MODES:
        raise LoadOutputError(f"line {line}: unknown echo_client mode {report['mode']!r}")
    rtt = report["rtt_ns"]
    if not isinstance(rtt, dict) or [f for f in RTT_FIELDS if f not in rtt]:
        raise LoadOutputError(f"line {line}: rtt_ns lacks {', '.join(f for f in RTT_FIELDS if f not in (rtt or {}))}")
    for field in ("connect_errors", "closed_early"):
        if not isinstance(report[field], dict):
            raise LoadOutputError(f"line {line}: {field} is not an object: {report[field]!r}")
    if report["mode"] == "max_conns":
        block = report["max_conns"]
        if not isinstance(block, dict):
            raise LoadOutputError(f"line {line}: mode max_conns without a max_conns object")
        missing = [field for field in MAX_CONNS_FIELDS if field not in block]
        if missing:
            raise LoadOutputError(f"line {line}: max_conns lacks {', '.join(missing)}")


def _rtt_seconds(rtt: dict[str, Any]) -> dict[str, Any]:
    measured = rtt["count"] > 0  # with no RTT echo_client prints 0 for every value: not a measurement
    convert = seconds_from_ns if measured else (lambda _value: None)
    return {
        "mean": convert(rtt["mean"]),
        "min": convert(rtt["min"]),
        "max": convert(rtt["max"]),
        "percentiles": {key: convert(value) for key, value in rtt["percentiles"].items()},
    }


def flags_of(report: dict[str, Any]) -> list[str]:
    flags = []
    if report["verify_errors"] > 0:
        flags.append("verify_errors")
    if any(report["connect_errors"].values()):
        flags.append("connect_failures")
    if any(report["closed_early"].values()):
        flags.append("closed_early")
    if report["unanswered_messages"] > 0 or report["due_unsent_messages"] > 0:
        flags.append("unanswered")
    if report["mode"] == "throughput" and report["connected"] < report["connections"]:
        flags.append("not_all_connected")
    if report["echoes"] == 0:
        flags.append("no_echoes")
    return flags


def parse(text: str) -> dict[str, Any]:
    """echo_client --json stdout -> its JSON fields + rtt_s + flags. Raises LoadOutputError."""
    report, line = find_tool_object(text, TOOL, "was echo_client run with --json?")
    _check(report, line)
    record: dict[str, Any] = {}
    for key, value in report.items():
        record[key] = value
        if key == "rtt_ns":
            record["rtt_s"] = _rtt_seconds(value)
    record["flags"] = flags_of(report)
    return record
