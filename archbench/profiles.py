"""Named parameter sets: smoke (tests, CI), default (a few minutes), full (source 000's sweep).

A profile is only default values: any of them can be overridden by an explicit
parameter (see `archbench.params.resolve_parameters`). Per-server entries may
carry their own thread and connection sweeps, which is how one profile holds
both a thread sweep at a fixed connection count and a connection sweep at a
fixed thread count; an explicit campaign-wide `thread_counts` or
`connection_counts` replaces those per-entry sweeps.

Expected durations on the reference machine (2 cores; `expected_duration_s`
computes them from the grid, so they follow any edit of the values below):

* smoke:   6 configurations x (2 trials + warm-up) x (1 s + overhead)   ->  21 s (measured: 19.6 s)
* default: 14 configurations x (5 trials + warm-up) x (3 s + overhead)  -> 265 s, about 4.4 min
* full:    30 configurations x (10 trials + warm-up) x (5 s + overhead) -> 1700 s, about 28 min
"""
from __future__ import annotations

from typing import Any

PROFILE_NAMES = ("smoke", "default", "full")

# Wall time of one trial beyond its wrk duration: server start and ready line,
# wrk's start-up and the final ~0.1 s it overruns, server shutdown, commit.
# Measured on the reference machine by the smoke campaign: median 0.11 s per trial
# (finished_at - started_at - duration), rounded up for larger connection counts.
TRIAL_OVERHEAD_S = 0.15

SOURCE_000_THREADS = [1, 2, 4, 6, 8, 10, 12, 16]
SOURCE_000_CONNECTIONS = [32, 64, 100, 400, 1000]


def profile_values(name: str) -> dict[str, Any]:
    """Fresh dict of the profile's parameter values (callers may modify it)."""
    if name == "smoke":
        return {
            "servers": [
                "blocking",
                "thread_per_conn",
                {"architecture": "thread_pool", "dispatch": ["request", "connection"]},
            ],
            "thread_counts": [1, 2],
            "connection_counts": [16],
            "load_threads": [1],
            "duration_s": 1,
            "trials": 2,
            "warmup": True,
        }
    if name == "default":
        connection_sweep = [10, 100, 400]
        return {
            "servers": [
                {"architecture": "thread_pool", "dispatch": "request", "threads": [1, 2, 4, 8], "connections": [100]},
                {"architecture": "thread_pool", "dispatch": "connection", "threads": [2, 8], "connections": [100]},
                {"architecture": "thread_pool", "dispatch": "request", "threads": [2], "connections": connection_sweep},
                {"architecture": "thread_per_conn", "connections": connection_sweep},
                {"architecture": "blocking", "connections": connection_sweep},
            ],
            "thread_counts": [1, 2, 4, 8],
            "connection_counts": [100],
            "load_threads": [1],
            "duration_s": 3,
            "trials": 5,
            "warmup": True,
        }
    if name == "full":
        # Source 000: pool sizes 1-16 at 400 connections, 10 trials of 5 s, fresh server per trial.
        # Its server handed whole connections to the pool (dispatch connection); request dispatch
        # is measured next to it. The connection sweep adds source 003's -c32/-c64.
        return {
            "servers": [
                {"architecture": "thread_pool", "dispatch": ["connection", "request"],
                 "threads": SOURCE_000_THREADS, "connections": [400]},
                {"architecture": "thread_pool", "dispatch": "request", "threads": [2],
                 "connections": SOURCE_000_CONNECTIONS},
                {"architecture": "thread_per_conn", "connections": SOURCE_000_CONNECTIONS},
                {"architecture": "blocking", "connections": SOURCE_000_CONNECTIONS},
            ],
            "thread_counts": SOURCE_000_THREADS,
            "connection_counts": [400],
            "load_threads": [1],
            "duration_s": 5,
            "trials": 10,
            "warmup": True,
        }
    raise KeyError(f"unknown profile {name!r}; valid: {', '.join(PROFILE_NAMES)}")


def expected_duration_s(profile: str, overhead_s: float = TRIAL_OVERHEAD_S, **overrides: Any) -> float:
    """Expected wall time in seconds of a whole campaign of `profile` (trials only, no build)."""
    from archbench.params import resolve_parameters
    from archbench.plan import estimate_duration_s

    return estimate_duration_s(resolve_parameters(profile, **overrides), overhead_s=overhead_s)
