"""Placement netns: two network namespaces per campaign, a veth pair, an optional tc link; nothing left behind."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from archbench.config.params import resolve_parameters
from archbench.data.records import TrialRecord
from archbench.measure import placement as placement_module
from archbench.measure.placement import (
    LinkModel,
    Loopback,
    NetnsPair,
    PlacementError,
    network_placement,
    preflight_problems,
)
from archbench.measure.runner import PreflightError, run_campaign

EXIT_INTERRUPTED = 130


def namespaces() -> list[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=10, check=True)
    return [line.split()[0] for line in listed.stdout.splitlines() if line.strip()]


def owned_by(pid: int) -> list[str]:
    return sorted(name for name in namespaces() if name.startswith(f"archbench-{pid}-"))


def host_links() -> str:
    return subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, timeout=10, check=True).stdout


def netns_unavailable() -> str | None:
    if shutil.which("ip") is None:
        return "ip (iproute2) is not installed"
    if os.geteuid() != 0:
        return "network namespaces need root"
    probe = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=10)
    if probe.returncode != 0:
        return f"`ip netns` does not work here: {probe.stderr.strip()}"
    return None


needs_netns = pytest.mark.skipif(netns_unavailable() is not None, reason=str(netns_unavailable()))


def netns_params(tmp_path: Path, cpu_pair, **overrides):
    server_cpus, load_cpus = cpu_pair
    values = dict(
        servers=["blocking"],
        connection_counts=[8],
        trials=1,
        warmup=False,
        duration_s=1,
        server_cpus=server_cpus,
        load_cpus=load_cpus,
        raw_root=str(tmp_path / "raw"),
        campaign="netns",
        seed=3,
        placement="netns",
    )
    values.update(overrides)
    return resolve_parameters("smoke", **values)


def dead_pid() -> int:
    """The pid of a process that has ended (and was reaped)."""
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


# --------------------------------------------------------------------------- no privilege needed


def test_link_model_becomes_tbf_and_netem_arguments() -> None:
    gigabit = LinkModel.parse("1gbit")
    assert (gigabit.rate_bits_per_s, gigabit.delay) == (1e9, None)
    assert gigabit.qdisc_arguments() == ["tbf", "rate", "1gbit", "burst", "131072", "latency", "50ms"]
    assert LinkModel.parse("10gbit").burst_bytes == 1_250_000  # a millisecond at 10 Gb/s
    assert LinkModel.parse("100mbit").rate_bits_per_s == 1e8
    delayed = LinkModel.parse("1gbit 50us")
    assert delayed.qdisc_arguments() == ["netem", "delay", "50us", "rate", "1gbit", "limit", "10000"]
    with pytest.raises(PlacementError, match="not a number followed by bit"):
        LinkModel.parse("fast")


def test_loopback_placement_leaves_commands_and_records_as_they_were() -> None:
    loopback = Loopback()
    argv = ["taskset", "-c", "0", "wrk"]
    assert loopback.server_argv(argv) == argv and loopback.load_argv(argv) == argv
    assert loopback.server_address == "127.0.0.1" and loopback.record() is None
    assert loopback.unexpected_host("127.0.0.1") is None and loopback.unexpected_host("localhost") is None
    assert loopback.unexpected_host("0.0.0.0") == "server listens on 0.0.0.0, not on loopback; not loading it"
    assert preflight_problems("loopback", None) == []


def test_netns_pair_wraps_both_commands_and_names_itself() -> None:
    pair = NetnsPair(link=LinkModel.parse("1gbit"), owner_pid=4242)
    assert pair.server_argv(["taskset", "-c", "0", "srv"]) == [
        "ip", "netns", "exec", "archbench-4242-srv", "taskset", "-c", "0", "srv"
    ]  # fmt: skip
    assert pair.load_argv(["wrk"]) == ["ip", "netns", "exec", "archbench-4242-load", "wrk"]
    assert (pair.server_address, pair.load_address) == ("10.213.146.1", "10.213.146.2")
    assert pair.unexpected_host("10.213.146.1") is None
    assert "not on 10.213.146.1" in str(pair.unexpected_host("127.0.0.1"))
    assert pair.record() == {
        "kind": "netns",
        "link": "1gbit",
        "server_address": "10.213.146.1",
        "load_address": "10.213.146.2",
        "namespaces": ["archbench-4242-srv", "archbench-4242-load"],
        "qdisc": "tbf rate 1gbit burst 131072 latency 50ms",
    }


def test_netns_without_privilege_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(placement_module, "effective_capabilities", lambda: 0)
    problems = preflight_problems("netns", "1gbit")
    assert any("needs root or CAP_NET_ADMIN" in p and "sudo" in p for p in problems), problems


def test_netns_without_ip_or_tc_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    problems = preflight_problems("netns", "1gbit")
    assert "placement netns needs `ip` on PATH (apt-get install iproute2)" in problems
    assert "a link model needs `tc` on PATH (apt-get install iproute2)" in problems
    assert not any("`tc`" in p for p in preflight_problems("netns", None))


def test_netns_without_privilege_fails_before_any_trial(
    real_build_dir, load_tools, cpu_pair, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(placement_module, "effective_capabilities", lambda: 0)
    params = netns_params(tmp_path, cpu_pair, build_dir=str(real_build_dir))
    with pytest.raises(PreflightError, match="placement netns needs root"):
        run_campaign(params, stream=io.StringIO())
    assert not (tmp_path / "raw" / "netns").exists()


# --------------------------------------------------------------------------- real namespaces (root)


@pytest.mark.slow
@needs_netns
@pytest.mark.integration
def test_set_up_and_tear_down_leave_nothing(tmp_path: Path, cpu_pair) -> None:
    params = netns_params(tmp_path, cpu_pair, link="1gbit")
    with network_placement(params) as placed:
        assert owned_by(os.getpid()) == sorted(placed.record()["namespaces"])
        inside = subprocess.run(
            ["ip", "-n", f"archbench-{os.getpid()}-srv", "-o", "address", "show"], capture_output=True, text=True
        ).stdout
        assert f"{placed.server_address}/30" in inside
        qdisc = subprocess.run(
            ["tc", "-n", f"archbench-{os.getpid()}-load", "qdisc", "show", "dev", "ab-load"],
            capture_output=True,
            text=True,
        ).stdout
        assert "tbf" in qdisc and "1Gbit" in qdisc
    assert owned_by(os.getpid()) == []
    assert "ab-srv" not in host_links() and "ab-load" not in host_links()


@pytest.mark.slow
@needs_netns
@pytest.mark.integration
def test_an_error_inside_the_campaign_still_removes_the_namespaces(tmp_path: Path, cpu_pair) -> None:
    with pytest.raises(KeyboardInterrupt):
        with network_placement(netns_params(tmp_path, cpu_pair)):
            assert len(owned_by(os.getpid())) == 2
            raise KeyboardInterrupt
    assert owned_by(os.getpid()) == []


@pytest.mark.slow
@needs_netns
@pytest.mark.integration
def test_stale_namespaces_of_a_dead_owner_are_removed_and_a_live_owners_kept(tmp_path: Path, cpu_pair) -> None:
    gone = dead_pid()
    living = subprocess.Popen(["sleep", "30"])
    stale, kept, foreign = f"archbench-{gone}-srv", f"archbench-{living.pid}-load", "archbench-notapid-srv"
    try:
        for name in (stale, kept, foreign):
            subprocess.run(["ip", "netns", "add", name], check=True, timeout=10)
        with network_placement(netns_params(tmp_path, cpu_pair)):
            present = namespaces()
            assert stale not in present
            assert kept in present and foreign in present
    finally:
        living.kill()
        living.wait()
        for name in (stale, kept, foreign):
            subprocess.run(["ip", "netns", "delete", name], capture_output=True, timeout=10)
    assert not {stale, kept, foreign} & set(namespaces())


@pytest.mark.slow
@needs_netns
@pytest.mark.integration
def test_a_link_with_a_delay_needs_netem(tmp_path: Path, cpu_pair) -> None:
    """This kernel may lack sch_netem: then the set-up fails naming it, before any trial, leaving nothing."""
    params = netns_params(tmp_path, cpu_pair, link="1gbit 50us")
    try:
        with network_placement(params) as placed:
            shaped = placed.record()["qdisc"]
    except PlacementError as error:
        assert "sch_netem" in str(error) and "modprobe sch_netem" in str(error)
    else:
        assert shaped.startswith("netem delay 50us rate 1gbit")
    assert owned_by(os.getpid()) == []


@pytest.mark.slow
@needs_netns
def test_a_smoke_trial_through_netns_with_a_gigabit_link(real_build_dir, load_tools, cpu_pair, tmp_path: Path) -> None:
    params = netns_params(tmp_path, cpu_pair, build_dir=str(real_build_dir), link="1gbit")
    result = run_campaign(params, stream=io.StringIO())
    assert dict(result.statuses) == {"ok": 1}, result
    campaign = tmp_path / "raw" / "netns"
    record = json.loads(next(p for p in campaign.glob("*.json") if p.name != "campaign.json").read_text())
    TrialRecord.model_validate(record)
    placed = record["placement"]
    assert (placed["kind"], placed["link"]) == ("netns", "1gbit")
    assert placed["namespaces"] == [f"archbench-{os.getpid()}-srv", f"archbench-{os.getpid()}-load"]
    assert record["server"]["ready_line"].startswith(f"listening on {placed['server_address']}:")
    assert record["server"]["argv"][:7] == [
        "ip",
        "netns",
        "exec",
        placed["namespaces"][0],
        "taskset",
        "-c",
        cpu_pair[0],
    ]
    assert record["load"]["argv"][:4] == ["ip", "netns", "exec", placed["namespaces"][1]]
    assert record["load"]["argv"][-1].startswith(f"http://{placed['server_address']}:")
    assert record["server"]["cpu_user_s"] + record["server"]["cpu_sys_s"] > 0  # wait4 still sees the server
    meta = json.loads((campaign / "campaign.json").read_text())
    assert (meta["parameters"]["placement"], meta["parameters"]["link"]) == ("netns", "1gbit")
    assert owned_by(os.getpid()) == []


@pytest.mark.slow
@needs_netns
def test_a_server_listening_elsewhere_in_its_namespace_is_not_loaded(
    fake_build_dir, load_tools, cpu_pair, tmp_path: Path
) -> None:
    build = fake_build_dir("blocking", "#!/bin/sh\necho 'listening on 127.0.0.1:8080'\nexec sleep 60\n")
    params = netns_params(tmp_path, cpu_pair, build_dir=str(build), ready_timeout_s=2.0, stop_grace_s=2.0)
    result = run_campaign(params, stream=io.StringIO())
    assert dict(result.statuses) == {"failed": 1}
    record = json.loads(next(p for p in (tmp_path / "raw" / "netns").glob("blocking*.json")).read_text())
    assert "server listens on 127.0.0.1, not on 10.213." in record["failure_reason"]
    assert record["load"]["argv"] is None


@pytest.mark.slow
@needs_netns
def test_sigint_mid_campaign_leaves_no_namespace(
    real_build_dir, load_tools, cpu_pair, tmp_path: Path, repo_env: dict[str, str]
) -> None:
    raw = tmp_path / "raw"
    runner = subprocess.Popen(
        [sys.executable, "-m", "archbench", "run", "--profile", "smoke", "--campaign", "interrupted",
         "--raw-root", str(raw), "--servers", "blocking", "--connection-counts", "8", "--trials", "4",
         "--no-warmup", "--duration-s", "1", "--server-cpus", cpu_pair[0], "--load-cpus", cpu_pair[1],
         "--placement", "netns", "--link", "1gbit"],
        cwd=REPO_ROOT,
        env=repo_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        finished: list[Path] = []
        while time.monotonic() < deadline and not finished and runner.poll() is None:
            time.sleep(0.1)
            finished = [p for p in (raw / "interrupted").glob("blocking*.json")]
        assert finished, "no trial finished within 60 s"
        assert len(owned_by(runner.pid)) == 2  # the campaign's namespaces exist while it runs
        runner.send_signal(signal.SIGINT)
        _, stderr = runner.communicate(timeout=30)
        assert runner.returncode == EXIT_INTERRUPTED, stderr
        assert "interrupted" in stderr.decode()
        assert owned_by(runner.pid) == []
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
        for name in owned_by(runner.pid):
            subprocess.run(["ip", "netns", "delete", name], capture_output=True, timeout=10)
