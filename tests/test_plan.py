"""Configuration grid, config and trial ids, randomised interleaved order, profile durations."""
from __future__ import annotations

import re
from collections import Counter

import pytest

from archbench.params import resolve_parameters
from archbench.plan import TrialConfig, build_plan, expand_grid, plan_campaign, response_id_part
from archbench.profiles import PROFILE_NAMES, TRIAL_OVERHEAD_S, expected_duration_s, profile_values

SAFE_ID = re.compile(r"[A-Za-z0-9_-]+")  # no dots: file names split a trial id at the first dot


def params(**overrides):
    return resolve_parameters(overrides.pop("profile", "smoke"), check_host=False, **overrides)


def test_config_id_example_of_the_contract() -> None:
    config = TrialConfig("thread_pool", connections=100, load_threads=1, duration_s=5, threads=4,
                         options=(("dispatch", "request"), ("handoff", "queue")))
    assert config.config_id == "thread_pool-request-queue-t4-c100-lt1-d5s"
    assert config.as_dict() == {
        "architecture": "thread_pool", "threads": 4, "max_threads": None, "dispatch": "request", "handoff": "queue",
        "response": "test", "connections": 100, "load_threads": 1, "duration_s": 5, "load_generator": "wrk",
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
    grid = expand_grid(params(servers=["blocking", "thread_per_conn", "thread_pool"], thread_counts=[1, 2, 4],
                              connection_counts=[10, 100]))
    ids = [c.config_id for c in grid]
    assert ids == [
        "blocking-c10-lt1-d1s", "blocking-c100-lt1-d1s",
        "thread_per_conn-c10-lt1-d1s", "thread_per_conn-c100-lt1-d1s",
        "thread_pool-request-queue-t1-c10-lt1-d1s", "thread_pool-request-queue-t1-c100-lt1-d1s",
        "thread_pool-request-queue-t2-c10-lt1-d1s", "thread_pool-request-queue-t2-c100-lt1-d1s",
        "thread_pool-request-queue-t4-c10-lt1-d1s", "thread_pool-request-queue-t4-c100-lt1-d1s",
    ]
    assert all(c.threads is None for c in grid if c.architecture != "thread_pool")


def test_variants_and_per_entry_sweeps() -> None:
    grid = expand_grid(params(servers=["thread_pool:dispatch=connection/request,handoff=stack,threads=8,connections=64"]))
    assert [c.config_id for c in grid] == [
        "thread_pool-connection-stack-t8-c64-lt1-d1s",
        "thread_pool-request-stack-t8-c64-lt1-d1s",
    ]


def test_configs_reached_twice_are_kept_once() -> None:
    grid = expand_grid(params(profile="default"))
    ids = [c.config_id for c in grid]
    assert len(ids) == len(set(ids)) == 14
    assert ids.count("thread_pool-request-queue-t2-c100-lt1-d3s") == 1


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
        block = plan[round_number * n:(round_number + 1) * n]
        assert sorted(t.config_id for t in block) == sorted(c.config_id for c in configs)
        assert {t.repetition for t in block} == {round_number}
        assert all(t.warmup == (round_number == 0) for t in block)
    # Each round is shuffled on its own, not the same permutation repeated.
    orders = {tuple(t.config_id for t in plan[k * n:(k + 1) * n]) for k in range(6)}
    assert len(orders) > 1


def test_trial_ids_unique_safe_and_per_contract() -> None:
    plan = plan_campaign(params(profile="full", seed=1))
    ids = [t.trial_id for t in plan]
    assert len(ids) == len(set(ids))
    assert all(SAFE_ID.fullmatch(i) for i in ids)
    counts = Counter(t.config_id for t in plan)
    assert set(counts.values()) == {11}
    sample = next(t for t in plan if t.config_id == "thread_pool-connection-queue-t16-c400-lt1-d5s" and t.repetition == 3)
    assert sample.trial_id == "thread_pool-connection-queue-t16-c400-lt1-d5s-r03"
    warmup = next(t for t in plan if t.config_id == sample.config_id and t.warmup)
    assert warmup.trial_id == "thread_pool-connection-queue-t16-c400-lt1-d5s-warmup"
    assert warmup.repetition == 0


def test_no_warmup_round_when_disabled() -> None:
    plan = plan_campaign(params(warmup=False, trials=3, seed=3))
    assert not any(t.warmup for t in plan)
    assert {t.repetition for t in plan} == {1, 2, 3}


def test_repetition_numbers_widen_past_99() -> None:
    plan = build_plan([TrialConfig("blocking", 1, 1, 1)], trials=100, warmup=False, seed=0)
    assert plan[0].trial_id == "blocking-c1-lt1-d1s-r001"


def test_profiles_and_expected_durations() -> None:
    assert PROFILE_NAMES == ("smoke", "default", "full")
    assert len(expand_grid(params(profile="smoke"))) == 6
    assert len(expand_grid(params(profile="full"))) == 30
    # smoke must fit in 3 minutes including the build, so its trials well under that.
    assert expected_duration_s("smoke") < 60
    assert 4 * 60 <= expected_duration_s("default") <= 6 * 60
    assert expected_duration_s("full") == 30 * 11 * (5 + TRIAL_OVERHEAD_S)


def test_profile_values_are_fresh_copies() -> None:
    values = profile_values("smoke")
    values["servers"].append("nonsense")
    assert "nonsense" not in profile_values("smoke")["servers"]


def test_explicit_sweep_overrides_the_profile_entries() -> None:
    grid = expand_grid(params(profile="default", thread_counts=[3], connection_counts=[50]))
    assert [c.config_id for c in grid] == [
        "thread_pool-request-queue-t3-c50-lt1-d3s",
        "thread_pool-connection-queue-t3-c50-lt1-d3s",
        "thread_per_conn-c50-lt1-d3s",
        "blocking-c50-lt1-d3s",
    ]
