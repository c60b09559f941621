"""Parser of `iperf3 -c HOST -J` (iperf 3.x) stdout: one JSON object, the client's view of a TCP test.

    {"start": {"version": "iperf 3.12", "system_info", "connecting_to": {"host", "port"},
               "test_start": {"protocol", "num_streams", "duration", ...}, ...},
     "intervals": [{"streams": [...], "sum": {"start", "end", "bits_per_second", ...}}, ...],
     "end": {"sum_sent": {"seconds", "bytes", "bits_per_second", "retransmits"},
             "sum_received": {"seconds", "bytes", "bits_per_second"},
             "cpu_utilization_percent": {"host_total", "remote_total", ...}},
     "error": "unable to connect to server: Connection refused"}        only when the test failed

The record gives the bandwidth the sender sent and the receiver received (bits/s and bytes, as
iperf3 computed them), the test's length, retransmits and CPU shares. A test that failed is still
iperf3 output: its `error` is kept, the bandwidths are null and the record is flagged `error`. A
text that is not iperf3's JSON fails with LoadOutputError.
"""

from __future__ import annotations

import json
from typing import Any

from archbench.parse.common import LoadOutputError

TOOL = "iperf3"
REQUIRED = ("start", "intervals", "end")


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise LoadOutputError(f"iperf3 JSON: {where} is not an object: {value!r}")
    return value


def _number(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LoadOutputError(f"iperf3 JSON: {where} is not a number: {value!r}")
    return float(value)


def _sum(end: dict[str, Any], key: str) -> dict[str, float | None]:
    """end.sum_sent or end.sum_received: bits/s, bytes and seconds (all None when absent)."""
    part = _object(end.get(key) or {}, f"end.{key}")
    return {name: _number(part.get(name), f"end.{key}.{name}") for name in ("bits_per_second", "bytes", "seconds")}


def parse(text: str) -> dict[str, Any]:
    """iperf3 -J stdout -> {tool, version, bits_per_s sent/received, bytes, duration, ..., error, flags}."""
    if not text.strip():
        raise LoadOutputError("empty output: no iperf3 JSON at all")
    try:
        report = json.loads(text)
    except ValueError as error:
        raise LoadOutputError(f"not iperf3 JSON output (was iperf3 run with -J?): {error}") from None
    report = _object(report, "the output")
    missing = [key for key in REQUIRED if key not in report]
    if missing:
        raise LoadOutputError(f"incomplete iperf3 JSON: no {', '.join(missing)}")
    start = _object(report["start"], "start")
    end = _object(report["end"], "end")
    error = report.get("error")
    sent, received = _sum(end, "sum_sent"), _sum(end, "sum_received")
    test_start = _object(start.get("test_start") or {}, "start.test_start")
    connecting_to = _object(start.get("connecting_to") or {}, "start.connecting_to")
    cpu = _object(end.get("cpu_utilization_percent") or {}, "end.cpu_utilization_percent")
    retransmits = (end.get("sum_sent") or {}).get("retransmits")
    failed = error is not None or sent["bits_per_second"] is None or received["bits_per_second"] is None
    return {
        "tool": TOOL,
        "version": start.get("version"),
        "system_info": start.get("system_info"),
        "host": connecting_to.get("host"),
        "port": connecting_to.get("port"),
        "protocol": test_start.get("protocol"),
        "streams": test_start.get("num_streams"),
        "configured_duration_s": _number(test_start.get("duration"), "start.test_start.duration"),
        "duration_s": sent["seconds"],
        "sent_bits_per_s": sent["bits_per_second"],
        "received_bits_per_s": received["bits_per_second"],
        "sent_bytes": None if sent["bytes"] is None else int(sent["bytes"]),
        "received_bytes": None if received["bytes"] is None else int(received["bytes"]),
        "retransmits": retransmits if isinstance(retransmits, int) else None,
        "cpu_percent": {
            "sender": _number(cpu.get("host_total"), "cpu.host_total"),
            "receiver": _number(cpu.get("remote_total"), "cpu.remote_total"),
        },
        "intervals": len(report["intervals"]) if isinstance(report["intervals"], list) else None,
        "error": None if error is None else str(error),
        "flags": ["error"] if failed else [],
    }
