"""Parser of wrk 4.x stdout (the summary printed by wrk.c `main`).

What wrk prints and how (src/wrk.c, src/units.c of wrk 4.1):

    Running 5s test @ http://127.0.0.1:41234/          format_time_s: s, m (0 decimals)
      1 threads and 100 connections
      Thread Stats   Avg      Stdev     Max   +/- Stdev
        Latency   678.88us  302.91us   5.06ms   84.95%   format_time_us: us, ms; s, m at >= 1 s
        Req/Sec   102.10k     3.25k  106.01k    65.00%   format_metric: k, M, G, T (x1000)
      Latency Distribution                               only with --latency
         50%  512.00us
      202756 requests in 2.00s, 17.60MB read             format_binary: K, M, G, T (x1024) + "B"
      Socket errors: connect 0, read 20, write 61558, timeout 0   only if one is non-zero
      Non-2xx or 3xx responses: 6921                     only if non-zero (wrk counts status > 399)
    Requests/sec: 101156.27
    Transfer/sec:      8.78MB

Every number becomes a base unit (seconds, bytes, counts). Conversions go
through Decimal so that "678.88us" becomes exactly the float 0.00067888, which
lets tests compare parsed values with `==`. With no samples wrk prints
"-nan%" for the within-stdev share; that becomes None.

Leading whitespace is not significant: the excerpt in source 003 lost its
indentation when captured and must still parse. Any other line is an error:
a file that is not wrk output must fail loudly, naming the line.

After the report, runs of the runner since the histogram dump carry wrk's whole
latency record, written by the done() of archbench/config/lua/pipeline.lua:

    archbench-histogram 1 unit=us requests=905 duration_us=1001402 count=939 min=329 max=18362 source=ffi
    329 1
    56 1
    ...
    archbench-histogram-end

one "step count" line per value that occurred, ascending: the value is the
previous line's plus the step (the first line's step is the value). unit=us:
the values are latencies in whole microseconds (wrk's resolution); unit=bucket10:
they are bucket indices of archbench/analyze/histogram.py (1024 sub-buckets per
power of two of ns; a latency v us counted in the bucket of v * 1000 ns), which
the script uses when more than 2048 distinct microseconds occurred. `count` is
the sum of the counts: wrk's record after its coordinated-omission correction,
so it can exceed `requests` (see the script; before_correction undoes it in a
unit=us block). min and max are the extreme latencies in us. It becomes
`latency_histogram` = {"unit", "requests", "duration_us", "count", "min_us",
"max_us", "source", "counts": [[value, n], ...]}, absent when the output has no
block (every campaign recorded before it) or the script could not read the
record (source=none).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

# LoadOutputError stays part of this module's API.
from archbench.parse.common import (
    NON_2XX_LINE,
    SOCKET_ERRORS_LINE,
    STATS_HEADER_LINE,
    THREADS_LINE,
    LoadOutputError,
    non_2xx_count,
    outcome_flags,
    percentile_key,
    remember_once,
    require_lines,
    socket_error_counts,
    summary_lines,
    thread_stats,
    thread_stats_pattern,
)

TOOL = "wrk"
PERCENTILES = ("50", "75", "90", "99")

# Unit tables of wrk's units.c, as multipliers to the base unit.
TIME_UNITS = {"us": Decimal("1e-6"), "ms": Decimal("1e-3"), "s": Decimal(1), "m": Decimal(60), "h": Decimal(3600)}
METRIC_UNITS = {
    "": Decimal(1),
    "k": Decimal(1000),
    "M": Decimal(1000) ** 2,
    "G": Decimal(1000) ** 3,
    "T": Decimal(1000) ** 4,
    "P": Decimal(1000) ** 5,
}
BINARY_UNITS = {
    "": Decimal(1),
    "K": Decimal(1024),
    "M": Decimal(1024) ** 2,
    "G": Decimal(1024) ** 3,
    "T": Decimal(1024) ** 4,
    "P": Decimal(1024) ** 5,
}

_NUMBER = r"\d+(?:\.\d+)?"
_TIME = rf"{_NUMBER}(?:us|ms|s|m|h)"
_METRIC = rf"{_NUMBER}[kMGTP]?"
_BINARY = rf"{_NUMBER}[KMGTP]?B"
_PCT = r"(?:-?nan|-?inf|\d+(?:\.\d+)?)%"

LINE_PATTERNS: dict[str, re.Pattern[str]] = {
    "running": re.compile(rf"Running (?P<duration>{_TIME}) test @ (?P<url>\S+)"),
    "threads": THREADS_LINE,
    "stats_header": STATS_HEADER_LINE,
    "latency": thread_stats_pattern("Latency", _TIME, _PCT),
    "req_sec": thread_stats_pattern("Req/Sec", _METRIC, _PCT),
    "distribution_header": re.compile(r"Latency Distribution"),
    "percentile": re.compile(rf"(?P<pct>{_NUMBER})%\s+(?P<value>{_TIME})"),
    "totals": re.compile(rf"(?P<requests>\d+) requests in (?P<duration>{_TIME}), (?P<bytes>{_BINARY}) read"),
    "socket_errors": SOCKET_ERRORS_LINE,
    "non_2xx": NON_2XX_LINE,
    "requests_per_sec": re.compile(rf"Requests/sec:\s+(?P<value>{_NUMBER})"),
    "transfer_per_sec": re.compile(rf"Transfer/sec:\s+(?P<value>{_BINARY})"),
}
REQUIRED_LINES = (
    "running",
    "threads",
    "stats_header",
    "latency",
    "req_sec",
    "totals",
    "requests_per_sec",
    "transfer_per_sec",
)
REPEATABLE_LINES = ("percentile",)
HISTOGRAM_HEADER = re.compile(
    r"archbench-histogram 1 unit=(?P<unit>us|bucket10) requests=(?P<requests>\d+) duration_us=(?P<duration_us>\d+) "
    r"count=(?P<count>\d+) "
    r"min=(?P<min>\d+) max=(?P<max>\d+) source=(?P<source>ffi|api|none)"
)
HISTOGRAM_END = "archbench-histogram-end"
HISTOGRAM_LINE = re.compile(r"(?P<step>\d+) (?P<n>\d+)")


def seconds(token: str) -> float:
    """ "512.00us" -> 0.000512; units us, ms, s, m, h."""
    match = re.fullmatch(rf"({_NUMBER})(us|ms|s|m|h)", token)
    if not match:
        raise LoadOutputError(f"not a wrk time value: {token!r}")
    return float(Decimal(match.group(1)) * TIME_UNITS[match.group(2)])


def count(token: str) -> float:
    """ "102.10k" -> 102100.0; wrk's format_metric uses powers of 1000."""
    match = re.fullmatch(rf"({_NUMBER})([kMGTP]?)", token)
    if not match:
        raise LoadOutputError(f"not a wrk metric value: {token!r}")
    return float(Decimal(match.group(1)) * METRIC_UNITS[match.group(2)])


def byte_count(token: str) -> float:
    """ "17.60MB" -> 18454937.6; wrk's format_binary uses powers of 1024."""
    match = re.fullmatch(rf"({_NUMBER})([KMGTP]?)B", token)
    if not match:
        raise LoadOutputError(f"not a wrk byte value: {token!r}")
    return float(Decimal(match.group(1)) * BINARY_UNITS[match.group(2)])


def parse(text: str) -> dict[str, Any]:
    """wrk stdout -> the parsed record of contracts.md section 3. Raises LoadOutputError."""
    text, histogram = split_histogram(text)
    found: dict[str, re.Match[str]] = {}
    percentiles: dict[str, float | None] = {p: None for p in PERCENTILES}
    in_distribution = False
    for line in summary_lines(text, LINE_PATTERNS, TOOL):
        if line.kind == "percentile":
            if not in_distribution:
                raise LoadOutputError(f"line {line.number}: percentile outside the Latency Distribution: {line.raw!r}")
            percentiles[percentile_key(line.match["pct"])] = seconds(line.match["value"])
            continue
        remember_once(found, line)
        in_distribution = line.kind == "distribution_header"
    require_lines(found, REQUIRED_LINES, TOOL, output_was_empty=not found)
    record = _record(found, percentiles if "distribution_header" in found else {p: None for p in PERCENTILES})
    if histogram is not None:  # outputs without the block keep the record they always had
        record["latency_histogram"] = histogram
    return record


def split_histogram(text: str) -> tuple[str, dict[str, Any] | None]:
    """(wrk's report without the histogram block, the block parsed or None); a block that is cut short,
    repeated, unordered or whose counts do not add up to its header's fails, naming the line."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip().startswith("archbench-histogram ")]
    if not starts:
        return text, None
    if len(starts) > 1:
        raise LoadOutputError(f"line {starts[1] + 1}: a second histogram block")
    start = starts[0]
    header = HISTOGRAM_HEADER.fullmatch(lines[start].strip())
    if header is None:
        raise LoadOutputError(f"line {start + 1}: not a histogram header: {lines[start]!r}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].strip() == HISTOGRAM_END), None)
    if end is None:
        raise LoadOutputError(f"line {start + 1}: histogram block without its {HISTOGRAM_END!r} line (cut short?)")
    counts: list[list[int]] = []
    value = 0
    for number in range(start + 1, end):
        match = HISTOGRAM_LINE.fullmatch(lines[number].strip())
        if match is None:
            raise LoadOutputError(f"line {number + 1}: not a 'step count' histogram line: {lines[number]!r}")
        step = int(match["step"])
        if counts and step == 0:
            raise LoadOutputError(f"line {number + 1}: histogram step 0 (values must ascend)")
        value += step
        counts.append([value, int(match["n"])])
    total = sum(n for _, n in counts)
    if total != int(header["count"]):
        raise LoadOutputError(f"line {start + 1}: histogram lines add up to {total}, header says {header['count']}")
    rest = "\n".join(lines[:start] + lines[end + 1 :])
    if header["source"] == "none":
        return rest, None
    histogram = {"unit": header["unit"], "requests": int(header["requests"]), "duration_us": int(header["duration_us"])}
    extremes = {"min_us": int(header["min"]), "max_us": int(header["max"])}
    return rest, {**histogram, "count": total, **extremes, "source": header["source"], "counts": counts}


def before_correction(histogram: dict[str, Any], connections: int) -> list[list[int]]:
    """The histogram's counts as wrk measured them, before its coordinated-omission correction.

    wrk 4.1 (src/wrk.c, src/stats.c stats_correct) takes the interval E = duration_us // (requests //
    connections) in integer arithmetic and, for every recorded latency n >= 2E, adds its count at n - E,
    n - 2E, ... while that stays above E. Each addition lands below the latency it copies, so going down
    from the largest value, a value's own count is what it holds less the own counts of value + E,
    value + 2E, ...: exact, and the sum is the number of requests wrk recorded (those under the timeout).
    Only for a unit=us block: a bucketed one no longer knows which microsecond each count was at."""
    if histogram["unit"] != "us":
        raise ValueError(f"wrk's correction can be undone only at 1 us resolution, not in unit {histogram['unit']}")
    per_connection = histogram["requests"] // connections
    if per_connection == 0 or not histogram["counts"]:
        return [list(pair) for pair in histogram["counts"]]
    interval = histogram["duration_us"] // per_connection
    held = {value: n for value, n in histogram["counts"]}
    top = histogram["counts"][-1][0]
    own = {value: n for value, n in held.items() if value <= interval}  # nothing is added at or below E
    above: dict[int, int] = {}  # value -> own counts of value, value + E, value + 2E, ... up to the top
    for value in range(top, interval, -1):
        own[value] = held.get(value, 0) - above.get(value + interval, 0)
        above[value] = own[value] + above.get(value + interval, 0)
    return [[value, own[value]] for value in sorted(own) if own[value]]


def _record(found: dict[str, re.Match[str]], percentiles: dict[str, float | None]) -> dict[str, Any]:
    totals = found["totals"]
    socket_errors = socket_error_counts(found)
    non_2xx = non_2xx_count(found)
    total_requests = int(totals["requests"])
    return {
        "tool": TOOL,
        "url": found["running"]["url"],
        "threads": int(found["threads"]["threads"]),
        "connections": int(found["threads"]["connections"]),
        "configured_duration_s": seconds(found["running"]["duration"]),
        "duration_s": seconds(totals["duration"]),
        "latency_s": {**thread_stats(found["latency"], seconds), "percentiles": percentiles},
        "req_per_thread": thread_stats(found["req_sec"], count),
        "total_requests": total_requests,
        # wrk prints bytes with 3-4 significant digits; an integer count of the rounded value.
        "bytes_read": round(byte_count(totals["bytes"])),
        "socket_errors": socket_errors,
        "non_2xx": non_2xx,
        "requests_per_sec": float(found["requests_per_sec"]["value"]),
        "transfer_per_sec_bytes": byte_count(found["transfer_per_sec"]["value"]),
        "flags": outcome_flags(socket_errors, non_2xx, total_requests),
    }
