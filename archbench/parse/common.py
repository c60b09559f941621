"""What the load-generator parsers share.

For every HTTP load generator (wrk, wrk2, oha): the error a parser raises, the
percentile keys of the record and its outcome flags. For wrk and wrk2 (wrk2 is
a fork of wrk 4.0 and prints its summary with the same code): reading the
output line by line, the summary lines both print alike, and the numbers taken
from them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import NamedTuple

SOCKET_ERROR_KINDS = ("connect", "read", "write", "timeout")

# Summary lines that wrk2 prints exactly as wrk does (wrk.c `main`).
THREADS_LINE = re.compile(r"(?P<threads>\d+) threads and (?P<connections>\d+) connections")
STATS_HEADER_LINE = re.compile(r"Thread Stats\s+Avg\s+Stdev\s+Max\s+\+/-\s*Stdev")
SOCKET_ERRORS_LINE = re.compile(
    r"Socket errors: connect (?P<connect>\d+), read (?P<read>\d+), write (?P<write>\d+), timeout (?P<timeout>\d+)"
)
NON_2XX_LINE = re.compile(r"Non-2xx or 3xx responses: (?P<count>\d+)")


class LoadOutputError(ValueError):
    """The text is not (complete) output of the load generator."""


class SummaryLine(NamedTuple):
    """One non-blank line of a wrk or wrk2 summary, with the pattern it matched."""

    number: int
    raw: str
    kind: str
    match: re.Match[str]


def thread_stats_pattern(label: str, value: str, share: str) -> re.Pattern[str]:
    """A row of the Thread Stats table ("Latency", "Req/Sec"): avg, stdev and max as `value`, then `share`."""
    return re.compile(
        rf"{re.escape(label)}\s+(?P<avg>{value})\s+(?P<stdev>{value})\s+(?P<max>{value})\s+(?P<pct>{share})"
    )


def summary_lines(text: str, patterns: Mapping[str, re.Pattern[str]], tool: str) -> Iterator[SummaryLine]:
    """Each non-blank line of `text`, classified by the first of `patterns` it matches whole.

    Leading and trailing whitespace is not significant. A line that no pattern
    matches fails, naming the line.
    """
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        classified = _classify(line, patterns)
        if classified is None:
            raise LoadOutputError(f"line {number} is not {tool} output: {raw!r}")
        kind, match = classified
        yield SummaryLine(number, raw, kind, match)


def _classify(line: str, patterns: Mapping[str, re.Pattern[str]]) -> tuple[str, re.Match[str]] | None:
    for kind, pattern in patterns.items():
        match = pattern.fullmatch(line)
        if match:
            return kind, match
    return None


def remember_once(found: dict[str, re.Match[str]], line: SummaryLine) -> None:
    """Keep a line that the summary prints at most once; a second one fails."""
    if line.kind in found:
        raise LoadOutputError(f"line {line.number}: second {line.kind!r} line: {line.raw!r}")
    found[line.kind] = line.match


def require_lines(
    found: Mapping[str, re.Match[str]], required: tuple[str, ...], tool: str, *, output_was_empty: bool
) -> None:
    """Fail unless every required line was found; an output without any summary line says so."""
    missing = [kind for kind in required if kind not in found]
    if not missing:
        return
    if output_was_empty:
        raise LoadOutputError(f"empty output: no {tool} summary at all")
    raise LoadOutputError(f"incomplete {tool} output: no {', '.join(missing)} line")


def percentage(token: str) -> float | None:
    """ "84.95%" -> 84.95; "-nan%" (no samples) -> None."""
    number = token.rstrip("%")
    if "nan" in number or "inf" in number:
        return None
    return float(number)


def percentile_key(token: str) -> str:
    """ "99.900" -> "99.9", "100.000" -> "100": the record's key of a percentile."""
    return format(Decimal(token).normalize(), "f")


def thread_stats(row: re.Match[str], value: Callable[[str], float | None]) -> dict[str, float | None]:
    """A Thread Stats row (a match of `thread_stats_pattern`) with avg, stdev and max converted by `value`."""
    return {
        "avg": value(row["avg"]),
        "stdev": value(row["stdev"]),
        "max": value(row["max"]),
        "within_stdev_pct": percentage(row["pct"]),
    }


def socket_error_counts(found: Mapping[str, re.Match[str]]) -> dict[str, int]:
    """The "Socket errors" line as counts; wrk prints it only when one is non-zero, so none means all 0."""
    line = found.get("socket_errors")
    return {kind: 0 if line is None else int(line[kind]) for kind in SOCKET_ERROR_KINDS}


def non_2xx_count(found: Mapping[str, re.Match[str]]) -> int:
    """The "Non-2xx or 3xx responses" count; wrk prints it only when it is non-zero."""
    line = found.get("non_2xx")
    return 0 if line is None else int(line["count"])


def outcome_flags(socket_errors: Mapping[str, int], non_2xx: int, total_requests: int) -> list[str]:
    """The flags of contracts.md section 3 that every HTTP load generator's record carries, in order."""
    flags = []
    if any(socket_errors.values()):
        flags.append("socket_errors")
    if non_2xx:
        flags.append("non_2xx")
    if total_requests == 0:
        flags.append("no_requests")
    return flags
