"""Several load generators' parsed outputs as one trial's (placement ssh: one wrk per client host).

Counts add up: requests per second, requests, bytes, socket errors by kind and non-2xx responses. Latency does
not: a percentile of the union is not any function of the hosts' percentiles, and averaging them is wrong, so
the combined record has no latency; each host's percentiles stay in its own output (and in the trial record's
`load.hosts[]`). The window is the longest host's: the hosts start together, their start spread is recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

ParsedRecord = dict[str, Any]
SUMMED = ("requests_per_sec", "total_requests", "bytes_read", "non_2xx")


def combine_outputs(parsed: Sequence[ParsedRecord]) -> ParsedRecord:
    """One record whose counts are the sums of `parsed` (one per client host); flags are the union."""
    if not parsed:
        raise ValueError("no load output to combine")
    combined: ParsedRecord = {"tool": parsed[0].get("tool"), "hosts": len(parsed), "latency_s": {}}
    for name in SUMMED:
        values = [one.get(name) for one in parsed]
        combined[name] = None if any(v is None for v in values) else sum(values)
    durations = [one.get("duration_s") for one in parsed if one.get("duration_s") is not None]
    combined["duration_s"] = max(durations) if durations else None
    errors: dict[str, int] = {}
    for one in parsed:
        for kind, count in (one.get("socket_errors") or {}).items():
            errors[kind] = errors.get(kind, 0) + (count or 0)
    combined["socket_errors"] = errors
    combined["flags"] = sorted({flag for one in parsed for flag in (one.get("flags") or [])})
    return combined
