#!/usr/bin/env python3
"""Workload conformance of one server architecture, over real sockets.

Usage: workload_conformance.py BINARY [--concurrency N] [-- SERVER ARGS...]

The flags that make a request cost something, run by ctest beside
conformance.py for every architecture and variant:
- --response bytes:N for N of 4 B, 16 KiB, 256 KiB and 1 MiB: pipelined,
  split and HEAD requests get exactly the right bytes; a client that
  pipelines more requests than the server queues (64) and then reads slowly
  gets every byte, in order; Connection: close still closes;
- --work-us with --block-us (fixed and exp): every request is still answered
  correctly, pipelined, split and from concurrent clients; a pipeline takes at
  least the work and waits it asked for; the ready line carries the work
  loop's calibration;
- bad values and HTTP-only flags under --proto echo are refused with exit
  status 2 and a message naming the flag.
Standard library only, like the other suites.
"""

from __future__ import annotations

import math
import os
import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from conformance import REQUEST, TEST_RESPONSE, expect_closed, expect_quiet, ok_response
from server_harness import (
    IO_TIMEOUT_S,
    CaseFailure,
    Result,
    Server,
    announce_if_unsupported,
    expect,
    outcome,
    parse_suite_command_line,
    print_results,
    read_exactly,
)

from archbench.measure.server_protocol import sanitizer_report

BODY_SIZES = (4, 16 * 1024, 256 * 1024, 1024 * 1024)
HEAD_REQUEST = b"HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
CLOSE_REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
# More than the server ever queues (SESSION_MAX_QUEUED), and at least this many bytes: several times the
# kernel's socket buffers, so the server's writes stop part-way.
SLOW_READER_MIN_REQUESTS = 70
SLOW_READER_MIN_BYTES = 8 << 20
SLOW_READER_MAX_REQUESTS = 2000
# (name, flags, work_us + the fixed wait, or None when the wait is random)
WORKLOADS = (
    ("work_block_fixed", ["--work-us", "100", "--block-us", "400"], 500),
    ("work_block_exp", ["--work-us", "50", "--block-us", "300", "--block-dist", "exp", "--seed", "7"], None),
)
PIPELINE = 16
REQUESTS_PER_CLIENT = 10
MAX_CLIENTS = 16
# (server flags, the flag the refusal must name)
REFUSED = (
    (["--work-us", "-1"], "--work-us"),
    (["--work-us", "ten"], "--work-us"),
    (["--work-us", "1000001"], "--work-us"),
    (["--block-us", "-5"], "--block-us"),
    (["--block-us", "1.5"], "--block-us"),
    (["--block-dist", "uniform"], "--block-dist"),
    (["--seed", "-1"], "--seed"),
    (["--response", "bytes:3"], "--response"),
    (["--response", "bytes:1048577"], "--response"),
    (["--response", "bytes:abc"], "--response"),
    (["--response", "bytes:"], "--response"),
    (["--proto", "echo", "--work-us", "10"], "--work-us"),
    (["--proto", "echo", "--block-us", "10"], "--block-us"),
    (["--proto", "echo", "--block-dist", "exp"], "--block-dist"),
    (["--proto", "echo", "--response", "bytes:64"], "--response"),
)


def pattern_body(n: int) -> bytes:
    """bytes:N's body: 16-byte lines, each its own offset in 15 hex digits and a newline, cut at N."""
    return b"".join(b"%015x\n" % offset for offset in range(0, n, 16))[:n]


def send_split(sock: socket.socket, data: bytes, rng: random.Random, pieces: int = 12) -> None:
    """Sends data in `pieces` writes cut at random points, pausing so that each arrives on its own."""
    cuts = sorted(rng.sample(range(1, len(data)), min(pieces - 1, len(data) - 1)))
    for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
        sock.sendall(data[start:end])
        time.sleep(0.002)


def run_server_checks(
    name: str, binary: str, args: list[str], checks: list[tuple[str, Callable[[Server], int]]]
) -> list[Result]:
    """Starts one server, runs the checks (each returns the requests it had answered), stops it and checks
    that its shutdown line counts at least those requests."""
    results: list[Result] = []
    server = Server(binary, args)
    answered = 0
    try:
        server.start()
        for check_name, check in checks:
            try:
                answered += check(server)
                results.append((f"{name}_{check_name}", "PASS"))
            except (CaseFailure, OSError) as e:
                results.append((f"{name}_{check_name}", f"FAIL: {e}"))
        stats = server.stop()
        problems = []
        if stats.get("requests_served", -1) < answered:
            problems.append(f"requests_served {stats.get('requests_served')} < {answered} answered")
        if stats.get("errors") != 0:
            problems.append(f"errors {stats.get('errors')}")
        results.append((f"{name}_sigterm_report", outcome(problems)))
    except CaseFailure as e:
        results.append((f"{name}_startup_or_shutdown", f"FAIL: {e}"))
    finally:
        problem = server.kill()
        if problem is not None:
            results.append((f"{name}_server_health", f"FAIL: {problem}"))
    return results


# ---- --response bytes:N ---------------------------------------------------------


def bytes_checks(n: int) -> list[tuple[str, Callable[[Server], int]]]:
    body = pattern_body(n)
    keep = ok_response(body, "text/plain")
    head = ok_response(body, "text/plain", head=True)
    close = ok_response(body, "text/plain", keep_alive=False)

    def pipelined_and_split(server: Server) -> int:
        with server.connect() as s:
            send_split(s, REQUEST + HEAD_REQUEST + REQUEST, random.Random(n))
            expected = keep + head + keep
            got = read_exactly(s, len(expected))
            expect_bytes(got, expected, "GET, HEAD, GET split at random points")
            expect_quiet(s)
        return 3

    def slow_reader(server: Server) -> int:
        count = max(SLOW_READER_MIN_REQUESTS, math.ceil(SLOW_READER_MIN_BYTES / len(keep)))
        count = min(count, SLOW_READER_MAX_REQUESTS)
        with server.connect() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            s.sendall(REQUEST * count)
            time.sleep(0.3)  # the server fills its send buffer and our receive buffer, then must wait
            for i in range(count):
                if i < 4:  # the first responses a few KiB at a time
                    got = bytearray()
                    while len(got) < len(keep):
                        got += read_exactly(s, min(4096, len(keep) - len(got)))
                        time.sleep(0.0005 if n > 16384 else 0)
                    got = bytes(got)
                else:
                    got = read_exactly(s, len(keep))
                expect_bytes(got, keep, f"response {i + 1} of {count}")
            expect_quiet(s)
        return count

    def connection_close(server: Server) -> int:
        with server.connect() as s:
            s.sendall(REQUEST + CLOSE_REQUEST + REQUEST)
            expected = keep + close
            got = read_exactly(s, len(expected))
            expect_bytes(got, expected, "keep-alive then Connection: close")
            expect_closed(s)
        return 2

    return [("pipelined_and_split", pipelined_and_split), ("slow_reader", slow_reader), ("close", connection_close)]


def expect_bytes(got: bytes, expected: bytes, what: str) -> None:
    """got must be expected; the failure says where they part."""
    if got == expected:
        return
    if len(got) != len(expected):
        raise CaseFailure(f"{what}: {len(got)} bytes, expected {len(expected)}")
    at = next(i for i in range(len(got)) if got[i] != expected[i])
    raise CaseFailure(
        f"{what}: first difference at byte {at}: {got[at : at + 40]!r}, expected {expected[at : at + 40]!r}"
    )


# ---- --work-us and --block-us ---------------------------------------------------


def workload_checks(flags: list[str], fixed_us: int | None, concurrency: int) -> list[tuple[str, Callable]]:
    work_us = int(flags[flags.index("--work-us") + 1])

    def ready_line(server: Server) -> int:
        ready = server.ready
        expect(ready is not None, "no ready line")
        rate, iterations = ready.float_field("work_iters_per_us"), ready.float_field("work_iterations")
        expect(rate is not None and rate > 0, f"no work_iters_per_us on the ready line: {ready.fields}")
        expect(
            iterations is not None and abs(iterations - rate * work_us) <= work_us * 0.001 + 1,
            f"work_iterations {iterations} is not {work_us} us at {rate} per us",
        )
        return 0

    def pipelined(server: Server) -> int:
        with server.connect() as s:
            start = time.monotonic()
            s.sendall(REQUEST * (PIPELINE - 1) + HEAD_REQUEST)
            expected = TEST_RESPONSE * (PIPELINE - 1) + ok_response(b"test", "text/html", head=True)
            got = read_exactly(s, len(expected))
            took = time.monotonic() - start
            expect_bytes(got, expected, f"{PIPELINE} pipelined requests")
            # One connection's requests are answered one after another, in every architecture.
            least = (fixed_us if fixed_us is not None else work_us) * PIPELINE * 0.8 / 1e6
            expect(took >= least, f"{PIPELINE} pipelined requests answered in {took * 1e3:.1f} ms, < {least * 1e3} ms")
            send_split(s, REQUEST, random.Random(work_us))
            expect(read_exactly(s, len(TEST_RESPONSE)) == TEST_RESPONSE, "a split request")
            expect_quiet(s)
        return PIPELINE + 1

    def concurrent_clients(server: Server) -> int:
        clients = max(1, min(concurrency, MAX_CLIENTS))
        failures: list[str] = []
        # With one connection served at a time, clients take turns: only the first may wait for the rest.
        barrier = threading.Barrier(clients) if concurrency > 0 else None

        def client() -> None:
            try:
                with server.connect() as s:
                    if barrier is not None:
                        barrier.wait(IO_TIMEOUT_S)
                    for _ in range(REQUESTS_PER_CLIENT):
                        s.sendall(REQUEST)
                        if read_exactly(s, len(TEST_RESPONSE)) != TEST_RESPONSE:
                            failures.append("bad response")
                            return
            except BaseException as e:  # reported below
                failures.append(repr(e))

        threads = [threading.Thread(target=client) for _ in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(3 * IO_TIMEOUT_S)
        expect(not failures, f"{len(failures)} of {clients} concurrent clients failed: {failures[:3]}")
        return clients * REQUESTS_PER_CLIENT

    return [("ready_line", ready_line), ("pipelined", pipelined), ("concurrent_clients", concurrent_clients)]


# ---- refusals -------------------------------------------------------------------


def refusals(binary: str, args: list[str]) -> list[Result]:
    results = []
    for flags, named in REFUSED:
        done = subprocess.run([binary, *args, *flags], capture_output=True, text=True, timeout=30)
        ok = done.returncode == 2 and named in done.stderr and sanitizer_report(done.stderr) is None
        detail = f"FAIL: exit {done.returncode}, stderr {done.stderr.strip()!r}"
        results.append((f"refused {' '.join(flags)}", "PASS" if ok else detail))
    return results


def main() -> int:
    opts, server_args = parse_suite_command_line(
        __doc__.splitlines()[0],
        [],
        default_concurrency=16,
        concurrency_help="simultaneous clients under a workload (0: the architecture serves one at a time)",
    )
    if opts.allow_unsupported and announce_if_unsupported(opts.binary, server_args):
        return 0
    results: list[Result] = []
    for n in BODY_SIZES:
        results += run_server_checks(
            f"bytes_{n}", opts.binary, [*server_args, "--response", f"bytes:{n}"], bytes_checks(n)
        )
    for name, flags, fixed_us in WORKLOADS:
        checks = workload_checks(flags, fixed_us, opts.concurrency)
        results += run_server_checks(name, opts.binary, [*server_args, *flags], checks)
    results += refusals(opts.binary, server_args)
    return print_results(results, f"{os.path.basename(opts.binary)} {' '.join(server_args)}")


if __name__ == "__main__":
    sys.exit(main())
