"""Named parameter sets: smoke (tests, CI), default (minutes), full (hours), bench (the efficiency benchmark).

A profile is only default values: any of them can be overridden by an explicit
parameter (see `archbench.config.params.resolve_parameters`). Per-server entries may
carry their own thread, connection and pipeline-depth sweeps, which is how one
profile holds both a thread sweep at a fixed connection count and a connection
sweep at a fixed thread count; an explicit campaign-wide `thread_counts`,
`connection_counts` or `pipeline_depths` replaces those per-entry sweeps.
"Threads" are worker threads or worker processes (prefork, nginx), whatever
the architecture's parallelism is; architectures without one (blocking,
thread_per_conn, poll, epoll) are never multiplied by a thread sweep.

Expected durations on the reference machine (2 cores; `expected_duration_s`
computes them from the grid, so they follow any edit of the values below):

* smoke:   10 configurations x (2 trials + warm-up) x (1 s + overhead)   ->   35 s
* default: 33 configurations x (4 trials + warm-up) x (2 s + overhead)   ->  355 s, about 6 min
           (the foundation sweep, 14 configurations, plus the architecture comparison, 22,
           sharing 3; 5 trials would take 7.1 min)
* full:    219 configurations x (8 trials + warm-up) x (5 s + overhead) -> 10150 s, about 2.8 h
* bench:   22 configurations x (5 trials + warm-up) x (5 s + overhead)  ->  680 s, about 11 min
* echo:    source 004's study, 18 throughput configurations x (3 trials + warm-up) x (10 s + overhead)
           plus 6 --max-conns ramps of at most 30 s (-> an upper bound of 1456 s; the ramps
           end when the cap is held, a few seconds, so about 17 min in practice)
* latency: source 001's 4 architectures x (3 trials + warm-up) x (5 s + overhead) closed loop
           (83 s); the latency study's open-loop phases multiply this by the offered rates

`full` trimmed: the issue's grid (every architecture and nginx x connections
{32, 64, 100, 400, 2000, 10000} x threads {1, 2, 4, 8, 16} x pipeline depth
{1, 16}) is 480 configurations, about 7.5 h at 10 trials of 5 s. It keeps the
two one-dimensional sweeps that answer the questions asked, each at both depths:
the connection sweep at 1 thread/worker (how each design copes with many
connections) and the thread sweep at 100 connections (what more threads or
processes cost on one server CPU). Left out is the rest of the cross product,
many threads at many connections, which would more than double the time for
interactions neither sweep needs. That is 219 configurations with source 000's
sweep (kept whole), still 3.45 h at 10 trials; 8 measured trials (plus the
warm-up) bring it to 2.8 h and widen a 95% confidence interval by only
t(7)/sqrt(8) / (t(9)/sqrt(10)) = 1.17x.
"""
from __future__ import annotations

from typing import Any

from archbench.config.servers import server_spec

PROFILE_NAMES = ("smoke", "default", "full", "bench", "echo", "latency")

# Wall time of one trial beyond its wrk duration: server start and ready line,
# wrk's start-up and the final ~0.1 s it overruns, server shutdown, commit.
# Measured on the reference machine by the smoke campaign: median 0.11 s per trial
# (finished_at - started_at - duration), rounded up for larger connection counts.
# nginx trials take 0.13-0.16 s (its Python launcher starts, probes and stops it), the
# C servers' 0.02-0.11 s, so the one figure still fits a mixed campaign.
TRIAL_OVERHEAD_S = 0.15

SOURCE_000_THREADS = [1, 2, 4, 6, 8, 10, 12, 16]
SOURCE_000_CONNECTIONS = [32, 64, 100, 400, 1000]
# The architecture comparison.
COMPARISON_CONNECTIONS = [32, 64, 100, 400, 2000, 10000]
COMPARISON_THREADS = [1, 2, 4, 8, 16]
COMPARISON_PIPELINE_DEPTHS = [1, 16]
# Source 004: 100, 1000 and 10,000 clients. The --max-conns cap leaves FD_HEADROOM (256) of the
# 20,000 open-file hard limit of the reference machine to the server's other descriptors.
ECHO_CONNECTIONS = [100, 1000, 10000]
ECHO_MAX_CONNS_CAP = 19500

# Every architecture variant of the comparison: (architecture, options). Variants are the
# designs the servers implement as flags (thread_pool's dispatch, epoll's trigger); reactor,
# reuseport and prefork run their own default trigger.
SINGLE_LOOP_VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("blocking", {}),
    ("thread_per_conn", {}),
    ("poll", {}),
    ("epoll", {"trigger": "level"}),
    ("epoll", {"trigger": "edge"}),
]
PARALLEL_VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("thread_pool", {"dispatch": "request"}),
    ("thread_pool", {"dispatch": "connection"}),
    ("reactor", {}),
    ("reuseport", {}),
    ("prefork", {}),
    ("io_uring", {}),
    ("nginx", {}),
]


def comparison_entries(
    variants: list[tuple[str, dict[str, Any]]], *, connections: list[int], pipeline: list[int],
    threads: list[int] | None = None,
) -> list[dict[str, Any]]:
    """Server entries for `variants`, each with its own sweeps; `threads` only where the
    architecture has a parallelism to set (the single-loop variants take none)."""
    entries = []
    for architecture, options in variants:
        entry: dict[str, Any] = {"architecture": architecture, **options, "connections": list(connections),
                                 "pipeline": list(pipeline)}
        if threads is not None and server_spec(architecture).takes_threads:
            entry["threads"] = list(threads)
        entries.append(entry)
    return entries


def source_001_servers() -> list[Any]:
    """Source 001's four architectures as server entries (a fresh list: no module-level mutable state)."""
    return [
        "blocking",
        {"architecture": "thread_per_conn", "max_threads": 1000},
        {"architecture": "epoll", "trigger": "level"},
        {"architecture": "reactor", "threads": [2]},
    ]


def profile_values(name: str) -> dict[str, Any]:
    """Fresh dict of the profile's parameter values (callers may modify it)."""
    if name == "smoke":
        return {
            "servers": [
                "blocking",
                "thread_per_conn",
                {"architecture": "thread_pool", "dispatch": ["request", "connection"]},
                {"architecture": "epoll", "trigger": "edge", "pipeline": [1, 16]},
                {"architecture": "nginx", "threads": [1], "pipeline": [1, 16]},
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
        foundation = [
            {"architecture": "thread_pool", "dispatch": "request", "threads": [1, 2, 4, 8], "connections": [100]},
            {"architecture": "thread_pool", "dispatch": "connection", "threads": [2, 8], "connections": [100]},
            {"architecture": "thread_pool", "dispatch": "request", "threads": [2], "connections": connection_sweep},
            {"architecture": "thread_per_conn", "connections": connection_sweep},
            {"architecture": "blocking", "connections": connection_sweep},
        ]
        # Every architecture and nginx once, at 1 thread/worker, without and with pipelining.
        comparison_variants = [v for v in SINGLE_LOOP_VARIANTS + PARALLEL_VARIANTS
                               if v != ("thread_pool", {"dispatch": "connection"})]
        comparison = comparison_entries(comparison_variants, connections=[100], threads=[1],
                                        pipeline=COMPARISON_PIPELINE_DEPTHS)
        return {
            "servers": foundation + comparison,
            "thread_counts": [1, 2, 4, 8],
            "connection_counts": [100],
            "load_threads": [1],
            "pipeline_depths": [1],
            # 2 s runs and 4 trials keep the whole campaign near 6 minutes on 2 cores.
            "duration_s": 2,
            "trials": 4,
            "warmup": True,
        }
    if name == "full":
        # Source 000: pool sizes 1-16 at 400 connections, fresh server per trial, 5 s runs.
        # Its server handed whole connections to the pool (dispatch connection); request dispatch
        # is measured next to it. The connection sweep adds source 003's -c32/-c64.
        source_000 = [
            {"architecture": "thread_pool", "dispatch": ["connection", "request"],
             "threads": SOURCE_000_THREADS, "connections": [400]},
            {"architecture": "thread_pool", "dispatch": "request", "threads": [2],
             "connections": SOURCE_000_CONNECTIONS},
            {"architecture": "thread_per_conn", "connections": SOURCE_000_CONNECTIONS},
            {"architecture": "blocking", "connections": SOURCE_000_CONNECTIONS},
        ]
        # The architecture comparison, trimmed as the module docstring explains.
        connection_sweep = comparison_entries(SINGLE_LOOP_VARIANTS + PARALLEL_VARIANTS,
                                              connections=COMPARISON_CONNECTIONS, threads=[1],
                                              pipeline=COMPARISON_PIPELINE_DEPTHS)
        thread_sweep = comparison_entries(PARALLEL_VARIANTS, connections=[100], threads=COMPARISON_THREADS,
                                          pipeline=COMPARISON_PIPELINE_DEPTHS)
        return {
            "servers": source_000 + connection_sweep + thread_sweep,
            "thread_counts": SOURCE_000_THREADS,
            "connection_counts": [400],
            "load_threads": [1],
            "pipeline_depths": [1],
            "duration_s": 5,
            "trials": 8,
            "warmup": True,
        }
    if name == "bench":
        # The efficiency benchmark (`python -m archbench bench`): every architecture at
        # 1 thread/worker and nginx with 1 worker, wrk -t1 -c100, without and with pipelining.
        variants = [
            ("thread_pool", {"dispatch": "request"}),
            ("reactor", {}),
            ("reuseport", {}),
            ("io_uring", {}),
            ("prefork", {}),
            ("epoll", {"trigger": "edge"}),
            ("epoll", {"trigger": "level"}),
            ("poll", {}),
            ("blocking", {}),
            ("thread_per_conn", {}),
            ("nginx", {}),
        ]
        return {
            "servers": comparison_entries(variants, connections=[100], threads=[1],
                                          pipeline=COMPARISON_PIPELINE_DEPTHS),
            "thread_counts": [1],
            "connection_counts": [100],
            "load_threads": [1],
            "pipeline_depths": [1],
            "duration_s": 5,
            "trials": 5,
            "warmup": True,
        }
    if name == "echo":
        # Source 004's echo study (notebooks/echo_study.ipynb): its blocking-multithreaded (a thread
        # per connection), poll and epoll servers plus the multi-loop designs at 2 loops, against
        # echo_client at 100, 1000 and 10,000 clients, and each one's connection ceiling (--max-conns).
        return {
            "servers": [
                "thread_per_conn",
                "poll",
                {"architecture": "epoll", "trigger": "edge"},
                {"architecture": "reactor", "threads": [2]},
                {"architecture": "reuseport", "threads": [2]},
                {"architecture": "io_uring", "threads": [2]},
            ],
            "thread_counts": [2],
            "connection_counts": ECHO_CONNECTIONS,
            "load_threads": [1],
            "pipeline_depths": [1],  # echo_client --depth: messages in flight per connection
            "proto": "echo",
            "message_size": 64,
            # 4 source addresses: 4 x 28,232 ephemeral ports, so ports never bound the connection count.
            "sources": 4,
            "max_conns_cap": ECHO_MAX_CONNS_CAP,
            "max_conns_duration_s": 30,
            # 10 s windows: opening 10,000 connections takes 1-3 s of the window.
            "duration_s": 10,
            "trials": 3,
            "warmup": True,
        }
    if name == "latency":
        # Issue 6 (notebooks/latency_study.ipynb, archbench.measure.latency): source 001's four architectures
        # (blocking, thread_per_conn capped at 1000 threads, single-thread epoll, a reactor) under wrk for
        # their saturation throughput; the study then offers fractions of it with oha or wrk2
        # (load_generator, rate_fractions, saturation_rates override these closed-loop defaults).
        return {
            "servers": source_001_servers(),
            "thread_counts": [2],
            "connection_counts": [100],
            "load_threads": [1],
            "pipeline_depths": [1],
            "duration_s": 5,
            "trials": 3,
            "warmup": True,
        }
    raise KeyError(f"unknown profile {name!r}; valid: {', '.join(PROFILE_NAMES)}")
