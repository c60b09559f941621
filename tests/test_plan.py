"""Configuration grid, config and trial ids, randomised interleaved order, profile durations."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from archbench.config.params import resolve_parameters
from archbench.config.plan import (
    TrialConfig,
    build_plan,
    expand_grid,
    expected_duration_s,
    plan_campaign,
    response_id_part,
)
from archbench.config.profiles import PROFILE_NAMES, TRIAL_OVERHEAD_S, profile_values
from archbench.config.topology import read_topology

SAFE_ID = re.compile(r"[A-Za-z0-9_-]+")  # no dots: file names split a trial id at the first dot


# The reference machine's 2 CPUs, so that "auto" CPU sets and sweeps plan the same on any test host.
REFERENCE = read_topology(Path(__file__).parent / "fixtures" / "topology" / "2cpu")


def params(**overrides):
    overrides.setdefault("topology", REFERENCE)
    return resolve_parameters(overrides.pop("profile", "smoke"), check_host=False, **overrides)


def test_config_id_example_of_the_contract() -> None:
    config = TrialConfig(
        "thread_pool",
        connections=100,
        load_threads=1,
        duration_s=5,
        threads=4,
        options=(("dispatch", "request"), ("handoff", "queue")),
    )
    assert config.config_id == "thread_pool-request-queue-t4-c100-lt1-d5s"
    assert config.as_dict() == {
        "architecture": "thread_pool",
        "threads": 4,
        "max_threads": None,
        "dispatch": "request",
        "handoff": "queue",
        "trigger": None,
        "response": "test",
        "connections": 100,
        "load_threads": 1,
        "duration_s": 5,
        "load_generator": "wrk",
        "pipeline": 1,
    }


def test_config_ids_of_other_architectures() -> None:
    assert TrialConfig("blocking", 100, 1, 5).config_id == "blocking-c100-lt1-d5s"
    unlimited = TrialConfig("thread_per_conn", 10, 2, 3, options=(("max_threads", 0),))
    assert unlimited.config_id == "thread_per_conn-c10-lt2-d3s"
    capped = TrialConfig("thread_per_conn", 10, 2, 3, options=(("max_threads", 64),))
    assert capped.config_id == "thread_per_conn-max64-c10-lt2-d3s"
    assert TrialConfig("blocking", 16, 1, 1, response="hello").config_id == "blocking-c16-lt1-d1s-hello"


def test_file_responses_get_distinct_safe_ids() -> None:
    a = response_id_part("file:/srv/a/index.html")
    b = response_id_part("file:/srv/b/index.html")
    assert a != b
    assert a.startswith("file_index_")
    assert SAFE_ID.fullmatch(a) and SAFE_ID.fullmatch(b)


def test_threads_do_not_multiply_architectures_without_threads() -> None:
    grid = expand_grid(
        params(
            servers=["blocking", "thread_per_conn", "thread_pool"], thread_counts=[1, 2, 4], connection_counts=[10, 100]
        )
    )
    ids = [c.config_id for c in grid]
    assert ids == [
        "blocking-c10-lt1-d1s",
        "blocking-c100-lt1-d1s",
        "thread_per_conn-c10-lt1-d1s",
        "thread_per_conn-c100-lt1-d1s",
        "thread_pool-request-queue-t1-c10-lt1-d1s",
        "thread_pool-request-queue-t1-c100-lt1-d1s",
        "thread_pool-request-queue-t2-c10-lt1-d1s",
        "thread_pool-request-queue-t2-c100-lt1-d1s",
        "thread_pool-request-queue-t4-c10-lt1-d1s",
        "thread_pool-request-queue-t4-c100-lt1-d1s",
    ]
    assert all(c.threads is None for c in grid if c.architecture != "thread_pool")


def test_variants_and_per_entry_sweeps() -> None:
    grid = expand_grid(
        params(servers=["thread_pool:dispatch=connection/request,handoff=stack,threads=8,connections=64"])
    )
    assert [c.config_id for c in grid] == [
        "thread_pool-connection-stack-t8-c64-lt1-d1s",
        "thread_pool-request-stack-t8-c64-lt1-d1s",
    ]


def test_configs_reached_twice_are_kept_once() -> None:
    grid = expand_grid(params(profile="default"))
    ids = [c.config_id for c in grid]
    # The foundation sweep (14) and the architecture comparison (24, pong included) share three configurations.
    assert len(ids) == len(set(ids)) == 35
    assert ids.count("thread_pool-request-queue-t2-c100-lt1-d1s") == 1
    assert ids.count("thread_pool-request-queue-t1-c100-lt1-d1s") == 1
    assert ids.count("blocking-c100-lt1-d1s") == 1


def test_plan_is_deterministic_for_a_seed() -> None:
    p = params(profile="default", seed=7)
    assert plan_campaign(p) == plan_campaign(p)
    other = plan_campaign(params(profile="default", seed=8))
    assert [t.trial_id for t in plan_campaign(p)] != [t.trial_id for t in other]
    assert sorted(t.trial_id for t in plan_campaign(p)) == sorted(t.trial_id for t in other)


def test_plan_needs_a_seed() -> None:
    with pytest.raises(ValueError, match="seed"):
        plan_campaign(params())


def test_plan_interleaves_rounds_warmups_first() -> None:
    configs = expand_grid(params(profile="default"))
    plan = build_plan(configs, trials=5, warmup=True, seed=20261121)
    n = len(configs)
    assert len(plan) == n * 6
    assert [t.order_index for t in plan] == list(range(len(plan)))
    for round_number in range(6):
        block = plan[round_number * n : (round_number + 1) * n]
        assert sorted(t.config_id for t in block) == sorted(c.config_id for c in configs)
        assert {t.repetition for t in block} == {round_number}
        assert all(t.warmup == (round_number == 0) for t in block)
    # Each round is shuffled on its own, not the same permutation repeated.
    orders = {tuple(t.config_id for t in plan[k * n : (k + 1) * n]) for k in range(6)}
    assert len(orders) > 1


def test_trial_ids_unique_safe_and_per_contract() -> None:
    plan = plan_campaign(params(profile="full", seed=1))
    ids = [t.trial_id for t in plan]
    assert len(ids) == len(set(ids))
    assert all(SAFE_ID.fullmatch(i) for i in ids)
    counts = Counter(t.config_id for t in plan)
    assert set(counts.values()) == {9}
    sample = next(
        t for t in plan if t.config_id == "thread_pool-connection-queue-t11-c400-lt1-d5s" and t.repetition == 3
    )
    assert sample.trial_id == "thread_pool-connection-queue-t11-c400-lt1-d5s-r03"
    warmup = next(t for t in plan if t.config_id == sample.config_id and t.warmup)
    assert warmup.trial_id == "thread_pool-connection-queue-t11-c400-lt1-d5s-warmup"
    assert warmup.repetition == 0


def test_no_warmup_round_when_disabled() -> None:
    plan = plan_campaign(params(warmup=False, trials=3, seed=3))
    assert not any(t.warmup for t in plan)
    assert {t.repetition for t in plan} == {1, 2, 3}


def test_repetition_numbers_widen_past_99() -> None:
    plan = build_plan([TrialConfig("blocking", 1, 1, 1)], trials=100, warmup=False, seed=0)
    assert plan[0].trial_id == "blocking-c1-lt1-d1s-r001"


def test_profiles_and_expected_durations() -> None:
    assert {"smoke", "default", "full", "bench", "serving_order"} <= set(PROFILE_NAMES)
    # serving_order's closed-loop phase: the FIFO and LIFO pools, 12 rounds and a warm-up of 5 s.
    assert expected_duration_s("serving_order", topology=REFERENCE) == 2 * 13 * (5 + TRIAL_OVERHEAD_S)
    assert len(expand_grid(params(profile="smoke"))) == 10
    assert len(expand_grid(params(profile="full"))) == 244
    assert len(expand_grid(params(profile="bench"))) == 22
    # smoke must fit in 3 minutes including the build and its share of the tests, so its trials well under that.
    assert expected_duration_s("smoke", topology=REFERENCE) == 10 * 3 * (1 + TRIAL_OVERHEAD_S) < 60
    # default's trials leave make all (set-up, build, studies, analysis, PDF) within its 15 minutes.
    assert 3 * 60 <= expected_duration_s("default", topology=REFERENCE) <= 4.5 * 60
    # full: hours, not a day; pong's connection sweep took it just past 3 h.
    assert expected_duration_s("full", topology=REFERENCE) == 244 * 9 * (5 + TRIAL_OVERHEAD_S) <= 3.25 * 3600
    assert expected_duration_s("bench", topology=REFERENCE) == 22 * 6 * (5 + TRIAL_OVERHEAD_S)


def test_profile_values_are_fresh_copies() -> None:
    values = profile_values("smoke")
    values["servers"].append("nonsense")
    assert "nonsense" not in profile_values("smoke")["servers"]


def test_explicit_sweep_overrides_the_profile_entries() -> None:
    grid = expand_grid(params(profile="default", thread_counts=[3], connection_counts=[50], pipeline_depths=[1]))
    assert [c.config_id for c in grid] == [
        "thread_pool-request-queue-t3-c50-lt1-d1s",
        "thread_pool-connection-queue-t3-c50-lt1-d1s",
        "thread_per_conn-c50-lt1-d1s",
        "blocking-c50-lt1-d1s",
        "poll-c50-lt1-d1s",
        "epoll-level-c50-lt1-d1s",
        "epoll-edge-c50-lt1-d1s",
        "reactor-edge-t3-c50-lt1-d1s",
        "reuseport-edge-t3-c50-lt1-d1s",
        "prefork-level-t3-c50-lt1-d1s",
        "io_uring-t3-c50-lt1-d1s",
        "nginx-t3-c50-lt1-d1s",
        "pong-t3-c50-lt1-d1s",
    ]


# --------------------------------------------------------------------------- new architectures and pipelining


def test_config_ids_of_event_loop_architectures_and_pipelining() -> None:
    assert TrialConfig("epoll", 100, 1, 5, options=(("trigger", "edge"),), pipeline=16).config_id == (
        "epoll-edge-c100-lt1-d5s-p16"
    )
    assert TrialConfig("prefork", 100, 1, 5, threads=2, options=(("trigger", "level"),)).config_id == (
        "prefork-level-t2-c100-lt1-d5s"
    )
    assert TrialConfig("nginx", 100, 1, 5, threads=1, pipeline=16).config_id == "nginx-t1-c100-lt1-d5s-p16"
    assert TrialConfig("poll", 100, 1, 5).as_dict()["trigger"] is None


def test_grid_multiplies_by_each_entrys_pipeline_depths() -> None:
    grid = expand_grid(params(servers=["epoll:trigger=level/edge,pipeline=1/16", "poll"], pipeline_depths=None))
    assert [c.config_id for c in grid] == [
        "epoll-level-c16-lt1-d1s",
        "epoll-level-c16-lt1-d1s-p16",
        "epoll-edge-c16-lt1-d1s",
        "epoll-edge-c16-lt1-d1s-p16",
        "poll-c16-lt1-d1s",
    ]
    assert [c.pipeline for c in grid] == [1, 16, 1, 16, 1]


def test_smoke_has_epoll_edge_and_nginx_with_and_without_pipelining() -> None:
    ids = [c.config_id for c in expand_grid(params(profile="smoke"))]
    assert ids[-4:] == [
        "epoll-edge-c16-lt1-d1s",
        "epoll-edge-c16-lt1-d1s-p16",
        "nginx-t1-c16-lt1-d1s",
        "nginx-t1-c16-lt1-d1s-p16",
    ]


def test_full_sweeps_connections_at_one_thread_and_threads_at_100_connections() -> None:
    grid = expand_grid(params(profile="full"))
    reactor = [(c.threads, c.connections, c.pipeline) for c in grid if c.architecture == "reactor"]
    assert sorted(reactor) == sorted(
        [(1, c, d) for c in (32, 64, 100, 400, 2000, 10000) for d in (1, 16)]
        + [(t, 100, d) for t in (2, 4, 8, 16) for d in (1, 16)]
    )
    # Single-loop architectures are never multiplied by threads; blocking keeps source 000's 1000 too.
    assert {c.threads for c in grid if c.architecture in ("blocking", "thread_per_conn", "poll", "epoll")} == {None}
    assert sorted({c.connections for c in grid if c.architecture == "blocking"}) == [
        32,
        64,
        100,
        400,
        1000,
        2000,
        10000,
    ]
    assert {(c.architecture, dict(c.options).get("trigger")) for c in grid if c.architecture == "epoll"} == {
        ("epoll", "level"),
        ("epoll", "edge"),
    }
    # Source 000's pool-size sweep is kept whole: its 2, 4, ..., 12 threads are pool sizes 1, 3, ..., 11.
    assert sorted(
        c.threads
        for c in grid
        if c.architecture == "thread_pool"
        and c.connections == 400
        and dict(c.options)["dispatch"] == "connection"
        and c.pipeline == 1
    ) == [1, 3, 5, 7, 9, 11]


def test_bench_profile_runs_every_architecture_once_per_depth() -> None:
    grid = expand_grid(params(profile="bench"))
    assert {(c.connections, c.load_threads, c.duration_s) for c in grid} == {(100, 1, 5)}
    assert {c.threads for c in grid} == {1, None}
    labels = sorted({c.config_id.rsplit("-c100", 1)[0] for c in grid})
    assert labels == [
        "blocking",
        "epoll-edge",
        "epoll-level",
        "io_uring-t1",
        "nginx-t1",
        "poll",
        "prefork-level-t1",
        "reactor-edge-t1",
        "reuseport-edge-t1",
        "thread_per_conn",
        "thread_pool-request-queue-t1",
    ]
    assert sorted(Counter(c.pipeline for c in grid).items()) == [(1, 11), (16, 11)]
