"""The abuse cases, each run against one server variant.

A case talks to the server over real sockets and raises CaseFailure with what
it observed when the server misbehaves. run_variant() starts the server with
short timeouts, runs the cases one after another and, after every case,
checks that a normal request is still answered, that the server's open
descriptors come back to where they were (every client socket is closed by
then, so nothing remains legitimately open), and that its resident memory
stayed within a bound. Each result carries the behaviour that was expected of
that architecture, in words, for the robustness appendix.
"""

from __future__ import annotations

import selectors
import socket
import struct
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .context import Context, Settings
from .server import Server, ServerError, Unsupported
from .sockets import (
    CLOSE_RESPONSE,
    IO_TIMEOUT_S,
    REQUEST,
    TEST_RESPONSE,
    CaseFailure,
    ClockStart,
    connect,
    expect,
    expect_error_response,
    normal_request,
    ok_response,
    read_exactly,
    send_in_background,
    wait_eof,
)
from .variants import Variant
from .workload_cases import (
    WORKLOAD_EXPECTED,
    large_response_backpressure,
    large_response_expectation,
    workload_abused,
)

# ---- the cases -------------------------------------------------------------------


def malformed_request_line(ctx: Context) -> str:
    cases = [
        (b"GET/ HTTP/1.1\r\nHost: x\r\n\r\n", b"400"),
        (b"GET / HTTP/1.1 extra\r\nHost: x\r\n\r\n", b"400"),
        (b"GET  / HTTP/1.1\r\nHost: x\r\n\r\n", b"400"),
        (b"G\xc3\xa9T / HTTP/1.1\r\nHost: x\r\n\r\n", b"400"),
        (b"GET / FTP/1.1\r\nHost: x\r\n\r\n", b"400"),
        (b"GET / HTTP/1.1\r\r\nHost: x\r\n\r\n", b"400"),
        (b"GET / HTTP/3.0\r\nHost: x\r\n\r\n", b"505"),
        # a TLS ClientHello sent to the plain-text port: binary, with NUL bytes
        (bytes.fromhex("16030100a5010000a10303") + bytes(range(32)) + b"\x00\x20", b"400"),
    ]
    for payload, status in cases:
        expect_error_response(ctx.port, payload, status)
    return f"{len(cases)} malformed request lines: each its 400/505 and a close"


def header_without_colon(ctx: Context) -> str:
    return expect_error_response(ctx.port, b"GET / HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n", b"400")


def nul_bytes(ctx: Context) -> str:
    payloads = [
        b"GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nX-\x00: v\r\n\r\n",
        b"\x00" * 64,
    ]
    for p in payloads:
        expect_error_response(ctx.port, p, b"400")
    return f"{len(payloads)} requests with NUL bytes: 400 and close each"


def header_100kb(ctx: Context) -> str:
    payload = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n"
    return expect_error_response(ctx.port, payload, b"431")


def headers_10000(ctx: Context) -> str:
    payload = b"GET / HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-H%05d: v\r\n" % i for i in range(10_000)) + b"\r\n"
    return expect_error_response(ctx.port, payload, b"431")


def byte_at_a_time(ctx: Context) -> str:
    start = time.monotonic()
    with connect(ctx.port) as s:
        for i in range(len(REQUEST)):
            s.sendall(REQUEST[i : i + 1])
            time.sleep(0.015)
        got = read_exactly(s, len(TEST_RESPONSE))
        expect(got == TEST_RESPONSE, f"byte-by-byte request answered {got[:120]!r}")
    return f"{len(REQUEST)} bytes, one per write, 15 ms apart ({time.monotonic() - start:.2f} s): 200"


def pipelined_64(ctx: Context) -> str:
    with connect(ctx.port) as s:
        s.sendall(REQUEST * 64)
        got = read_exactly(s, 64 * len(TEST_RESPONSE))
        expect(got == TEST_RESPONSE * 64, "64 pipelined requests: responses differ or are out of order")
        s.sendall(REQUEST)
        expect(read_exactly(s, len(TEST_RESPONSE)) == TEST_RESPONSE, "the connection stays usable")
    return "64 responses in order, connection still usable"


def half_request_then_close(ctx: Context) -> str:
    with connect(ctx.port) as s:
        s.sendall(REQUEST[: len(REQUEST) // 2])
        s.shutdown(socket.SHUT_WR)
        rest, closed_at = wait_eof(s, IO_TIMEOUT_S)
        expect(closed_at is not None, "no close after half a request and the client's FIN")
        expect(rest == b"", f"a response to half a request: {rest[:80]!r}")
    with connect(ctx.port) as s:  # and the rude version: half, then a plain close
        s.sendall(REQUEST[: len(REQUEST) // 2])
    return "half a request then FIN: closed without a response; half then close: no effect"


def reset_mid_response(ctx: Context) -> str:
    s = connect(ctx.port)
    s.sendall(REQUEST * 5000)
    time.sleep(0.05)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()  # RST while the server is writing 5000 responses
    time.sleep(0.2)
    return "reset (SO_LINGER 0) while 5000 responses were being written: server unaffected"


def connection_close(ctx: Context) -> str:
    with connect(ctx.port) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + REQUEST)
        got = read_exactly(s, len(CLOSE_RESPONSE))
        expect(got == CLOSE_RESPONSE, f"Connection: close answered {got[:120]!r}")
        rest, closed_at = wait_eof(s, IO_TIMEOUT_S)
        expect(closed_at is not None and rest == b"", f"no close after Connection: close (extra {rest[:60]!r})")
    return "200 with Connection: close, then close (the request behind it unanswered)"


def expect_on_time(started: ClockStart, at: float, timeout_s: float, st: Settings, what: str) -> float:
    """Fails unless `what`, seen at `at`, came `timeout_s` after the clock started, give or take the early and the
    timing slack; returns the longest it can have taken, the figure the case reports."""
    shortest, longest = started.elapsed(at)
    expect(
        longest >= timeout_s - st.early_slack_s,
        f"{what} at most {longest:.2f} s after its clock started (timeout {timeout_s} s)",
    )
    expect(
        shortest <= timeout_s + st.timing_slack_s,
        f"{what} only {shortest:.2f} s after its clock started (timeout {timeout_s} s)",
    )
    return longest


def idle_keepalive_timeout(ctx: Context) -> str:
    st = ctx.settings
    with connect(ctx.port) as s:
        asked = time.monotonic()
        s.sendall(REQUEST)
        expect(read_exactly(s, len(TEST_RESPONSE)) == TEST_RESPONSE, "request before idling")
        idle_since = ClockStart(asked, time.monotonic())
        rest, closed_at = wait_eof(s, st.idle_timeout_s + st.timing_slack_s + 5)
    expect(closed_at is not None, f"an idle keep-alive connection stayed open beyond {st.idle_timeout_s + 6.5} s")
    expect(rest == b"", f"bytes on an idle close: {rest[:80]!r}")
    took = expect_on_time(idle_since, closed_at, st.idle_timeout_s, st, "the idle connection was closed")
    ctx.details["idle_close_s"] = round(took, 3)
    began = time.monotonic()
    with connect(ctx.port) as s:  # a connection that never sends: the header timeout, silently
        accepted = ClockStart(began, time.monotonic())
        rest, closed_at = wait_eof(s, st.header_timeout_s + st.timing_slack_s + 5)
    expect(closed_at is not None, "a connection that sends nothing was never closed")
    expect(rest == b"", f"a connection that sent nothing got {rest[:80]!r}")
    silent = expect_on_time(accepted, closed_at, st.header_timeout_s, st, "the silent connection was closed")
    ctx.details["silent_close_s"] = round(silent, 3)
    return f"idle keep-alive closed after {took:.2f} s, silent new connection after {silent:.2f} s, no bytes"


def trickled_head_timeout(ctx: Context) -> str:
    """A head that keeps arriving, one byte every 0.4 s, still ends at the header timeout."""
    st = ctx.settings
    payload = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"s" * 100 + b"\r\n\r\n"
    began = time.monotonic()
    with connect(ctx.port) as s:
        accepted = ClockStart(began, time.monotonic())
        sender = send_in_background(s, payload, pause_s=0.4, step=1)
        got, closed_at = wait_eof(s, st.header_timeout_s + st.timing_slack_s + 5)
        sender.join(0)
    expect(closed_at is not None, "a head trickling in was never cut off")
    expect(
        got.startswith(b"HTTP/1.1 408 Request Timeout\r\n") and b"Connection: close" in got,
        f"expected a 408 before the close, got {got[:80]!r}",
    )
    took = expect_on_time(accepted, closed_at, st.header_timeout_s, st, "the trickling head was cut off")
    ctx.details["trickle_close_s"] = round(took, 3)
    return f"408 and close after {took:.2f} s although a byte arrived every 0.4 s"


# -- slowloris ---------------------------------------------------------------------

SLOW_HEAD = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "


def open_slowloris(port: int, n: int) -> tuple[list[socket.socket], list[ClockStart]]:
    """n connections, each holding a partial head, and when each one's header clock started."""
    socks, accepted = [], []
    try:
        for _ in range(n):
            began = time.monotonic()
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(SLOW_HEAD)
            s.setblocking(False)
            socks.append(s)
            accepted.append(ClockStart(began, time.monotonic()))
    except OSError:
        close_all(socks)
        raise
    return socks, accepted


def close_all(socks: list[socket.socket]) -> None:
    for s in socks:
        try:
            s.close()
        except OSError:
            pass


def watch_closures(socks: list[socket.socket], until: float) -> dict[int, tuple[float, bytes]]:
    """Which sockets the server closed before `until`: index -> (when, bytes received)."""
    sel = selectors.DefaultSelector()
    for i, s in enumerate(socks):
        sel.register(s, selectors.EVENT_READ, i)
    received: dict[int, bytes] = {}
    closed: dict[int, tuple[float, bytes]] = {}
    try:
        while len(closed) < len(socks):
            left = until - time.monotonic()
            if left <= 0:
                break
            for key, _ in sel.select(timeout=min(left, 0.2)):
                i = key.data
                try:
                    chunk = socks[i].recv(4096)
                except BlockingIOError:
                    continue
                except ConnectionResetError:
                    chunk = b""
                if chunk:
                    received[i] = received.get(i, b"") + chunk
                    continue
                closed[i] = (time.monotonic(), received.get(i, b""))
                sel.unregister(socks[i])
    finally:
        sel.close()
    return closed


def start_normal_client(port: int) -> socket.socket:
    s = connect(port)
    s.sendall(REQUEST)
    return s


def served_within(s: socket.socket, timeout: float) -> float | None:
    """Seconds until the whole response arrived, or None if it did not within timeout."""
    start = time.monotonic()
    s.settimeout(timeout)
    try:
        got = read_exactly(s, len(TEST_RESPONSE))
    except TimeoutError:
        return None
    finally:
        s.settimeout(IO_TIMEOUT_S)
    expect(got == TEST_RESPONSE, f"the normal client got {got[:120]!r}")
    return time.monotonic() - start


def slowloris_expectation(v: Variant, st: Settings) -> str:
    n, t = st.slowloris_connections, st.header_timeout_s
    if v.slots is None:
        return (
            f"{n} connections holding partial heads do not delay a normal client (served within "
            f"{st.served_promptly_s} s); each gets 408 and is closed {t} s after it connected"
        )
    if v.lifo:
        return (
            f"{v.slots} workers own one connection each and the hand-off is a LIFO stack: the normal client, "
            f"newest, is served as soon as the first {v.slots} slowloris connections time out ({t} s), while "
            f"the older ones starve"
        )
    return (
        f"{v.slots} connection slot(s): {n} slowloris connections ahead of it starve the normal client (not served "
        f"within 3 s; {v.slots} of them time out every {t} s, so it would wait about "
        f"{n // v.slots * t} s); served promptly once they go; with {2 * v.slots} ahead of it, served once "
        f"they have timed out, after 2 x {t} s"
    )


def slowloris(ctx: Context) -> str:
    v, st = ctx.variant, ctx.settings
    t = st.header_timeout_s
    n = st.slowloris_connections
    socks, accepted = open_slowloris(ctx.port, n)
    try:
        client = start_normal_client(ctx.port)
        client_start = time.monotonic()
        try:
            if v.slots is None:
                took = served_within(client, 5.0)
                expect(
                    took is not None and took <= st.served_promptly_s,
                    f"normal client not served within {st.served_promptly_s} s behind {n} slowloris connections "
                    f"(took {took})",
                )
                ctx.details["normal_client_s"] = round(took, 3)
                closed = watch_closures(socks, accepted[-1].latest + t + st.timing_slack_s + 1.5)
                # Each lifetime is bounded both ways (ClockStart): at most from before its connect, at least from
                # after its connect and head were sent.
                at_most = [accepted[i].elapsed(closed[i][0])[1] for i in closed]
                at_least = [accepted[i].elapsed(closed[i][0])[0] for i in closed]
                got_408 = sum(1 for i in closed if closed[i][1].startswith(b"HTTP/1.1 408 "))
                ctx.details.update(
                    slowloris_closed=len(closed),
                    slowloris_408=got_408,
                    slowloris_min_s=round(min(at_most, default=0), 3),
                    slowloris_max_s=round(max(at_least, default=0), 3),
                    slowloris_slowest_connect_s=round(max(a.latest - a.earliest for a in accepted), 3),
                )
                expect(len(closed) == n, f"only {len(closed)} of {n} slowloris connections were closed by the server")
                expect(got_408 == n, f"{got_408} of {n} slowloris connections got a 408 before the close")
                expect(
                    min(at_most) >= t - st.early_slack_s,
                    f"a slowloris connection was closed at most {min(at_most):.2f} s after it began to connect, "
                    f"before the header timeout",
                )
                expect(
                    max(at_least) <= t + st.timing_slack_s + 1.5,
                    f"a slowloris connection was closed only {max(at_least):.2f} s after it had connected",
                )
                return (
                    f"normal client served in {took:.3f} s; all {n} slowloris connections got 408 and were "
                    f"closed {min(at_most):.2f}-{max(at_least):.2f} s after connecting"
                )
            if v.lifo:
                took = served_within(client, t + st.timing_slack_s + 1.0)
                expect(took is not None, f"LIFO: normal client not served within {t + 2.5} s")
                # The first slot frees when the first slowloris connection times out, t after it was accepted:
                # opening the others may take a while on a loaded machine, so that is the clock, not the normal
                # client's start.
                since_first = accepted[0].elapsed(time.monotonic())[1]
                expect(
                    since_first >= t - st.early_slack_s,
                    f"normal client served at most {since_first:.2f} s after the first slowloris connection began "
                    f"to connect, before any slot freed",
                )
                ctx.details["normal_client_s"] = round(took, 3)
                return f"normal client (newest, LIFO) served after {took:.2f} s, when the first slots timed out"
            took = served_within(client, 3.0)
            expect(
                took is None,
                f"normal client served after {took} s although {n} connections were ahead of it in {v.slots} slot(s)",
            )
            closed = watch_closures(socks, client_start + 4.5)
            got_408 = sum(1 for i in closed if closed[i][1].startswith(b"HTTP/1.1 408 "))
            ctx.details.update(slowloris_closed_by_4_5s=len(closed), slowloris_408=got_408)
            expect(
                v.slots <= len(closed) <= 3 * v.slots,
                f"{len(closed)} slowloris connections timed out within 4.5 s; expected {v.slots}-{3 * v.slots} "
                f"({v.slots} slot(s) x one every {t} s)",
            )
            expect(got_408 == len(closed), f"{len(closed) - got_408} timed-out connections got no 408")
            close_all(socks)
            socks = []
            released = time.monotonic()
            took = served_within(client, 10.0)
            expect(took is not None, "normal client still not served 10 s after the slowloris connections left")
            ctx.details["normal_client_after_release_s"] = round(time.monotonic() - released, 3)
        finally:
            client.close()
    finally:
        close_all(socks)
    # Then fewer of them, 2 per slot: the client is served once they have timed out.
    settled = ctx.server.wait_fds_at_most(ctx.details.get("fd_baseline", 0), st.fd_settle_s)
    ctx.details["fds_between_rounds"] = settled
    socks, accepted = open_slowloris(ctx.port, 2 * v.slots)
    try:
        client = start_normal_client(ctx.port)
        try:
            took = served_within(client, 2 * t + st.timing_slack_s + 2)
            served_at = time.monotonic()
        finally:
            client.close()
    finally:
        close_all(socks)
    expect(took is not None, f"with {2 * v.slots} slowloris connections ahead, not served within {2 * t + 3.5} s")
    # Its slot frees twice, each time t after a connection was accepted, the first of them no sooner than when the
    # first slowloris connection began to connect.
    since_first = accepted[0].elapsed(served_at)[1]
    expect(
        since_first >= 2 * t - st.early_slack_s,
        f"with {2 * v.slots} slowloris connections ahead, served at most {since_first:.2f} s after the first of them "
        f"began to connect (expected about {2 * t} s)",
    )
    expect(
        took <= 2 * t + st.timing_slack_s,
        f"with {2 * v.slots} slowloris connections ahead, served after {took:.2f} s (expected about {2 * t} s)",
    )
    ctx.details["normal_client_behind_2_per_slot_s"] = round(took, 3)
    return (
        f"starved behind {n} (not served within 3 s, {ctx.details['slowloris_closed_by_4_5s']} timed out by "
        f"4.5 s), served {ctx.details['normal_client_after_release_s']:.2f} s after they left; behind "
        f"{2 * v.slots}: served after {took:.2f} s"
    )


def bind_loopback(ctx: Context) -> str:
    expect(ctx.server.host == "127.0.0.1", f"ready line says {ctx.server.ready_line!r}")
    addresses = ctx.server.listening_addresses()
    expect(addresses, "no listening socket found in /proc/net/tcp")
    expect(
        all(addr == "127.0.0.1" and port == ctx.port for addr, port in addresses),
        f"listening on {addresses}, expected only 127.0.0.1:{ctx.port}",
    )
    return f"{len(addresses)} listener(s), all on 127.0.0.1:{ctx.port}"


# -- cases with a server of their own ------------------------------------------------

PAGE = b"<!DOCTYPE html>\n<html><head><title>archbench</title></head>\n<body><p>the original bytes</p></body></html>\n"


def file_response_fixed(ctx: Context) -> str:
    """--response file:PATH is read once at start: no request reaches the filesystem."""
    with tempfile.TemporaryDirectory(prefix="archbench-abuse-") as tmp:
        path = Path(tmp) / "page.html"
        path.write_bytes(PAGE)
        server = Server(ctx.build_dir / "bin" / ctx.variant.binary, [*ctx.variant.args, "--response", f"file:{path}"])
        try:
            expected = ok_response(PAGE, "text/html")
            with connect(server.port) as s:
                s.sendall(REQUEST)
                expect(read_exactly(s, len(expected)) == expected, "the file's bytes before any change")
            path.write_bytes(b"CHANGED " * 50)
            expect(not any(p == str(path) for p in server.open_paths()), "the server keeps the file open")
            path.unlink()
            targets = [
                "/",
                "/../../etc/passwd",
                "/etc/passwd",
                "/%2e%2e/%2e%2e/etc/passwd",
                "/..%2f..%2fetc%2fpasswd",
                str(path),
                "//etc//shadow",
                "/page.html",
                "/proc/self/environ",
                "*",
                "http://x/../etc/passwd",
            ]
            with connect(server.port) as s:
                for target in targets:
                    s.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                    got = read_exactly(s, len(expected))
                    expect(got == expected, f"GET {target}: got {got[:120]!r}")
                    expect(b"root:" not in got, f"GET {target}: /etc/passwd leaked")
            server.stop()
        finally:
            server.kill()
            server.close_files()
    return (
        f"file changed then deleted; {len(targets)} targets incl. /../../etc/passwd: every response the "
        f"original {len(PAGE)} bytes, no file descriptor on it"
    )


def echo_idle_timeout(ctx: Context) -> str:
    """--proto echo: the idle timeout applies, the header timeout does not."""
    header_s, idle_s = 1, 2
    st = ctx.settings
    server = Server(
        ctx.build_dir / "bin" / ctx.variant.binary,
        [*ctx.variant.args, "--proto", "echo", "--header-timeout", str(header_s), "--idle-timeout", str(idle_s)],
    )
    try:
        with connect(server.port) as s:
            s.sendall(b"GET / HT")  # what would be a partial HTTP head
            expect(read_exactly(s, 8) == b"GET / HT", "the bytes are echoed")
            time.sleep(1.0)
            sent = time.monotonic()
            s.sendall(b"TP/1.1\r\n")  # activity restarts the idle clock
            expect(read_exactly(s, 8) == b"TP/1.1\r\n", "echoed again")
            idle_since = ClockStart(sent, time.monotonic())
            rest, closed_at = wait_eof(s, idle_s + st.timing_slack_s + 5)
        expect(closed_at is not None, "an idle echo connection was never closed")
        expect(rest == b"", f"bytes on an idle close: {rest[:60]!r}")
        took = expect_on_time(
            idle_since,
            closed_at,
            idle_s,
            st,
            f"the idle echo connection was closed (header timeout {header_s} s must not apply)",
        )
        stats = server.stop()
        expect(stats.get("timeouts") == 1, f"timeouts {stats.get('timeouts')} in the shutdown line, expected 1")
    finally:
        server.kill()
        server.close_files()
    return f"echo connection kept past the 1 s header timeout, closed {took:.2f} s after its last bytes (idle 2 s)"


@dataclass(frozen=True)
class Case:
    name: str
    run: Callable[[Context], str]
    expected: Callable[[Variant, Settings], str]
    own_server: bool = False


def _fixed(text: str) -> Callable[[Variant, Settings], str]:
    return lambda v, st: text


CASES: tuple[Case, ...] = (
    Case("bind_loopback", bind_loopback, _fixed("without --host, every listener is bound to 127.0.0.1 only")),
    Case(
        "malformed_request_line",
        malformed_request_line,
        _fixed("400 (505 for HTTP/3.0) with Connection: close, then close"),
    ),
    Case("header_without_colon", header_without_colon, _fixed("400, then close")),
    Case("nul_bytes", nul_bytes, _fixed("400, then close")),
    Case("header_100kb", header_100kb, _fixed("431 once the head passes 8 KiB, then close")),
    Case("headers_10000", headers_10000, _fixed("431 once the head passes 8 KiB, then close")),
    Case("byte_at_a_time", byte_at_a_time, _fixed("the request is answered (200) whatever its segmentation")),
    Case("pipelined_64", pipelined_64, _fixed("64 responses, in order, connection kept")),
    Case(
        "half_request_then_close",
        half_request_then_close,
        _fixed("no response to half a request; closed after the client's FIN"),
    ),
    Case("reset_mid_response", reset_mid_response, _fixed("a reset mid-response costs only that connection")),
    Case("connection_close", connection_close, _fixed("200 with Connection: close, then close")),
    Case(
        "idle_keepalive_timeout",
        idle_keepalive_timeout,
        lambda v, st: (
            f"an idle keep-alive connection is closed after --idle-timeout {st.idle_timeout_s} s, a "
            f"connection that sends nothing after --header-timeout {st.header_timeout_s} s, without "
            f"bytes"
        ),
    ),
    Case(
        "trickled_head_timeout",
        trickled_head_timeout,
        lambda v, st: (
            f"a head trickling in gets 408 and a close at --header-timeout {st.header_timeout_s} s, "
            f"counted from the accept, however steadily bytes arrive"
        ),
    ),
    Case("slowloris", slowloris, slowloris_expectation),
    Case(
        "file_response_fixed",
        file_response_fixed,
        _fixed(
            "--response file:PATH is read once at start: after the file changes and is deleted, every target "
            "(/../../etc/passwd included) gets the original bytes"
        ),
        own_server=True,
    ),
    Case(
        "echo_idle_timeout",
        echo_idle_timeout,
        _fixed("--proto echo: the idle timeout closes an idle connection; the header timeout does not apply"),
        own_server=True,
    ),
    Case("large_response_backpressure", large_response_backpressure, large_response_expectation, own_server=True),
    Case("workload_abused", workload_abused, _fixed(WORKLOAD_EXPECTED), own_server=True),
)
CASE_NAMES = tuple(c.name for c in CASES) + ("clean_shutdown",)
SHUTDOWN_EXPECTED = (
    "SIGTERM: exit status 0, one JSON line whose timeouts count the connections this suite timed "
    "out and errors is 0, no sanitizer report on stderr"
)


@dataclass
class Result:
    variant: str
    architecture: str
    args: list[str]
    case: str
    outcome: str  # passed | failed | skipped
    expected: str
    observed: str
    duration_s: float
    details: dict

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def run_variant(build_dir: Path, variant: Variant, selected: set[str], settings: Settings) -> list[Result]:
    binary = build_dir / "bin" / variant.binary
    results: list[Result] = []

    def record(case: str, outcome: str, expected: str, observed: str, start: float, details: dict) -> None:
        results.append(
            Result(
                variant.name,
                variant.architecture,
                list(variant.args),
                case,
                outcome,
                expected,
                observed,
                round(time.monotonic() - start, 3),
                details,
            )
        )

    args = [
        *variant.args,
        "--header-timeout",
        str(settings.header_timeout_s),
        "--idle-timeout",
        str(settings.idle_timeout_s),
    ]
    start = time.monotonic()
    try:
        server = Server(binary, args)
    except Unsupported as e:
        for case in CASE_NAMES:
            if case in selected:
                record(case, "skipped", "", f"unsupported here: {e}", start, {})
        return results
    except (ServerError, OSError) as e:
        for case in CASE_NAMES:
            if case in selected:
                record(case, "failed", "", f"server did not start: {e}", start, {})
        return results

    timed_out_min = 0
    try:
        normal_request(server.port)
        fd_base = server.wait_fds_at_most(10**9, 0)
        time.sleep(0.2)
        fd_base = min(fd_base, server.wait_fds_at_most(fd_base, 2.0))
        rss_base = server.rss_kb()
        for case in CASES:
            if case.name not in selected:
                continue
            ctx = Context(server, variant, settings, build_dir, {"fd_baseline": fd_base, "rss_baseline_kb": rss_base})
            expected = case.expected(variant, settings)
            start = time.monotonic()
            try:
                if not server.alive():
                    raise CaseFailure(f"the server had died (exit status {server.process.returncode})")
                observed = case.run(ctx)
                if case.name in ("idle_keepalive_timeout",):
                    timed_out_min += 2
                elif case.name == "trickled_head_timeout":
                    timed_out_min += 1
                elif case.name == "slowloris":
                    # LIFO: one slot freeing up is enough for the client, then the rest are released
                    timed_out_min += (
                        settings.slowloris_connections
                        if variant.slots is None
                        else 1
                        if variant.lifo
                        else variant.slots
                    )
                took = normal_request(server.port)
                ctx.details["normal_request_after_s"] = round(took, 3)
                fds = server.wait_fds_at_most(fd_base, settings.fd_settle_s)
                rss = server.rss_kb()
                ctx.details.update(fds_after=fds, rss_after_kb=rss, rss_growth_kb=rss - rss_base)
                expect(
                    fds <= fd_base,
                    f"descriptor leak: {fds} open {settings.fd_settle_s:.0f} s after the case, {fd_base} before",
                )
                expect(
                    rss - rss_base <= settings.rss_growth_bound_kb,
                    f"resident memory grew by {rss - rss_base} KiB (bound {settings.rss_growth_bound_kb} KiB)",
                )
                record(case.name, "passed", expected, observed, start, ctx.details)
            except (CaseFailure, ServerError, OSError) as e:
                record(case.name, "failed", expected, f"{type(e).__name__}: {e}", start, ctx.details)
        if "clean_shutdown" in selected:
            start = time.monotonic()
            try:
                stats = server.stop()
                expect(stats.get("errors") == 0, f"errors {stats.get('errors')} in the shutdown line")
                expect(
                    stats.get("timeouts", -1) >= timed_out_min,
                    f"timeouts {stats.get('timeouts')} in the shutdown line, at least {timed_out_min} expected",
                )
                record("clean_shutdown", "passed", SHUTDOWN_EXPECTED, f"exit 0; {stats}", start, {"stats": stats})
            except (CaseFailure, ServerError, OSError) as e:
                record("clean_shutdown", "failed", SHUTDOWN_EXPECTED, f"{type(e).__name__}: {e}", start, {})
    finally:
        server.kill()
        report = server.sanitizer_report()
        server.close_files()
    if report is not None:
        for r in results:
            if r.outcome == "passed":
                r.outcome, r.observed = "failed", f"sanitizer report on the server's stderr:\n{report}"
    return results
