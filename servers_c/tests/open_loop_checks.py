#!/usr/bin/env python3
"""open_loop against a real server, against scripted servers, and against what it must report.

Usage: open_loop_checks.py --client BIN --server BIN

The client must offer its rate to a real server (epoll) with every scheduled request completed,
fixed and Poisson arrivals alike, its histogram and per-second series adding up to its counts;
charge a server's stall to every request queued behind it (latency from the scheduled send time,
no coordinated omission), with or without pipelining (--pipeline: the queued requests are then sent
during the stall); read chunked and Content-Length bodies and count non-2xx statuses;
count a server that closes after each response, one that drops a request, a response past
--timeout, and refused connects by errno; refuse bad flags
and a --connections the open-file limit cannot hold, naming the flag (exit 2). Every run is
bounded (a few seconds); stdout goes through archbench.parse.open_loop, the parser the runner
uses. Standard library only (plus that parser).
"""

from __future__ import annotations

import argparse
import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from server_harness import CaseFailure, Server, expect, print_results

from archbench.measure.server_protocol import sanitizer_report
from archbench.parse.common import LoadOutputError
from archbench.parse.open_loop import parse

RUN_TIMEOUT_S = 30.0
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
CHUNKED = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"
NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
CLOSING = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"


class ScriptedServer:
    """A loopback HTTP server on a thread per connection: `answer(n)` gives the bytes for the n-th
    request (counted over all connections) and how long to wait before sending them; None closes."""

    def __init__(self, answer: Callable[[int], tuple[float, bytes | None]]):
        self.answer = answer
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.count = 0
        self.most_queued = 0  # the most complete requests found waiting in one connection's buffer
        self.lock = threading.Lock()
        self.stopping = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stopping:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buf = b""
        with conn:
            while not self.stopping:
                try:
                    data = conn.recv(4096)
                except OSError:
                    return
                if not data:
                    return
                buf += data
                self.most_queued = max(self.most_queued, buf.count(b"\r\n\r\n"))
                while b"\r\n\r\n" in buf:
                    _, buf = buf.split(b"\r\n\r\n", 1)
                    with self.lock:
                        n = self.count
                        self.count += 1
                    delay, reply = self.answer(n)
                    if delay:
                        time.sleep(delay)
                    if reply is None:
                        return
                    try:
                        conn.sendall(reply)
                    except OSError:
                        return
                    if reply is CLOSING:
                        return

    def close(self) -> None:
        self.stopping = True
        self.listener.close()


class Checks:
    def __init__(self, client: str, server: str):
        self.client, self.server = client, server
        self.results: list[tuple[str, str]] = []

    def run_client(self, port: int, *args: str) -> dict:
        proc = subprocess.run(
            [self.client, "--port", str(port), *args], capture_output=True, text=True, timeout=RUN_TIMEOUT_S
        )
        report = sanitizer_report(proc.stderr)
        expect(report is None, f"open_loop: sanitizer report on stderr:\n{report}")
        expect(proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}")
        return parse(proc.stdout)

    def consistent(self, r: dict) -> None:
        """Every scheduled request accounted for once; the histogram and the series add up to the counts."""
        c = r["counts"]
        expect(c["scheduled"] == c["sent"] + c["unsent_at_end"], f"scheduled != sent + unsent: {c}")
        ended = c["completed"] + c["non_2xx"] + c["lost"] + c["outstanding_at_end"]
        expect(c["sent"] == ended, f"sent {c['sent']} but {ended} completed, non-2xx, lost or outstanding: {c}")
        expect(sum(n for _, _, n in r["histogram"]["buckets"]) == c["completed"], "histogram total != completed")
        expect(sum(r["per_second"]["completed"]) == c["completed"], "per-second completions != completed")
        expect(sum(r["per_second"]["sent"]) == c["sent"], "per-second sends != sent")

    def run_against_real_server(self, *args: str) -> dict:
        """The client's report of a run against a real server, which must stop cleanly; checked for consistency."""
        server = Server(self.server, [])
        server.start()
        try:
            r = self.run_client(server.port, *args)
            server.stop()
        finally:
            problem = server.kill()
        expect(problem is None, f"server: {problem}")
        self.consistent(r)
        return r

    def against_real(self, arrival: str, *extra: str) -> dict:
        r = self.run_against_real_server(
            *("--rate", "1000", "--duration", "2", "--warmup", "0.3", "--connections", "8", "--threads", "2"),
            *("--arrival", arrival, "--seed", "3", *extra),
        )
        c = r["counts"]
        low, high = (1990, 2010) if arrival == "fixed" else (1700, 2300)
        expect(low <= c["scheduled"] <= high, f"{arrival}: {c['scheduled']} scheduled in 2 s at 1000/s")
        expect(c["completed"] >= c["scheduled"] - 8, f"{arrival}: {c['completed']} of {c['scheduled']} completed")
        expect(r["flags"] == [] and c["warmup_completed"] > 0, f"flags {r['flags']}, counts {c}")
        expect(len(r["per_second"]["completed"]) == 2, f"series {r['per_second']}")
        lat = r["latency_s"]
        expect(0 < lat["min"] <= lat["percentiles"]["50"] <= lat["percentiles"]["99"] <= lat["max"], f"latency {lat}")
        expect(r["cpu_s"] > 0 and r["cpu"]["wall_s"] >= 2.2, f"cpu {r['cpu']}")
        p = r["parameters"]
        expect(p["pipeline"] == 1 and p["pipelining"] is False and p["timer_slack_ns"] > 0, f"parameters {p}")
        lag = r["send_lag_ns"]
        expect(0 < lag["count"] <= c["sent"] and lag["p50"] <= lag["p99"] <= lag["max"], f"send lag {lag}")
        return r

    def fixed_rate(self) -> None:
        self.against_real("fixed")

    def poisson_rate(self) -> None:
        r = self.against_real("poisson", "--timer-slack", "20000")
        expect(r["parameters"]["timer_slack_ns"] == 20000, f"parameters {r['parameters']}")

    def stall_is_charged(self) -> None:
        # One connection at 100/s; the 30th request is answered 500 ms late: the ~50 requests scheduled
        # during the stall wait behind it, and each is charged from its own schedule time.
        server = ScriptedServer(lambda n: (0.5 if n == 30 else 0.0, OK))
        try:
            r = self.run_client(server.port, "--rate", "100", "--duration", "1.5", "--connections", "1")
        finally:
            server.close()
        self.consistent(r)
        slow = sum(n for lower, _, n in r["histogram"]["buckets"] if lower >= 100_000_000)
        expect(r["latency_s"]["max"] >= 0.49, f"max {r['latency_s']['max']}: the stall is not charged")
        expect(slow >= 35, f"{slow} requests over 100 ms: those queued behind the stall are not charged")
        expect(r["counts"]["completed"] >= 140, f"{r['counts']['completed']} completed: the backlog was not sent")

    def pipelined_stall_is_charged(self) -> None:
        # As stall_is_charged with up to 8 requests outstanding: 7 of those scheduled during the stall
        # are sent at once and wait in the server's buffer; all are charged from their schedule times.
        server = ScriptedServer(lambda n: (0.5 if n == 30 else 0.0, OK))
        try:
            r = self.run_client(
                server.port, "--rate", "100", "--duration", "1.5", "--connections", "1", "--pipeline", "8"
            )
        finally:
            server.close()
        self.consistent(r)
        slow = sum(n for lower, _, n in r["histogram"]["buckets"] if lower >= 100_000_000)
        expect(r["parameters"]["pipeline"] == 8 and r["parameters"]["pipelining"] is True, f"{r['parameters']}")
        expect(server.most_queued >= 4, f"the server saw at most {server.most_queued} requests queued: not pipelined")
        expect(r["latency_s"]["max"] >= 0.49 and slow >= 35, f"max {r['latency_s']['max']}, {slow} over 100 ms")
        expect(r["counts"]["completed"] >= 140 and r["counts"]["lost"] == 0, f"counts {r['counts']}")

    def pipelined_real(self) -> None:
        # A real server that reads pipelined requests: every one answered, in order, at 4 deep.
        r = self.run_against_real_server("--rate", "2000", "--duration", "1", "--connections", "2", "--pipeline", "4")
        c = r["counts"]
        expect(1990 <= c["scheduled"] <= 2010 and c["completed"] >= c["scheduled"] - 8, f"counts {c}")
        expect(r["flags"] == [] and c["lost"] == 0, f"flags {r['flags']}, counts {c}")

    def bodies_and_statuses(self) -> None:
        server = ScriptedServer(lambda n: (0.0, (OK, CHUNKED, NOT_FOUND)[n % 3]))
        try:
            r = self.run_client(server.port, "--rate", "300", "--duration", "1", "--connections", "3")
        finally:
            server.close()
        self.consistent(r)
        c = r["counts"]
        expect(c["non_2xx"] >= 90 and c["completed"] >= 190, f"counts {c}")
        expect(r["errors"]["bad_response"] == 0 and "non_2xx" in r["flags"], f"errors {r['errors']}, {r['flags']}")

    def server_closes(self) -> None:
        server = ScriptedServer(lambda n: (0.0, CLOSING))
        try:
            r = self.run_client(server.port, "--rate", "100", "--duration", "1", "--connections", "2")
        finally:
            server.close()
        self.consistent(r)
        c = r["counts"]
        expect(r["errors"]["closed_by_server"] >= 95 and c["reconnects"] >= 95, f"{r['errors']}, {c}")
        expect(c["completed"] >= 95 and c["lost"] == 0, f"counts {c}")

    def server_drops_a_request(self) -> None:
        server = ScriptedServer(lambda n: (0.0, None) if n == 0 else (0.0, OK))
        try:
            r = self.run_client(server.port, "--rate", "20", "--duration", "1", "--connections", "1")
        finally:
            server.close()
        self.consistent(r)
        expect(r["errors"]["io"].get("eof", 0) == 1 and r["counts"]["lost"] == 1, f"{r['errors']}, {r['counts']}")
        expect(r["counts"]["completed"] >= 17, f"counts {r['counts']}")

    def slow_response_times_out(self) -> None:
        server = ScriptedServer(lambda n: (0.6, OK) if n == 0 else (0.0, OK))
        try:
            r = self.run_client(
                server.port, "--rate", "20", "--duration", "1", "--connections", "1", "--timeout", "0.2"
            )
        finally:
            server.close()
        self.consistent(r)
        c = r["counts"]
        expect(r["errors"]["timeout"] == 1 and c["lost"] == 1 and c["reconnects"] == 1, f"{r['errors']}, {c}")
        expect(c["completed"] >= 17, f"counts {c}")

    def refused(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]  # bound, not listening: connects are refused
            r = self.run_client(port, "--rate", "100", "--duration", "0.3", "--connections", "2")
        expect(r["errors"]["connect"].get("ECONNREFUSED", 0) > 0, f"errors {r['errors']}")
        expect(r["flags"] == ["socket_errors", "no_requests"], f"flags {r['flags']}")
        expect(r["counts"]["unsent_at_end"] == r["counts"]["scheduled"] > 0, f"counts {r['counts']}")

    def open_file_limit(self) -> None:
        proc = subprocess.run(
            [self.client, "--port", "1", "--rate", "1", "--duration", "1", "--connections", "90"],
            capture_output=True,
            text=True,
            timeout=10,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (100, 100)),
        )
        expect(proc.returncode == 2 and "--connections" in proc.stderr, f"exit {proc.returncode}, {proc.stderr!r}")
        expect(proc.stdout == "", f"stdout {proc.stdout!r}")

    def usage_errors(self) -> None:
        base = ["--rate", "10", "--duration", "1"]
        for args, flag in (
            [["--rate", "10", "--duration", "1"], "--port"],
            [["--port", "1", "--duration", "1"], "--rate"],
            [["--port", "1", "--rate", "10"], "--duration"],
            [["--port", "1", *base, "--rate", "0"], "--rate"],
            [["--port", "1", *base, "--arrival", "bursty"], "--arrival"],
            [["--port", "1", *base, "--connections", "2", "--threads", "3"], "--threads"],
            [["--port", "1", *base, "--warmup", "-1"], "--warmup"],
            [["--port", "1", *base, "--path", "x y"], "--path"],
            [["--port", "1", *base, "--host", "localhost"], "--host"],
            [["--port", "1", *base, "--bogus"], "--bogus"],
            [["--port", "1", *base, "--pipeline", "0"], "--pipeline"],
            [["--port", "1", *base, "--pipeline", "65"], "--pipeline"],
            [["--port", "1", *base, "--timer-slack", "0"], "--timer-slack"],
        ):
            proc = subprocess.run([self.client, *args], capture_output=True, text=True, timeout=10)
            expect(proc.returncode == 2 and flag in proc.stderr, f"{args}: exit {proc.returncode}, {proc.stderr!r}")
        help_text = subprocess.run([self.client, "--help"], capture_output=True, text=True, timeout=10)
        expect(
            help_text.returncode == 0
            and all(word in help_text.stdout for word in ("--arrival", "SCHEDULED", "--pipeline", "pipelining")),
            "--help",
        )

    def run(self) -> int:
        for name in [
            "fixed_rate",
            "poisson_rate",
            "stall_is_charged",
            "pipelined_stall_is_charged",
            "pipelined_real",
            "bodies_and_statuses",
            "server_closes",
            "server_drops_a_request",
            "slow_response_times_out",
            "refused",
            "open_file_limit",
            "usage_errors",
        ]:
            try:
                getattr(self, name)()
                self.results.append((name, "PASS"))
            except (CaseFailure, LoadOutputError, OSError, subprocess.TimeoutExpired, KeyError, TypeError) as e:
                self.results.append((name, f"FAIL: {type(e).__name__}: {e}"))
        return print_results(self.results, "open_loop checks")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", required=True)
    parser.add_argument("--server", required=True)
    opts = parser.parse_args()
    return Checks(opts.client, opts.server).run()


if __name__ == "__main__":
    sys.exit(main())
