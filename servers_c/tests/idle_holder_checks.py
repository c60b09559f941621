#!/usr/bin/env python3
"""idle_holder against real architectures, and against what it must report.

Usage: idle_holder_checks.py --holder BIN --epoll BIN --thread-per-conn BIN

The holder must establish and hold 500 connections against an event loop and a
thread per connection (each server saw 500 connections and 500 requests),
print its ready line, and exit 0; count the connections a server closes
during the hold (a server with a 1 s --idle-timeout) and exit 4; count refused
connects by errno and first requests a non-HTTP server cannot answer, exit 3
with no ready line; stop on SIGTERM with exit 0; refuse a --connections its
open-file limit cannot hold, and bad flags, naming the flag (exit 2).
Every run is bounded (a few seconds); stdout goes through
archbench.parse.idle_holder, the parser the runner will use. Standard library only.
"""

from __future__ import annotations

import argparse
import resource
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable

from server_harness import CaseFailure, Server, expect, print_results

from archbench.measure.server_protocol import sanitizer_report
from archbench.parse.common import LoadOutputError
from archbench.parse.idle_holder import parse

RUN_TIMEOUT_S = 30.0
READY_TIMEOUT_S = 10.0


def limit_files(n: int) -> Callable[[], None]:
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))


class Checks:
    def __init__(self, holder: str, epoll: str, thread_per_conn: str):
        self.holder, self.epoll, self.thread_per_conn = holder, epoll, thread_per_conn
        self.results: list[tuple[str, str]] = []

    def run_holder(self, port: int, *args: str, nofile: int | None = None) -> tuple[int, dict, str]:
        proc = subprocess.run(
            [self.holder, "--port", str(port), *args],
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            preexec_fn=limit_files(nofile) if nofile else None,
        )
        report = sanitizer_report(proc.stderr)
        expect(report is None, f"idle_holder: sanitizer report on stderr:\n{report}")
        record = parse(proc.stdout)
        expect(
            record["exit_status"] == proc.returncode,
            f"exit_status {record['exit_status']} but the process exited {proc.returncode}",
        )
        return proc.returncode, record, proc.stderr

    def held_against(self, binary: str) -> None:
        server = Server(binary, [])
        server.start()
        try:
            code, r, _ = self.run_holder(server.port, "--connections", "500", "--sources", "2", "--duration", "1.5")
            stats = server.stop()
        finally:
            problem = server.kill()
        expect(problem is None, f"server: {problem}")
        expect(code == 0 and r["flags"] == [] and r["ready_line"], f"exit {code}, flags {r['flags']}")
        expect(
            (r["attempted"], r["connected"], r["established"], r["open_at_end"]) == (500, 500, 500, 500),
            f"attempted {r['attempted']}, connected {r['connected']}, established {r['established']}, "
            f"open at the end {r['open_at_end']}",
        )
        expect(r["stopped_by"] == "duration" and 1.4 <= r["held_s"] <= 3, f"held {r['held_s']} s")
        expect(r["nofile_soft"] >= 516, f"open-file soft limit {r['nofile_soft']} below what 500 need")
        expect(
            stats["connections_accepted"] == 500 and stats["requests_served"] == 500,
            f"the server accepted {stats['connections_accepted']} and served {stats['requests_served']} requests",
        )

    def held_epoll(self) -> None:
        self.held_against(self.epoll)

    def held_thread_per_conn(self) -> None:
        self.held_against(self.thread_per_conn)

    def server_closes(self) -> None:
        server = Server(self.epoll, ["--idle-timeout", "1"])
        server.start()
        try:
            code, r, _ = self.run_holder(server.port, "--connections", "50", "--duration", "2.5")
        finally:
            server.kill()
        closed = r["closed_by_server"]
        expect(code == 4 and r["flags"] == ["closed_by_server"], f"exit {code}, flags {r['flags']}")
        expect(closed["count"] == 50 and closed["by_reason"] == {"eof": 50}, f"closed_by_server {closed}")
        expect(r["open_at_end"] == 0 and r["established"] == 50, f"open at the end {r['open_at_end']}")
        idle_for = closed["first_s"] - r["all_established_s"]
        expect(0.5 <= idle_for <= 2.4, f"closed {idle_for:.3f} s into the hold by a 1 s idle timeout")
        expect(sum(s["closed"] for s in closed["per_second"]) == 50, f"per_second {closed['per_second']}")

    def not_http(self) -> None:
        server = Server(self.epoll, ["--proto", "echo"])
        server.start()
        try:
            code, r, _ = self.run_holder(server.port, "--connections", "20", "--duration", "1")
        finally:
            server.kill()
        expect(code == 3 and not r["ready_line"], f"exit {code}, ready line {r['ready_line']}")
        expect(r["first_request_failures"] == {"bad_response": 20}, f"{r['first_request_failures']}")
        expect(r["stopped_by"] == "not_established" and r["held_s"] is None, f"stopped by {r['stopped_by']}")

    def refused(self) -> None:
        with socket.socket() as s:  # a port nobody listens on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        code, r, _ = self.run_holder(port, "--connections", "7", "--sources", "3")
        expect(code == 3 and r["connect_failures"] == {"ECONNREFUSED": 7}, f"exit {code}, {r['connect_failures']}")
        expect(r["established"] == 0 and "not_all_established" in r["flags"], f"flags {r['flags']}")

    def sigterm(self) -> None:
        server = Server(self.epoll, [])
        server.start()
        try:
            proc = subprocess.Popen(
                [self.holder, "--port", str(server.port), "--connections", "100"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            assert proc.stdout is not None
            ready, _, _ = select.select([proc.stdout], [], [], READY_TIMEOUT_S)
            line = proc.stdout.readline() if ready else ""
            started = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=10)
            took = time.monotonic() - started
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
            server.kill()
        expect(line.strip() == "holding 100 connections", f"ready line {line!r}")
        expect(sanitizer_report(err) is None, f"sanitizer report on stderr:\n{sanitizer_report(err)}")
        r = parse(line + out)
        expect(
            proc.returncode == 0 and r["interrupted"] and r["stopped_by"] == "signal",
            f"exit {proc.returncode}, stopped by {r['stopped_by']}",
        )
        expect(took < 2 and r["open_at_end"] == 100, f"stopped after {took:.2f} s, open {r['open_at_end']}")

    def open_file_limit(self) -> None:
        proc = subprocess.run(
            [self.holder, "--port", "1", "--connections", "90"],
            capture_output=True,
            text=True,
            timeout=10,
            preexec_fn=limit_files(100),
        )
        expect(
            proc.returncode == 2 and "--connections" in proc.stderr and "limit is 100" in proc.stderr,
            f"exit {proc.returncode}, {proc.stderr!r}",
        )
        expect(proc.stdout == "", f"stdout {proc.stdout!r}")

    def usage_errors(self) -> None:
        for args, flag in (
            [["--connections", "5"], "--port"],
            [["--port", "1", "--connections", "0"], "--connections"],
            [["--port", "1", "--in-flight", "x"], "--in-flight"],
            [["--port", "1", "--duration", "-1"], "--duration"],
            [["--port", "1", "--sources", "255"], "--sources"],
            [["--port", "1", "--path", "no-slash"], "--path"],
            [["--port", "1", "--host", "localhost"], "--host"],
            [["--port", "1", "--bogus"], "--bogus"],
        ):
            proc = subprocess.run([self.holder, *args], capture_output=True, text=True, timeout=10)
            expect(proc.returncode == 2 and flag in proc.stderr, f"{args}: exit {proc.returncode}, {proc.stderr!r}")
        help_text = subprocess.run([self.holder, "--help"], capture_output=True, text=True, timeout=10)
        expect(
            help_text.returncode == 0 and "Exit status" in help_text.stdout and "--in-flight" in help_text.stdout,
            "--help",
        )

    def run(self) -> int:
        for name in [
            "held_epoll",
            "held_thread_per_conn",
            "server_closes",
            "not_http",
            "refused",
            "sigterm",
            "open_file_limit",
            "usage_errors",
        ]:
            try:
                getattr(self, name)()
                self.results.append((name, "PASS"))
            except (CaseFailure, LoadOutputError, OSError, subprocess.TimeoutExpired, KeyError, TypeError) as e:
                self.results.append((name, f"FAIL: {type(e).__name__}: {e}"))
        return print_results(self.results, "idle_holder checks")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--holder", required=True)
    parser.add_argument("--epoll", required=True)
    parser.add_argument("--thread-per-conn", required=True)
    opts = parser.parse_args()
    return Checks(opts.holder, opts.epoll, opts.thread_per_conn).run()


if __name__ == "__main__":
    sys.exit(main())
