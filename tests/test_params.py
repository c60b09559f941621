"""Parameter validation: every failure is a ParameterError naming the parameter."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from archbench.config.params import (
    ParameterError,
    ServerEntry,
    differing_parameters,
    format_cpu_list,
    parameters_from_dict,
    parse_cpu_list,
    resolve_parameters,
)
from archbench.config.topology import read_topology

# The reference machine's 2 CPUs, so that "auto" CPU sets and sweeps resolve the same on any test host.
REFERENCE = read_topology(Path(__file__).parent / "fixtures" / "topology" / "2cpu")


def resolve(**overrides):
    overrides.setdefault("topology", REFERENCE)
    return resolve_parameters(overrides.pop("profile", "smoke"), check_host=False, **overrides)


def rejects(parameter: str, match: str, **overrides) -> ParameterError:
    with pytest.raises(ParameterError, match=match) as caught:
        resolve(**overrides)
    assert caught.value.parameter == parameter
    assert str(caught.value).startswith(f"{parameter}: ")
    assert isinstance(caught.value, ValueError)
    return caught.value


def test_unknown_server_lists_valid_ones() -> None:
    rejects(
        "servers[1]",
        "unknown architecture 'lighttpd'; valid: blocking, thread_per_conn, thread_pool, poll, "
        "epoll, reactor, reuseport, prefork, io_uring, nginx, pong",
        servers=["blocking", "lighttpd"],
    )


def test_option_not_taken_by_the_architecture() -> None:
    rejects(
        "servers[0]",
        r"blocking does not take 'threads' \(it takes: connections, pipeline\)",
        servers=[{"architecture": "blocking", "threads": [2]}],
    )
    rejects(
        "servers[0]",
        r"epoll does not take 'threads' \(it takes: trigger, connections, pipeline\)",
        servers=["epoll:threads=2"],
    )
    rejects("servers[0]", "poll does not take 'trigger'", servers=["poll:trigger=edge"])
    rejects("servers[0]", "thread_per_conn does not take 'dispatch'", servers=["thread_per_conn:dispatch=request"])


def test_bad_option_value_names_the_option() -> None:
    rejects(
        "servers[0].dispatch", "'accept' is not one of connection, request", servers=["thread_pool:dispatch=accept"]
    )
    rejects(
        "servers[0].max_threads",
        "-1 is below the minimum 0",
        servers=[{"architecture": "thread_per_conn", "max_threads": -1}],
    )
    rejects("servers[0].threads", "0 is not a positive integer", servers=["thread_pool:threads=0"])


def test_profile_must_be_known() -> None:
    rejects("profile", "'huge' is not one of bench, default, echo, full", profile="huge")


def test_unknown_parameter_is_named() -> None:
    rejects("threads", "unknown parameter", threads=[1])


@pytest.mark.parametrize("value", [0, -1, "x", 1.5, True])
def test_duration_must_be_a_positive_integer(value) -> None:
    rejects("duration_s", "is not a positive integer", duration_s=value)


def test_trials_and_counts_must_be_positive() -> None:
    rejects("trials", "0 is not a positive integer", trials=0)
    rejects("thread_counts", "0 is not a positive integer", thread_counts=[1, 0])
    rejects("connection_counts", "-5 is not a positive integer", connection_counts=[-5])
    rejects("wrk_timeout_s", "is not a positive integer", wrk_timeout_s=0)
    rejects("ready_timeout_s", "is not a positive number", ready_timeout_s=-1)


def test_connections_at_least_load_threads() -> None:
    rejects("load_threads", r"4 load threads exceed 2 connections", connection_counts=[2], load_threads=[4])
    rejects(
        "load_threads",
        r"not a multiple of 4 load threads \(wrk would open only 8\)",
        connection_counts=[10],
        load_threads=[4],
    )
    # Per-entry connection counts are checked too.
    rejects("load_threads", "exceed 1 connections", servers=["blocking:connections=1"], load_threads=[2])


def test_cpu_sets_must_be_disjoint() -> None:
    error = rejects("load_cpus", "overlaps server_cpus on CPU 1", server_cpus="0-1", load_cpus="1")
    assert "leave load_cpus unset" in str(error)  # the message names the fix


def test_cpu_sets_must_exist_on_this_machine() -> None:
    missing = max(os.sched_getaffinity(0)) + 1
    with pytest.raises(ParameterError, match=f"load_cpus: CPU {missing} is not available") as caught:
        resolve_parameters("smoke", server_cpus=min(os.sched_getaffinity(0)), load_cpus=str(missing))
    assert caught.value.parameter == "load_cpus"


def test_cpu_list_forms() -> None:
    assert parse_cpu_list("0", "x") == (0,)
    assert parse_cpu_list("3,1-2", "x") == (1, 2, 3)
    assert parse_cpu_list(1, "x") == (1,)
    assert parse_cpu_list([2, 0], "x") == (0, 2)
    assert format_cpu_list([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"
    with pytest.raises(ParameterError, match="server_cpus: 'a' is not a CPU list"):
        parse_cpu_list("a", "server_cpus")
    with pytest.raises(ParameterError, match="reversed"):
        parse_cpu_list("3-1", "load_cpus")


def test_campaign_name_must_be_file_system_safe() -> None:
    rejects("campaign", "is not a file-system-safe name", campaign="../escape")
    rejects("campaign", "is not a file-system-safe name", campaign=".hidden")
    rejects("campaign", "data/raw's directory of checksum manifests", campaign="manifests")


def test_response_is_checked(tmp_path: Path) -> None:
    rejects("response", "is not test, hello, file:PATH or bytes:N", response="big")
    rejects("response", "no such file", response=f"file:{tmp_path / 'missing.html'}")
    page = tmp_path / "page.html"
    page.write_text("hi")
    assert resolve(response=f"file:{page}").response == f"file:{page}"


def test_seed_must_be_a_non_negative_integer() -> None:
    rejects("seed", "is not a non-negative integer", seed=-3)
    assert resolve(seed="42").seed == 42


def test_profile_defaults_and_overrides() -> None:
    p = resolve()
    assert (p.duration_s, p.trials, p.warmup, p.connection_counts, p.thread_counts) == (1, 2, True, (16,), (1, 2))
    assert p.campaign.startswith("smoke-")
    q = resolve(duration_s=2, trials=4, warmup=False, campaign="mine", server_cpus="1", load_cpus="0")
    assert (q.duration_s, q.trials, q.warmup, q.campaign, q.server_cpus, q.load_cpus) == (2, 4, False, "mine", "1", "0")


def test_none_means_not_given() -> None:
    assert resolve(duration_s=None, servers=None) == resolve()


def test_text_forms_as_papermill_passes_them() -> None:
    p = resolve(
        servers='["blocking", "thread_pool:dispatch=connection"]',
        thread_counts="[2, 4]",
        connection_counts="8,16",
        warmup="false",
    )
    assert p.servers == (ServerEntry("blocking"), ServerEntry("thread_pool", (("dispatch", ("connection",)),)))
    assert (p.thread_counts, p.connection_counts, p.warmup) == ((2, 4), (8, 16), False)


def test_server_entry_forms_are_equivalent() -> None:
    text = resolve(servers=["thread_pool:handoff=stack,dispatch=connection/request,threads=2/8"])
    mapping = resolve(
        servers=[
            {
                "architecture": "thread_pool",
                "dispatch": ["connection", "request"],
                "handoff": "stack",
                "threads": [2, 8],
            }
        ]
    )
    assert text == mapping
    assert text.servers[0].to_dict() == {
        "architecture": "thread_pool",
        "dispatch": ["connection", "request"],
        "handoff": ["stack"],
        "threads": [2, 8],
    }


def test_round_trip_through_campaign_json() -> None:
    p = resolve(servers=["thread_pool:dispatch=connection", "blocking"], seed=5)
    assert parameters_from_dict(p.to_dict()) == p


def test_differing_parameters_are_named() -> None:
    stored = resolve(seed=9).to_dict()
    assert differing_parameters(stored, resolve(seed=9)) == []
    assert differing_parameters(stored, resolve(seed=None)) == []  # no explicit seed: the stored one is used
    assert differing_parameters(stored, resolve(seed=9, campaign="other", raw_root="/elsewhere")) == []
    differences = differing_parameters(stored, resolve(seed=9, duration_s=2, trials=3))
    assert [d.split(" ")[0] for d in differences] == ["duration_s", "trials"]
    assert "campaign has 1, now 2" in differences[0]


# --------------------------------------------------------------------------- new architectures, pipelining, limits


def test_trigger_is_checked_and_defaults_per_architecture() -> None:
    rejects("servers[0].trigger", "'both' is not one of level, edge", servers=["epoll:trigger=both"])
    p = resolve(servers=["epoll", "reactor", "prefork:trigger=edge"], thread_counts=[1])
    from archbench.config.servers import server_spec

    defaults = {e.architecture: dict(e.option_values(server_spec(e.architecture)))["trigger"] for e in p.servers}
    assert defaults == {"epoll": ("level",), "reactor": ("edge",), "prefork": ("edge",)}


def test_pipeline_depths_are_validated() -> None:
    rejects("pipeline_depths", "0 is not a positive integer", pipeline_depths=[1, 0])
    rejects("pipeline_depths", "must not be empty", pipeline_depths=[])
    rejects("servers[0].pipeline", "'x' is not a positive integer", servers=["epoll:pipeline=x"])
    assert resolve().pipeline_depths == (1,)
    assert resolve(pipeline_depths="1,16").pipeline_depths == (1, 16)
    assert resolve(pipeline_depths=[16, 16, 1]).pipeline_depths == (16, 1)


def test_entry_pipeline_sweep_and_its_campaign_wide_override() -> None:
    p = resolve(servers=["epoll:pipeline=1/16"])
    assert p.servers[0].pipeline == (1, 16) and p.servers[0].to_dict()["pipeline"] == [1, 16]
    # An explicit campaign-wide sweep replaces the profile's per-entry ones (smoke has epoll and nginx at 1 and 16).
    assert {e.pipeline for e in resolve(pipeline_depths=[4]).servers} == {None}
    assert {e.pipeline for e in resolve().servers if e.architecture in ("epoll", "nginx")} == {(1, 16)}


def test_thread_counts_needed_names_the_architectures() -> None:
    rejects(
        "thread_counts",
        "needed by nginx, prefork entries without their own threads",
        servers=["prefork", "nginx", "blocking"],
        thread_counts=[],
    )


def test_connections_beyond_the_open_file_limit_are_rejected_naming_it() -> None:
    import resource

    from archbench.config.params import FD_HEADROOM

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        pytest.skip("no open-file hard limit here")
    with pytest.raises(
        ParameterError, match=f"the open-file hard limit is {hard}: at most {hard - FD_HEADROOM}"
    ) as caught:
        resolve_parameters(
            "smoke",
            connection_counts=[hard],
            server_cpus=min(os.sched_getaffinity(0)),
            load_cpus=max(os.sched_getaffinity(0)) if len(os.sched_getaffinity(0)) > 1 else "0",
        )
    assert caught.value.parameter == "connection_counts"
    with pytest.raises(ParameterError, match="open-file hard limit") as caught:
        resolve_parameters(
            "smoke",
            servers=["blocking", f"epoll:connections={hard}"],
            server_cpus=min(os.sched_getaffinity(0)),
            load_cpus=max(os.sched_getaffinity(0)) if len(os.sched_getaffinity(0)) > 1 else "0",
        )
    assert caught.value.parameter == "servers[1].connections"
    # Planning for another machine (no host checks) does not look at this one's limit.
    assert resolve(connection_counts=[hard]).connection_counts == (hard,)


def test_campaign_json_from_before_pipelining_still_resumes() -> None:
    stored = resolve(seed=9).to_dict()
    del stored["pipeline_depths"]
    assert differing_parameters(stored, resolve(seed=9)) == []
    assert parameters_from_dict(stored) == resolve(seed=9)
    assert [d.split(" ")[0] for d in differing_parameters(stored, resolve(seed=9, pipeline_depths=[16]))] == [
        "pipeline_depths",
        "servers",
    ]
