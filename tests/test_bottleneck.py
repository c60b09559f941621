"""Which side set a trial's rate: server, client, both, wait or neither (archbench.analyze.bottleneck)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from archbench.analyze import bottleneck
from archbench.analyze.bottleneck import BOTH, CLIENT, NEITHER, SERVER, WAIT, classify, dominant, wait_capacity
from archbench.analyze.summary import bottleneck_counts


@pytest.mark.parametrize(
    ("server", "client", "rate", "capacity", "expected"),
    [
        (0.99, 0.50, 50_000, math.nan, SERVER),
        (0.60, 0.97, 50_000, math.nan, CLIENT),
        (0.95, 0.99, 50_000, math.nan, BOTH),
        (0.05, 0.10, 950, 1_000, WAIT),  # an event loop blocked 1 ms per request: 1,000 r/s at most
        (0.05, 0.10, 500, 1_000, NEITHER),  # half the waits' rate and nothing busy: unexplained
        (0.50, 0.50, 50_000, math.nan, NEITHER),
        (math.nan, math.nan, 50_000, math.nan, NEITHER),  # nothing recorded: nothing claimed
    ],
)
def test_classes(server, client, rate, capacity, expected):
    assert classify(server, client, rate, capacity) == expected


def test_thresholds_are_inclusive():
    assert classify(bottleneck.SERVER_BOUND_THRESHOLD, 0.0, 1.0, math.nan) == SERVER
    assert classify(0.0, 0.0, 800.0, 1000.0) == WAIT


def test_the_waits_allow_one_request_per_blocked_thread_per_wait():
    assert wait_capacity({"architecture": "epoll", "block_us": 1000, "threads": None}) == pytest.approx(1_000)
    assert wait_capacity({"architecture": "thread_pool", "block_us": 1000, "threads": 64}) == pytest.approx(64_000)
    # Work on the same thread lengthens each wait; a thread per connection waits once per connection.
    assert wait_capacity({"architecture": "thread_pool", "block_us": 900, "work_us": 100, "threads": 8}) == 8_000
    assert wait_capacity({"architecture": "thread_per_conn", "block_us": 500, "connections": 64}) == 128_000
    assert math.isnan(wait_capacity({"architecture": "epoll", "block_us": 0}))
    assert math.isnan(wait_capacity({"architecture": "epoll"}))


def test_server_busy_falls_back_to_cpu_seconds_over_the_window():
    assert bottleneck.server_busy({"cpus_busy": 0.97}, 1.5, 1.0, 1) == 0.97
    assert bottleneck.server_busy({}, 1.5, 2.0, 1) == pytest.approx(0.75)
    assert bottleneck.server_busy({}, 3.0, 2.0, 2) == pytest.approx(0.75)
    assert math.isnan(bottleneck.server_busy({}, math.nan, 2.0, 1))


def test_a_configuration_is_counted_by_class_and_named_by_its_most_common_one():
    ok = pd.DataFrame({"bottleneck": [SERVER, SERVER, CLIENT, "", WAIT]})
    counts = bottleneck_counts(ok)
    assert counts == {
        "n_server_bound": 2,
        "n_both_bound": 0,
        "n_wait_bound": 1,
        "n_neither_bound": 0,
        "bottleneck": SERVER,
    }
    # A tie never names the server: 2 server, 2 client and 1 both (wrk saturated in 3 of 5) is the load generator's.
    assert dominant([SERVER, CLIENT, SERVER, CLIENT, BOTH]) == CLIENT
    assert dominant([CLIENT, SERVER]) == CLIENT and dominant([NEITHER, SERVER]) == NEITHER
    assert dominant([SERVER, SERVER, CLIENT]) == SERVER
    assert dominant([]) == "" and bottleneck_counts(pd.DataFrame())["bottleneck"] == ""
