#!/usr/bin/env python3
"""HTTP conformance of one server architecture, over real sockets.

Usage: conformance.py BINARY [--concurrency N] [-- SERVER ARGS...]

Every architecture must pass the same cases: byte-exact responses, requests
split across any number of writes, pipelined requests answered in order,
keep-alive and Connection: close, HTTP/1.0, HEAD, request bodies, malformed
input answered with 400/431/501/505 and a close, slow readers (partial writes),
a reset mid-response, N concurrent clients, and a clean SIGTERM with a JSON
line of counters. Standard library only, so CTest can run it anywhere.
"""

from __future__ import annotations

import os
import random
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

from server_harness import (
    IO_TIMEOUT_S,
    CaseFailure,
    Result,
    Server,
    announce_if_unsupported,
    expect,
    missing_shutdown_keys,
    parse_suite_command_line,
    print_results,
    read_exactly,
    run_against_server,
    run_cases,
)

from archbench.measure.server_protocol import sanitizer_report

REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def ok_response(body: bytes, content_type: str, keep_alive: bool = True, head: bool = False) -> bytes:
    connection = b"keep-alive" if keep_alive else b"close"
    headers = (
        b"HTTP/1.1 200 OK\r\nConnection: "
        + connection
        + b"\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\nContent-Type: "
        + content_type.encode()
        + b"\r\n\r\n"
    )
    return headers if head else headers + body


# Source 000's response, byte for byte.
TEST_RESPONSE = b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 4\r\nContent-Type: text/html\r\n\r\ntest"
assert ok_response(b"test", "text/html") == TEST_RESPONSE
CLOSE_RESPONSE = ok_response(b"test", "text/html", keep_alive=False)


def expect_closed(sock: socket.socket) -> None:
    """The server must close after the response: the next read sees EOF (or a reset)."""
    try:
        rest = sock.recv(4096)
    except ConnectionResetError:
        return
    expect(rest == b"", f"expected the server to close, got more bytes: {rest[:200]!r}")


def expect_quiet(sock: socket.socket, wait_s: float = 0.1) -> None:
    """No extra bytes beyond what was expected (e.g. no body after a HEAD response)."""
    sock.settimeout(wait_s)
    try:
        extra = sock.recv(4096)
        expect(extra == b"" or False, f"unexpected extra bytes: {extra[:200]!r}")
    except TimeoutError:
        pass
    finally:
        sock.settimeout(IO_TIMEOUT_S)


def expect_response_and_close(server: Server, request: bytes, expected: bytes, what: str) -> None:
    """On a new connection, request is answered with exactly expected, then the server closes."""
    with server.connect() as s:
        s.sendall(request)
        expect(read_exactly(s, len(expected)) == expected, what)
        expect_closed(s)


def expect_status_and_close(server: Server, request: bytes, status: bytes) -> None:
    with server.connect() as s:
        s.sendall(request)
        head = read_until(s, b"\r\n\r\n")
        expect(head.startswith(b"HTTP/1.1 " + status), f"expected {status!r}, got {head[:80]!r}")
        expect(b"Connection: close" in head, f"error response must say Connection: close: {head!r}")
        length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        read_exactly(s, length)
        expect_closed(s)


def read_until(sock: socket.socket, marker: bytes) -> bytes:
    data = b""
    while marker not in data:
        chunk = sock.recv(1)
        if not chunk:
            raise CaseFailure(f"closed before {marker!r}; got {data[:200]!r}")
        data += chunk
    return data


@dataclass
class Suite:
    server: Server
    concurrency: int
    sent_ok: int = 0
    sent_bad: int = 0

    # ---- cases -------------------------------------------------------------
    def byte_exact(self) -> None:
        with self.server.connect() as s:
            s.sendall(REQUEST)
            expect(read_exactly(s, len(TEST_RESPONSE)) == TEST_RESPONSE, "response differs from source 000")
            expect_quiet(s)
        self.sent_ok += 1

    def keep_alive_sequential(self) -> None:
        with self.server.connect() as s:
            for _ in range(5):
                s.sendall(REQUEST)
                expect(read_exactly(s, len(TEST_RESPONSE)) == TEST_RESPONSE, "keep-alive response")
        self.sent_ok += 5

    def pipelined(self) -> None:
        with self.server.connect() as s:
            s.sendall(REQUEST * 16)
            expect(read_exactly(s, 16 * len(TEST_RESPONSE)) == TEST_RESPONSE * 16, "16 pipelined responses")
            expect_quiet(s)
        self.sent_ok += 16

    def split_byte_by_byte(self) -> None:
        with self.server.connect() as s:
            for i in range(len(REQUEST)):
                s.sendall(REQUEST[i : i + 1])
                time.sleep(0.002)
            expect(read_exactly(s, len(TEST_RESPONSE)) == TEST_RESPONSE, "byte-by-byte request")
        self.sent_ok += 1

    def split_at_random_points(self) -> None:
        rng = random.Random(8005)
        stream = REQUEST * 40
        with self.server.connect() as s:
            pos = 0
            while pos < len(stream):
                step = rng.randint(1, 90)
                s.sendall(stream[pos : pos + step])
                pos += step
                time.sleep(0.001)
            expect(read_exactly(s, 40 * len(TEST_RESPONSE)) == TEST_RESPONSE * 40, "randomly split pipeline")
        self.sent_ok += 40

    def connection_close(self) -> None:
        expect_response_and_close(
            self.server,
            b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            CLOSE_RESPONSE,
            "Connection: close response",
        )
        self.sent_ok += 1

    def close_ends_pipeline(self) -> None:
        """Requests after one with Connection: close are not answered."""
        expect_response_and_close(
            self.server,
            REQUEST + b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + REQUEST,
            TEST_RESPONSE + CLOSE_RESPONSE,
            "responses up to the close",
        )
        self.sent_ok += 2

    def http10(self) -> None:
        expect_response_and_close(self.server, b"GET / HTTP/1.0\r\n\r\n", CLOSE_RESPONSE, "HTTP/1.0 response")
        with self.server.connect() as s:
            for _ in range(2):
                s.sendall(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                expect(read_exactly(s, len(TEST_RESPONSE)) == TEST_RESPONSE, "HTTP/1.0 keep-alive")
        self.sent_ok += 3

    def head(self) -> None:
        with self.server.connect() as s:
            s.sendall(b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n" + REQUEST)
            expected = ok_response(b"test", "text/html", head=True) + TEST_RESPONSE
            expect(read_exactly(s, len(expected)) == expected, "HEAD has no body")
            expect_quiet(s)
        self.sent_ok += 2

    def request_body(self) -> None:
        body = bytes(range(256)) * 40
        request = (
            b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
            + body
            + REQUEST
        )
        with self.server.connect() as s:
            for i in range(0, len(request), 777):
                s.sendall(request[i : i + 777])
            expect(read_exactly(s, 2 * len(TEST_RESPONSE)) == TEST_RESPONSE * 2, "body skipped, next answered")
            expect_quiet(s)
        self.sent_ok += 2

    def half_close(self) -> None:
        """A client that shuts down its sending side still gets its answers."""
        with self.server.connect() as s:
            s.sendall(REQUEST * 3)
            s.shutdown(socket.SHUT_WR)
            expect(read_exactly(s, 3 * len(TEST_RESPONSE)) == TEST_RESPONSE * 3, "answers after half-close")
            expect_closed(s)
        self.sent_ok += 3

    def malformed(self) -> None:
        cases = [
            (b"GARBAGE\r\n\r\n", b"400"),
            (b"GET / HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n", b"400"),
            (b"GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n", b"400"),
            (b"GET / HTTP/1.1\r\n\r\n", b"400"),  # no Host
            (b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n", b"431"),
            (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", b"501"),
            (b"GET / HTTP/2.0\r\nHost: x\r\n\r\n", b"505"),
            # a valid request first: answered, then the bad one closes the connection
            (REQUEST + b"BROKEN LINE\r\n\r\n", b"200"),
        ]
        for request, status in cases:
            if status == b"200":
                with self.server.connect() as s:
                    s.sendall(request)
                    expect(read_exactly(s, len(TEST_RESPONSE)) == TEST_RESPONSE, "valid request before a bad one")
                    head = read_until(s, b"\r\n\r\n")
                    expect(head.startswith(b"HTTP/1.1 400"), f"then 400, got {head[:60]!r}")
                    read_exactly(s, int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0]))
                    expect_closed(s)
                self.sent_ok += 1
            else:
                expect_status_and_close(self.server, request, status)
            self.sent_bad += 1
        # The server is still healthy.
        self.byte_exact()

    def oversize_never_completes(self) -> None:
        """A head that keeps growing without an end is cut off at the limit."""
        with self.server.connect() as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            try:
                for _ in range(20):
                    s.sendall(b"X-Fill: " + b"f" * 1000 + b"\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
            head = read_until(s, b"\r\n\r\n")
            expect(head.startswith(b"HTTP/1.1 431"), f"expected 431, got {head[:60]!r}")
        self.sent_bad += 1

    def large_pipeline(self) -> None:
        count = 2000
        with self.server.connect() as s:
            s.sendall(REQUEST * count)
            expect(read_exactly(s, count * len(TEST_RESPONSE)) == TEST_RESPONSE * count, "2000 pipelined")
        self.sent_ok += count

    def slow_reader(self) -> None:
        """The client writes 50,000 requests before reading: 4.5 MB of responses
        exceed the server's send buffer (tcp_wmem max 4 MiB) plus the client's
        receive buffer, so the server's writes block or return EAGAIN part-way
        and must be resumed without loss."""
        count = 50000
        with self.server.connect() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            errors: list[BaseException] = []

            def send_all() -> None:
                try:
                    s.sendall(REQUEST * count)
                except BaseException as e:  # reported below
                    errors.append(e)

            sender = threading.Thread(target=send_all)
            sender.start()
            time.sleep(0.5)  # let the server fill its send buffer
            data = read_exactly(s, count * len(TEST_RESPONSE))
            sender.join(IO_TIMEOUT_S)
            expect(not errors, f"sending failed: {errors}")
            expect(data == TEST_RESPONSE * count, "responses corrupted or reordered under backpressure")
        self.sent_ok += count

    def reset_mid_response(self) -> None:
        s = self.server.connect()
        s.sendall(REQUEST * 5000)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()  # RST while the server is writing
        time.sleep(0.2)
        self.byte_exact()

    def concurrent_clients(self) -> None:
        if self.concurrency <= 0:
            return
        per_client = 20
        failures: list[str] = []
        barrier = threading.Barrier(self.concurrency)

        def client() -> None:
            try:
                with self.server.connect() as s:
                    barrier.wait(IO_TIMEOUT_S)  # all connected at once
                    for _ in range(per_client):
                        s.sendall(REQUEST)
                        if read_exactly(s, len(TEST_RESPONSE)) != TEST_RESPONSE:
                            failures.append("bad response")
                            return
            except BaseException as e:
                failures.append(repr(e))

        threads = [threading.Thread(target=client) for _ in range(self.concurrency)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(3 * IO_TIMEOUT_S)
        expect(not failures, f"{len(failures)} of {self.concurrency} concurrent clients failed: {failures[:3]}")
        self.sent_ok += per_client * self.concurrency

    def connection_churn(self) -> None:
        """Many short keep-alive connections at once, each a few rounds of
        pipelined requests: connections change hands between threads all the
        time (what the sanitizer builds need to see races in hand-offs)."""
        if self.concurrency <= 0:
            return
        clients, per_client, rounds = min(8, self.concurrency), 10, 20
        failures: list[str] = []

        def client() -> None:
            try:
                for _ in range(per_client):
                    with self.server.connect() as s:
                        for _ in range(rounds):
                            s.sendall(REQUEST * 3)
                            if read_exactly(s, 3 * len(TEST_RESPONSE)) != TEST_RESPONSE * 3:
                                failures.append("bad response")
                                return
            except BaseException as e:
                failures.append(repr(e))

        threads = [threading.Thread(target=client) for _ in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(6 * IO_TIMEOUT_S)
        expect(not failures, f"{len(failures)} of {clients} churning clients failed: {failures[:3]}")
        self.sent_ok += clients * per_client * rounds * 3

    # ---- after SIGTERM -------------------------------------------------------
    def shutdown_problems(self, stats: dict) -> list[str]:
        """The shutdown line's counters must cover what the cases had answered and sent."""
        problems = []
        if stats.get("requests_served", -1) < self.sent_ok:
            problems.append(f"requests_served {stats.get('requests_served')} < {self.sent_ok} answered")
        if stats.get("bad_requests", -1) < self.sent_bad:
            problems.append(f"bad_requests {stats.get('bad_requests')} < {self.sent_bad} sent")
        problems += missing_shutdown_keys(stats)
        if stats.get("bytes_echoed") != 0:
            problems.append(f"bytes_echoed {stats.get('bytes_echoed')} in http mode")
        return problems


CASES = [
    "byte_exact",
    "keep_alive_sequential",
    "pipelined",
    "split_byte_by_byte",
    "split_at_random_points",
    "connection_close",
    "close_ends_pipeline",
    "http10",
    "head",
    "request_body",
    "half_close",
    "malformed",
    "oversize_never_completes",
    "large_pipeline",
    "slow_reader",
    "reset_mid_response",
    "concurrent_clients",
    "connection_churn",
]


def check_response_variants(binary: str, args: list[str]) -> list[Result]:
    """--response hello (source 003) and --response file:PATH (source 002's 151-byte page)."""
    results = []
    page = (
        b"<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome to nginx!</title>\n</head>\n<body>\n"
        b"<h1>Welcome to nginx!</h1>\n</body>\n</html>\n"
    )
    page = page + b" " * (151 - len(page) - 1) + b"\n"
    with tempfile.NamedTemporaryFile(suffix=".html", delete=False) as f:
        f.write(page)
        path = f.name
    variants = [
        ("response_hello", ["--response", "hello"], ok_response(b"Hello World!", "text/plain")),
        ("response_file", ["--response", f"file:{path}"], ok_response(page, "text/html")),
    ]
    try:
        for name, extra, expected in variants:
            server = Server(binary, [*args, *extra])
            try:
                server.start()
                with server.connect() as s:
                    s.sendall(REQUEST * 2)
                    got = read_exactly(s, 2 * len(expected))
                    expect(got == expected * 2, f"{name}: got {got[:120]!r}")
                server.stop()
                results.append((name, "PASS"))
            except (CaseFailure, OSError) as e:
                results.append((name, f"FAIL: {e}"))
            finally:
                problem = server.kill()
                if problem is not None and results and results[-1] == (name, "PASS"):
                    results[-1] = (name, f"FAIL: {problem}")
        bad = subprocess.run(
            [binary, "--response", "file:/nonexistent/x.html", *args], capture_output=True, text=True, timeout=10
        )
        results.append(
            (
                "response_file_missing",
                "PASS"
                if bad.returncode == 1 and "/nonexistent/x.html" in bad.stderr and sanitizer_report(bad.stderr) is None
                else f"FAIL: exit {bad.returncode}, stderr {bad.stderr!r}",
            )
        )
        unknown = subprocess.run([binary, "--no-such-flag", *args], capture_output=True, text=True, timeout=10)
        results.append(
            (
                "unknown_flag",
                "PASS"
                if unknown.returncode == 2
                and "--no-such-flag" in unknown.stderr
                and sanitizer_report(unknown.stderr) is None
                else f"FAIL: exit {unknown.returncode}, stderr {unknown.stderr!r}",
            )
        )
        for flag in ("--header-timeout", "--idle-timeout"):
            neg = subprocess.run([binary, *args, flag, "-1"], capture_output=True, text=True, timeout=10)
            results.append(
                (
                    f"bad_{flag[2:].replace('-', '_')}",
                    "PASS"
                    if neg.returncode == 2 and flag in neg.stderr
                    else f"FAIL: exit {neg.returncode}, stderr {neg.stderr!r}",
                )
            )
    finally:
        os.unlink(path)
    return results


def main() -> int:
    opts, server_args = parse_suite_command_line(
        __doc__.splitlines()[0],
        CASES,
        default_concurrency=100,
        concurrency_help="simultaneous keep-alive clients (0: the architecture serves one at a time)",
    )
    if opts.allow_unsupported and announce_if_unsupported(opts.binary, server_args):
        return 0
    server = Server(opts.binary, server_args)
    suite = Suite(server, opts.concurrency)
    results = run_against_server(server, lambda: run_cases(suite, opts.cases), suite.shutdown_problems)
    results += check_response_variants(opts.binary, server_args)
    return print_results(results, f"{os.path.basename(opts.binary)} {' '.join(server_args)}")


if __name__ == "__main__":
    sys.exit(main())
