"""Latency of several client hosts (placement ssh): their wrk histograms added (archbench.analyze.histogram)
give the percentiles of all their samples together, and fill the trial's latency columns (trials.csv)."""

from __future__ import annotations

import math
import random

import pytest

from archbench.analyze.histogram import LatencyHistogram, bucket_of, lower_edge, merge, upper_edge
from archbench.analyze.trials import histogram_latency


def within_one_bucket(estimate_ns: float, true_ns: int) -> bool:
    i = bucket_of(true_ns)
    return true_ns <= estimate_ns <= true_ns + (upper_edge(i) - lower_edge(i))


def exact_percentile(samples_ns: list[int], q: float) -> int:
    ordered = sorted(samples_ns)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


def as_wrk(samples_us: list[int]) -> dict:
    counts: dict[int, int] = {}
    for v in samples_us:
        counts[v] = counts.get(v, 0) + 1
    return {"unit": "us", "counts": [[v, counts[v]] for v in sorted(counts)]}


def test_merged_wrk_histograms_match_the_pooled_samples() -> None:
    # Two hosts with different latencies (a fast one near 300 us, a slow one near 5 ms): the percentiles of
    # the summed histograms are those of all samples together, within one bucket.
    rng = random.Random(11)
    fast = [int(rng.lognormvariate(math.log(300), 0.3)) for _ in range(20000)]
    slow = [int(rng.lognormvariate(math.log(5000), 0.6)) for _ in range(5000)]
    merged = merge(LatencyHistogram.from_wrk(as_wrk(s)) for s in (fast, slow))
    pooled_ns = [v * 1000 for v in fast + slow]
    assert merged.total == len(pooled_ns)
    for q in (50, 90, 99, 99.9):
        assert within_one_bucket(merged.percentile(q), exact_percentile(pooled_ns, q)), q
    assert merged.percentile(100) == max(pooled_ns)


def test_trial_latency_columns_from_the_hosts_histograms() -> None:
    one = {"latency_histogram": {**as_wrk([100, 200, 300]), "requests": 3}}
    columns = histogram_latency(one)
    assert columns is not None
    assert columns["latency_source"] == "histogram" and columns["latency_hosts"] == 1
    assert columns["latency_max_s"] == pytest.approx(300e-6)
    two = {"latency_histograms": [as_wrk([100] * 9 + [1000]), as_wrk([2000] * 10)]}
    columns = histogram_latency(two)
    assert columns is not None and columns["latency_hosts"] == 2
    assert within_one_bucket(columns["latency_p50_s"] * 1e9, 1_000_000)  # the 10th of 20 samples
    assert within_one_bucket(columns["latency_p99_9_s"] * 1e9, 2_000_000)
    # A host without a histogram (an output from before the dump): no latency rather than a partial one.
    assert histogram_latency({"latency_histograms": [as_wrk([100]), None]}) is None
    assert histogram_latency({"latency_histogram": None}) is None
