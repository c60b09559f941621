"""The runner's idle connections (archbench.measure.idle) against idle_holder's recorded outputs, and the server's
CPU over the load window (archbench.measure.proctree)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from archbench.data.records import IdleRun
from archbench.measure.idle import IdleHold, holder_command, idle_sources
from archbench.measure.processes import Exit
from archbench.measure.proctree import tree_cpu_s

FIXTURES = Path(__file__).parent / "fixtures" / "idle_holder"


class FakeHolder:
    """What IdleHold needs of a ManagedProcess: its start, its stop and its output."""

    def __init__(
        self, stdout: bytes, exit_code: int, sent: str = "SIGTERM", stderr: bytes = b"", started_ago_s: float = 0.0
    ) -> None:
        self.started = time.monotonic() - started_ago_s
        self._stdout, self._stderr, self._exit, self._sent = stdout, stderr, exit_code, sent

    def wait_for_line(self, pattern, timeout_s):
        return next((m for line in self._stdout.decode().splitlines() if (m := pattern.fullmatch(line))), None)

    def stop(self, grace_s):
        return Exit(self._exit, 0.01, 0.02, wall_s=1.0), self._sent

    def output(self):
        return self._stdout, self._stderr


def run_hold(name: str, requested: int, exit_code: int, **fake) -> tuple[IdleHold, list[str], dict[str, bytes]]:
    stdout = (FIXTURES / f"{name}.idle_holder.txt").read_bytes()
    hold = IdleHold(["idle_holder"], "1", requested, 0, output_file="t-r01.idle_holder.txt")
    hold.process = FakeHolder(stdout, exit_code, **fake)  # type: ignore[assignment]
    hold.wait_until_holding()
    outputs: dict[str, bytes] = {}
    problems = hold.stop(outputs)
    IdleRun.model_validate(hold.info)
    assert outputs == {"t-r01.idle_holder.txt": stdout}
    return hold, problems, outputs


def test_a_hold_kept_to_the_end_is_summarised_without_problems() -> None:
    before = time.monotonic()
    hold, problems, _ = run_hold("held", 500, 0, started_ago_s=2.5)
    elapsed = time.monotonic() - before
    assert problems == [] and hold.held
    info = hold.info
    assert (info["requested"], info["established"], info["closed_by_server"], info["open_at_end"]) == (500, 500, 0, 500)
    assert (info["exit_code"], info["signal_sent"], info["flags"]) == (0, "SIGTERM", [])
    # Counted from the holder's start (2.5 s before the test called it), to when it said it holds them (rounded to 1 us).
    assert 2.5 <= info["ready_after_s"] <= 2.5 + elapsed + 1e-6


def test_connections_the_server_closed_fail_the_trial_naming_them() -> None:
    hold, problems, _ = run_hold("closed", 50, 4)
    assert problems == ["the server closed 50 of the 50 idle connections during the trial (eof 50)"]
    assert hold.info["closed_by_server"] == 50 and hold.info["flags"] == ["closed_by_server"]


@pytest.mark.parametrize(
    ("name", "requested", "why"),
    [("refused", 10, "ECONNREFUSED 10"), ("not_http", 20, "bad_response 20")],
)
def test_a_hold_that_never_began_fails_the_trial_with_its_failures(name: str, requested: int, why: str) -> None:
    hold, problems, _ = run_hold(name, requested, 3)
    assert not hold.held
    assert problems == [f"idle_holder established 0 of {requested} idle connections ({why}); the load did not run"]
    assert hold.info["ready_after_s"] is None and "not_held" in hold.info["flags"]


def test_a_holder_that_failed_or_would_not_stop_fails_the_trial() -> None:
    _, problems, _ = run_hold("held", 500, 1, stderr=b"idle_holder: epoll_create1: out of memory\n")
    assert problems == ["idle_holder exited with status 1: idle_holder: epoll_create1: out of memory"]
    _, problems, _ = run_hold("held", 500, -9, sent="SIGKILL")
    assert problems == ["idle_holder did not stop within 10 s of SIGTERM; killed"]


def test_a_holder_output_that_is_not_its_json_fails_the_trial(tmp_path: Path) -> None:
    hold = IdleHold(["idle_holder"], "1", 5, 0, output_file="t.idle_holder.txt")
    hold.process = FakeHolder(b"holding 5 connections\n", 0)  # type: ignore[assignment]
    assert hold.wait_until_holding()
    (problem,) = hold.stop({})
    assert problem.startswith("idle_holder output not understood:")
    assert hold.info["established"] is None


def test_source_addresses_only_where_one_would_run_out_of_ports() -> None:
    assert idle_sources(8000, loopback=True) == 0
    assert idle_sources(16_001, loopback=True) == 2
    assert idle_sources(40_000, loopback=False) == 0
    assert holder_command(Path("build"), "127.0.0.1", 80, 20_000, 2) == [
        "build/bin/idle_holder", "--host", "127.0.0.1", "--port", "80", "--connections", "20000", "--sources", "2",
    ]  # fmt: skip


def test_tree_cpu_counts_a_process_and_its_descendants(tmp_path: Path) -> None:
    def stat(pid: int, ppid: int, utime: int, stime: int, name: str = "srv") -> None:
        (tmp_path / str(pid)).mkdir()
        fields = ["S", str(ppid)] + ["0"] * 9 + [str(utime), str(stime)] + ["0"] * 6
        (tmp_path / str(pid) / "stat").write_text(f"{pid} ({name}) {' '.join(fields)}\n")

    ticks = os.sysconf("SC_CLK_TCK")
    stat(10, 1, 100, 50, name="prefork (master) x")  # a name with spaces and parentheses
    stat(11, 10, 30, 20)
    stat(12, 11, 5, 5)
    stat(20, 1, 999, 999)  # not in the tree
    (tmp_path / "self").mkdir()
    assert tree_cpu_s(10, tmp_path) == pytest.approx((100 + 50 + 30 + 20 + 5 + 5) / ticks)
    assert tree_cpu_s(11, tmp_path) == pytest.approx(60 / ticks)
    assert tree_cpu_s(99, tmp_path) is None


def test_tree_cpu_of_this_process_grows_with_work() -> None:
    before = tree_cpu_s(os.getpid())
    deadline = time.process_time() + 0.05
    while time.process_time() < deadline:
        pass
    after = tree_cpu_s(os.getpid())
    assert before is not None and after is not None and after >= before + 0.03
