"""What the socket-level suites share: starting a server binary on an ephemeral
port and reading its ready line, stopping it with SIGTERM and checking its one
JSON line, sanitizer reports and exit status, and exact reads.

Standard library only, so CTest can run the suites anywhere.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass

from sanitizer_check import sanitizer_report

UNSUPPORTED_EXIT_STATUS = 3  # the binary's kernel lacks what it needs

IO_TIMEOUT_S = 10.0
READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 20.0  # sanitizer builds take longer to wind down

class CaseFailure(AssertionError):
    pass


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CaseFailure(message)


@dataclass
class Server:
    binary: str
    args: list[str]
    process: subprocess.Popen | None = None
    port: int = 0
    # stderr goes to a file, so a long report can never block the server on a full pipe
    stderr_file: tempfile._TemporaryFileWrapper | None = None

    def stderr_text(self) -> str:
        if self.stderr_file is None:
            return ""
        self.stderr_file.seek(0)
        return self.stderr_file.read().decode(errors="replace")

    def start(self) -> None:
        self.stderr_file = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [self.binary, "--port", "0", *self.args],
            stdout=subprocess.PIPE, stderr=self.stderr_file, start_new_session=True)
        deadline = time.monotonic() + READY_TIMEOUT_S
        assert self.process.stdout is not None
        line = b""
        while time.monotonic() < deadline and not line.endswith(b"\n"):
            chunk = self.process.stdout.readline()
            if not chunk:
                break
            line += chunk
        text = line.decode(errors="replace").strip()
        if not text.startswith("listening on "):
            self.process.kill()
            self.process.communicate(timeout=5)
            raise CaseFailure(f"no ready line (got {text!r}); stderr: {self.stderr_text()}")
        self.port = int(text.rsplit(":", 1)[1])

    def stop(self) -> dict:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            out, _ = self.process.communicate(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.communicate()
            raise CaseFailure(f"server did not stop within {STOP_TIMEOUT_S:.0f} s of SIGTERM")
        err = self.stderr_text()
        report = sanitizer_report(err)
        expect(report is None, f"sanitizer report on stderr:\n{report}")
        expect(self.process.returncode == 0,
               f"exit status {self.process.returncode} after SIGTERM; stderr: {err}")
        lines = [l for l in out.decode().splitlines() if l.strip()]
        expect(len(lines) == 1, f"expected one JSON line after the ready line, got {lines!r}")
        return json.loads(lines[0])

    def kill(self) -> str | None:
        """Kills the server if it still runs; returns a problem if it had died
        on its own (a crash, a sanitizer halting it) or reported on stderr."""
        problem = None
        if self.process is not None:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.communicate()
            elif self.process.returncode not in (0, None):
                problem = f"server exited on its own with status {self.process.returncode}"
        report = sanitizer_report(self.stderr_text())
        if report is not None:
            problem = f"sanitizer report on stderr:\n{report}"
        if self.stderr_file is not None:
            self.stderr_file.close()
            self.stderr_file = None
        return problem

    def connect(self) -> socket.socket:
        s = socket.create_connection(("127.0.0.1", self.port), timeout=IO_TIMEOUT_S)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s


def read_exactly(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(min(1 << 20, n - len(data)))
        if not chunk:
            raise CaseFailure(f"connection closed after {len(data)} of {n} expected bytes: {bytes(data[:200])!r}")
        data += chunk
    return bytes(data)


def unsupported_reason(binary: str, args: list[str]) -> str | None:
    """The binary's message if it exits with the unsupported status at start-up, else None."""
    probe = subprocess.Popen([binary, "--port", "0", *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
    try:
        probe.wait(timeout=1.0)
    except subprocess.TimeoutExpired:
        os.killpg(probe.pid, signal.SIGKILL)
        probe.wait()
        return None
    finally:
        probe.stdout.close()
        message = probe.stderr.read().decode(errors="replace").strip() if probe.returncode is not None else ""
        probe.stderr.close()
    return message if probe.returncode == UNSUPPORTED_EXIT_STATUS else None
