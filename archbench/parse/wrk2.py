"""Parser of wrk2 (giltene/wrk2) stdout.

wrk2 is wrk 4.0 with a constant request rate (-R) and HdrHistogram latencies
measured from each request's intended start. Its output (src/wrk.c `main`,
`calibrate`, `print_stats`, `print_hdr_latency`; src/hdr_histogram.c
`hdr_percentiles_print`; src/units.c as in wrk):

    Running 30s test @ http://localhost:8080
      16 threads and 2000 connections
      Thread calibration: mean lat.: 1.749ms, rate sampling interval: 10ms     one per thread, ~10 s in
      Thread Stats   Avg      Stdev     Max   +/- Stdev
        Latency     1.12ms  343.58us   5.66ms   68.15%        HdrHistogram mean, stdev, max
        Req/Sec     6.45     26.06   222.00     94.04%        per-thread rate samples
      Latency Distribution (HdrHistogram - Recorded Latency)   --latency (or -U)
     50.000%    6.67ms                                        "%7.3Lf%%" + format_time_us
      ... 75, 90, 99, 99.9, 99.99, 99.999, 100.000%
                                                              blank line
      Detailed Percentile spectrum:
           Value   Percentile   TotalCount 1/(1-Percentile)   "%12s %12s %12s %12s\\n\\n"
           0.921     0.000000            1         1.00       "%12.3f %12f %12d %12.2f": ms, fraction
      ...
          12.503     1.000000        39500          inf
    #[Mean    =        6.602, StdDeviation   =        1.919]  ms
    #[Max     =       12.496, Total count    =        39500]
    #[Buckets =           27, SubBuckets     =         2048]
    ----------------------------------------------------------
      (with -U: a blank line and a second block, "Uncorrected Latency (measured
       without taking delayed starts into account)", measured from the actual send)
      60018 requests in 30.00s, 19.81MB read
      Socket errors: connect 0, read 0, write 0, timeout 28860 only if one is non-zero
      Non-2xx or 3xx responses: 12                            only if non-zero (status > 399)
    Requests/sec:   2000.28
    Transfer/sec:    676.18KB

Early wrk2 builds (the README's examples) print the calibration as
`mean lat.: 10087 usec, rate sampling interval: 22 msec`; both forms parse.

Odd values are data, not errors:
- A thread whose calibration saw no response prints `mean lat.:
  9223372036854776.000ms` ((uint64_t) of the NaN mean of an empty histogram,
  2^63 us). It is kept in `calibration` with `incomplete: true` and the record
  is flagged `calibration_incomplete`, as it is when fewer calibration lines
  than threads were printed (a run shorter than the ~10 s calibration, where
  Req/Sec is `-nan`).
- An empty histogram has a NaN mean: `-nanus`, `-nan`, `#[Mean = -nan`. NaN
  becomes None. `inf` (as 1/(1-Percentile) of the 100% row, or a rate over a
  zero runtime) also becomes None: JSON has no infinity, and neither is a
  measurement.

Numbers go through Decimal so that "6.60ms" is exactly 0.0066 (as in wrk.py);
the spectrum's values and footer are in milliseconds (value_scale 1000) and
become seconds. Leading and trailing whitespace is not significant (the
README's examples are indented by four spaces); any other line is an error
naming the line.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

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
from archbench.parse.wrk import BINARY_UNITS, METRIC_UNITS, TIME_UNITS

TOOL = "wrk2"
PERCENTILES = ("50", "75", "90", "99", "99.9", "99.99", "99.999", "100")
MS = Decimal("1e-3")
# wrk2 records latencies up to one day (MAX_LATENCY, in us); a calibration mean above it is the
# (uint64_t)NaN sentinel of a thread that had no response when it calibrated.
MAX_LATENCY_S = 24 * 60 * 60

_NUMBER = r"\d+(?:\.\d+)?"
_ODD = r"-?(?:nan|inf)"
_VALUE = rf"(?:{_NUMBER}|{_ODD})"
_TIME = rf"{_VALUE}(?:us|ms|s|m|h)"
_METRIC = rf"{_VALUE}[kMGTP]?"
_BINARY = rf"{_VALUE}[KMGTP]?B"
_PCT = rf"{_VALUE}%"

RECORDED = "Recorded Latency"
UNCORRECTED = "Uncorrected Latency (measured without taking delayed starts into account)"

LINE_PATTERNS: dict[str, re.Pattern[str]] = {
    "running": re.compile(rf"Running (?P<duration>{_NUMBER}(?:s|m|h)) test @ (?P<url>\S+)"),
    "threads": THREADS_LINE,
    "calibration": re.compile(
        rf"Thread calibration: mean lat\.: (?P<mean>{_VALUE})(?P<mean_unit>ms| usec), "
        rf"rate sampling interval: (?P<interval>\d+) ?(?P<interval_unit>ms|msec)"
    ),
    "stats_header": STATS_HEADER_LINE,
    "latency": thread_stats_pattern("Latency", _TIME, _PCT),
    "req_sec": thread_stats_pattern("Req/Sec", _METRIC, _PCT),
    "distribution_header": re.compile(r"Latency Distribution \(HdrHistogram - (?P<kind>.+)\)"),
    "percentile": re.compile(rf"(?P<pct>\d+\.\d+)%\s+(?P<value>{_TIME})"),
    "spectrum_title": re.compile(r"Detailed Percentile spectrum:"),
    "spectrum_header": re.compile(r"Value\s+Percentile\s+TotalCount\s+1/\(1-Percentile\)"),
    "spectrum_row": re.compile(
        rf"(?P<value>{_VALUE})\s+(?P<percentile>{_NUMBER})\s+(?P<total_count>\d+)\s+(?P<inverse>{_VALUE})"
    ),
    "footer_mean": re.compile(rf"#?\[Mean\s+=\s+(?P<mean>{_VALUE}), StdDeviation\s+=\s+(?P<stdev>{_VALUE})\]"),
    "footer_max": re.compile(rf"#?\[Max\s+=\s+(?P<max>{_VALUE}), Total count\s+=\s+(?P<total_count>\d+)\]"),
    "footer_buckets": re.compile(r"#?\[Buckets\s+=\s+(?P<buckets>\d+), SubBuckets\s+=\s+(?P<sub_buckets>\d+)\]"),
    "separator": re.compile(r"-{58}"),
    "totals": re.compile(rf"(?P<requests>\d+) requests in (?P<duration>{_TIME}), (?P<bytes>{_BINARY}) read"),
    "socket_errors": SOCKET_ERRORS_LINE,
    "non_2xx": NON_2XX_LINE,
    "requests_per_sec": re.compile(rf"Requests/sec:\s+(?P<value>{_VALUE})"),
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
# Lines that belong to a latency block (after its "Latency Distribution (HdrHistogram - ...)" header).
BLOCK_LINES = (
    "percentile",
    "spectrum_title",
    "spectrum_header",
    "spectrum_row",
    "footer_mean",
    "footer_max",
    "footer_buckets",
    "separator",
)


def _number(token: str) -> Decimal | None:
    """ "12.5" -> Decimal; "-nan"/"nan"/"inf"/"-inf" -> None (not a measurement)."""
    if "nan" in token or "inf" in token:
        return None
    return Decimal(token)


def _scaled(token: str, units: dict[str, Decimal], pattern: str, what: str) -> float | None:
    match = re.fullmatch(pattern, token)
    if not match:
        raise LoadOutputError(f"not a wrk2 {what} value: {token!r}")
    number = _number(match.group(1))
    return None if number is None else float(number * units[match.group(2)])


def seconds(token: str) -> float | None:
    """ "6.60ms" -> 0.0066, "1.31m" -> 78.6; "-nanus" (empty histogram) -> None."""
    return _scaled(token, TIME_UNITS, rf"({_VALUE})(us|ms|s|m|h)", "time")


def count(token: str) -> float | None:
    """ "1.04k" -> 1040.0 (powers of 1000); "-nan" -> None."""
    return _scaled(token, METRIC_UNITS, rf"({_VALUE})([kMGTP]?)", "metric")


def byte_count(token: str) -> float | None:
    """ "19.81MB" -> 20772290.56 (powers of 1024); "-nanB"/"infTB" -> None."""
    return _scaled(token, BINARY_UNITS, rf"({_VALUE})([KMGTP]?)B", "byte")


def plain(token: str) -> float | None:
    number = _number(token)
    return None if number is None else float(number)


def milliseconds(token: str) -> float | None:
    """Spectrum and footer values are milliseconds: "12.503" -> 0.012503."""
    number = _number(token)
    return None if number is None else float(number * MS)


def _calibration(match: re.Match[str]) -> dict[str, Any]:
    mean = _number(match["mean"])
    scale = MS if match["mean_unit"] == "ms" else Decimal("1e-6")
    mean_s = None if mean is None else float(mean * scale)
    return {
        "mean_latency_s": mean_s,
        "rate_sampling_interval_s": float(Decimal(match["interval"]) * MS),
        "incomplete": mean_s is None or mean_s > MAX_LATENCY_S,
    }


class _Block:
    """One "Latency Distribution (HdrHistogram - ...)" block, in the order wrk2 prints it."""

    STAGES = (
        "percentile",
        "spectrum_title",
        "spectrum_header",
        "spectrum_row",
        "footer_mean",
        "footer_max",
        "footer_buckets",
        "separator",
    )

    def __init__(self, kind: str):
        self.kind = kind
        self.percentiles: dict[str, float | None] = {p: None for p in PERCENTILES}
        self.spectrum: list[dict[str, Any]] = []
        self.footer: dict[str, Any] = {}
        self.stage = -1

    def add(self, kind: str, match: re.Match[str], number: int, raw: str) -> None:
        stage = self.STAGES.index(kind)
        repeatable = kind in ("percentile", "spectrum_row")
        if not (stage == self.stage + 1 or (stage == self.stage and repeatable)):
            raise LoadOutputError(
                f"line {number}: {kind.replace('_', ' ')} out of place in the {self.kind} latency block: {raw!r}"
            )
        self.stage = stage
        if kind == "percentile":
            key = percentile_key(match["pct"])
            self.percentiles[key] = seconds(match["value"])
        elif kind == "spectrum_row":
            self.spectrum.append(
                {
                    "value_s": milliseconds(match["value"]),
                    "percentile": plain(match["percentile"]),
                    "total_count": int(match["total_count"]),
                    "inverse_complement": plain(match["inverse"]),
                }
            )
        elif kind == "footer_mean":
            self.footer["mean_s"] = milliseconds(match["mean"])
            self.footer["stdev_s"] = milliseconds(match["stdev"])
        elif kind == "footer_max":
            self.footer["max_s"] = milliseconds(match["max"])
            self.footer["total_count"] = int(match["total_count"])
        elif kind == "footer_buckets":
            self.footer["buckets"] = int(match["buckets"])
            self.footer["sub_buckets"] = int(match["sub_buckets"])

    def complete(self) -> bool:
        return self.stage == len(self.STAGES) - 1


def parse(text: str) -> dict[str, Any]:
    """wrk2 stdout -> the parsed record (contracts.md section 3 + wrk2's extras). Raises LoadOutputError."""
    found: dict[str, re.Match[str]] = {}
    calibration: list[dict[str, Any]] = []
    blocks: dict[str, _Block] = {}
    block: _Block | None = None
    for line in summary_lines(text, LINE_PATTERNS, TOOL):
        number, raw, kind, match = line
        if kind == "calibration":
            if "stats_header" in found:
                raise LoadOutputError(f"line {number}: thread calibration after the Thread Stats: {raw!r}")
            calibration.append(_calibration(match))
            continue
        if kind == "distribution_header":
            which = {RECORDED: "recorded", UNCORRECTED: "uncorrected"}.get(match["kind"])
            if which is None:
                raise LoadOutputError(f"line {number}: unknown latency distribution {match['kind']!r}: {raw!r}")
            if which in blocks:
                raise LoadOutputError(f"line {number}: second {match['kind']!r} distribution: {raw!r}")
            if block is not None and not block.complete():
                raise LoadOutputError(f"line {number}: the {block.kind} latency block before it is incomplete")
            if "req_sec" not in found or "totals" in found:
                raise LoadOutputError(f"line {number}: latency distribution out of place: {raw!r}")
            block = blocks[which] = _Block(which)
            continue
        if kind in BLOCK_LINES:
            if block is None or block.complete():
                raise LoadOutputError(
                    f"line {number}: {kind.replace('_', ' ')} outside a latency distribution: {raw!r}"
                )
            block.add(kind, match, number, raw)
            continue
        if block is not None and not block.complete():
            raise LoadOutputError(f"line {number}: the {block.kind} latency block is incomplete before: {raw!r}")
        remember_once(found, line)
    require_lines(found, REQUIRED_LINES, TOOL, output_was_empty=not found and not calibration and not blocks)
    if "uncorrected" in blocks and "recorded" not in blocks:
        raise LoadOutputError("an uncorrected latency distribution without the recorded one")
    return _record(found, calibration, blocks)


def _record(
    found: dict[str, re.Match[str]], calibration: list[dict[str, Any]], blocks: dict[str, _Block]
) -> dict[str, Any]:
    totals = found["totals"]
    socket_errors = socket_error_counts(found)
    non_2xx = non_2xx_count(found)
    total_requests = int(totals["requests"])
    threads = int(found["threads"]["threads"])
    recorded, uncorrected = blocks.get("recorded"), blocks.get("uncorrected")

    flags = outcome_flags(socket_errors, non_2xx, total_requests)
    if len(calibration) < threads or any(c["incomplete"] for c in calibration):
        flags.append("calibration_incomplete")

    bytes_read = byte_count(totals["bytes"])
    return {
        "tool": TOOL,
        "url": found["running"]["url"],
        "threads": threads,
        "connections": int(found["threads"]["connections"]),
        "configured_duration_s": seconds(found["running"]["duration"]),
        "duration_s": seconds(totals["duration"]),
        "offered_rate": None,  # -R is not in the output; the runner adds it from the command
        "latency_s": {
            **thread_stats(found["latency"], seconds),
            "percentiles": recorded.percentiles if recorded else {p: None for p in PERCENTILES},
        },
        "req_per_thread": thread_stats(found["req_sec"], count),
        "total_requests": total_requests,
        # wrk2 prints bytes with 3-4 significant digits; an integer count of the rounded value.
        "bytes_read": None if bytes_read is None else round(bytes_read),
        "socket_errors": socket_errors,
        "non_2xx": non_2xx,
        "requests_per_sec": plain(found["requests_per_sec"]["value"]),
        "transfer_per_sec_bytes": byte_count(found["transfer_per_sec"]["value"]),
        "calibration": calibration,
        "percentile_spectrum": recorded.spectrum if recorded else None,
        "hdr_footer": recorded.footer if recorded else None,
        "uncorrected_latency_s": None
        if uncorrected is None
        else {
            "percentiles": uncorrected.percentiles,
            "percentile_spectrum": uncorrected.spectrum,
            "hdr_footer": uncorrected.footer,
        },
        "flags": flags,
    }
