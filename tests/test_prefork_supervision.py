"""prefork's parent and the stop signal: the runner sends SIGTERM to the whole process group, so a worker may get
its copy, and exit, before the parent has seen its own. That is the requested stop, not a crash: the server must
still exit 0 with one shutdown line. A worker killed on its own ends the run loudly (exit 1)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

STOP_TIMEOUT_S = 10


def start_prefork(build_dir: Path, workers: int = 2) -> subprocess.Popen[str]:
    server = subprocess.Popen(
        [str(build_dir / "bin" / "prefork"), "--port", "0", "--workers", str(workers)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as the runner starts it
    )
    assert server.stdout is not None
    ready = server.stdout.readline()
    assert ready.startswith("listening on "), ready
    return server


def worker_pids(parent: int) -> list[int]:
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline:
        children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        if len(children) >= 2:
            return [int(pid) for pid in children]
        time.sleep(0.01)
    raise AssertionError("prefork's workers did not appear")


def finish(server: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = server.communicate(timeout=STOP_TIMEOUT_S)
    return server.returncode, out, err


@pytest.fixture
def prefork_build(real_build_dir: Path) -> Path:
    if not (real_build_dir / "bin" / "prefork").is_file():
        pytest.skip("prefork is not built")
    return real_build_dir


def test_a_worker_stopped_before_the_parent_is_a_clean_stop(prefork_build: Path) -> None:
    server = start_prefork(prefork_build)
    first = worker_pids(server.pid)[0]
    os.kill(first, signal.SIGTERM)  # the group's SIGTERM reaching one worker first
    time.sleep(0.2)
    os.killpg(server.pid, signal.SIGTERM)
    code, out, err = finish(server)
    assert code == 0, err
    assert "unexpectedly" not in err
    report = json.loads(out.strip().splitlines()[-1])
    assert report["architecture"] == "prefork" and report["errors"] == 0


def test_the_group_stop_is_clean_every_time(prefork_build: Path) -> None:
    for _ in range(10):
        server = start_prefork(prefork_build)
        worker_pids(server.pid)
        os.killpg(server.pid, signal.SIGTERM)
        code, _, err = finish(server)
        assert code == 0, err


def test_a_worker_killed_on_its_own_ends_the_run_loudly(prefork_build: Path) -> None:
    server = start_prefork(prefork_build)
    os.kill(worker_pids(server.pid)[0], signal.SIGKILL)
    code, _, err = finish(server)
    assert code == 1 and "ended unexpectedly" in err
