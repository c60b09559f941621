"""archbench.analyze.histogram: the client's bucket edges, merging by adding, and percentiles of a
merge against those of the pooled samples (within one bucket's width)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from archbench.analyze.histogram import (
    BUCKETS,
    LatencyHistogram,
    bucket_of,
    lower_edge,
    merge,
    upper_edge,
)
from archbench.parse import parse_file

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "open_loop"


@pytest.mark.parametrize(
    ("ns", "lower", "upper"),
    [
        (0, 0, 1),
        (2047, 2047, 2048),
        (2048, 2048, 2050),
        (4096, 4096, 4100),
        (1_000_000, 999_936, 1_000_448),
        (100_000_000_000, 99_992_207_360, 100_059_316_224),
        ((1 << 37) - 1, (1 << 37) - (1 << 26), 1 << 37),
    ],
)
def test_edges_are_the_clients(ns: int, lower: int, upper: int) -> None:
    # The same table as servers_c/tests/test_latency_histogram.c.
    i = bucket_of(ns)
    assert (lower_edge(i), upper_edge(i)) == (lower, upper)


def test_edges_are_contiguous_and_narrow() -> None:
    assert bucket_of(1 << 40) == BUCKETS - 1
    for i in range(BUCKETS - 1):
        assert upper_edge(i) == lower_edge(i + 1)
        assert i < 2048 or (upper_edge(i) - lower_edge(i)) * 1024 <= lower_edge(i)


DISTRIBUTIONS = {
    "uniform_us": lambda rng, n: rng.uniform(1_000, 5_000_000, n),
    "lognormal": lambda rng, n: rng.lognormal(math.log(200_000), 1.0, n),
    "bimodal": lambda rng, n: np.where(rng.random(n) < 0.98, rng.normal(100_000, 5_000, n), 50_000_000),
}


@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_merged_percentiles_match_the_pooled_samples(name: str) -> None:
    rng = np.random.default_rng(11)
    hosts = [np.maximum(DISTRIBUTIONS[name](rng, n), 1).astype(np.int64) for n in (20_000, 5_000, 40_000)]
    merged = merge(LatencyHistogram.from_samples(samples.tolist()) for samples in hosts)
    pooled = np.concatenate(hosts)
    assert merged.total == pooled.size and merged == LatencyHistogram.from_samples(pooled.tolist())
    for q in (50, 90, 99, 99.9, 100):
        true = int(np.percentile(pooled, q, method="inverted_cdf"))
        width = upper_edge(bucket_of(true)) - lower_edge(bucket_of(true))
        got = merged.percentile(q)
        assert true <= got <= true + width, (q, got, true, width)


def test_averaging_percentiles_is_not_merging() -> None:
    # Two hosts, one fast and one with a slow tail: the mean of their p99s is far from the p99 of all.
    fast = LatencyHistogram.from_samples([100_000] * 9_900 + [200_000] * 100)
    slow = LatencyHistogram.from_samples([100_000] * 9_000 + [50_000_000] * 1_000)
    merged = fast + slow
    assert merged.percentile(99) == 50_000_000
    assert (fast.percentile(99) + slow.percentile(99)) / 2 < 30_000_000


def test_from_a_client_record_and_back() -> None:
    record = parse_file(FIXTURES / "epoll_poisson.open_loop.txt")
    h = LatencyHistogram.from_record(record)
    assert h.buckets() == [tuple(b) for b in record["histogram"]["buckets"]]
    for key, q in (("p50", 50), ("p90", 90), ("p99", 99), ("p99_9", 99.9), ("max", 100)):
        assert h.percentile(q) == record["latency_ns"][key]
    doubled = h + h
    assert doubled.total == 2 * h.total and doubled.percentile(99) == h.percentile(99)


def test_refusals() -> None:
    record = parse_file(FIXTURES / "epoll_poisson.open_loop.txt")
    record["histogram"]["buckets"][0] = [5000, 5001, 1]
    with pytest.raises(ValueError, match="not one of the fixed buckets"):
        LatencyHistogram.from_record(record)
    with pytest.raises(ValueError, match="percentile is in"):
        LatencyHistogram().percentile(0)
    with pytest.raises(ValueError, match="negative"):
        bucket_of(-1)
    assert math.isnan(LatencyHistogram().percentile(50))
