"""What the socket-level suites share: starting a server binary on an ephemeral
port and reading its ready line, stopping it with SIGTERM and checking its one
JSON line, sanitizer reports and exit status, and exact reads; and the frame of
a suite's main(): its command line, the skip for an unsupported kernel, running
the cases against one server and printing one PASS/FAIL line per case.

Standard library only (plus archbench.measure.server_protocol, the servers' line
protocol, itself standard library only: CTest puts the repository root on
PYTHONPATH), so CTest can run the suites with the system Python.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

from archbench.measure.server_protocol import (
    EXIT_UNSUPPORTED,
    ReadyLine,
    ShutdownLineError,
    exact_shutdown_stats,
    parse_ready_line,
    read_first_line,
    sanitizer_report,
)

IO_TIMEOUT_S = 10.0
READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 20.0  # sanitizer builds take longer to wind down

# What every architecture's shutdown line must carry, whatever the --proto.
SHUTDOWN_LINE_KEYS = (
    "architecture",
    "threads",
    "connections_accepted",
    "connections_served",
    "requests_served",
    "bad_requests",
    "connection_resets",
    "errors",
    "bytes_echoed",
    "timeouts",
)

Result = tuple[str, str]  # (check name, "PASS" or "FAIL: what went wrong")


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
    ready: ReadyLine | None = None  # the ready line, its fields included
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
            stdout=subprocess.PIPE,
            stderr=self.stderr_file,
            start_new_session=True,
        )
        assert self.process.stdout is not None
        text = read_first_line(self.process.stdout, READY_TIMEOUT_S)
        ready = parse_ready_line(text)
        if ready is None:
            self.process.kill()
            self.process.communicate(timeout=5)
            raise CaseFailure(f"no ready line (got {text!r}); stderr: {self.stderr_text()}")
        self.ready = ready
        self.port = ready.port

    def stop(self) -> dict:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            out, _ = self.process.communicate(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.communicate()
            raise CaseFailure(f"server did not stop within {STOP_TIMEOUT_S:.0f} s of SIGTERM") from None
        err = self.stderr_text()
        report = sanitizer_report(err)
        expect(report is None, f"sanitizer report on stderr:\n{report}")
        expect(self.process.returncode == 0, f"exit status {self.process.returncode} after SIGTERM; stderr: {err}")
        try:
            return exact_shutdown_stats(out)
        except ShutdownLineError as error:
            raise CaseFailure(str(error)) from None

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
    probe = subprocess.Popen(
        [binary, "--port", "0", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
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
    return message if probe.returncode == EXIT_UNSUPPORTED else None


# ---- the frame of a suite's main() ----------------------------------------------


def split_server_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """(the suite's own arguments, the server's): the server's follow a "--"."""
    if "--" not in argv:
        return argv, []
    i = argv.index("--")
    return argv[:i], argv[i + 1 :]


def parse_suite_command_line(
    description: str, cases: list[str], default_concurrency: int, concurrency_help: str
) -> tuple[argparse.Namespace, list[str]]:
    """The options of `SUITE BINARY [--concurrency N] [--cases ...] [--allow-unsupported] [-- SERVER ARGS...]`
    and the server's arguments."""
    own_args, server_args = split_server_args(sys.argv[1:])
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("binary")
    parser.add_argument("--concurrency", type=int, default=default_concurrency, help=concurrency_help)
    parser.add_argument("--cases", nargs="*", default=cases)
    parser.add_argument(
        "--allow-unsupported",
        action="store_true",
        help="pass (skip) when the binary exits 3: the kernel lacks what it needs",
    )
    return parser.parse_args(own_args), server_args


def announce_if_unsupported(binary: str, args: list[str]) -> bool:
    """True, after printing the SKIP line, if the binary exits 3 at start-up here."""
    reason = unsupported_reason(binary, args)
    if reason is None:
        return False
    print(f"SKIP unsupported here: {reason}")
    return True


def run_cases(suite: object, names: list[str]) -> list[Result]:
    """Calls the suite's case methods by name, one after another; a case fails by raising
    CaseFailure or a socket error, and the next case runs all the same."""
    results = []
    for name in names:
        case: Callable[[], None] = getattr(suite, name)
        try:
            case()
            results.append((name, "PASS"))
        except (CaseFailure, OSError) as e:
            results.append((name, f"FAIL: {e}"))
    return results


def missing_shutdown_keys(stats: dict) -> list[str]:
    return [f"shutdown line lacks {key}" for key in SHUTDOWN_LINE_KEYS if key not in stats]


def outcome(problems: list[str]) -> str:
    return "PASS" if not problems else "FAIL: " + "; ".join(problems)


def run_against_server(
    server: Server, run: Callable[[], list[Result]], shutdown_problems: Callable[[dict], list[str]]
) -> list[Result]:
    """Starts the server, runs the cases, stops it with SIGTERM and checks its shutdown line
    (sigterm_report); a failed start or stop is startup_or_shutdown, and a server that died
    on its own or reported on stderr is server_health."""
    results: list[Result] = []
    try:
        server.start()
        results.extend(run())
        stats = server.stop()
        results.append(("sigterm_report", outcome(shutdown_problems(stats))))
    except CaseFailure as e:
        results.append(("startup_or_shutdown", f"FAIL: {e}"))
    finally:
        problem = server.kill()
        if problem is not None:
            results.append(("server_health", f"FAIL: {problem}"))
    return results


def print_results(results: list[Result], label: str) -> int:
    """One PASS/FAIL line per result and a count; the exit status (1 if anything failed)."""
    failed = [r for r in results if r[1] != "PASS"]
    for name, result in results:
        print(f"{result[:4]} {name}{'' if result == 'PASS' else ': ' + result[6:]}")
    print(f"{len(results) - len(failed)}/{len(results)} passed: {label}")
    return 1 if failed else 0
