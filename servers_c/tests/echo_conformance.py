#!/usr/bin/env python3
"""Echo conformance (--proto echo) of one server architecture, over real sockets.

Usage: echo_conformance.py BINARY [--concurrency N] [-- SERVER ARGS...]

Every architecture must pass the same cases: messages of 1 byte, 1 KiB,
64 KiB and 1 MiB echoed byte-exactly (random bytes, so reordering shows); a
message written in many small pieces; N concurrent connections each echoing a
few messages; a client that writes 4 MiB before it reads anything
(backpressure: nothing lost or reordered); half-close (everything sent before
the client's FIN comes back, then EOF); a reset mid-stream; and a clean
SIGTERM with a JSON line whose bytes_echoed covers what was echoed.
Standard library only, so CTest can run it anywhere.
"""

from __future__ import annotations

import json
import os
import random
import selectors
import socket
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

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

CONCURRENT_DEADLINE_S = 60.0


def first_difference(a: bytes, b: bytes) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def expect_same(got: bytes, sent: bytes, what: str) -> None:
    if got != sent:
        at = first_difference(got, sent)
        raise CaseFailure(f"{what}: {len(got)} bytes back for {len(sent)} sent, first difference at offset {at}")


def expect_eof(sock: socket.socket) -> None:
    rest = sock.recv(4096)
    expect(rest == b"", f"expected EOF, got {len(rest)} more bytes")


def roundtrip(
    sock: socket.socket, data: bytes, pieces: list[int] | None = None, pause_s: float = 0.0, read_delay_s: float = 0.0
) -> bytes:
    """Writes data (whole, or in the given piece sizes) from a thread while this
    thread reads the echo, so neither side's buffers have to hold it all."""
    errors: list[BaseException] = []

    def send() -> None:
        try:
            if pieces is None:
                sock.sendall(data)
                return
            pos = 0
            for size in pieces:
                sock.sendall(data[pos : pos + size])
                pos += size
                if pause_s:
                    time.sleep(pause_s)
            assert pos == len(data)
        except BaseException as e:  # reported below
            errors.append(e)

    sender = threading.Thread(target=send)
    sender.start()
    if read_delay_s:
        time.sleep(read_delay_s)
    try:
        got = read_exactly(sock, len(data))
    finally:
        sender.join(IO_TIMEOUT_S)
    expect(not errors, f"sending failed: {errors}")
    expect(not sender.is_alive(), "sender still blocked after everything came back")
    return got


@dataclass
class Suite:
    server: Server
    concurrency: int
    rng: random.Random = field(default_factory=lambda: random.Random(4004))
    echoed: int = 0  # bytes that came back, verified
    served_min: int = 0  # connections echoed to while the client was still connected

    def payload(self, n: int) -> bytes:
        return self.rng.randbytes(n)

    # ---- cases -------------------------------------------------------------
    def message_sizes(self) -> None:
        for size in (1, 1024, 64 * 1024, 1024 * 1024):
            data = self.payload(size)
            with self.server.connect() as s:
                expect_same(roundtrip(s, data), data, f"{size}-byte message")
                self.echoed += size
                self.served_min += 1
                # then another on the same connection: it stays usable
                data = self.payload(size)
                expect_same(roundtrip(s, data), data, f"second {size}-byte message")
                self.echoed += size

    def many_small_pieces(self) -> None:
        data = self.payload(40000)
        pieces = []
        left = len(data)
        while left > 0:
            pieces.append(min(left, self.rng.randint(1, 64)))
            left -= pieces[-1]
        with self.server.connect() as s:
            expect_same(roundtrip(s, data, pieces, pause_s=0.0002), data, "message in small pieces")
        self.echoed += len(data)
        self.served_min += 1

    def request_response(self) -> None:
        """Send, wait for the whole echo, send again: the way echo benchmarks drive it."""
        with self.server.connect() as s:
            for _ in range(200):
                data = self.payload(self.rng.randint(1, 3000))
                s.sendall(data)
                expect_same(read_exactly(s, len(data)), data, "request/response message")
                self.echoed += len(data)
        self.served_min += 1

    def write_before_read(self) -> None:
        """4 MiB written before reading anything: the server must stop reading
        while its echo cannot be sent, and resume without loss or reordering."""
        data = self.payload(4 * 1024 * 1024)
        with self.server.connect() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            expect_same(roundtrip(s, data, read_delay_s=0.5), data, "4 MiB written before reading")
        self.echoed += len(data)
        self.served_min += 1

    def half_close(self) -> None:
        """Everything sent before the client's FIN comes back, then EOF."""
        data = self.payload(100000)
        with self.server.connect() as s:
            sender = threading.Thread(target=lambda: (s.sendall(data), s.shutdown(socket.SHUT_WR)))
            sender.start()
            got = read_exactly(s, len(data))
            sender.join(IO_TIMEOUT_S)
            expect_same(got, data, "echo after half-close")
            expect_eof(s)
        self.echoed += len(data)
        with self.server.connect() as s:
            s.shutdown(socket.SHUT_WR)  # nothing sent at all
            expect_eof(s)

    def reset_mid_stream(self) -> None:
        s = self.server.connect()
        s.setblocking(False)
        data = self.payload(2 * 1024 * 1024)
        try:
            s.send(data)  # as much as fits, unread echo piling up
        except BlockingIOError:
            pass
        time.sleep(0.05)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()  # RST while the server is echoing
        time.sleep(0.2)
        self.still_healthy()

    def still_healthy(self) -> None:
        data = self.payload(5000)
        with self.server.connect() as s:
            expect_same(roundtrip(s, data), data, "echo after the earlier cases")
        self.echoed += len(data)
        self.served_min += 1

    def concurrent_connections(self) -> None:
        """N connections open at once, each echoing a few messages, driven by
        one selector so N can be 1000 without 1000 threads."""
        n = self.concurrency
        if n <= 0:
            return
        messages = 3
        sel = selectors.DefaultSelector()
        conns = []
        for i in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", self.server.port))
            state = {"sock": s, "left": messages, "out": b"", "want": b"", "got": bytearray(), "id": i}
            conns.append(state)
            self.next_message(state)
            sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, state)
        done = 0
        failures: list[str] = []
        deadline = time.monotonic() + CONCURRENT_DEADLINE_S
        try:
            while done < n and time.monotonic() < deadline:
                for key, events in sel.select(timeout=1.0):
                    st = key.data
                    s = st["sock"]
                    try:
                        if events & selectors.EVENT_WRITE and st["out"]:
                            sent = s.send(st["out"])
                            st["out"] = st["out"][sent:]
                            if not st["out"]:
                                sel.modify(s, selectors.EVENT_READ, st)
                        if events & selectors.EVENT_READ:
                            chunk = s.recv(65536)
                            if not chunk:
                                raise CaseFailure("closed by the server")
                            st["got"] += chunk
                            if len(st["got"]) >= len(st["want"]):
                                expect_same(bytes(st["got"]), st["want"], f"connection {st['id']}")
                                self.echoed += len(st["want"])
                                st["left"] -= 1
                                if st["left"] == 0:
                                    sel.unregister(s)
                                    s.close()
                                    done += 1
                                    self.served_min += 1
                                else:
                                    self.next_message(st)
                                    sel.modify(s, selectors.EVENT_READ | selectors.EVENT_WRITE, st)
                    except (OSError, CaseFailure) as e:
                        failures.append(f"connection {st['id']}: {e}")
                        sel.unregister(s)
                        s.close()
                        done += 1
        finally:
            for st in conns:
                if st["sock"].fileno() >= 0:
                    st["sock"].close()
            sel.close()
        expect(not failures, f"{len(failures)} of {n} connections failed: {failures[:3]}")
        expect(done == n, f"only {done} of {n} connections finished within {CONCURRENT_DEADLINE_S:.0f} s")

    def next_message(self, st: dict) -> None:
        st["want"] = self.payload(self.rng.randint(1, 4096))
        st["out"] = st["want"]
        st["got"] = bytearray()

    # ---- after SIGTERM -------------------------------------------------------
    def shutdown_problems(self, stats: dict) -> list[str]:
        """The shutdown line must cover the bytes echoed and the connections served, and count
        no requests. Also prints it next to the bytes the client verified, for the log."""
        problems = missing_shutdown_keys(stats)
        if stats.get("bytes_echoed", -1) < self.echoed:
            problems.append(f"bytes_echoed {stats.get('bytes_echoed')} < {self.echoed} echoed and verified")
        if stats.get("requests_served") != 0 or stats.get("bad_requests") != 0:
            problems.append(f"echo mode counted requests: {stats}")
        served, accepted = stats.get("connections_served", -1), stats.get("connections_accepted", -1)
        if not self.served_min <= served <= accepted:
            problems.append(f"connections_served {served} not in [{self.served_min}, accepted {accepted}]")
        print(f"client echoed and verified {self.echoed} bytes; server: {json.dumps(stats)}")
        return problems


CASES = [
    "message_sizes",
    "many_small_pieces",
    "request_response",
    "write_before_read",
    "half_close",
    "reset_mid_stream",
    "concurrent_connections",
    "still_healthy",
]


def check_bad_proto(binary: str, args: list[str]) -> Result:
    bad = subprocess.run([binary, *args, "--proto", "smtp"], capture_output=True, text=True, timeout=10)
    ok = bad.returncode == 2 and "--proto" in bad.stderr
    return ("bad_proto", "PASS" if ok else f"FAIL: exit {bad.returncode}, stderr {bad.stderr!r}")


def main() -> int:
    opts, server_args = parse_suite_command_line(
        __doc__.splitlines()[0],
        CASES,
        default_concurrency=1000,
        concurrency_help="connections open at once in concurrent_connections (0: skip)",
    )
    echo_args = ["--proto", "echo", *server_args]
    if opts.allow_unsupported and announce_if_unsupported(opts.binary, echo_args):
        return 0
    server = Server(opts.binary, echo_args)
    suite = Suite(server, opts.concurrency)
    results = run_against_server(server, lambda: run_cases(suite, opts.cases), suite.shutdown_problems)
    results.append(check_bad_proto(opts.binary, server_args))
    return print_results(results, f"{os.path.basename(opts.binary)} {' '.join(echo_args)}")


if __name__ == "__main__":
    sys.exit(main())
