"""open_loop's latency histogram on the Python side: the same bucket edges, adding, percentiles; wrk's
record (dumped by archbench/config/lua/pipeline.lua) goes in the same buckets.

Percentiles of several client hosts (or threads) cannot be combined; histograms with the same fixed
edges can: add the counts bucket by bucket, then take the percentiles of the sum. The edges are
servers_c/clients/latency_histogram.h's, in ns: buckets 1 ns wide below 2 * SUB (2048 ns); above,
each power of two [2^e, 2^(e+1)) is cut into SUB = 1024 equal sub-buckets (a bucket is at most 1/1024
of its lower edge wide: about 3 significant digits), up to 2^37 ns (137 s; 100 s is the range
promised). A percentile is the upper edge of the bucket holding the sample of rank ceil(q/100 * N),
or the largest sample if that is smaller, exactly as the client reports it: never below the true
sample, at most one bucket width above it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

SUB_BITS = 10
SUB = 1 << SUB_BITS
TOP_EXP = 36
BUCKETS = 2 * SUB + (TOP_EXP - SUB_BITS) * SUB


def bucket_of(ns: int) -> int:
    """The bucket a value in ns falls in (past the top: the last bucket)."""
    if ns < 0:
        raise ValueError(f"a latency cannot be negative: {ns}")
    if ns < 2 * SUB:
        return ns
    e = ns.bit_length() - 1
    if e > TOP_EXP:
        return BUCKETS - 1
    shift = e - SUB_BITS
    return 2 * SUB + (e - SUB_BITS - 1) * SUB + ((ns >> shift) - SUB)


def lower_edge(i: int) -> int:
    if not 0 <= i < BUCKETS:
        raise ValueError(f"no bucket {i} (there are {BUCKETS})")
    if i < 2 * SUB:
        return i
    e = (i - 2 * SUB) // SUB + SUB_BITS + 1
    return (SUB + (i - 2 * SUB) % SUB) << (e - SUB_BITS)


def upper_edge(i: int) -> int:
    if i < 2 * SUB:
        return lower_edge(i) + 1
    e = (i - 2 * SUB) // SUB + SUB_BITS + 1
    return lower_edge(i) + (1 << (e - SUB_BITS))


@dataclass
class LatencyHistogram:
    """Counts by bucket index (only the non-empty ones), and the exact largest sample when known."""

    counts: dict[int, int] = field(default_factory=dict)
    max_ns: int | None = None

    @classmethod
    def from_samples(cls, samples_ns: Iterable[int]) -> LatencyHistogram:
        h = cls()
        for ns in samples_ns:
            i = bucket_of(int(ns))
            h.counts[i] = h.counts.get(i, 0) + 1
            h.max_ns = int(ns) if h.max_ns is None else max(h.max_ns, int(ns))
        return h

    @classmethod
    def from_record(cls, record: Mapping) -> LatencyHistogram:
        """From a parsed open_loop record (its `histogram` buckets and `latency_ns.max`); refuses
        buckets whose edges are not this module's (another client, another scheme)."""
        histogram = record["histogram"]
        if histogram.get("sub_bucket_bits") != SUB_BITS:
            raise ValueError(f"histogram with sub_bucket_bits {histogram.get('sub_bucket_bits')}, expected {SUB_BITS}")
        h = cls()
        for lower, upper, n in histogram["buckets"]:
            i = bucket_of(lower)
            if (lower_edge(i), upper_edge(i)) != (lower, upper):
                raise ValueError(f"bucket [{lower}, {upper}) is not one of the fixed buckets")
            h.counts[i] = h.counts.get(i, 0) + n
        h.max_ns = record["latency_ns"]["max"] if h.total else None
        return h

    @classmethod
    def from_wrk(cls, histogram: Mapping) -> LatencyHistogram:
        """From a parsed wrk record's `latency_histogram` (archbench.parse.wrk; wrk's record after its own
        correction). Unit "us": each whole microsecond v, which stands for [v, v + 1) us, goes in the bucket of
        v * 1000 ns (below 1 ms a bucket is narrower than a microsecond, so nothing is lost; above, a bucket is
        at most 1/1024 of its value); unit "bucket10": the counts are already by this module's bucket index.
        The maximum is the largest latency, as wrk prints it."""
        unit = histogram.get("unit")
        if unit not in ("us", "bucket10"):
            raise ValueError(f"wrk histogram in unit {unit!r}, expected 'us' or 'bucket10'")
        h = cls()
        for value, n in histogram["counts"]:
            if n < 0 or value < 0 or (unit == "bucket10" and value >= BUCKETS):
                raise ValueError(f"wrk histogram entry ({value}, {n}) is not a {unit} value and count")
            if n:
                i = bucket_of(int(value) * 1000) if unit == "us" else int(value)
                h.counts[i] = h.counts.get(i, 0) + int(n)
        if h.counts:
            top_us = histogram.get("max_us", histogram["counts"][-1][0] if unit == "us" else None)
            h.max_ns = int(top_us) * 1000 if top_us is not None else upper_edge(max(h.counts))
        return h

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def __add__(self, other: LatencyHistogram) -> LatencyHistogram:
        counts = dict(self.counts)
        for i, n in other.counts.items():
            counts[i] = counts.get(i, 0) + n
        maxima = [m for m in (self.max_ns, other.max_ns) if m is not None]
        return LatencyHistogram(counts, max(maxima) if maxima else None)

    def percentile(self, q: float) -> float:
        """The q-th percentile in ns (0 < q <= 100), as the module docstring says; NaN when empty."""
        if not 0 < q <= 100:
            raise ValueError(f"a percentile is in (0, 100], got {q}")
        total = self.total
        if total == 0:
            return math.nan
        if q == 100 and self.max_ns is not None:
            return float(self.max_ns)
        rank = max(1, math.ceil(q / 100 * total))
        seen = 0
        for i in sorted(self.counts):
            seen += self.counts[i]
            if seen >= rank:
                upper = upper_edge(i)
                return float(min(upper, self.max_ns) if self.max_ns is not None else upper)
        raise AssertionError("unreachable: the ranks add up to the total")

    def buckets(self) -> list[tuple[int, int, int]]:
        """(lower, upper, count) of the non-empty buckets, ascending: the client's JSON form."""
        return [(lower_edge(i), upper_edge(i), self.counts[i]) for i in sorted(self.counts)]


def merge(histograms: Iterable[LatencyHistogram]) -> LatencyHistogram:
    """The sum of several histograms (e.g. one per client host)."""
    total = LatencyHistogram()
    for h in histograms:
        total = total + h
    return total
