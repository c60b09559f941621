"""The abuse cases of the workload flags, each with a server of its own: --response bytes:N with a client
that owes itself far more than the server may hold, and --work-us with --block-us under the clients the
other cases send (pipelined, trickled, malformed, reset). tests/abuse/cases.py lists them with the rest."""

from __future__ import annotations

import socket
import struct
import time

from .context import Context, Settings
from .server import Server
from .sockets import (
    REQUEST,
    TEST_RESPONSE,
    connect,
    expect,
    expect_error_response,
    normal_request,
    ok_response,
    read_exactly,
)
from .variants import Variant

BIG_BODY = 1 << 20
# More than a session ever queues (64): the server must stop parsing, not buffer.
OWED_REQUESTS = 80
NOT_READING_S = 1.0
WORKLOAD_FLAGS = ["--work-us", "200", "--block-us", "300", "--block-dist", "exp", "--seed", "3"]


def pattern_body(n: int) -> bytes:
    """bytes:N's body: 16-byte lines, each its own offset in 15 hex digits and a newline, cut at N."""
    return b"".join(b"%015x\n" % offset for offset in range(0, n, 16))[:n]


def read_into(sock: socket.socket, buf: bytearray) -> None:
    """Fills buf from the socket (large reads: a response of a MiB at a time)."""
    view, got = memoryview(buf), 0
    while got < len(buf):
        n = sock.recv_into(view[got:])
        expect(n > 0, f"connection closed after {got} of {len(buf)} bytes of a response")
        got += n


def served_beside(v: Variant) -> bool:
    """Whether a second client is served while one connection's owner is busy with another."""
    return v.slots is None or v.slots > 1


def large_response_backpressure(ctx: Context) -> str:
    st = ctx.settings
    server = Server(ctx.build_dir / "bin" / ctx.variant.binary, [*ctx.variant.args, "--response", f"bytes:{BIG_BODY}"])
    try:
        expected = ok_response(pattern_body(BIG_BODY), "text/plain")
        buf = bytearray(len(expected))
        with connect(server.port) as s:  # one response first: whatever is touched per response is resident now
            s.sendall(REQUEST)
            read_into(s, buf)
            expect(buf == expected, "a 1 MiB response differs from the pattern")
        rss_before = server.rss_kb()
        with connect(server.port) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            s.sendall(REQUEST * OWED_REQUESTS)
            time.sleep(NOT_READING_S)
            growth = server.rss_kb() - rss_before
            ctx.details.update(owed_mib=OWED_REQUESTS * len(expected) >> 20, rss_growth_not_reading_kb=growth)
            expect(
                growth <= st.owed_rss_bound_kb,
                f"resident memory grew by {growth} KiB while {OWED_REQUESTS} MiB of responses were owed "
                f"(bound {st.owed_rss_bound_kb} KiB)",
            )
            if served_beside(ctx.variant):
                with connect(server.port) as other:
                    other.sendall(REQUEST)
                    read_into(other, buf)
                    expect(buf == expected, "another client's response differs while one does not read")
            for i in range(OWED_REQUESTS):
                read_into(s, buf)
                expect(buf == expected, f"response {i + 1} of {OWED_REQUESTS} differs after the client read again")
        stats = server.stop()
        expect(stats.get("errors") == 0, f"errors {stats.get('errors')} in the shutdown line")
        served = 1 + OWED_REQUESTS + served_beside(ctx.variant)
        expect(stats.get("requests_served", 0) >= served, f"requests_served {stats.get('requests_served')} < {served}")
    finally:
        server.kill()
        server.close_files()
    beside = ", another client served meanwhile" if served_beside(ctx.variant) else ""
    return (
        f"{OWED_REQUESTS} pipelined 1 MiB responses unread for {NOT_READING_S:.0f} s: resident memory +{growth} KiB"
        f"{beside}; then all {OWED_REQUESTS} arrived intact, in order"
    )


def large_response_expectation(v: Variant, st: Settings) -> str:
    beside = "; another client is served meanwhile" if served_beside(v) else ""
    return (
        f"--response bytes:{BIG_BODY}: a client that pipelines {OWED_REQUESTS} requests and reads nothing for "
        f"{NOT_READING_S:.0f} s costs the server no memory for them (it stops parsing while its output is "
        f"queued){beside}; when it reads, every byte arrives in order"
    )


def workload_abused(ctx: Context) -> str:
    server = Server(ctx.build_dir / "bin" / ctx.variant.binary, [*ctx.variant.args, *WORKLOAD_FLAGS])
    try:
        rate = server.ready.float_field("work_iters_per_us")
        expect(rate is not None and rate > 0, f"no calibration on the ready line: {server.ready_line!r}")
        with connect(server.port) as s:
            s.sendall(REQUEST * 64)
            expect(read_exactly(s, 64 * len(TEST_RESPONSE)) == TEST_RESPONSE * 64, "64 pipelined: responses differ")
            for i in range(len(REQUEST)):
                s.sendall(REQUEST[i : i + 1])
                time.sleep(0.005)
            expect(read_exactly(s, len(TEST_RESPONSE)) == TEST_RESPONSE, "a request sent a byte at a time")
        expect_error_response(server.port, b"GET / HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n", b"400")
        s = connect(server.port)
        s.sendall(REQUEST * 500)
        time.sleep(0.05)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()  # a reset while the server works through 500 requests
        took = normal_request(server.port)
        ctx.details["normal_request_after_reset_s"] = round(took, 3)
        stats = server.stop()
        expect(stats.get("errors") == 0, f"errors {stats.get('errors')} in the shutdown line")
        expect(stats.get("requests_served", 0) >= 66, f"requests_served {stats.get('requests_served')} < 66")
        expect(stats.get("bad_requests", 0) >= 1, f"bad_requests {stats.get('bad_requests')} < 1")
    finally:
        server.kill()
        server.close_files()
    return (
        f"{' '.join(WORKLOAD_FLAGS)} (calibration {rate:.1f} iterations/us): 64 pipelined and a trickled request "
        f"answered, a malformed one 400, a reset behind 500 requests cost nothing (next request {took:.3f} s)"
    )


WORKLOAD_EXPECTED = (
    "with work and random waits per request (--work-us 200 --block-us 300 --block-dist exp): pipelined and "
    "trickled requests answered, a malformed one 400 and close, a reset mid-pipeline harmless, a clean shutdown"
)
