"""Paired ratios within rounds: archbench.stats.paired against hand computations and scipy, and
archbench.analyze.paired on a small trials frame."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from archbench.analyze.paired import COLUMNS, CPU_PER_REQUEST, THROUGHPUT, PairedRatioRow, paired_ratios
from archbench.stats.paired import aligned_pairs, paired_log_ratio, paired_log_ratio_bootstrap

A = [110.0, 120.0, 105.0, 130.0, 118.0]
B = [100.0, 108.0, 97.0, 121.0, 104.0]


def test_paired_log_ratio_by_hand_and_scipy() -> None:
    logs = np.log(np.array(A) / np.array(B))
    result = paired_log_ratio(A, B)
    assert result.n == 5 and result.dropped == 0
    assert result.ratio == pytest.approx(math.exp(logs.mean()))
    half = scipy_stats.t.ppf(0.975, 4) * logs.std(ddof=1) / math.sqrt(5)
    assert result.ci.low == pytest.approx(math.exp(logs.mean() - half))
    assert result.ci.high == pytest.approx(math.exp(logs.mean() + half))
    test = scipy_stats.ttest_1samp(logs, 0.0)
    assert result.statistic == pytest.approx(test.statistic)
    assert result.p_value == pytest.approx(test.pvalue)
    assert result.half_width_pct == pytest.approx(100 * (result.ci.high - result.ci.low) / 2 / result.ratio)


def test_pairing_cancels_what_a_round_shares() -> None:
    # Both sides move together from round to round: the paired interval is far narrower than the spread.
    drift = np.array([1.0, 1.2, 0.8, 1.1, 0.9])
    a = 2.0 * 1000 * drift * np.array([1.0, 1.01, 0.99, 1.0, 1.005])
    b = 1000 * drift
    result = paired_log_ratio(a, b)
    assert result.ratio == pytest.approx(2.0, rel=0.01)
    assert result.half_width_pct < 1.5


def test_failed_rounds_are_dropped_and_counted() -> None:
    a = [110.0, math.nan, 105.0, 130.0, 0.0]
    b = [100.0, 108.0, math.nan, 121.0, 104.0]
    x, y, dropped = aligned_pairs(a, b)
    assert list(x) == [110.0, 130.0] and list(y) == [100.0, 121.0] and dropped == 3
    result = paired_log_ratio(a, b)
    assert result.n == 2 and result.dropped == 3
    with pytest.raises(ValueError):
        aligned_pairs([1.0], [1.0, 2.0])


def test_degenerate_pairs_are_nan_not_errors() -> None:
    assert math.isnan(paired_log_ratio([], []).ratio)
    one = paired_log_ratio([2.0], [1.0])
    assert one.ratio == pytest.approx(2.0) and not one.ci.is_defined
    exact = paired_log_ratio([2.0, 4.0], [1.0, 2.0])
    assert exact.ci.low == exact.ci.high == pytest.approx(2.0) and math.isnan(exact.p_value)


def test_bootstrap_over_rounds_matches_scipy() -> None:
    logs = np.log(np.array(A) / np.array(B))
    boot = paired_log_ratio_bootstrap(A, B, resamples=2000, seed=7)
    expected = scipy_stats.bootstrap(
        [logs],
        lambda d, axis=-1: np.exp(np.mean(d, axis=axis)),
        n_resamples=2000,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(7),
    )
    assert boot.ci.low == pytest.approx(expected.confidence_interval.low)
    assert boot.ci.high == pytest.approx(expected.confidence_interval.high)
    assert boot.estimate == pytest.approx(paired_log_ratio(A, B).ratio)


def _trial(config_id: str, architecture: str, repetition: int, rate: float, cpu: float, **extra: object) -> dict:
    row = {
        "config_id": config_id,
        "variant": architecture,
        "architecture": architecture,
        "pipeline": 1,
        "connections": 100,
        "load_threads": 1,
        "duration_s": 2,
        "response": "test",
        "load_generator": "wrk",
        "repetition": repetition,
        "warmup": False,
        "status": "ok",
        "requests_per_sec": rate,
        "server_cpu_us_per_request": cpu,
        "client_bound": False,
    }
    row.update(extra)
    return row


def _frame() -> pd.DataFrame:
    rows = []
    for k, drift in enumerate([1.0, 1.1, 0.9, 1.05], start=1):
        rows.append(_trial("nginx-t1", "nginx", k, 1000 * drift, 10.0 / drift))
        rows.append(_trial("nginx-t2", "nginx", k, 900 * drift, 10.0))  # slower: not the reference
        rows.append(_trial("epoll", "epoll", k, 1500 * drift, 8.0 / drift, client_bound=True))
        rows.append(_trial("blocking", "blocking", k, 500 * drift, 20.0))
    rows.append(_trial("blocking", "blocking", 0, 1.0, 1.0, warmup=True))  # a warm-up is never paired
    rows[-2]["status"] = "failed"  # blocking's round 4 failed
    rows.append(_trial("far", "epoll", 1, 100.0, 1.0, connections=10))  # no reference at its point
    return pd.DataFrame(rows)


def test_paired_ratios_table() -> None:
    frame = paired_ratios(_frame(), resamples=200)
    assert list(frame.columns) == list(COLUMNS)
    assert set(frame["config_id"]) == {"epoll", "blocking", "nginx-t2"}
    assert set(frame["reference"]) == {"nginx-t1"}
    epoll = frame[frame["config_id"] == "epoll"].set_index("metric")
    assert epoll.loc[THROUGHPUT, "ratio"] == pytest.approx(1.5)
    assert epoll.loc[THROUGHPUT, "half_width_pct"] == pytest.approx(0.0, abs=1e-9)
    # Client-bound: server CPU per request is what the report compares.
    assert bool(epoll.loc[CPU_PER_REQUEST, "compared"]) and not bool(epoll.loc[THROUGHPUT, "compared"])
    assert bool(epoll.loc[CPU_PER_REQUEST, "client_bound"])
    blocking = frame[frame["config_id"] == "blocking"].set_index("metric")
    assert blocking.loc[THROUGHPUT, "n_rounds"] == 3 and blocking.loc[THROUGHPUT, "n_dropped"] == 1
    assert bool(blocking.loc[THROUGHPUT, "compared"])
    # Unpaired beside: the ratio of the means of every ok trial (nginx's failed-round partner included).
    assert blocking.loc[THROUGHPUT, "unpaired_ratio"] == pytest.approx(500.0 / 1012.5, rel=1e-9)
    assert blocking.loc[THROUGHPUT, "unpaired_half_width_pct"] > blocking.loc[THROUGHPUT, "half_width_pct"]
    assert (frame["family_size"] == 3).all()
    assert frame["power_alpha"].iloc[0] == pytest.approx(0.05 / 3)
    for record in frame.to_dict("records"):
        PairedRatioRow.model_validate(record)


def test_pong_is_the_reference_where_measured() -> None:
    rows = [_trial("pong", "pong", k, 5000.0 + k, 1.0) for k in (1, 2, 3)]
    rows += [_trial("nginx", "nginx", k, 1000.0 + k, 10.0) for k in (1, 2, 3)]
    frame = paired_ratios(pd.DataFrame(rows), resamples=100)
    assert set(frame["reference"]) == {"pong"} and set(frame["config_id"]) == {"nginx"}


def test_paired_ratios_of_nothing() -> None:
    assert paired_ratios(pd.DataFrame()).empty
    only_reference = pd.DataFrame([_trial("nginx", "nginx", 1, 1.0, 1.0)])
    assert list(paired_ratios(only_reference).columns) == list(COLUMNS)
