"""Idle keep-alive connections beside a trial's load: build/bin/idle_holder (contracts.md section 9).

For a configuration with `idle_connections` K, once the server is ready the runner
 1. starts `taskset -c LOAD_CPUS build/bin/idle_holder --host H --port P --connections K [--sources S]` (wrapped by
    the placement as the load generator is, and pinned to the same CPUs: it sleeps in epoll_wait while it holds)
    and waits for its line `holding K connections`: each connection opened, answered once, then left idle;
 2. runs the load beside them;
 3. stops the holder with SIGTERM (which ends a hold normally), keeps its stdout verbatim as
    `<trial-id>.idle_holder.txt` and puts its summary in the record's `idle`.

The trial fails, with the reason recorded, when the holder cannot establish all K or the server closes some of them
before the end: its throughput was then not measured beside K idle connections. The servers' idle timeout (60 s by
default) outlasts a trial, and the holder sends each connection's whole first request at once, so the header
timeout (10 s) never applies to a held connection.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archbench.measure.processes import ManagedProcess
from archbench.parse.common import LoadOutputError
from archbench.parse.idle_holder import parse as parse_idle_holder

TOOL = "idle_holder"
# Connections from one source address to one server port share its ephemeral ports (about 28,000 by default):
# beyond this many the holder spreads them over 127.0.0.1, .2, ... and leaves the rest of the first to the load.
PORTS_PER_SOURCE = 16_000
# How long the holder may take to establish K connections: it opened 8,000 in about 1 s on the reference machine
# (64 at a time), and its own connect and response timeouts are 5 s each.
HOLD_TIMEOUT_S = 10.0
HOLD_TIMEOUT_S_PER_CONNECTION = 0.002
STOP_GRACE_S = 10.0
STDERR_TAIL_CHARS = 2000
# Exit statuses of idle_holder (contracts.md section 9) that come with its JSON and a reason the parse gives.
MEASURED_EXITS = (0, 3, 4)


def idle_sources(connections: int, loopback: bool) -> int:
    """--sources for K held connections: 0 (the kernel's choice of source) while one address's ports suffice, or
    off loopback, where 127.0.0.x is not the holder's address."""
    if not loopback or connections <= PORTS_PER_SOURCE:
        return 0
    return -(-connections // PORTS_PER_SOURCE)


def hold_timeout_s(connections: int) -> float:
    return HOLD_TIMEOUT_S + HOLD_TIMEOUT_S_PER_CONNECTION * connections


def holder_command(build_dir: Path, host: str, port: int, connections: int, sources: int) -> list[str]:
    argv = [str(Path(build_dir) / "bin" / TOOL), "--host", host, "--port", str(port), "--connections", str(connections)]
    return argv + (["--sources", str(sources)] if sources else [])


def _tail(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text if len(text) <= STDERR_TAIL_CHARS else "..." + text[-STDERR_TAIL_CHARS:]


@dataclass
class IdleHold:
    """One trial's holder: what it was asked, how it ran (`info`, the record's `idle`) and its problems."""

    argv: list[str]
    cpus: str
    requested: int
    sources: int
    output_file: str
    process: ManagedProcess | None = None  # the running holder, once started
    held: bool = False
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.info = {
            "argv": self.argv,
            "cpus": self.cpus,
            "requested": self.requested,
            "sources": self.sources,
            "ready_after_s": None,
            "established": None,
            "closed_by_server": None,
            "open_at_end": None,
            "exit_code": None,
            "signal_sent": None,
            "cpu_user_s": None,
            "cpu_sys_s": None,
            "flags": None,
            "output_file": self.output_file,
            "stderr": None,
        }

    def wait_until_holding(self) -> bool:
        """Whether the holder said it holds every connection (False: it ended first, or took too long)."""
        holder = self._started()
        ready = re.compile(rf"holding {self.requested} connections")
        self.held = holder.wait_for_line(ready, hold_timeout_s(self.requested)) is not None
        if self.held:
            self.info["ready_after_s"] = round(time.monotonic() - holder.started, 6)
        return self.held

    def stop(self, outputs: dict[str, bytes]) -> list[str]:
        """Stop the holder (its hold ends normally on SIGTERM), keep its output, record its summary; the reasons
        the trial failed, if any."""
        holder = self._started()
        ended, sent = holder.stop(STOP_GRACE_S)
        stdout, stderr = holder.output()
        outputs[self.output_file] = stdout
        self.info.update(
            exit_code=ended.exit_code,
            signal_sent=None if sent == "none" else sent,
            cpu_user_s=ended.cpu_user_s,
            cpu_sys_s=ended.cpu_sys_s,
            stderr=_tail(stderr),
        )
        if sent == "SIGKILL":
            return [f"{TOOL} did not stop within {STOP_GRACE_S:g} s of SIGTERM; killed"]
        if ended.exit_code not in MEASURED_EXITS:
            return [f"{TOOL} exited with status {ended.exit_code}: {_tail(stderr) or '(no stderr)'}"]
        try:
            report = parse_idle_holder(stdout.decode("utf-8", "replace"))
        except LoadOutputError as error:
            return [f"{TOOL} output not understood: {error}"]
        closed = report["closed_by_server"]
        self.info.update(
            established=report["established"],
            closed_by_server=closed["count"],
            open_at_end=report["open_at_end"],
            flags=report["flags"],
        )
        return self._problems(report)

    def _started(self) -> ManagedProcess:
        if self.process is None:
            raise RuntimeError(f"{TOOL} was not started")
        return self.process

    def _problems(self, report: dict[str, Any]) -> list[str]:
        problems = []
        if report["established"] < self.requested or not self.held:
            failures = {**report["connect_failures"], **report["first_request_failures"]}
            why = ", ".join(f"{name} {count}" for name, count in sorted(failures.items())) or "no failure counted"
            if not self.held and report["established"] >= self.requested:
                why = f"no 'holding {self.requested} connections' line within {hold_timeout_s(self.requested):g} s"
            problems.append(
                f"{TOOL} established {report['established']} of {self.requested} idle connections ({why}); "
                "the load did not run"
            )
        closed = report["closed_by_server"]
        if closed["count"]:
            reasons = ", ".join(f"{name} {count}" for name, count in sorted(closed["by_reason"].items()))
            problems.append(
                f"the server closed {closed['count']} of the {self.requested} idle connections during the trial "
                f"({reasons or 'no reason recorded'})"
            )
        return problems
