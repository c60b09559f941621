"""Parser of httperf 0.9 stdout (the summary of httperf's src/stat/basic.c `dump`).

What httperf prints, and what the record makes of it (all times in ms there, in seconds here):

    httperf --hog --timeout=2 --client=0/1 --server=127.0.0.1 --port=P --uri=/ --rate=100000 ...
        --num-conns=1000 --num-calls=600                     its options, echoed: `options`, url, connections
    Maximum connect burst length: 125
    Total: connections 1000 requests 600000 replies 600000 test-duration 8.617 s
    Connection rate: 116.0 conn/s (8.6 ms/conn, <=1000 concurrent connections)
    Connection time [ms]: min 7664.3 avg 8422.5 max 8605.2 median 8493.5 stddev 167.5
    Connection time [ms]: connect 36.9
    Connection length [replies/conn]: 600.000
    Request rate: 69627.3 req/s (0.0 ms/req)                requests *sent* per second
    Request size [B]: 62.0
    Reply rate [replies/s]: min 69890.0 avg 69890.0 max 69890.0 stddev 0.0 (1 samples)   one sample per 5 s
    Reply time [ms]: response 14.0 transfer 0.0              averages: send -> first byte, first -> last byte
    Reply size [B]: header 87.0 content 4.0 footer 0.0 (total 91.0)      averages per reply
    Reply status: 1xx=0 2xx=600000 3xx=0 4xx=0 5xx=0
    CPU time [s]: user 0.25 system 2.89 (user 3.0% system 33.5% total 36.5%)
    Net I/O: 10403.3 KB/s (85.2*10^6 bps)                   request + reply bytes, KB = 1024 B
    Errors: total 0 client-timo 0 socket-timo 0 connrefused 0 connreset 0
    Errors: fd-unavail 0 addrunavail 0 ftab-full 0 other 0

Mapped to the fields every HTTP load generator's record has (contracts.md section 3), so that the
analysis treats httperf as it treats wrk:

- `total_requests` is the replies received (of any status), as wrk's "N requests" counts completed
  ones; `requests_per_sec` = replies / test-duration. httperf's own "Request rate" counts requests
  *sent* and is kept as `request_rate`.
- `socket_errors`: `timeout` is httperf's `client-timo` (its own --timeout expired on a connection: the
  analogue of wrk's timeouts, but counted per connection, not per request); `connect` is connrefused,
  socket-timo (the kernel's ETIMEDOUT), fd-unavail, addrunavail and ftab-full (no connection could be
  made); `read` is connreset (httperf counts EPIPE there too, so `write` is always 0); `other` is
  httperf's other. Every kind as printed is in `errors`.
- `latency_s.avg` is response + transfer time (httperf gives only these two averages; stdev, max and
  percentiles do not exist in its output and are null / empty).
- `non_2xx` counts replies that are neither 2xx nor 3xx (1xx, 4xx, 5xx), as oha's record does.
- `bytes_read` is replies x the average reply size (header + content + footer, printed to 0.1 B: exact
  when every reply has the same size, as every server here sends); `transfer_per_sec_bytes` is that
  over the test duration.
- `threads` is 1 (httperf is one process), `configured_duration_s` null (httperf runs until its
  connections are done), `connections` the --num-conns echoed on the first line.
- What httperf prints as 0.0 because it had nothing to average is null: with no reply, the reply and
  connection times and reply sizes; with no 5-second sample (a shorter run), the reply rate's min, avg,
  max and stddev. Times are printed to 0.1 ms, so on loopback a latency of 0.0 is "under 0.05 ms".

Lines httperf writes to stderr ("httperf: warning: open file limit > FD_SETSIZE; ...", "httperf:
connection failed with unexpected error N") are accepted anywhere, as in a file holding both streams,
and kept in `messages`. Any other line is an error naming it, as in the other parsers.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from archbench.parse.common import LoadOutputError, outcome_flags, remember_once, require_lines, summary_lines

TOOL = "httperf"
MS = Decimal("1e-3")
ERROR_FIELDS = (
    "total",
    "client-timo",
    "socket-timo",
    "connrefused",
    "connreset",
    "fd-unavail",
    "addrunavail",
    "ftab-full",
    "other",
)
SOCKET_ERROR_KINDS = ("connect", "read", "write", "timeout", "other")
# httperf error kind -> the record's socket_errors kind (see the module docstring).
ERROR_KIND_OF = {
    "client-timo": "timeout",
    "socket-timo": "connect",
    "connrefused": "connect",
    "fd-unavail": "connect",
    "addrunavail": "connect",
    "ftab-full": "connect",
    "connreset": "read",
    "other": "other",
}
STATUS_CLASSES = ("1xx", "2xx", "3xx", "4xx", "5xx")

# %.1f of a division by a zero test duration prints inf or nan.
_NUM = r"(?:\d+(?:\.\d+)?|-?nan|-?inf)"
_INT = r"\d+"

LINE_PATTERNS: dict[str, re.Pattern[str]] = {
    "command": re.compile(r"httperf(?P<options>(?: --\S.*)?)"),
    "message": re.compile(r"httperf: (?P<text>.*)"),
    "burst": re.compile(rf"Maximum connect burst length: (?P<value>{_INT})"),
    "totals": re.compile(
        rf"Total: connections (?P<connections>{_INT}) requests (?P<requests>{_INT}) "
        rf"replies (?P<replies>{_INT}) test-duration (?P<duration>{_NUM}) s"
    ),
    "connection_rate": re.compile(
        rf"Connection rate: (?P<rate>{_NUM}) conn/s \((?P<period>{_NUM}) ms/conn, "
        rf"<=(?P<concurrent>{_INT}) concurrent connections\)"
    ),
    "connection_time": re.compile(
        rf"Connection time \[ms\]: min (?P<min>{_NUM}) avg (?P<avg>{_NUM}) max (?P<max>{_NUM}) "
        rf"median (?P<median>{_NUM}) stddev (?P<stddev>{_NUM})"
    ),
    "connect_time": re.compile(rf"Connection time \[ms\]: connect (?P<value>{_NUM})"),
    "connection_length": re.compile(rf"Connection length \[replies/conn\]: (?P<value>{_NUM})"),
    "request_rate": re.compile(rf"Request rate: (?P<rate>{_NUM}) req/s \((?P<period>{_NUM}) ms/req\)"),
    "request_size": re.compile(rf"Request size \[B\]: (?P<value>{_NUM})"),
    "reply_rate": re.compile(
        rf"Reply rate \[replies/s\]: min (?P<min>{_NUM}) avg (?P<avg>{_NUM}) max (?P<max>{_NUM}) "
        rf"stddev (?P<stddev>{_NUM}) \((?P<samples>{_INT}) samples\)"
    ),
    "reply_time": re.compile(rf"Reply time \[ms\]: response (?P<response>{_NUM}) transfer (?P<transfer>{_NUM})"),
    "reply_size": re.compile(
        rf"Reply size \[B\]: header (?P<header>{_NUM}) content (?P<content>{_NUM}) "
        rf"footer (?P<footer>{_NUM}) \(total (?P<total>{_NUM})\)"
    ),
    "reply_status": re.compile(
        rf"Reply status: 1xx=(?P<s1xx>{_INT}) 2xx=(?P<s2xx>{_INT}) 3xx=(?P<s3xx>{_INT}) "
        rf"4xx=(?P<s4xx>{_INT}) 5xx=(?P<s5xx>{_INT})"
    ),
    "cpu_time": re.compile(
        rf"CPU time \[s\]: user (?P<user>{_NUM}) system (?P<system>{_NUM}) "
        rf"\(user {_NUM}% system {_NUM}% total {_NUM}%\)"
    ),
    "net_io": re.compile(rf"Net I/O: (?P<kb_per_s>{_NUM}) KB/s \((?P<mbps>{_NUM})\*10\^6 bps\)"),
    "errors_1": re.compile(
        rf"Errors: total (?P<total>{_INT}) client-timo (?P<client_timo>{_INT}) socket-timo (?P<socket_timo>{_INT}) "
        rf"connrefused (?P<connrefused>{_INT}) connreset (?P<connreset>{_INT})"
    ),
    "errors_2": re.compile(
        rf"Errors: fd-unavail (?P<fd_unavail>{_INT}) addrunavail (?P<addrunavail>{_INT}) "
        rf"ftab-full (?P<ftab_full>{_INT}) other (?P<other>{_INT})"
    ),
}
REQUIRED_LINES = (
    "command",
    "totals",
    "connection_rate",
    "connection_time",
    "connect_time",
    "connection_length",
    "request_rate",
    "request_size",
    "reply_rate",
    "reply_time",
    "reply_size",
    "reply_status",
    "cpu_time",
    "net_io",
    "errors_1",
    "errors_2",
)
REPEATABLE_LINES = ("message",)
OPTION = re.compile(r"--(?P<name>[A-Za-z0-9][\w-]*)(?:=(?P<value>.*?))?(?= --|$)")


def number(token: str) -> float | None:
    """ "69627.3" -> 69627.3; "nan" / "inf" (a zero test duration) -> None."""
    return None if "nan" in token or "inf" in token else float(token)


def ms_to_s(token: str) -> float | None:
    """ "14.0" (ms) -> 0.014, exactly (through Decimal)."""
    return None if "nan" in token or "inf" in token else float(Decimal(token) * MS)


def command_options(options: str) -> dict[str, str | None]:
    """The echoed command's options: "--hog --num-conns=1000" -> {"hog": None, "num-conns": "1000"}.

    httperf echoes values unquoted (`--uri=/a b`), so a value runs up to the next " --"."""
    return {match["name"]: match["value"] for match in OPTION.finditer(options)}


def parse(text: str) -> dict[str, Any]:
    """httperf stdout -> the parsed record (contracts.md section 3 + httperf's own fields). Raises LoadOutputError."""
    found: dict[str, re.Match[str]] = {}
    messages: list[str] = []
    for line in summary_lines(text, LINE_PATTERNS, TOOL):
        if line.kind == "message":
            messages.append(line.match["text"])
            continue
        remember_once(found, line)
    require_lines(found, REQUIRED_LINES, TOOL, output_was_empty=not found)
    return _record(found, messages)


def _record(found: dict[str, re.Match[str]], messages: list[str]) -> dict[str, Any]:
    options = command_options(found["command"]["options"])
    totals = found["totals"]
    replies = int(totals["replies"])
    duration_s = number(totals["duration"])
    status = {name: int(found["reply_status"][f"s{name}"]) for name in STATUS_CLASSES}
    if sum(status.values()) != replies:
        raise LoadOutputError(f"reply status counts {status} do not add up to the {replies} replies of the Total line")
    errors = _errors(found)
    socket_errors = {kind: 0 for kind in SOCKET_ERROR_KINDS}
    for name, kind in ERROR_KIND_OF.items():
        socket_errors[kind] += errors[name]
    non_2xx = status["1xx"] + status["4xx"] + status["5xx"]
    # Without a reply httperf prints 0.0 for the reply and connection-time statistics: nothing measured.
    answered = replies > 0
    reply_size = found["reply_size"]
    reply_bytes = number(reply_size["total"]) if answered else None
    bytes_read = 0 if not answered else round(replies * reply_bytes) if reply_bytes is not None else None
    reply_time = found["reply_time"]
    response_s = ms_to_s(reply_time["response"]) if answered else None
    transfer_s = ms_to_s(reply_time["transfer"]) if answered else None
    latency_avg = None
    if response_s is not None and transfer_s is not None:
        latency_avg = float(Decimal(reply_time["response"]) * MS + Decimal(reply_time["transfer"]) * MS)
    connection_time = found["connection_time"]
    reply_rate = found["reply_rate"]
    sampled = int(reply_rate["samples"]) > 0  # one sample per 5 s: none in a shorter run
    return {
        "tool": TOOL,
        "url": _url(options),
        "threads": 1,
        "connections": _int_option(options, "num-conns"),
        "configured_duration_s": None,
        "duration_s": duration_s,
        "latency_s": {"avg": latency_avg, "stdev": None, "max": None, "percentiles": {}},
        "total_requests": replies,
        "bytes_read": bytes_read,
        "socket_errors": socket_errors,
        "non_2xx": non_2xx,
        "requests_per_sec": (replies / duration_s) if duration_s else None,
        "transfer_per_sec_bytes": (bytes_read / duration_s) if duration_s and bytes_read is not None else None,
        "options": options,
        "calls_per_connection": _int_option(options, "num-calls"),
        "connection_rate_option": _int_option(options, "rate"),
        "max_connect_burst": int(found["burst"]["value"]) if "burst" in found else None,
        "connections_issued": int(totals["connections"]),
        "requests_sent": int(totals["requests"]),
        "replies": replies,
        "connection_rate": number(found["connection_rate"]["rate"]),
        "max_concurrent_connections": int(found["connection_rate"]["concurrent"]),
        "connection_time_s": {
            name: ms_to_s(connection_time[name]) if answered else None
            for name in ("min", "avg", "max", "median", "stddev")
        },
        "connect_time_s": ms_to_s(found["connect_time"]["value"]),
        "replies_per_connection": number(found["connection_length"]["value"]),
        "request_rate": number(found["request_rate"]["rate"]),
        "request_size_bytes": number(found["request_size"]["value"]),
        "reply_rate": {
            **{name: number(reply_rate[name]) if sampled else None for name in ("min", "avg", "max", "stddev")},
            "samples": int(reply_rate["samples"]),
        },
        "reply_time_s": {"response": response_s, "transfer": transfer_s},
        "reply_size_bytes": {
            name: number(reply_size[name]) if answered else None for name in ("header", "content", "footer", "total")
        },
        "status_classes": status,
        "cpu_s": {"user": number(found["cpu_time"]["user"]), "system": number(found["cpu_time"]["system"])},
        "net_io": {
            "bytes_per_s": _kb_to_bytes(found["net_io"]["kb_per_s"]),
            "bits_per_s": _mbps_to_bits(found["net_io"]["mbps"]),
        },
        "errors": errors,
        "messages": messages,
        "flags": outcome_flags(socket_errors, non_2xx, replies),
    }


def _errors(found: dict[str, re.Match[str]]) -> dict[str, int]:
    both = {**found["errors_1"].groupdict(), **found["errors_2"].groupdict()}
    errors = {name: int(both[name.replace("-", "_")]) for name in ERROR_FIELDS}
    if sum(value for name, value in errors.items() if name != "total") != errors["total"]:
        raise LoadOutputError(f"httperf error counts do not add up to their total: {errors}")
    return errors


def _url(options: dict[str, str | None]) -> str | None:
    server, port = options.get("server"), options.get("port")
    if not server or not port:
        return None
    return f"http://{server}:{port}{options.get('uri') or '/'}"


def _int_option(options: dict[str, str | None], name: str) -> int | None:
    value = options.get(name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise LoadOutputError(f"httperf option --{name}={value!r} is not an integer") from None


def _kb_to_bytes(token: str) -> float | None:
    return None if "nan" in token or "inf" in token else float(Decimal(token) * 1024)


def _mbps_to_bits(token: str) -> float | None:
    return None if "nan" in token or "inf" in token else float(Decimal(token) * Decimal(10) ** 6)
