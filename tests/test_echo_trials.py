"""Echo trials: the runner drives echo_client against --proto echo servers and records its JSON."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from conftest import write_executable

from archbench.config.params import ParameterError, resolve_parameters
from archbench.config.plan import expand_grid, plan_campaign
from archbench.measure.runner import campaign_overview, run_campaign, run_trial
from archbench.parse import parse_output


@pytest.fixture
def echo_build_dir(real_build_dir: Path) -> Path:
    missing = [name for name in ("epoll", "echo_client") if not (real_build_dir / "bin" / name).is_file()]
    if missing:
        pytest.skip(f"{', '.join(missing)} not built (make servers)")
    return real_build_dir


def echo_params(build_dir: Path, cpu_pair, tmp_path: Path, **overrides):
    server_cpus, load_cpus = cpu_pair
    values = dict(
        servers=["epoll:trigger=edge"],
        connection_counts=[50],
        duration_s=1,
        trials=1,
        warmup=False,
        server_cpus=server_cpus,
        load_cpus=load_cpus,
        build_dir=str(build_dir),
        raw_root=str(tmp_path),
        campaign="echo",
        seed=3,
        sources=2,
        max_conns_cap=0,
        max_reruns=0,  # the trials a test asks for, whatever else this machine runs meanwhile
    )
    values.update(overrides)
    return resolve_parameters("echo", **values)


def test_echo_trial_end_to_end_against_epoll(echo_build_dir: Path, cpu_pair, tmp_path: Path) -> None:
    params = echo_params(echo_build_dir, cpu_pair, tmp_path)
    result = run_campaign(params, stream=io.StringIO())
    assert dict(result.statuses) == {"ok": 1}
    trial_id = "epoll-edge-c50-lt1-d1s-echo-s64-src2-r01"
    campaign = tmp_path / "echo"
    assert sorted(p.name for p in campaign.iterdir()) == sorted(
        ["campaign.json", f"{trial_id}.json", f"{trial_id}.echo_client.txt", f"{trial_id}.server.txt"]
    )
    record = json.loads((campaign / f"{trial_id}.json").read_text())
    assert (record["status"], record["failure_reason"]) == ("ok", None)
    config = record["config"]
    assert (config["proto"], config["mode"], config["cap"], config["load_generator"]) == (
        "echo",
        "throughput",
        None,
        "echo_client",
    )
    assert (config["message_size"], config["sources"], config["connect_rate"], config["pipeline"]) == (64, 2, 0, 1)

    server, load = record["server"], record["load"]
    assert server["argv"][4:] == ["--host", "127.0.0.1", "--port", "0", "--trigger", "edge", "--proto", "echo"]
    port = server["ready_line"].rsplit(":", 1)[1]
    _, load_cpus = cpu_pair
    assert load["argv"] == [
        "taskset",
        "-c",
        load_cpus,
        str(echo_build_dir / "bin" / "echo_client"),
        "--port",
        port,
        "--connections",
        "50",
        "--threads",
        "1",
        "--duration",
        "1",
        "--size",
        "64",
        "--depth",
        "1",
        "--sources",
        "2",
        "--json",
    ]
    assert load["exit_code"] == 0 and load["flags"] == [] and load["tool"] == "echo_client"
    assert record["open_files"]["needed"] == 50 + 256
    assert record["open_files"]["soft"] >= record["open_files"]["needed"]
    assert record["provenance"]["open_files_limit"][1] == record["open_files"]["hard"]

    output = (campaign / load["output_file"]).read_text()
    parsed = parse_output("echo_client", output)
    assert json.loads(output)["tool"] == "echo_client"  # stdout verbatim: the one JSON object
    assert parsed["connected"] == parsed["open_at_end"] == 50
    assert parsed["verify_errors"] == 0 and parsed["echoes"] > 0 and parsed["flags"] == []
    stats = server["stats"]
    assert stats["connections_accepted"] == 50 and stats["bytes_echoed"] == parsed["bytes_received"]

    overview = campaign_overview(campaign)
    # A trial other work disturbed (make test runs its tests on several workers) is counted, never averaged.
    disturbed = record["interference"]["disturbed"]
    assert overview[0]["ok"] == 1 and overview[0]["disturbed"] == int(disturbed)
    assert overview[0]["median_echoes_per_s"] == (None if disturbed else parsed["echoes_per_sec"])


def test_max_conns_trial_records_count_reason_and_memory(echo_build_dir: Path, cpu_pair, tmp_path: Path) -> None:
    params = echo_params(echo_build_dir, cpu_pair, tmp_path, max_conns_cap=300, max_conns_duration_s=10)
    plan = {t.trial_id: t for t in plan_campaign(params)}
    assert sorted(plan) == [
        "epoll-edge-c300-lt1-d10s-echo-s64-src2-maxconns-r01",
        "epoll-edge-c50-lt1-d1s-echo-s64-src2-r01",
    ]
    record = run_trial(plan["epoll-edge-c300-lt1-d10s-echo-s64-src2-maxconns-r01"], params, provenance={}).record
    assert record["status"] == "ok", record["failure_reason"]
    assert (record["config"]["mode"], record["config"]["cap"], record["config"]["connections"]) == (
        "max_conns",
        300,
        300,
    )
    argv = record["load"]["argv"]
    assert argv[argv.index("--max-conns") + 1] == "300"
    server_pid = int(argv[argv.index("--server-pid") + 1])
    assert server_pid == record["server"]["pid"]
    reached = record["load"]["max_conns"]
    assert (reached["reached"], reached["stop_reason"], reached["server_pid"]) == (300, "cap_reached", server_pid)
    assert reached["alive_at_end"] == 300 and reached["server_rss_per_conn_bytes"] > 0
    server_argv = record["server"]["argv"]
    assert server_argv[server_argv.index("--idle-timeout") + 1] == "0"  # held connections stay silent


ECHO_SERVER_THAT_CORRUPTS = """#!{python}
# Echoes with every 100th byte of each connection's stream flipped; the shutdown line on SIGTERM.
import json, selectors, signal, socket, sys
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(64)
listener.setblocking(False)
selector = selectors.DefaultSelector()
selector.register(listener, selectors.EVENT_READ)
offsets = {{}}
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
print(f"listening on 127.0.0.1:{{listener.getsockname()[1]}}", flush=True)
while not stop:
    for key, _ in selector.select(0.05):
        if key.fileobj is listener:
            connection, _ = listener.accept()
            selector.register(connection, selectors.EVENT_READ)
            offsets[connection] = 0
            continue
        connection = key.fileobj
        data = bytearray(connection.recv(65536) or b"")
        if not data:
            selector.unregister(connection)
            connection.close()
            continue
        for i in range(len(data)):
            if (offsets[connection] + i) % 100 == 99:
                data[i] ^= 0xFF
        offsets[connection] += len(data)
        connection.sendall(bytes(data))
print(json.dumps({{"architecture": "poll", "threads": 1, "connections_accepted": len(offsets),
                  "connections_served": len(offsets), "requests_served": 0, "bad_requests": 0,
                  "connection_resets": 0, "errors": 0, "bytes_echoed": sum(offsets.values())}}), flush=True)
"""


def test_verification_errors_flag_the_trial(echo_build_dir: Path, cpu_pair, tmp_path: Path) -> None:
    build = tmp_path / "build-faulty"
    write_executable(build / "bin" / "poll", ECHO_SERVER_THAT_CORRUPTS.format(python=sys.executable))
    (build / "bin" / "echo_client").symlink_to(echo_build_dir / "bin" / "echo_client")
    params = echo_params(build, cpu_pair, tmp_path, servers=["poll"], connection_counts=[4], campaign="faulty")
    result = run_campaign(params, stream=io.StringIO())
    assert dict(result.statuses) == {"ok": 1}  # measured: echo_client ran to the end and says what it found
    record = json.loads((tmp_path / "faulty" / "poll-c4-lt1-d1s-echo-s64-src2-r01.json").read_text())
    assert record["load"]["exit_code"] == 1  # echo_client's status for verification errors
    assert "verify_errors" in record["load"]["flags"]
    parsed = parse_output("echo_client", (tmp_path / "faulty" / record["load"]["output_file"]).read_text())
    assert parsed["verify_errors"] > 0 and parsed["first_verify_error"]["offset"] == 99
    overview = campaign_overview(tmp_path / "faulty")
    assert (overview[0]["flagged"], overview[0]["median_echoes_per_s"]) == (1, None)  # never averaged


# --------------------------------------------------------------------------- parameters and plan


def resolve_echo(**overrides):
    return resolve_parameters("echo", check_host=False, **overrides)


def test_echo_profile_is_source_004_study() -> None:
    ids = [c.config_id for c in expand_grid(resolve_echo())]
    assert ids[:4] == [
        "thread_per_conn-c100-lt1-d10s-echo-s64-src4",
        "thread_per_conn-c1000-lt1-d10s-echo-s64-src4",
        "thread_per_conn-c10000-lt1-d10s-echo-s64-src4",
        "thread_per_conn-c19500-lt1-d30s-echo-s64-src4-maxconns",
    ]
    assert {i.split("-")[0] for i in ids} == {"thread_per_conn", "poll", "epoll", "reactor", "reuseport", "io_uring"}
    assert "reactor-edge-t2-c10000-lt1-d10s-echo-s64-src4" in ids and len(ids) == 24


@pytest.mark.parametrize(
    ("overrides", "parameter", "message"),
    [
        ({"servers": ["nginx"], "thread_counts": [1]}, "servers[0]", "nginx does not serve proto echo"),
        ({"load_generator": "wrk"}, "load_generator", "wrk does not speak echo; for proto echo use echo_client"),
        ({"proto": "gopher"}, "proto", "'gopher' is not one of http, echo"),
        ({"sources": 300}, "sources", "300 source addresses exceed"),
        ({"message_size": 0}, "message_size", "0 is not a positive integer"),
        ({"connect_rate": -1}, "connect_rate", "-1 is not a non-negative integer"),
        ({"max_conns_cap": -5}, "max_conns_cap", "-5 is not a positive integer"),
    ],
)
def test_bad_echo_parameters_are_named(overrides, parameter: str, message: str) -> None:
    with pytest.raises(ParameterError) as caught:
        resolve_echo(**overrides)
    assert caught.value.parameter == parameter and message in str(caught.value)


def test_echo_only_parameters_refused_for_http() -> None:
    with pytest.raises(ParameterError, match="max_conns_cap: applies to proto echo only"):
        resolve_parameters("smoke", check_host=False, max_conns_cap=100)
    with pytest.raises(ParameterError, match="load_generator: echo_client does not speak http"):
        resolve_parameters("smoke", check_host=False, load_generator="echo_client")


def test_max_conns_cap_must_fit_the_open_file_limit() -> None:
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        pytest.skip("no open-file hard limit here")
    with pytest.raises(ParameterError, match=f"max_conns_cap: {hard} connections need {hard + 256} open files"):
        resolve_parameters("echo", max_conns_cap=hard)
