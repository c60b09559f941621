"""archbench.analyze.open_loop_checks on open_loop records: the fixture as captured and records
changed to fail each check."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from archbench.analyze.open_loop_checks import (
    assess,
    enough_samples,
    kept_up,
    kept_up_ratio,
    rate_trend,
    samples_needed,
    sustained,
)
from archbench.parse import parse_file

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "open_loop"


@pytest.fixture
def record() -> dict:
    return parse_file(FIXTURES / "epoll_poisson.open_loop.txt")


def test_the_captured_run(record: dict) -> None:
    # 1009 completions in 2 s at 500/s offered: sustained, not client-bound, too few samples for p99.9.
    result = assess(record)
    assert result["achieved_ratio"] == pytest.approx(1.009)
    assert result["sustained"] and not result["client_bound"]
    assert result["enough_samples"] == {"50": True, "90": True, "99": True, "99.9": False}
    assert result["flags"] == ["few_samples_p99_9"]


@pytest.mark.parametrize(("q", "n"), [(50, 20), (90, 100), (99, 1_000), (99.9, 10_000)])
def test_samples_needed(q: float, n: int) -> None:
    assert samples_needed(q) == n


@pytest.mark.parametrize(("achieved", "ok"), [(475.0, True), (525.0, True), (474.0, False), (400.0, False)])
def test_sustained_within_five_percent_of_the_rate_without_counts(record: dict, achieved: float, ok: bool) -> None:
    del record["counts"]  # a client that keeps no counts (wrk2, oha): achieved over offered rate
    record["requests_per_sec"] = achieved
    assert sustained(record) is ok
    assert ("did_not_sustain" in assess(record)["flags"]) is not ok


@pytest.mark.parametrize(("completed", "ok"), [(1009, True), (959, True), (958, False), (500, False)])
def test_sustained_by_the_counts_where_the_client_keeps_them(record: dict, completed: int, ok: bool) -> None:
    # 1009 scheduled: 959 completed is 95.04 %, 958 is 94.95 %; the rate is left as captured (100.9 %).
    record["counts"]["completed"] = completed
    assert sustained(record) is ok
    assert kept_up(kept_up_ratio(record)) is ok
    assert ("did_not_sustain" in assess(record)["flags"]) is not ok


def test_counts_and_rate_disagree_sustained_and_kept_up_agree(record: dict) -> None:
    # The Poisson schedule ran short of its own rate: 94.9 % of the offered rate achieved, yet 95.02 % of the
    # requests it scheduled completed. One ratio (the counts) decides both the usability check and the knee's.
    record["requests_per_sec"] = 0.949 * record["offered_rate"]
    record["counts"].update(scheduled=10_000, completed=9_502)
    result = assess(record)
    assert result["achieved_ratio"] == pytest.approx(0.949)
    assert result["kept_up_ratio"] == pytest.approx(0.9502)
    assert result["sustained"] and kept_up(result["kept_up_ratio"])
    assert "did_not_sustain" not in result["flags"]
    record["counts"]["completed"] = 9_498  # and the other way round: 94.98 % of the requests, whatever the rate
    record["requests_per_sec"] = 0.951 * record["offered_rate"]
    assert not sustained(record) and not kept_up(kept_up_ratio(record))
    assert "did_not_sustain" in assess(record)["flags"]


def test_client_bound(record: dict) -> None:
    record["cpu_busy_fraction"] = 0.97
    assert "client_bound" in assess(record)["flags"]
    record["cpu_busy_fraction"] = 0.5
    assert "client_bound" not in assess(record)["flags"]


def test_trend(record: dict) -> None:
    steady = copy.deepcopy(record)
    steady["duration_s"] = 10.0
    steady["per_second"]["completed"] = [1000, 1003, 998, 1001, 999, 1002, 1000, 997, 1001, 1000]
    assert not rate_trend(steady)["flagged"]
    falling = copy.deepcopy(steady)
    falling["per_second"]["completed"] = [1000, 990, 981, 970, 962, 951, 940, 931, 920, 910]
    trend = rate_trend(falling)
    assert trend["flagged"] and trend["change"] < -0.05 and "rate_trend" in assess(falling)["flags"]
    # A partial last second is left out: 4.5 s of window, the fifth entry covers half a second.
    partial = copy.deepcopy(steady)
    partial["duration_s"] = 4.5
    partial["per_second"]["completed"] = [1000, 1000, 1000, 1000, 500]
    assert rate_trend(partial)["change"] == 0


def test_enough_samples_for_p99_9(record: dict) -> None:
    record["latency_ns"]["count"] = 10_000
    assert enough_samples(record)["99.9"]
    record["latency_ns"]["count"] = 9_999
    assert not enough_samples(record)["99.9"]
