"""An interrupt during an ssh trial stops the remote server too (ssh forwards no signal to it).

The "remote" here is this machine: a stand-in placement runs the commands it would send over ssh with sh, so
the server's pid is a local process the test can watch.
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from archbench.config.params import resolve_parameters
from archbench.config.plan import plan_campaign
from archbench.measure import ssh_placement
from archbench.measure.processes import ManagedProcess
from archbench.measure.server_protocol import READY_LINE


@dataclass
class StandInHost:
    name: str = "server"
    address: str = "127.0.0.1"
    cpus: str = "0"
    workdir: str = "/tmp"


@dataclass
class StandInInventory:
    server: StandInHost
    clients: tuple = ()


class StandInPlacement:
    """What run_ssh_trial asks of a placement, run locally: the server command prints its pid and waits."""

    def __init__(self) -> None:
        self.inventory = StandInInventory(StandInHost())

    def ssh_argv(self, host: StandInHost, remote_command: str) -> list[str]:
        return ["sh", "-c", "echo archbench-pid $$; exec sleep 30"]

    def run(self, host: StandInHost, script: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=10, check=False)

    def unexpected_host(self, host: str) -> str | None:
        return None


def alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def test_an_interrupt_before_the_ready_line_kills_the_remote_server(monkeypatch: pytest.MonkeyPatch) -> None:
    params = resolve_parameters("smoke", campaign="x", servers=["blocking"], seed=1, check_host=False)
    planned = plan_campaign(params)[0]
    original = ManagedProcess.wait_for_line

    def interrupted_at_the_ready_line(self: ManagedProcess, pattern: re.Pattern[str], timeout_s: float):
        if pattern is READY_LINE:
            raise KeyboardInterrupt  # Ctrl-C while waiting for the server
        return original(self, pattern, timeout_s)

    monkeypatch.setattr(ManagedProcess, "wait_for_line", interrupted_at_the_ready_line)
    started: list[ManagedProcess] = []
    with pytest.raises(KeyboardInterrupt):
        ssh_placement.run_ssh_trial(planned, params, StandInPlacement(), started)
    (server,) = started
    output = server.output_so_far().decode()
    remote_pid = int(re.search(r"archbench-pid (\d+)", output).group(1))
    deadline = time.monotonic() + 5
    while alive(remote_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(remote_pid), "the server's process outlived the interrupt"
    server.kill()
