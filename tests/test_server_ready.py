"""A server's ready line means every thread and worker process it starts is serving: a trial's load begins at that
line, so a pool still starting would meet it with fewer workers than its flags say.

prefork once printed the line right after forking, before its workers had their event loops on the listener; on a
busy CPU the abuse suite then saw a descriptor appear after its baseline. Here each variant of the registry starts
beside busy processes on its CPU, which keep a late worker from catching up before it is counted, and its
processes, threads and descriptors are counted as soon as the ready line arrives and again a moment later, with no
traffic in between: nothing may have been added. Against that prefork, 35 of 40 starts beside 8 busy processes
showed a descriptor added after the line.

The server stays in this process's session: with the kernel's autogroup scheduling a new session is a scheduling
group of its own, which would hand a late worker the CPU at once and hide it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from abuse.server import READY_TIMEOUT_S, STOP_TIMEOUT_S, fd_count, process_tree
from abuse.variants import VARIANTS, Variant

from archbench.measure.server_protocol import (
    EXIT_UNSUPPORTED,
    exact_shutdown_stats,
    parse_ready_line,
    read_first_line,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
BIN_DIR = REPO_ROOT / "build" / "bin"
SERVER_CPU = 0  # the servers' CPU in the tests (abuse.server pins them there too)
HOGS = 8
STARTS = 3  # per variant: beside HOGS busy processes most starts of a server still starting catch it
SETTLE_S = 0.1


def _pin_to_server_cpu() -> None:
    os.sched_setaffinity(0, {SERVER_CPU})


@pytest.fixture(scope="module")
def busy_server_cpu() -> Iterator[None]:
    if SERVER_CPU not in os.sched_getaffinity(0):
        pytest.skip(f"CPU {SERVER_CPU}, where the servers are pinned, is not available to this process")
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=_pin_to_server_cpu) for _ in range(HOGS)
    ]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait(timeout=10)


def _footprint(pid: int) -> tuple[int, int, int]:
    """(processes, threads, open descriptors) of the process tree under pid."""
    pids = process_tree(pid)
    return len(pids), sum(len(os.listdir(f"/proc/{p}/task")) for p in pids), fd_count(pids)


def _start_and_count(binary: Path, args: tuple[str, ...]) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The footprint at the ready line and SETTLE_S later; the server then stops cleanly on SIGTERM."""
    process = subprocess.Popen(
        [str(binary), "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_pin_to_server_cpu,
    )
    try:
        assert process.stdout is not None
        line = read_first_line(process.stdout, READY_TIMEOUT_S)
        if parse_ready_line(line) is None:
            _, err = process.communicate(timeout=STOP_TIMEOUT_S)
            if process.returncode == EXIT_UNSUPPORTED:
                pytest.skip(f"unsupported here: {err.decode(errors='replace').strip()}")
            pytest.fail(f"no ready line (got {line!r}, exit {process.returncode}): {err[-2000:]!r}")
        at_ready = _footprint(process.pid)
        time.sleep(SETTLE_S)
        later = _footprint(process.pid)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=STOP_TIMEOUT_S)
        assert process.returncode == 0, f"exit status {process.returncode} after SIGTERM: {err[-2000:]!r}"
        stats = exact_shutdown_stats(out)
        assert stats.get("errors") == 0, f"errors in the shutdown line: {stats}"
        return at_ready, later
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_a_server_has_started_everything_by_its_ready_line(busy_server_cpu: None, variant: Variant) -> None:
    binary = BIN_DIR / variant.binary
    if not binary.is_file():
        pytest.skip(f"{binary} not built; run make servers")
    for start in range(STARTS):
        at_ready, later = _start_and_count(binary, variant.args)
        assert later == at_ready, (
            f"start {start + 1}: (processes, threads, descriptors) {at_ready} at the ready line, {later} "
            f"{SETTLE_S} s later with no traffic: {variant.name} announced ready before it had started"
        )
