"""Faults the harness must survive without leaving anything behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from archbench.config.params import resolve_parameters
from archbench.measure.placement import network_placement

REPO = Path(__file__).resolve().parents[1]


def children_of(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.update(int(p) for p in text)
    return found


def program_of(pid: int) -> str:
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
    except (FileNotFoundError, ProcessLookupError):
        return ""
    return os.path.basename(argv0)


def measured_children(pid: int) -> dict[str, int]:
    """The runner's server and load generator (after taskset has exec'd them), by program name."""
    return {program_of(child): child for child in children_of(pid) if program_of(child) in ("thread_pool", "wrk")}


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_runner_killed_outright_leaves_no_server_or_load_generator(
    real_build_dir, load_tools, cpu_pair, tmp_path: Path, repo_env: dict[str, str]
) -> None:
    """SIGKILL gives the runner no chance to clean up: its children must end by themselves
    (PR_SET_PDEATHSIG), or every later trial would share the CPUs with orphans."""
    runner = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "archbench",
            "run",
            "--profile",
            "smoke",
            "--campaign",
            "killed",
            "--raw-root",
            str(tmp_path / "raw"),
            "--servers",
            "thread_pool",
            "--thread-counts",
            "1",
            "--trials",
            "1",
            "--no-warmup",
            "--duration-s",
            "20",
            "--server-cpus",
            cpu_pair[0],
            "--load-cpus",
            cpu_pair[1],
        ],
        cwd=REPO,
        env=repo_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        measured: dict[str, int] = {}
        while time.monotonic() < deadline and len(measured) < 2:  # server and wrk both running
            time.sleep(0.2)
            measured = measured_children(runner.pid)
        assert set(measured) == {"thread_pool", "wrk"}, f"the trial did not start: {measured}"
        children = set(measured.values())
        runner.kill()
        runner.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(p) for p in children):
            time.sleep(0.1)
        survivors = [p for p in children if alive(p)]
        for pid in survivors:
            os.killpg(pid, signal.SIGKILL)
        assert not survivors, f"children left running after the runner was killed: {survivors}"
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()


@pytest.mark.parametrize("architecture", ["blocking", "thread_pool", "epoll", "reuseport", "io_uring", "prefork"])
def test_a_port_in_use_is_a_clear_error(real_build_dir, architecture: str) -> None:
    """The runner always asks for an ephemeral port (--port 0); a port given by hand that is
    taken makes the server exit at once, naming the address, instead of serving nothing."""
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        done = subprocess.run(
            [str(real_build_dir / "bin" / architecture), "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=10,
        )
    finally:
        taken.close()
    if done.returncode == 3:
        pytest.skip(f"{architecture} unsupported here: {done.stderr.strip()}")
    assert done.returncode == 1
    assert f"127.0.0.1:{port}" in done.stderr and "Address already in use" in done.stderr
    assert "listening on" not in done.stdout


def test_the_runner_always_asks_for_an_ephemeral_port() -> None:
    from archbench.config.servers import server_specs

    for spec in server_specs().values():
        if spec.name == "nginx":
            continue  # the launcher picks a free port itself
        argv = spec.command({"threads": 1, "proto": "http"}, Path("build"))
        assert argv[argv.index("--port") + 1] == "0", spec.name


def netns_names() -> list[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=10, check=True)
    return [line.split()[0] for line in listed.stdout.splitlines() if line.strip()]


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None, reason="network namespaces need root and ip")
def test_namespaces_of_a_runner_killed_outright_are_removed_at_the_next_start(
    real_build_dir, load_tools, cpu_pair, tmp_path: Path, repo_env: dict[str, str]
) -> None:
    """SIGKILL leaves a netns campaign's namespaces behind (they outlive their processes); the next
    campaign's set-up recognises them by their dead owner's pid and deletes them."""
    runner = subprocess.Popen(
        [sys.executable, "-m", "archbench", "run", "--profile", "smoke", "--campaign", "killed-netns",
         "--raw-root", str(tmp_path / "raw"), "--servers", "blocking", "--trials", "1", "--no-warmup",
         "--duration-s", "20", "--server-cpus", cpu_pair[0], "--load-cpus", cpu_pair[1], "--placement", "netns"],
        cwd=REPO,
        env=repo_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    owned = [f"archbench-{runner.pid}-srv", f"archbench-{runner.pid}-load"]
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "wrk" not in {program_of(c) for c in children_of(runner.pid)}:
            time.sleep(0.2)
        assert set(owned) <= set(netns_names()), "the campaign did not set up its namespaces"
        runner.kill()
        runner.wait()
        assert set(owned) <= set(netns_names())  # nobody cleaned up: the stale case
        params = resolve_parameters(
            "smoke", servers=["blocking"], placement="netns", raw_root=str(tmp_path / "raw2"), check_host=False
        )
        with network_placement(params):
            assert not set(owned) & set(netns_names())
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
        for name in set(owned) & set(netns_names()):
            subprocess.run(["ip", "netns", "delete", name], capture_output=True, timeout=10)


@pytest.mark.integration
def test_a_full_disk_under_a_campaign_is_one_line_and_leaves_nothing_partial(tmp_path: Path, fake_build_dir) -> None:
    """A campaign whose raw root is a tiny file system: one error line naming the campaign and the path, a
    non-zero exit, no traceback, and no campaign directory without its campaign.json."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a small tmpfs")
    raw = tmp_path / "raw"
    raw.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", str(raw)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    build = fake_build_dir("blocking", "#!/bin/sh\nexit 1\n")  # never started: the campaign cannot begin
    try:
        (raw / "filler").write_bytes(b"x" * 4096)  # the file system is full before the campaign starts
        done = subprocess.run(
            [sys.executable, "-m", "archbench", "run", "--profile", "smoke", "--servers", "blocking",
             "--raw-root", str(raw), "--campaign", "full-disk", "--trials", "1", "--no-warmup",
             "--build-dir", str(build)],
            cwd=REPO, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        lines = done.stderr.strip().splitlines()
        assert "Traceback" not in done.stderr, done.stderr
        assert lines[-1] == (
            f"error: campaign full-disk: cannot write {raw / 'full-disk' / 'campaign.json'}: No space left on device"
        ), done.stderr
        assert sorted(os.listdir(raw)) == ["filler"]
    finally:
        subprocess.run(["umount", str(raw)], check=False)
