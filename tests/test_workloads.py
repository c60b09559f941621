"""Workload families (archbench.config.workloads): parameters and their messages, the grid with its exclusions and
config ids, and the command lines of servers, nginx, wrk and idle_holder."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from archbench.config.loadgen import Wrk
from archbench.config.parameter_model import StoredParameters
from archbench.config.params import FD_HEADROOM, ParameterError, parameters_from_dict, resolve_parameters
from archbench.config.plan import expand_grid, expected_duration_s, grid_exclusions, plan_campaign
from archbench.config.plan_description import describe_configurations
from archbench.config.servers import check_response, server_spec
from archbench.config.topology import read_topology
from archbench.config.workloads import Workload, command_config, server_seed
from archbench.data.records import TrialConfigRecord
from archbench.measure.nginx import NginxConfig, generated_body, response_location, write_generated_body
from archbench.measure.server_protocol import parse_ready_line, typed_fields

FIXTURES = Path(__file__).parent / "fixtures"
REFERENCE = read_topology(FIXTURES / "topology" / "2cpu")
SIXTEEN = read_topology(FIXTURES / "topology" / "16cpu-smt")
SAFE_ID = re.compile(r"[A-Za-z0-9_-]+")


def resolve(**overrides):
    overrides.setdefault("topology", REFERENCE)
    overrides.setdefault("campaign", "w")
    return resolve_parameters(overrides.pop("profile", "smoke"), check_host=False, **overrides)


def small(workloads, servers=("epoll", "nginx", "pong"), **overrides):
    return resolve(servers=list(servers), thread_counts=[1], connection_counts=[64], workloads=workloads, **overrides)


def ids(params) -> list[str]:
    return [config.config_id for config in expand_grid(params)]


def rejects(parameter: str, match: str, **overrides) -> ParameterError:
    with pytest.raises(ParameterError, match=match) as caught:
        resolve(**overrides)
    assert caught.value.parameter == parameter
    assert str(caught.value).startswith(f"{parameter}: ")
    return caught.value


# --------------------------------------------------------------------------- parameters


@pytest.mark.parametrize(
    ("family", "parameter", "match"),
    [
        ({"name": "cpu", "work_us": -1}, "workloads[0].work_us", "-1 is not a non-negative integer"),
        ({"name": "cpu", "work_us": "lots"}, "workloads[0].work_us", "'lots' is not a non-negative integer"),
        ({"name": "cpu", "work_us": [{"us": 20}]}, "workloads[0].work_us", "is not a non-negative integer"),
        ({"name": "block", "block_dist": [["exp"]]}, "workloads[0].block_dist", "is not one of fixed, exp"),
        ({"name": "cpu", "work_us": 1_000_001}, "workloads[0].work_us", "above 1000000"),
        ({"name": "block", "block_us": [100, -5]}, "workloads[0].block_us", "-5 is not a non-negative integer"),
        ({"name": "block", "block_dist": "gamma"}, "workloads[0].block_dist", "'gamma' is not one of fixed, exp"),
        ({"name": "churn", "connection_mode": "closed"}, "workloads[0].connection_mode", "not one of keep-alive"),
        ({"name": "idle", "idle_connections": -3}, "workloads[0].idle_connections", "not a non-negative integer"),
        ({"name": "size", "response": "bytes:2000000"}, "workloads[0].response", "from 4 to 1048576"),
        ({"name": "size", "response": ["bytes:16", "bytes:3"]}, "workloads[0].response", "'bytes:3'"),
        ({"name": "size", "response": "bytes:016"}, "workloads[0].response", "without leading zeros"),
        ({"name": "size", "response": 16384}, "workloads[0].response", "not a --response value"),
        ({"name": "cpu", "colour": "blue"}, "workloads[0].colour", "unknown key; a family takes: name, work_us"),
        ({"work_us": 20}, "workloads[0].name", "None is not a family name"),
        ({"name": "Has Space"}, "workloads[0].name", "is not a family name"),
        ({"name": "cpu", "thread_counts": [0]}, "workloads[0].thread_counts", "0 is not a positive integer"),
        ({"name": "cpu", "connection_counts": []}, "workloads[0].connection_counts", "must not be empty"),
        ({"name": "cpu", "servers": ["apache"]}, "workloads[0].servers[0]", "unknown architecture 'apache'"),
    ],
)
def test_bad_family_values_are_refused_naming_the_parameter(family, parameter, match) -> None:
    rejects(parameter, match, workloads=[family])


def test_workloads_as_a_whole_are_checked() -> None:
    rejects("workloads", "is not a JSON list", workloads="[{")
    rejects("workloads", "is not a list of workload families", workloads=5)
    rejects("workloads[0]", "is not a workload family", workloads=["cpu"])
    rejects("workloads", "'cpu' is used twice", workloads=[{"name": "cpu"}, {"name": "cpu", "work_us": 1}])
    # Echo servers take none of them.
    rejects("workloads", "apply to proto http only", profile="echo", workloads=[{"name": "cpu", "work_us": 20}])
    # One request per connection is wrk's.
    rejects(
        "workloads[0].connection_mode",
        "not the campaign's load_generator oha",
        load_generator="oha",
        offered_rates=[1000],
        servers=["epoll"],
        workloads=[{"name": "churn", "connection_mode": "close"}],
    )


def test_a_family_from_the_command_line_is_json_text() -> None:
    params = small('[{"name": "cpu", "work_us": [20, 100]}]', servers=["epoll"])
    assert [c.workload for c in expand_grid(params)] == [Workload("cpu", work_us=20), Workload("cpu", work_us=100)]


def test_response_accepts_generated_bodies_within_bounds() -> None:
    assert check_response("bytes:4") is None and check_response("bytes:1048576") is None
    assert "from 4 to 1048576" in check_response("bytes:1048577")
    assert "from 4 to 1048576" in check_response("bytes:x")
    assert resolve(response="bytes:16384").response == "bytes:16384"
    rejects("response", "bytes:N needs N", response="bytes:0")


def test_idle_connections_beyond_the_open_file_limit_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("resource.getrlimit", lambda _kind: (20000, 20000))
    cpus = sorted(os.sched_getaffinity(0))
    placement = {"server_cpus": str(cpus[0]), "load_cpus": str(cpus[-1]) if len(cpus) > 1 else "0"}
    ok = resolve_parameters(
        "smoke", servers=["epoll"], connection_counts=[64], workloads=[{"name": "idle", "idle_connections": 8000}],
        **placement,
    )  # fmt: skip
    assert ok.workloads[0].idle_connections == (8000,)
    most = 20000 - FD_HEADROOM - 64
    with pytest.raises(ParameterError, match=f"the open-file hard limit is 20000: at most {most} idle") as caught:
        resolve_parameters(
            "smoke", servers=["epoll"], connection_counts=[64],
            workloads=[{"name": "idle", "idle_connections": [1000, most + 1]}], **placement,
        )  # fmt: skip
    assert caught.value.parameter == "workloads[0].idle_connections"


def test_cpus_in_a_thread_list_is_the_server_cpu_count() -> None:
    assert resolve(servers=["reactor"], thread_counts=[1, "cpus"]).thread_counts == (1,)
    sixteen = resolve(servers=["reactor"], thread_counts=[1, "cpus"], topology=SIXTEEN)
    server_cpus = len(sixteen.server_cpus.replace("-", ",").split(","))  # e.g. "0-3" or "0,8"
    assert sixteen.thread_counts[0] == 1 and sixteen.thread_counts[1] > 1 and server_cpus
    family = small([{"name": "cpu", "thread_counts": ["cpus", 8]}], servers=["reactor"]).workloads[0]
    assert family.thread_counts == (1, 8)


def test_parameters_round_trip_through_campaign_json() -> None:
    params = resolve(profile="workloads").with_seed(3)
    stored = params.to_dict()
    StoredParameters.model_validate(stored)
    assert parameters_from_dict(stored) == params
    assert plan_campaign(parameters_from_dict(stored)) == plan_campaign(params)


# --------------------------------------------------------------------------- the grid


def test_families_expand_separately_with_their_own_config_ids() -> None:
    params = small(
        [
            {"name": "baseline"},
            {"name": "cpu", "work_us": [0, 20]},
            {"name": "block", "block_us": 1000, "block_dist": ["fixed", "exp"]},
            {"name": "idle", "idle_connections": 8000},
            {"name": "churn", "connection_mode": ["keep-alive", "close"]},
            {"name": "size", "response": ["bytes:16384"]},
        ],
        servers=["epoll"],
    )
    assert ids(params) == [
        "epoll-level-c64-lt1-d1s",  # the baseline; cpu's work_us 0 and churn's keep-alive are the same configuration
        "epoll-level-c64-lt1-d1s-w20",
        "epoll-level-c64-lt1-d1s-b1000",
        "epoll-level-c64-lt1-d1s-b1000exp",
        "epoll-level-c64-lt1-d1s-idle8000",
        "epoll-level-c64-lt1-d1s-close",
        "epoll-level-c64-lt1-d1s-bytes16384",
    ]
    families = [c.workload.family for c in expand_grid(params)]
    assert families == ["baseline", "cpu", "block", "block", "idle", "churn", "size"]
    assert all(SAFE_ID.fullmatch(i) for i in ids(params))


def test_a_config_carries_only_the_workload_fields_that_are_set() -> None:
    params = small(
        [{"name": "baseline"}, {"name": "block", "block_us": 100}, {"name": "churn", "connection_mode": "close"}],
        servers=["epoll"],
    )
    baseline, block, churn = (c.as_dict() for c in expand_grid(params))
    assert baseline["workload"] == "baseline"
    assert not {"work_us", "block_us", "block_dist", "idle_connections", "connection_mode"} & set(baseline)
    assert (block["block_us"], block["block_dist"]) == (100, "fixed") and "work_us" not in block
    assert churn["connection_mode"] == "close"
    for config in (baseline, block, churn):
        TrialConfigRecord.model_validate(config)


def test_campaigns_without_workloads_keep_their_configs() -> None:
    for config in expand_grid(resolve(profile="default")):
        assert config.workload is None
        assert not {"workload", "work_us", "block_us", "idle_connections", "connection_mode"} & set(config.as_dict())
    assert resolve(profile="default").to_dict()["workloads"] == []


def test_what_does_not_apply_is_left_out_with_its_reason() -> None:
    params = small(
        [
            {"name": "cpu", "work_us": 20},
            {"name": "idle", "idle_connections": 100},
            {"name": "churn", "connection_mode": "close"},
        ],
        servers=["epoll", "nginx", "pong", "blocking", "thread_pool:dispatch=connection,threads=8/256"],
        pipeline_depths=[1, 16],
    )
    kept = set(ids(params))
    excluded = {e.config_id: e for e in grid_exclusions(params)}
    assert "nginx-t1-c64-lt1-d1s-w20" in excluded and "pong-t1-c64-lt1-d1s-w20" in excluded
    assert "no --work-us, --block-us" in excluded["nginx-t1-c64-lt1-d1s-w20"].reason
    assert "reference floor" in excluded["pong-t1-c64-lt1-d1s-w20"].reason
    assert "ignores Connection: close" in excluded["pong-t1-c64-lt1-d1s-close"].reason
    assert "nothing to pipeline" in excluded["epoll-level-c64-lt1-d1s-close-p16"].reason
    assert "one connection at a time" in excluded["blocking-c64-lt1-d1s-idle100"].reason
    # A pool that gives each connection a worker: 8 workers cannot, 256 can hold 100 idle beside 64 active.
    assert (
        "each of its 8 workers owns a connection"
        in excluded["thread_pool-connection-queue-t8-c64-lt1-d1s-idle100"].reason
    )
    assert "thread_pool-connection-queue-t256-c64-lt1-d1s-idle100" in kept
    assert {"nginx-t1-c64-lt1-d1s-idle100", "pong-t1-c64-lt1-d1s-idle100", "nginx-t1-c64-lt1-d1s-close"} <= kept
    assert not kept & set(excluded)
    assert {e.family for e in excluded.values()} == {"cpu", "idle", "churn"}


def test_a_family_replaces_the_campaigns_sweeps_or_servers() -> None:
    params = resolve(
        servers=["epoll", "thread_pool:threads=2"],
        thread_counts=[1],
        connection_counts=[64],
        workloads=[
            {"name": "block", "block_us": 1000, "thread_counts": [1, 64]},
            {"name": "idle", "idle_connections": 10, "connection_counts": [16]},
            {"name": "pool", "work_us": 5, "servers": ["thread_pool:threads=4"]},
        ],
    )
    assert ids(params) == [
        "epoll-level-c64-lt1-d1s-b1000",
        "thread_pool-request-queue-t1-c64-lt1-d1s-b1000",
        "thread_pool-request-queue-t64-c64-lt1-d1s-b1000",
        "epoll-level-c16-lt1-d1s-idle10",
        "thread_pool-request-queue-t2-c16-lt1-d1s-idle10",
        "thread_pool-request-queue-t4-c64-lt1-d1s-w5",
    ]


def test_the_dry_run_lists_families_and_what_they_left_out() -> None:
    params = small([{"name": "cpu", "work_us": 20}, {"name": "churn", "connection_mode": "close"}])
    lines = describe_configurations(params, expand_grid(params))
    assert lines[0] == "workload cpu: 1 configurations"
    assert lines[1] == "  epoll-level-c64-lt1-d1s-w20"
    assert lines[2].startswith("  left out: nginx (1 configuration): nginx has no per-request work")
    assert lines[3].startswith("  left out: pong (1 configuration): pong is the reference floor")
    assert lines[4] == "workload churn: 2 configurations"
    assert lines[-1].startswith("  left out: pong (1 configuration): pong never parses a request")


def test_the_workloads_profiles() -> None:
    full, short = resolve(profile="workloads"), resolve(profile="workloads_short")
    assert [f.name for f in full.workloads] == ["baseline", "cpu", "block", "idle", "churn", "size"]
    # The short version leaves out the work-0 baseline, which the load generator bounds on the reference machine.
    assert [f.name for f in short.workloads] == [f.name for f in full.workloads][1:]
    configs = expand_grid(full)
    pools = sorted(c.threads for c in configs if c.architecture == "thread_pool" and c.workload.family == "block")
    assert pools == [1, 1, 8, 8, 64, 64]
    assert {c.connections for c in configs} == {64}
    # Every architecture in every family it applies to; what is left out is only what cannot be measured: nginx and
    # pong at the points with per-request work (every family but the baseline and the waits has some, sized so that
    # the server is the bottleneck), blocking beside idle connections.
    reasons = {(e.family, e.architecture) for e in grid_exclusions(full)}
    assert reasons == {
        (family, server) for family in ("cpu", "idle", "churn", "size") for server in ("nginx", "pong")
    } | {("idle", "blocking")}
    for family in ("idle", "churn", "size"):
        at_zero = {c.architecture for c in configs if c.workload.family == family and c.workload.work_us == 0}
        assert "nginx" in at_zero, family
        assert {c.workload.work_us for c in configs if c.workload.family == family} > {0}, family
    assert len(configs) == 155 and len(expand_grid(short)) == 54
    # The short version: one level per family, every configuration one of the full profile's.
    assert set(ids(short)) < set(ids(full))
    # What each costs on the reference machine: the full study, and the short one that `make all` runs.
    assert 18 * 60 <= expected_duration_s("workloads", topology=REFERENCE) <= 22 * 60
    assert 3 * 60 <= expected_duration_s("workloads_short", topology=REFERENCE) <= 5 * 60


# --------------------------------------------------------------------------- command lines


def test_server_flags_of_a_workload() -> None:
    epoll = server_spec("epoll")
    config = {"architecture": "epoll", "trigger": "level", "response": "bytes:16384", "work_us": 20, "block_us": 100,
              "block_dist": "exp", "seed": 7}  # fmt: skip
    assert epoll.flags(config) == [
        "--trigger", "level", "--response", "bytes:16384", "--work-us", "20", "--block-us", "100",
        "--block-dist", "exp", "--seed", "7",
    ]  # fmt: skip
    assert epoll.flags({"architecture": "epoll", "response": "test"}) == ["--trigger", "level", "--response", "test"]
    assert epoll.flags({"response": "test", "block_us": 100, "block_dist": "fixed"})[-2:] == ["--block-us", "100"]


def test_the_seed_of_exponential_waits_comes_from_the_campaign_and_the_trial() -> None:
    exp = {"block_us": 100, "block_dist": "exp"}
    assert command_config(exp, 5, "a-r01")["seed"] == server_seed(5, "a-r01")
    assert server_seed(5, "a-r01") != server_seed(5, "a-r02") != server_seed(6, "a-r01")
    assert 0 <= server_seed(5, "a-r01") < 2**63
    assert "seed" not in command_config({"block_us": 100, "block_dist": "fixed"}, 5, "a-r01")
    assert "seed" not in command_config({"work_us": 10}, 5, "a-r01")


def test_wrk_sends_connection_close_for_one_request_per_connection() -> None:
    config = {"load_threads": 1, "connections": 64, "duration_s": 1, "connection_mode": "close"}
    argv = Wrk().command(config, "http://127.0.0.1:1/", 2)
    assert argv[-5:-3] == ["-H", "Connection: close"] and argv[-1] == "http://127.0.0.1:1/"
    assert "-H" not in Wrk().command({**config, "connection_mode": "keep-alive"}, "http://127.0.0.1:1/", 2)


def test_nginx_serves_the_c_servers_generated_body(tmp_path: Path) -> None:
    body = generated_body(40)
    assert body == b"000000000000000\n000000000000010\n00000000"
    assert len(generated_body(1 << 20)) == 1 << 20 and generated_body(1 << 20).endswith(b"0000000000ffff0\n")
    write_generated_body(tmp_path, "bytes:40")
    assert (tmp_path / "body" / "body.txt").read_bytes() == body
    location = response_location("bytes:40", tmp_path)
    assert f'root "{tmp_path.resolve() / "body"}";' in location and "default_type text/plain;" in location
    text = NginxConfig(tmp_path, "127.0.0.1", 1, 1, "bytes:40", open_files=4096).text()
    assert 'try_files "/body.txt" =404;' in text
    with pytest.raises(ValueError, match="bytes:N needs N from 4 to 1048576"):
        response_location("bytes:3")
    assert server_spec("nginx").command({"threads": 1, "response": "bytes:40"}, Path("build"))[-2:] == [
        "--response",
        "bytes:40",
    ]


def test_ready_line_fields_are_kept_as_numbers() -> None:
    ready = parse_ready_line("listening on 127.0.0.1:4 work_iters_per_us=812.5 work_iterations=16250 mode=x")
    assert ready is not None
    assert typed_fields(ready.fields) == {"work_iters_per_us": 812.5, "work_iterations": 16250, "mode": "x"}
    assert typed_fields({"a": "nan", "b": "-3", "c": "1e3"}) == {"a": "nan", "b": -3, "c": 1000.0}
