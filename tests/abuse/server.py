"""One server process of the abuse suite, with what the suite reads off it:
its open descriptors and resident memory (summed over the process tree, so
prefork's workers count), its stderr (for sanitizer reports) and its shutdown
line."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from archbench.measure.server_protocol import (
    EXIT_UNSUPPORTED,
    ShutdownLineError,
    exact_shutdown_stats,
    parse_ready_line,
    read_first_line,
)
from archbench.measure.server_protocol import sanitizer_report as first_sanitizer_report

READY_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 30.0


class Unsupported(Exception):
    """The binary exited with status 3: the kernel lacks what it needs."""


class ServerError(AssertionError):
    pass


def _pin_to_cpu0() -> None:
    # The machine's convention: servers on CPU 0, clients elsewhere.
    try:
        if 0 in os.sched_getaffinity(0):
            os.sched_setaffinity(0, {0})
    except OSError:
        pass


def process_tree(pid: int) -> list[int]:
    """pid and its descendants, from /proc (a process that has just exited is left out)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                children = Path(f"/proc/{current}/task/{task}/children").read_text().split()
                todo.extend(int(c) for c in children)
        except OSError:
            pass
    return found


def fd_count(pids: list[int]) -> int:
    """Open descriptors of these processes, summed."""
    total = 0
    for pid in pids:
        try:
            total += len(os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            pass
    return total


class Server:
    def __init__(self, binary: Path, args: list[str]):
        self.argv = [str(binary), "--port", "0", *args]
        self.stderr_file = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            self.argv, stdout=subprocess.PIPE, stderr=self.stderr_file, start_new_session=True, preexec_fn=_pin_to_cpu0
        )
        assert self.process.stdout is not None
        text = read_first_line(self.process.stdout, READY_TIMEOUT_S)
        ready = parse_ready_line(text)
        if ready is None:
            code = self.process.wait(timeout=10) if self.process.poll() is None else self.process.returncode
            if code is None:
                self.kill()
            err = self.stderr_text()
            self.close_files()
            if code == EXIT_UNSUPPORTED:
                raise Unsupported(err.strip())
            raise ServerError(f"{' '.join(self.argv)}: no ready line (got {text!r}, exit {code}); stderr: {err}")
        self.ready_line = text
        self.ready = ready  # its fields too (the work loop's calibration)
        self.host, self.port = ready.host, ready.port
        self.pid = self.process.pid

    # ---- readings ---------------------------------------------------------
    def pids(self) -> list[int]:
        """The server and its descendants (prefork's workers)."""
        return process_tree(self.pid)

    def fd_count(self) -> int:
        return fd_count(self.pids())

    def rss_kb(self) -> int:
        total = 0
        for pid in self.pids():
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            except (OSError, ValueError, IndexError):
                pass
        return total

    def socket_inodes(self) -> set[int]:
        inodes = set()
        for pid in self.pids():
            try:
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if target.startswith("socket:["):
                        inodes.add(int(target[8:-1]))
            except OSError:
                pass
        return inodes

    def open_paths(self) -> list[str]:
        paths = []
        for pid in self.pids():
            try:
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    paths.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
            except OSError:
                pass
        return paths

    def listening_addresses(self) -> list[tuple[str, int]]:
        """(address, port) of every listening TCP socket the server holds."""
        inodes = self.socket_inodes()
        found = []
        for table, family in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 6)):
            try:
                rows = Path(table).read_text().splitlines()[1:]
            except OSError:
                continue
            for row in rows:
                cols = row.split()
                if len(cols) < 10 or cols[3] != "0A" or int(cols[9]) not in inodes:
                    continue
                addr_hex, port_hex = cols[1].split(":")
                if family == 4:
                    addr = socket.inet_ntop(socket.AF_INET, bytes.fromhex(addr_hex)[::-1])
                else:
                    raw = bytes.fromhex(addr_hex)
                    addr = socket.inet_ntop(socket.AF_INET6, b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4)))
                found.append((addr, int(port_hex, 16)))
        return found

    def wait_fds_at_most(self, limit: int, timeout_s: float) -> int:
        deadline = time.monotonic() + timeout_s
        while True:
            n = self.fd_count()
            if n <= limit or time.monotonic() >= deadline:
                return n
            time.sleep(0.05)

    def alive(self) -> bool:
        return self.process.poll() is None

    def stderr_text(self) -> str:
        try:
            self.stderr_file.seek(0)
            return self.stderr_file.read().decode(errors="replace")
        except (ValueError, OSError):
            return ""

    def sanitizer_report(self) -> str | None:
        return first_sanitizer_report(self.stderr_text())

    # ---- stopping ------------------------------------------------------------
    def stop(self) -> dict:
        """SIGTERM; the shutdown line, checked: exit 0, one JSON line, no sanitizer report."""
        if self.process.poll() is not None:
            raise ServerError(
                f"server had exited on its own with status {self.process.returncode}: {self.stderr_text()[-2000:]}"
            )
        self.process.send_signal(signal.SIGTERM)
        try:
            out, _ = self.process.communicate(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            raise ServerError(f"server did not stop within {STOP_TIMEOUT_S:.0f} s of SIGTERM") from None
        report = self.sanitizer_report()
        if report is not None:
            raise ServerError(f"sanitizer report on stderr:\n{report}")
        if self.process.returncode != 0:
            raise ServerError(f"exit status {self.process.returncode} after SIGTERM: {self.stderr_text()[-2000:]}")
        try:
            return exact_shutdown_stats(out)
        except ShutdownLineError as error:
            raise ServerError(str(error)) from None

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.communicate()

    def close_files(self) -> None:
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.stderr_file.close()
