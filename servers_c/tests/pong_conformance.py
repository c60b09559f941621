#!/usr/bin/env python3
"""Conformance of pong, the upper bound, over real sockets.

Usage: pong_conformance.py BINARY [--concurrency N] [-- SERVER ARGS...]

pong is not an HTTP server: it answers every "\\r\\n\\r\\n" with the same
keep-alive response and parses nothing. So it runs the cases of the HTTP
conformance suite (conformance.py) that need no parsing, and is exempt, by
name and with the reason, from those that do (EXEMPT_CASES): a case added to
conformance.py runs here too unless it is exempted there.
Its own cases: a terminator split across writes at every point, no answer
before the terminator, unparsed input answered (proof that it does not
parse), a thousand connections at once, SIGTERM with connections open, and
--proto echo, --work-us and --block-us refused. Standard library only, like the other suites.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from conformance import CASES as HTTP_CASES
from conformance import REQUEST, TEST_RESPONSE, Suite, check_response_variants, expect_quiet
from server_harness import (
    CaseFailure,
    Result,
    Server,
    expect,
    missing_shutdown_keys,
    parse_suite_command_line,
    print_results,
    read_exactly,
    run_against_server,
    run_cases,
)

# The HTTP suite's cases that need the request parsed, and what pong would have to read.
EXEMPT_CASES = {
    "connection_close": "closing after Connection: close needs the header read",
    "close_ends_pipeline": "the same: requests after Connection: close are answered",
    "http10": "HTTP/1.0's close-by-default needs the version read",
    "head": "HEAD's body-less response needs the method read",
    "request_body": "skipping a body needs Content-Length read",
    "malformed": "400/431/501/505 need the request parsed",
    "oversize_never_completes": "431 needs a head-size limit; pong keeps no head",
}
APPLICABLE_CASES = [case for case in HTTP_CASES if case not in EXEMPT_CASES]
POSITIONS_IN_TERMINATOR = range(1, 4)  # after "\r", "\r\n", "\r\n\r"
PAUSE_S = 0.02  # long enough for the server to read a write on its own
MANY_CONNECTIONS = 1000


def check_case_lists() -> list[Result]:
    """Every case of the HTTP suite is run or exempt, never silently dropped."""
    unknown = sorted(set(EXEMPT_CASES) - set(HTTP_CASES))
    if unknown:
        return [("case_lists", f"FAIL: exempt cases not in conformance.py: {unknown}")]
    return [("case_lists", "PASS")]


class PongSuite(Suite):
    def terminator_split_across_writes(self) -> None:
        """The terminator's bytes arrive in separate reads, at every split point and all four apart."""
        end = len(REQUEST) - 4
        splits = [[end + k] for k in POSITIONS_IN_TERMINATOR] + [[end + 1, end + 2, end + 3]]
        with self.server.connect() as s:
            for points in splits:
                start = 0
                for point in [*points, len(REQUEST)]:
                    s.sendall(REQUEST[start:point])
                    time.sleep(PAUSE_S)
                    start = point
                expect(read_exactly(s, len(TEST_RESPONSE)) == TEST_RESPONSE, f"request split at {points}")
        self.sent_ok += len(splits)

    def no_answer_before_the_terminator(self) -> None:
        with self.server.connect() as s:
            s.sendall(REQUEST[:-1])
            expect_quiet(s, wait_s=0.2)
            s.sendall(REQUEST[-1:])
            expect(read_exactly(s, len(TEST_RESPONSE)) == TEST_RESPONSE, "answered once the terminator completes")
        self.sent_ok += 1

    def unparsed_input_is_answered(self) -> None:
        """pong does not parse: what a server rejects with 400 gets the 200 response here."""
        with self.server.connect() as s:
            s.sendall(b"GARBAGE\r\n\r\n")
            expect(read_exactly(s, len(TEST_RESPONSE)) == TEST_RESPONSE, "garbage answered like a request")
        self.sent_ok += 1

    def many_connections(self) -> None:
        """A thousand connections open at once, each with a request waiting, all answered."""
        sockets = []
        try:
            for _ in range(MANY_CONNECTIONS):
                sockets.append(self.server.connect())
            for s in sockets:
                s.sendall(REQUEST)
            for s in sockets:
                expect(read_exactly(s, len(TEST_RESPONSE)) == TEST_RESPONSE, "one of many connections")
        finally:
            for s in sockets:
                s.close()
        self.sent_ok += MANY_CONNECTIONS


PONG_CASES = [
    *APPLICABLE_CASES,
    "terminator_split_across_writes",
    "no_answer_before_the_terminator",
    "unparsed_input_is_answered",
    "many_connections",
]


def sigterm_with_connections_open(binary: str, args: list[str]) -> Result:
    """SIGTERM while connections are idle or mid-head: exit 0 with the shutdown line counting them all."""
    name = "sigterm_with_connections_open"
    server = Server(binary, args)
    held = []
    problems: list[str] = []
    try:
        server.start()
        for i in range(100):
            s = server.connect()
            held.append(s)
            # One answer each first: a connect() returns before the server has accepted.
            s.sendall(REQUEST)
            expect(read_exactly(s, len(TEST_RESPONSE)) == TEST_RESPONSE, "answered before the stop")
            if i % 2:
                s.sendall(REQUEST[:10])  # a head begun, never finished
        stats = server.stop()
        problems += missing_shutdown_keys(stats)
        if stats.get("connections_accepted", 0) < len(held) or stats.get("requests_served", 0) < len(held):
            problems.append(f"counters {stats} miss some of the {len(held)} connections or their requests")
        if stats.get("architecture") != "pong":
            problems.append(f"architecture {stats.get('architecture')!r}")
    except (CaseFailure, OSError) as e:
        problems.append(str(e))
    finally:
        for s in held:
            s.close()
        health = server.kill()
    if health is not None:
        problems.append(health)
    return (name, "PASS" if not problems else "FAIL: " + "; ".join(problems))


# What pong does not serve, and the flag its refusal must name: echo, and any cost per request.
UNSERVED = {
    "echo_refused": (["--proto", "echo"], "--proto echo"),
    "work_refused": (["--work-us", "10"], "--work-us"),
    "block_refused": (["--block-us", "10"], "--block-us"),
}


def unserved_refused(binary: str, args: list[str]) -> list[Result]:
    results = []
    for name, (flags, named) in UNSERVED.items():
        done = subprocess.run([binary, *args, *flags], capture_output=True, text=True, timeout=10)
        ok = done.returncode == 2 and named in done.stderr
        results.append((name, "PASS" if ok else f"FAIL: exit {done.returncode}, stderr {done.stderr!r}"))
    return results


def main() -> int:
    opts, server_args = parse_suite_command_line(
        __doc__.splitlines()[0],
        PONG_CASES,
        default_concurrency=100,
        concurrency_help="simultaneous keep-alive clients",
    )
    results = check_case_lists()
    server = Server(opts.binary, server_args)
    suite = PongSuite(server, opts.concurrency)
    results += run_against_server(server, lambda: run_cases(suite, opts.cases), suite.shutdown_problems)
    results += check_response_variants(opts.binary, server_args)
    results.append(sigterm_with_connections_open(opts.binary, server_args))
    results += unserved_refused(opts.binary, server_args)
    exempt = ", ".join(EXEMPT_CASES)
    print(f"EXEMPT (pong parses nothing): {exempt}")
    return print_results(results, f"{os.path.basename(opts.binary)} {' '.join(server_args)}")


if __name__ == "__main__":
    sys.exit(main())
