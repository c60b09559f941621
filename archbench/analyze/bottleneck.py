"""Which side set a trial's rate: the server, the load generator, both, neither, or the server's blocking waits.

A comparison of servers means something only where the server is the bottleneck. Per trial:
- the server's CPUs: `server.cpus_busy`, the busy fraction of the CPUs it was pinned to over the load window
  (interrupt time included; archbench.measure.cpustat); a record without it falls back to the server's CPU
  seconds over the measured duration and its CPU count. At or above SERVER_BOUND_THRESHOLD the server is
  *server-bound*;
- the load generator's CPUs: its utilisation (trials.csv `load_cpu_utilisation`); at or above
  CLIENT_BOUND_THRESHOLD it is *client-bound*;
- for a workload that blocks (`block_us` > 0), the rate the waits allow: each thread that can wait at once
  serves at most 1 / (block + work) requests per second, so a server whose rate reaches WAIT_BOUND_SHARE of
  that is *wait-bound*: its CPU is idle, its threads are blocked, and more CPU would not help.
The class is "both" when server and client are saturated, "server", "client", "wait" when only that one is, and
"neither" when nothing measured explains the rate (latency, a starving design, or a load too light).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from archbench.analyze.fields import CLIENT_BOUND_THRESHOLD
from archbench.analyze.values import number

SERVER_BOUND_THRESHOLD = 0.9
WAIT_BOUND_SHARE = 0.8
SERVER, CLIENT, BOTH, WAIT, NEITHER = "server", "client", "both", "wait", "neither"
BOTTLENECKS = (SERVER, CLIENT, BOTH, WAIT, NEITHER)
# Which class a tie of trials names: never the server first, since a comparison of servers is read only where the
# server set the rate, and a tie with the load generator (or the waits) is no evidence that it did.
TIE_ORDER = (CLIENT, BOTH, WAIT, NEITHER, SERVER)
# How many requests an architecture can have blocked at once: one per connection for a thread per
# connection, one per thread, loop or worker for the others (`threads`; one when it has no such flag).
PER_CONNECTION_ARCHITECTURES = ("thread_per_conn",)


def server_busy(server: Mapping[str, Any], server_cpu_s: float, duration_s: float, cpu_count: int) -> float:
    """Busy fraction of the server's CPUs over the load window (NaN when unknown)."""
    recorded = number(server.get("cpus_busy"))
    if not math.isnan(recorded):
        return recorded
    if cpu_count <= 0 or math.isnan(server_cpu_s) or not duration_s > 0:
        return math.nan
    return server_cpu_s / (duration_s * cpu_count)


def wait_capacity(config: Mapping[str, Any]) -> float:
    """Requests per second the configuration's blocking waits allow (NaN for a workload that does not block)."""
    block_us = number(config.get("block_us"))
    if math.isnan(block_us) or block_us <= 0:
        return math.nan
    work_us = number(config.get("work_us"))
    per_request_s = (block_us + (0.0 if math.isnan(work_us) else work_us)) / 1e6
    if str(config.get("architecture")) in PER_CONNECTION_ARCHITECTURES:
        waiters = number(config.get("connections"))
    else:
        waiters = number(config.get("threads"))
        waiters = 1.0 if math.isnan(waiters) else waiters
    return waiters / per_request_s


def classify(busy_server: float, busy_client: float, rate: float, capacity: float) -> str:
    """The bottleneck class of one trial (module docstring)."""
    server = not math.isnan(busy_server) and busy_server >= SERVER_BOUND_THRESHOLD
    client = not math.isnan(busy_client) and busy_client >= CLIENT_BOUND_THRESHOLD
    if server and client:
        return BOTH
    if server:
        return SERVER
    if client:
        return CLIENT
    if not (math.isnan(capacity) or math.isnan(rate)) and rate >= WAIT_BOUND_SHARE * capacity:
        return WAIT
    return NEITHER


def dominant(classes: list[str]) -> str:
    """The most common class of a configuration's trials (ties: the first in TIE_ORDER, the server last); "" for
    none."""
    counts = {name: classes.count(name) for name in TIE_ORDER}
    best = max(counts.values(), default=0)
    return next((name for name in TIE_ORDER if counts[name] == best), "") if best else ""
