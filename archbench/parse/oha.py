"""Parser of oha's JSON summary (`oha --no-tui --output-format json`, oha 1.x from crates.io).

oha prints one pretty-printed JSON object (src/printer.rs `print_json`), all
times in seconds, f64 NaN (an empty statistic) as null:

    {"summary": {"successRate", "total" (the run's wall time), "slowest", "fastest", "average",
                 "requestsPerSec", "totalData", "sizePerRequest", "sizePerSec"},
     "metrics": {...}, "responseTimeHistogram": {...},
     "latencyPercentiles": {"p10", "p25", "p50", "p75", "p90", "p95", "p99", "p99.9", "p99.99"},
     "firstByteHistogram": {...}, "firstBytePercentiles": {...},
     "rps": {"mean", "stddev", "max", "min", "percentiles": {"p10", ...}},   over 10 ms windows
     "details": {"DNSDialup": {"average", "fastest", "slowest"}, "DNSLookup": {...}, "firstByte": {...}},
     "statusCodeDistribution": {"200": n, ...}, "errorDistribution": {"<error message>": n, ...}}

What oha counts, and so what the record says (oha 1.16 src/result_data.rs):
- A response of any status is a success for oha; an error (no response) is a
  message in errorDistribution. Its `requestsPerSec` divides responses *and
  errors* (refused connections, requests aborted at the -z deadline) by the
  wall time. The record's `total_requests` is the responses only (as wrk's
  "N requests"), `requests_per_sec` = total_requests / duration_s, and oha's own
  figure is kept as `reported_requests_per_sec`.
- Latency statistics and percentiles are over responses only; oha's JSON has
  no latency standard deviation (`stdev` null). With `--latency-correction`,
  latency runs from each request's scheduled start (-q).
- `non_2xx` counts responses that are neither 2xx nor 3xx, as wrk's "Non-2xx
  or 3xx responses" does.
- errorDistribution is kept verbatim (`errors`) and mapped into the contract's
  `socket_errors` by message: connect, read, write, timeout (oha's own -t
  timeout), and `other` for any message not recognised. "aborted due to
  deadline" (a request in flight when -z ran out, without
  --wait-ongoing-requests-after-deadline) is the run's end, not a server error:
  counted in `aborted_at_deadline`, not in socket_errors.

The offered rate (-q) is not in oha's output: `offered_rate` is None here and
the runner fills it in from the command line.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

from archbench.parse import common
from archbench.parse.common import LoadOutputError, outcome_flags

TOOL = "oha"
DEADLINE = "aborted due to deadline"
SUMMARY_FIELDS = (
    "successRate",
    "total",
    "slowest",
    "fastest",
    "average",
    "requestsPerSec",
    "totalData",
    "sizePerRequest",
)
REQUIRED = ("summary", "latencyPercentiles", "rps", "details", "statusCodeDistribution", "errorDistribution")
DETAILS = {"DNSDialup": "dns_dialup", "DNSLookup": "dns_lookup", "firstByte": "first_byte"}

# errorDistribution message -> socket_errors kind; the first pattern that matches wins. Messages are
# std::io::Error's ("Connection refused (os error 111)"), hyper's ("connection error", "connection closed
# before message completed") and oha's own ("timeout"); seen in the fixtures: refused, reset, "connection
# error" (hyper's I/O error on an established connection: the server died under it, as wrk's read error).
ERROR_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("timeout", re.compile(r"^timeout$", re.I)),
    (
        "connect",
        re.compile(
            r"connection refused|\(os error (?:111|99|101|113|110|24)\)|cannot assign requested address|"
            r"network is unreachable|no route to host|host is unreachable|connection timed out|too many open files|"
            r"dns|failed to lookup|no record returned",
            re.I,
        ),
    ),
    ("write", re.compile(r"broken pipe|\(os error 32\)|error writing", re.I)),
    (
        "read",
        re.compile(
            r"connection reset|\(os error 104\)|^connection error$|connection closed before message completed|"
            r"error reading|unexpected eof|incomplete message|invalid http|parse",
            re.I,
        ),
    ),
)
SOCKET_ERROR_KINDS = ("connect", "read", "write", "timeout", "other")


def error_kind(message: str) -> str:
    """An oha error message -> connect, read, write, timeout or other."""
    for kind, pattern in ERROR_KINDS:
        if pattern.search(message):
            return kind
    return "other"


def percentile_key(name: str) -> str:
    """oha's "p99.9" -> "99.9"; "p50" -> "50"."""
    match = re.fullmatch(r"p(\d+(?:\.\d+)?)", name)
    if not match:
        raise LoadOutputError(f"not an oha percentile name: {name!r}")
    return common.percentile_key(match.group(1))


def _percentiles(values: dict[str, Any], where: str) -> dict[str, float | None]:
    if not isinstance(values, dict):
        raise LoadOutputError(f"{where} is not an object: {values!r}")
    keyed = {percentile_key(name): _float(value, f"{where}.{name}") for name, value in values.items()}
    return dict(sorted(keyed.items(), key=lambda item: Decimal(item[0])))


def _float(value: Any, where: str) -> float | None:
    """A JSON number as float; null (oha's NaN: nothing measured) as None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LoadOutputError(f"{where} is not a number: {value!r}")
    return float(value)


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LoadOutputError(f"{where} is not a count: {value!r}")
    return value


def _find_object(text: str) -> dict[str, Any]:
    """The one JSON object that is the whole output (whitespace aside); else fail naming the line."""
    stripped = text.strip()
    if not stripped:
        raise LoadOutputError("empty output: no oha JSON summary at all")
    start = text.index(stripped[0])

    def line_of(offset: int) -> int:
        return text.count("\n", 0, offset) + 1

    if stripped[0] != "{":
        first = text[start:].splitlines()[0]
        raise LoadOutputError(
            f"line {line_of(start)} is not oha JSON output: {first!r} (was oha run with --output-format json?)"
        )
    try:
        value, end = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as error:
        raise LoadOutputError(
            f"line {error.lineno}: not valid oha JSON ({error.msg} at column {error.colno})"
        ) from None
    rest = text[end:].strip()
    if rest:
        offset = text.index(rest[0], end)
        raise LoadOutputError(
            f"line {line_of(offset)}: text after the oha JSON object: {text[offset:].splitlines()[0]!r}"
        )
    if not isinstance(value, dict):
        raise LoadOutputError("the oha JSON output is not an object")
    return value


def _check(report: dict[str, Any]) -> None:
    missing = [key for key in REQUIRED if key not in report]
    if missing:
        raise LoadOutputError(f"incomplete oha JSON: no {', '.join(missing)}")
    summary = report["summary"]
    missing = [key for key in SUMMARY_FIELDS if not isinstance(summary, dict) or key not in summary]
    if missing:
        raise LoadOutputError(f"incomplete oha JSON: summary has no {', '.join(missing)}")


def _triple(value: Any, where: str) -> dict[str, float | None]:
    if not isinstance(value, dict):
        raise LoadOutputError(f"{where} is not an object: {value!r}")
    return {
        "avg": _float(value.get("average"), f"{where}.average"),
        "min": _float(value.get("fastest"), f"{where}.fastest"),
        "max": _float(value.get("slowest"), f"{where}.slowest"),
    }


def parse(text: str) -> dict[str, Any]:
    """oha --output-format json stdout -> the parsed record (contracts.md section 3 + oha's extras)."""
    report = _find_object(text)
    _check(report)
    summary = report["summary"]

    status_codes = {
        str(code): _count(n, f"statusCodeDistribution.{code}") for code, n in report["statusCodeDistribution"].items()
    }
    for code in status_codes:
        if not re.fullmatch(r"\d{3}", code):
            raise LoadOutputError(f"statusCodeDistribution: {code!r} is not an HTTP status code")
    errors = {
        str(message): _count(n, f"errorDistribution.{message}") for message, n in report["errorDistribution"].items()
    }

    socket_errors = {kind: 0 for kind in SOCKET_ERROR_KINDS}
    aborted_at_deadline = 0
    for message, n in errors.items():
        if message == DEADLINE:
            aborted_at_deadline += n
        else:
            socket_errors[error_kind(message)] += n

    total_requests = sum(status_codes.values())
    non_2xx = sum(n for code, n in status_codes.items() if not 200 <= int(code) < 400)
    duration_s = _float(summary["total"], "summary.total")
    rps = report["rps"]
    if not isinstance(rps, dict):
        raise LoadOutputError(f"rps is not an object: {rps!r}")
    details = report["details"]
    if not isinstance(details, dict):
        raise LoadOutputError(f"details is not an object: {details!r}")

    size_per_request = summary["sizePerRequest"]
    return {
        "tool": TOOL,
        # Not in oha's output (the trial record's config and argv have them).
        "url": None,
        "threads": None,
        "connections": None,
        "configured_duration_s": None,
        "duration_s": duration_s,
        "offered_rate": None,  # -q is not in the output; the runner adds it from the command
        "latency_s": {
            "avg": _float(summary["average"], "summary.average"),
            "stdev": None,  # oha's JSON has none
            "max": _float(summary["slowest"], "summary.slowest"),
            "min": _float(summary["fastest"], "summary.fastest"),
            "percentiles": _percentiles(report["latencyPercentiles"], "latencyPercentiles"),
        },
        "total_requests": total_requests,
        "bytes_read": _count(summary["totalData"], "summary.totalData"),
        "socket_errors": socket_errors,
        "non_2xx": non_2xx,
        "requests_per_sec": (total_requests / duration_s) if duration_s else None,
        "transfer_per_sec_bytes": _float(summary.get("sizePerSec"), "summary.sizePerSec"),
        "success_rate": _float(summary["successRate"], "summary.successRate"),
        "reported_requests_per_sec": _float(summary["requestsPerSec"], "summary.requestsPerSec"),
        "size_per_request_bytes": None
        if size_per_request is None
        else _count(size_per_request, "summary.sizePerRequest"),
        "status_codes": dict(sorted(status_codes.items())),
        "errors": errors,
        "aborted_at_deadline": aborted_at_deadline,
        "rps_10ms": {
            "avg": _float(rps.get("mean"), "rps.mean"),
            "stdev": _float(rps.get("stddev"), "rps.stddev"),
            "max": _float(rps.get("max"), "rps.max"),
            "min": _float(rps.get("min"), "rps.min"),
            "percentiles": _percentiles(rps.get("percentiles") or {}, "rps.percentiles"),
        },
        "details_s": {name: _triple(details[key], f"details.{key}") for key, name in DETAILS.items() if key in details},
        "flags": outcome_flags(socket_errors, non_2xx, total_requests),
    }
