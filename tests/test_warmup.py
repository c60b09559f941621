"""The warm-up before each measured window (archbench.measure.warmup): its parameter, its commands, the runner's
path with a fake server and a fake wrk, and how the analysis reads the server's counters after one."""

from __future__ import annotations

import dataclasses
import io
import json
import math
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, write_executable

from archbench.analyze.trials import server_cpu_seconds, trial_row
from archbench.config.loadgen import load_generator
from archbench.config.parameter_model import StoredParameters
from archbench.config.params import ParameterError, differing_parameters, parameters_from_dict, resolve_parameters
from archbench.config.plan import estimate_duration_s, expand_grid, plan_campaign, warmup_duration_s
from archbench.data.records import ServerRun, TrialRecord, WarmupRun
from archbench.measure import adaptive, bench
from archbench.measure.runner import run_campaign, run_trial
from archbench.measure.warmup import load_runs, without_warmup
from archbench.parse import parse_file

HOSTS = REPO_ROOT / "tests" / "fixtures" / "hosts"
WRK_OUTPUT = REPO_ROOT / "tests" / "fixtures" / "wrk" / "normal_latency.wrk.txt"
WRK_REQUESTS = 123767  # in WRK_OUTPUT

TICK_S = 0.01  # /proc's CPU times count clock ticks (USER_HZ 100)
FORK_S = 0.05  # a child's CPU before its exec, counted in its rusage but not in the wall the runner measures


def smoke(**overrides):
    return resolve_parameters("smoke", check_host=False, **overrides)


# --------------------------------------------------------------------------- the parameter


def test_warmup_s_is_off_unless_asked_for() -> None:
    assert smoke().warmup_s == 0
    assert smoke(warmup_s=2).warmup_s == 2
    assert smoke(warmup_s="3").warmup_s == 3  # as papermill and the command line pass it


@pytest.mark.parametrize("value", [-1, 1.5, "soon", True])
def test_bad_warmup_s_is_refused_naming_it(value) -> None:
    with pytest.raises(ParameterError) as caught:
        smoke(warmup_s=value)
    assert str(caught.value).startswith("warmup_s: "), caught.value


def test_warmup_s_is_refused_where_no_warm_up_runs() -> None:
    with pytest.raises(ParameterError, match=r"^warmup_s: 1: placement ssh runs no warm-up"):
        smoke(warmup_s=1, placement="ssh", hosts=str(HOSTS / "three-hosts.toml"))
    with pytest.raises(ParameterError, match=r"^warmup_s: 1: httperf has no duration"):
        smoke(warmup_s=1, servers=["epoll"], load_generator="httperf", connection_counts=[10])
    assert smoke(warmup_s=0, servers=["epoll"], load_generator="httperf", connection_counts=[10]).warmup_s == 0


def test_warmup_s_is_part_of_a_campaigns_identity_and_older_ones_had_none() -> None:
    params = smoke(warmup_s=1, seed=3, campaign="w")
    stored = params.to_dict()
    StoredParameters.model_validate(stored)
    assert parameters_from_dict(stored) == params
    older = {k: v for k, v in smoke(seed=3, campaign="w").to_dict().items() if k != "warmup_s"}
    assert differing_parameters(older, smoke(seed=3, campaign="w")) == []
    assert differing_parameters(older, params) == ["warmup_s (campaign has 0, now 1)"]


def test_the_command_line_passes_warmup_s(capsys: pytest.CaptureFixture[str]) -> None:
    from archbench.cli.main import main

    base = ["run", "--profile", "smoke", "--servers", "epoll", "--dry-run", "--trials", "1", "--no-warmup"]
    assert main(base) == 0
    without = capsys.readouterr().out
    assert main([*base, "--warmup-s", "4"]) == 0
    with_warmup = capsys.readouterr().out
    assert without != with_warmup  # the estimate grows by the warm-ups


# --------------------------------------------------------------------------- the commands and the estimate


@pytest.mark.parametrize(
    ("tool", "config", "flag"),
    [
        ("wrk", {"load_threads": 1, "connections": 10}, ["-d2s"]),
        ("wrk2", {"load_threads": 1, "connections": 10, "offered_rate": 100}, ["-d2s"]),
        ("oha", {"connections": 10, "offered_rate": 100}, ["-z", "2s"]),
        ("open_loop", {"load_threads": 1, "connections": 10, "offered_rate": 100}, ["--duration", "2"]),
        ("echo_client", {"load_threads": 1, "connections": 10, "message_size": 64}, ["--duration", "2"]),
    ],
)
def test_the_warm_up_is_the_same_command_for_its_own_duration(tool: str, config: dict, flag: list[str]) -> None:
    generator = load_generator(tool)
    config = {**config, "duration_s": 9}
    url = "tcp://127.0.0.1:5000/" if tool == "echo_client" else "http://127.0.0.1:5000/"
    measured = generator.command(config, url, 2)
    warm = generator.command(generator.warmup_config(config, 2), url, 2)
    assert generator.warms_up(config)
    assert len(warm) == len(measured)
    assert [a for a in warm if a not in measured] == [f for f in flag if f not in measured]
    window = "-z" if tool == "oha" else "--duration"
    if tool in ("wrk", "wrk2"):
        assert "-d9s" in measured and "-d2s" in warm
    else:
        assert measured[measured.index(window) + 1] == "9" + ("s" if tool == "oha" else "")
        assert warm[warm.index(window) + 1] == flag[1]


def test_no_warm_up_for_max_conns_ramps_or_httperf() -> None:
    assert not load_generator("echo_client").warms_up({"mode": "max_conns"})
    assert not load_generator("httperf").warms_up({})
    params = resolve_parameters(
        "smoke", check_host=False, proto="echo", servers=["epoll"], max_conns_cap=100, warmup_s=2, seed=1
    )
    durations = {config.config_id: warmup_duration_s(params, config) for config in expand_grid(params)}
    assert sorted(durations.values()) == [0, 2] and all(("maxconns" in k) == (v == 0) for k, v in durations.items())


def test_the_estimate_counts_every_warm_up() -> None:
    params = smoke(servers=["epoll", "poll"], trials=3, warmup=True)
    runs = 4 * len(expand_grid(params))  # 3 trials and the warm-up trial of each configuration
    assert estimate_duration_s(smoke(servers=["epoll", "poll"], trials=3, warmup=True, warmup_s=2), 0.5) == (
        pytest.approx(estimate_duration_s(params, 0.5) + 2 * runs)
    )


# --------------------------------------------------------------------------- the runner, with fakes

FAKE_SERVER = """#!{python}
import json, signal, socket, sys, time
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(64)
print(f"listening on 127.0.0.1:{{listener.getsockname()[1]}}", flush=True)
def stop(*_):
    print(json.dumps({{"architecture": "blocking", "threads": 1, "connections_accepted": 8, "connections_served": 7,
                      "requests_served": 250000, "bad_requests": 0, "connection_resets": 0, "errors": 0,
                      "bytes_echoed": 0, "timeouts": 0}}), flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
while True:
    time.sleep(1)
"""

# Logs its argv (one JSON line per run) and prints a real wrk output; exits 1 for the warm-up's duration when told.
FAKE_WRK = """#!{python}
import os, sys
with open({log!r}, "a") as log:
    log.write(__import__("json").dumps(sys.argv[1:]) + "\\n")
if os.environ.get("FAKE_WRK_FAIL") in sys.argv:
    print("wrk: pretend failure", file=sys.stderr)
    sys.exit(1)
sys.stdout.write(open({output!r}).read())
"""


@pytest.fixture
def fakes(fake_build_dir, cpu_pair, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """(params with a warm-up of 1 s before a 2-s window, the fake wrk's argv log)."""
    build = fake_build_dir("blocking", FAKE_SERVER.format(python=sys.executable))
    log = tmp_path / "wrk-argv.log"
    tools = tmp_path / "tools"
    write_executable(tools / "wrk", FAKE_WRK.format(python=sys.executable, log=str(log), output=str(WRK_OUTPUT)))
    monkeypatch.setenv("PATH", f"{tools}:{Path(sys.executable).parent}:/usr/bin:/bin")
    params = resolve_parameters(
        "smoke",
        servers=["blocking"],
        connection_counts=[4],
        trials=1,
        warmup=False,
        duration_s=2,
        warmup_s=1,
        server_cpus=cpu_pair[0],
        load_cpus=cpu_pair[1],
        build_dir=str(build),
        raw_root=str(tmp_path / "raw"),
        campaign="fake",
        ready_timeout_s=2.0,
        stop_grace_s=2.0,
        wrk_timeout_s=1,
        seed=1,
    )
    return params, log


def test_the_warm_up_runs_first_against_the_same_server_and_is_kept(fakes) -> None:
    params, log = fakes
    planned = plan_campaign(params)[0]
    outcome = run_trial(planned, params, provenance={})
    record = outcome.record
    assert (record["status"], record["failure_reason"]) == ("ok", None)
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert [run[2] for run in runs] == ["-d1s", "-d2s"]  # warm-up first, then the measured window
    assert runs[0][:2] + runs[0][3:] == runs[1][:2] + runs[1][3:]  # otherwise the same command, same server
    trial = planned.trial_id
    assert sorted(outcome.outputs) == sorted([f"{trial}.server.txt", f"{trial}.wrk.txt", f"{trial}.warmup.wrk.txt"])
    assert outcome.outputs[f"{trial}.warmup.wrk.txt"] == WRK_OUTPUT.read_bytes()
    warm = record["load_warmup"]
    assert warm["argv"][:3] == ["taskset", "-c", params.load_cpus] and warm["argv"][3:] == ["wrk", *runs[0]]
    assert (warm["duration_s"], warm["exit_code"], warm["requests"], warm["flags"]) == (1, 0, WRK_REQUESTS, [])
    assert warm["output_file"] == f"{trial}.warmup.wrk.txt" and warm["wall_s"] > 0
    # The fake wrk is a Python process: its start-up alone takes CPU time, and one thread cannot use more than its wall.
    # The wall starts once the child has exec'd, its CPU at the fork (copying a large test process's page tables, 13 ms
    # more than the wall once in CI): FORK_S is allowed for that.
    assert 0 < warm["cpu_user_s"] + warm["cpu_sys_s"] <= warm["wall_s"] + FORK_S
    assert record["load"]["argv"][3:] == ["wrk", *runs[1]]
    # The server's CPU over the warm-up is part of its whole life's (wait4) and, one idle thread, of the warm-up's wall
    # (/proc counts in ticks: one more is allowed).
    server = record["server"]
    assert isinstance(server["warmup_cpu_s"], float)
    assert 0 <= server["warmup_cpu_s"] <= min(server["cpu_user_s"] + server["cpu_sys_s"], warm["wall_s"] + TICK_S)
    ServerRun.model_validate(record["server"]), WarmupRun.model_validate(record["load_warmup"])


def test_a_failed_warm_up_fails_the_trial_before_the_measured_load(fakes, monkeypatch: pytest.MonkeyPatch) -> None:
    params, log = fakes
    monkeypatch.setenv("FAKE_WRK_FAIL", "-d1s")
    record = run_trial(plan_campaign(params)[0], params, provenance={}).record
    assert record["status"] == "failed"
    assert record["failure_reason"] == "warm-up: wrk exited with status 1: wrk: pretend failure"
    assert len(log.read_text().splitlines()) == 1  # the measured load never ran
    assert record["load"]["argv"] is None and record["load_warmup"]["exit_code"] == 1
    assert record["load_warmup"]["requests"] is None and record["server"]["exit_code"] == 0
    ServerRun.model_validate(record["server"]), WarmupRun.model_validate(record["load_warmup"])


def test_without_warmup_s_nothing_changes(fakes) -> None:
    params, log = fakes
    params = dataclasses.replace(params, warmup_s=0)
    outcome = run_trial(plan_campaign(params)[0], params, provenance={})
    assert outcome.record["status"] == "ok" and "load_warmup" not in outcome.record
    assert "warmup_cpu_s" not in outcome.record["server"] and len(log.read_text().splitlines()) == 1
    assert not any(".warmup." in name for name in outcome.outputs)


# --------------------------------------------------------------------------- the counters after a warm-up


def warmed_record(tmp_path: Path, *, warmup_cpu_s: float | None = 0.5) -> dict:
    """A record of 4 connections after a warm-up: the server's counters and CPU cover both runs."""
    trial = "blocking-c4-lt1-d2s-r01"
    (tmp_path / f"{trial}.wrk.txt").write_bytes(WRK_OUTPUT.read_bytes())
    return {
        "trial_id": trial,
        "config_id": "blocking-c4-lt1-d2s",
        "status": "ok",
        "config": {"architecture": "blocking", "connections": 4, "load_threads": 1, "duration_s": 2},
        "server": {
            "cpus": "0",
            "cpu_user_s": 1.5,
            "cpu_sys_s": 0.5,
            "cpu_source": "tree",
            "warmup_cpu_s": warmup_cpu_s,
            "stats": {"connections_accepted": 8, "connections_served": 7, "requests_served": 250000},
        },
        "load": {"cpus": "1", "output_file": f"{trial}.wrk.txt", "cpu_user_s": 1.0, "cpu_sys_s": 0.0, "wall_s": 2},
        "load_warmup": {"requests": 120000},
    }


def test_server_cpu_leaves_the_warm_up_out(tmp_path: Path) -> None:
    record = warmed_record(tmp_path)
    assert server_cpu_seconds(record["server"]) == (pytest.approx(1.5), "tree")
    assert adaptive.server_cpu_s(record["server"]) == pytest.approx(1.5)
    assert bench.server_cpu_seconds(record["server"]) == pytest.approx(1.5)
    row = trial_row(record, tmp_path, parse_file)
    assert row["server_cpu_us_per_request"] == pytest.approx(1.5e6 / WRK_REQUESTS)
    # Warmed up, but its CPU unreadable: the whole-life number would count the warm-up as measured load.
    unknown = warmed_record(tmp_path, warmup_cpu_s=None)["server"]
    assert math.isnan(server_cpu_seconds(unknown)[0]) and math.isnan(adaptive.server_cpu_s(unknown))
    assert bench.server_cpu_seconds(unknown) is None
    # Records without a warm-up keep their whole-life CPU.
    plain = {k: v for k, v in record["server"].items() if k != "warmup_cpu_s"}
    assert server_cpu_seconds(plain) == (pytest.approx(2.0), "tree") and without_warmup(2.0, plain) == 2.0


def test_starved_connections_are_the_mean_over_both_runs(tmp_path: Path) -> None:
    record = warmed_record(tmp_path)
    assert load_runs(record) == 2
    row = trial_row(record, tmp_path, parse_file)
    # 2 runs of 4 connections, 7 answered: 1 starved in the two runs together.
    assert (row["load_runs"], row["starved_connections"], row["warmup_requests"]) == (2, 0.5, 120000)
    assert row["requests_served"] >= row["warmup_requests"] + row["total_requests"]
    record.pop("load_warmup")
    record["server"].pop("warmup_cpu_s")
    record["server"]["stats"]["connections_served"] = 3
    row = trial_row(record, tmp_path, parse_file)
    assert (row["load_runs"], row["starved_connections"]) == (1, 1.0) and math.isnan(row["warmup_requests"])


# --------------------------------------------------------------------------- a real server on loopback


def test_a_warmed_up_trial_against_thread_pool(real_build_dir: Path, load_tools, cpu_pair, tmp_path: Path) -> None:
    """One trial of 1 s after a 1-s warm-up, committed as a campaign (about 4 s)."""
    params = resolve_parameters(
        "smoke",
        servers=["thread_pool"],
        thread_counts=[1],
        connection_counts=[16],
        duration_s=1,
        warmup_s=1,
        trials=1,
        warmup=False,
        baseline_s=0,
        server_cpus=cpu_pair[0],
        load_cpus=cpu_pair[1],
        build_dir=str(real_build_dir),
        raw_root=str(tmp_path),
        campaign="warm",
        seed=5,
    )
    result = run_campaign(params, stream=io.StringIO())
    assert dict(result.statuses) == {"ok": 1}
    trial = "thread_pool-request-queue-t1-c16-lt1-d1s-r01"
    campaign_dir = tmp_path / "warm"
    record = json.loads((campaign_dir / f"{trial}.json").read_text())
    TrialRecord.model_validate(record)
    warm, server = record["load_warmup"], record["server"]
    assert warm["argv"][3:7] == ["wrk", "-t1", "-c16", "-d1s"] and warm["exit_code"] == 0
    assert warm["output_file"] == f"{trial}.warmup.wrk.txt" and warm["wall_s"] >= 1.0
    assert warm["requests"] == parse_file(campaign_dir / warm["output_file"])["total_requests"] > 0
    measured = parse_file(campaign_dir / record["load"]["output_file"])["total_requests"]
    # The server's own count covers the warm-up and the measured window (and nothing is lost between them).
    assert server["stats"]["requests_served"] >= warm["requests"] + measured
    assert server["stats"]["connections_accepted"] >= 2 * 16
    assert server["warmup_cpu_s"] > 0
    row = trial_row(record, campaign_dir, parse_file)
    whole_life = server["cpu_user_s"] + server["cpu_sys_s"]
    assert row["server_cpu_s"] == pytest.approx(whole_life - server["warmup_cpu_s"])
    assert server["load_cpu_s"] <= row["server_cpu_s"] + 0.05  # the window is within what remains (10-ms ticks)
    assert (row["load_runs"], row["warmup_requests"], row["starved_connections"]) == (2, warm["requests"], 0.0)
