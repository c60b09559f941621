"""Parser of `build/bin/open_loop` stdout (contracts.md section 10).

open_loop prints exactly one JSON object on one line of stdout at the end
(servers_c/clients/open_loop_report.c `print_ol_json`); its summary line goes to stderr. Lines
outside the object are ignored; anything else fails loudly, naming the line (tool_json).

The record keeps the contract fields of section 3 where open_loop has them, in base units:
`url`, `threads`, `connections`, `configured_duration_s` and `duration_s` (both the measured
window, --duration; the warm-up is outside it), `offered_rate` (--rate), `latency_s` (avg, stdev
null, min, max, percentiles "50", "90", "99", "99.9"; each the upper edge of its histogram bucket,
max exact; 2xx responses to requests scheduled in the window, measured from the scheduled send
time), `total_requests` (complete responses of any status), `non_2xx`, `requests_per_sec` (2xx
completions / window), `socket_errors` = {connect: connect failures of any errno, read: read and
write errors of any errno (`eof` included), write: 0, timeout, other: bad_response +
unsolicited}; `bytes_read`, `transfer_per_sec_bytes` and `req_per_thread` are null.

open_loop's own fields, as printed: `parameters` (`pipeline`, requests outstanding per connection
at most, is missing from output written before --pipeline existed: read as 1), `counts`, `errors`, `latency_ns`, `histogram`
(buckets as [lower_ns, upper_ns, count], non-empty ones, ascending), `per_second` (`sent` and
`completed` lists, one per second of the window), `cpu` (user_s, sys_s, wall_s, cpus_available),
`open_files`, and `send_lag_ns` (count, mean, p50, p99, max: how late the window's requests were sent
by a connection with room for them, the client's own part of their latency; missing from output
written before it existed). Added: `cpu_s` (user + sys), `cpu_per_request_s` (cpu_s over every complete
response, warm-up included, since the CPU time covers it), `cpu_busy_fraction` (cpu_s over wall_s
times the CPUs its threads could use: min(threads, cpus_available)). The judgements of a run
(sustained, client-bound, trend, enough samples) are archbench.analyze.open_loop_checks's.

Flags as wrk's (`socket_errors`, `non_2xx`, `no_requests`).
"""

from __future__ import annotations

from typing import Any

from archbench.parse.common import LoadOutputError, outcome_flags
from archbench.parse.tool_json import find_tool_object

TOOL = "open_loop"
SECTIONS = ("parameters", "counts", "errors", "latency_ns", "histogram", "per_second", "cpu", "open_files")
PARAMETERS = (
    "host",
    "port",
    "path",
    "host_header",
    "rate",
    "arrival",
    "seed",
    "connections",
    "threads",
    "duration_s",
    "warmup_s",
    "timeout_s",
    "sources",
    "pipelining",
)
COUNTS = (
    "scheduled",
    "sent",
    "completed",
    "non_2xx",
    "lost",
    "outstanding_at_end",
    "unsent_at_end",
    "warmup_completed",
    "reconnects",
    "late_sends",
)
ERRORS = ("timeout", "bad_response", "unsolicited", "closed_by_server", "connect", "io")
LATENCY = ("count", "min", "mean", "p50", "p90", "p99", "p99_9", "max", "clamped")
PERCENTILE_KEYS = {"p50": "50", "p90": "90", "p99": "99", "p99_9": "99.9"}
CPU = ("user_s", "sys_s", "wall_s", "cpus_available")
SEND_LAG = ("count", "mean", "p50", "p99", "max")


def _require(obj: Any, fields: tuple[str, ...], where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise LoadOutputError(f"open_loop JSON: {where} is not an object: {obj!r}")
    missing = [field for field in fields if field not in obj]
    if missing:
        raise LoadOutputError(f"open_loop JSON: {where} lacks {', '.join(missing)}")
    return obj


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LoadOutputError(f"open_loop JSON: {where} is not a count: {value!r}")
    return value


def _seconds(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise LoadOutputError(f"open_loop JSON: {where} is not a non-negative number: {value!r}")
    return float(value)


def _check_histogram(histogram: dict[str, Any], expected_total: int) -> list[tuple[int, int, int]]:
    _require(histogram, ("unit", "sub_bucket_bits", "buckets"), "histogram")
    if histogram["unit"] != "ns" or not isinstance(histogram["buckets"], list):
        raise LoadOutputError(f"open_loop JSON: histogram unit {histogram['unit']!r} or its buckets are unexpected")
    buckets = []
    previous_upper = -1
    for i, bucket in enumerate(histogram["buckets"]):
        if not (isinstance(bucket, list) and len(bucket) == 3):
            raise LoadOutputError(f"open_loop JSON: histogram bucket {i} is not [lower, upper, count]: {bucket!r}")
        lower, upper, n = (_count(v, f"histogram bucket {i}") for v in bucket)
        if not (previous_upper <= lower < upper) or n == 0:
            raise LoadOutputError(f"open_loop JSON: histogram bucket {i} {bucket!r} is empty, reversed or out of order")
        previous_upper = upper
        buckets.append((lower, upper, n))
    total = sum(n for _, _, n in buckets)
    if total != expected_total:
        raise LoadOutputError(
            f"open_loop JSON: the histogram holds {total} samples, latency_ns.count says {expected_total}"
        )
    return buckets


def _check(report: dict[str, Any]) -> None:
    _require(report, SECTIONS, "the object")
    parameters = _require(report["parameters"], PARAMETERS, "parameters")
    if "pipeline" in parameters and _count(parameters["pipeline"], "parameters.pipeline") < 1:
        raise LoadOutputError(f"open_loop JSON: parameters.pipeline is below 1: {parameters['pipeline']!r}")
    for field in COUNTS:
        _count(_require(report["counts"], COUNTS, "counts")[field], f"counts.{field}")
    errors = _require(report["errors"], ERRORS, "errors")
    for kind in ("connect", "io"):
        for name, n in _require(errors[kind], (), f"errors.{kind}").items():
            _count(n, f"errors.{kind}.{name}")
    latency = _require(report["latency_ns"], LATENCY, "latency_ns")
    for field in LATENCY:
        _seconds(latency[field], f"latency_ns.{field}")
    _check_histogram(report["histogram"], _count(latency["count"], "latency_ns.count"))
    if "send_lag_ns" in report:
        lag = _require(report["send_lag_ns"], SEND_LAG, "send_lag_ns")
        for field in SEND_LAG:
            _seconds(lag[field], f"send_lag_ns.{field}")
    series = _require(report["per_second"], ("sent", "completed"), "per_second")
    for name in ("sent", "completed"):
        if not isinstance(series[name], list):
            raise LoadOutputError(f"open_loop JSON: per_second.{name} is not a list")
        for i, n in enumerate(series[name]):
            _count(n, f"per_second.{name}[{i}]")
    for field in CPU:
        _seconds(_require(report["cpu"], CPU, "cpu")[field], f"cpu.{field}")
    _require(report["open_files"], ("soft", "hard"), "open_files")


def _ns_to_s(ns: float) -> float:
    return ns / 1e9


def parse(text: str) -> dict[str, Any]:
    """open_loop stdout -> the parsed record (contracts.md section 3 fields + open_loop's own). Raises LoadOutputError."""
    report, _line = find_tool_object(text, TOOL, "did open_loop run to its end?")
    _check(report)
    p, counts, errors, latency, cpu = (report[k] for k in ("parameters", "counts", "errors", "latency_ns", "cpu"))
    has_samples = latency["count"] > 0
    socket_errors = {
        "connect": sum(errors["connect"].values()),
        "read": sum(errors["io"].values()),
        "write": 0,
        "timeout": errors["timeout"],
        "other": errors["bad_response"] + errors["unsolicited"],
    }
    total_requests = counts["completed"] + counts["non_2xx"]
    window_s = float(p["duration_s"])
    cpu_s = float(cpu["user_s"]) + float(cpu["sys_s"])
    responses = total_requests + counts["warmup_completed"]
    usable_cpus = min(int(p["threads"]), int(cpu["cpus_available"]) or int(p["threads"]))
    record: dict[str, Any] = {
        "tool": TOOL,
        "url": f"http://{p['host']}:{p['port']}{p['path']}",
        "threads": p["threads"],
        "connections": p["connections"],
        "configured_duration_s": window_s,
        "duration_s": window_s,
        "offered_rate": float(p["rate"]),
        "latency_s": {
            "avg": _ns_to_s(latency["mean"]) if has_samples else None,
            "stdev": None,
            "min": _ns_to_s(latency["min"]) if has_samples else None,
            "max": _ns_to_s(latency["max"]) if has_samples else None,
            "percentiles": {key: _ns_to_s(latency[field]) for field, key in PERCENTILE_KEYS.items()}
            if has_samples
            else {},
        },
        "req_per_thread": None,
        "total_requests": total_requests,
        "bytes_read": None,
        "socket_errors": socket_errors,
        "non_2xx": counts["non_2xx"],
        "requests_per_sec": counts["completed"] / window_s if window_s else None,
        "transfer_per_sec_bytes": None,
    }
    for section in SECTIONS:
        record[section] = report[section]
    record["send_lag_ns"] = report.get("send_lag_ns")
    record["cpu_s"] = cpu_s
    record["cpu_per_request_s"] = cpu_s / responses if responses else None
    record["cpu_busy_fraction"] = cpu_s / (float(cpu["wall_s"]) * usable_cpus) if cpu["wall_s"] else None
    record["flags"] = outcome_flags(socket_errors, counts["non_2xx"], total_requests)
    return record
