"""Socket helpers of the abuse cases: connect, read a whole response or head, wait for EOF, send slowly;
the canonical request and responses the cases compare against; the failure a case raises."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def ok_response(body: bytes, content_type: str, keep_alive: bool = True) -> bytes:
    connection = b"keep-alive" if keep_alive else b"close"
    return (
        b"HTTP/1.1 200 OK\r\nConnection: "
        + connection
        + b"\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\nContent-Type: "
        + content_type.encode()
        + b"\r\n\r\n"
        + body
    )


TEST_RESPONSE = ok_response(b"test", "text/html")
CLOSE_RESPONSE = ok_response(b"test", "text/html", keep_alive=False)
IO_TIMEOUT_S = 10.0


class CaseFailure(AssertionError):
    pass


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CaseFailure(message)


@dataclass(frozen=True)
class ClockStart:
    """When the server started a clock (a connection's header deadline, an idle deadline), as far as the client
    can tell: not before `earliest`, taken before the client acted, and not after `latest`, taken once its call
    had returned. A client thread kept from the CPU or the GIL in between (several variants run at once, beside
    other test workers) widens the window, so a timeout is early only if it fired before `earliest` + the
    timeout, and late only if after `latest` + the timeout + the slack."""

    earliest: float
    latest: float

    def elapsed(self, at: float) -> tuple[float, float]:
        """The shortest and the longest the time from the start to `at` can have been."""
        return at - self.latest, at - self.earliest


def connect(port: int, timeout: float = IO_TIMEOUT_S) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_exactly(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(min(65536, n - len(data)))
        if not chunk:
            raise CaseFailure(f"connection closed after {len(data)} of {n} expected bytes: {bytes(data[:120])!r}")
        data += chunk
    return bytes(data)


def read_head(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise CaseFailure(f"closed before a complete response head; got {data[:120]!r}")
        data += chunk
    return data


def read_response(sock: socket.socket) -> tuple[bytes, bytes]:
    """(head, body) of one response, by its Content-Length."""
    data = read_head(sock)
    head, rest = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    body = rest[:length]
    if len(body) < length:
        body += read_exactly(sock, length - len(body))
    return head + b"\r\n\r\n", body


def wait_eof(sock: socket.socket, timeout: float) -> tuple[bytes, float | None]:
    """Reads until EOF or a reset; returns (bytes read, time.monotonic() when it was seen) or (bytes, None) on
    timeout."""
    got = b""
    sock.settimeout(timeout)
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return got, time.monotonic()
            got += chunk
    except ConnectionResetError:
        return got, time.monotonic()
    except TimeoutError:
        return got, None
    finally:
        sock.settimeout(IO_TIMEOUT_S)


def normal_request(port: int, timeout: float = IO_TIMEOUT_S) -> float:
    """One request on a new connection, byte-exact; returns how long it took."""
    start = time.monotonic()
    with connect(port, timeout) as s:
        s.sendall(REQUEST)
        got = read_exactly(s, len(TEST_RESPONSE))
    expect(got == TEST_RESPONSE, f"a normal request got {got[:120]!r}")
    return time.monotonic() - start


def send_in_background(sock: socket.socket, payload: bytes, pause_s: float = 0.0, step: int = 0) -> threading.Thread:
    """Sends from a thread (the server may answer and close before it has read
    everything); a reset or broken pipe just ends the sending."""

    def run() -> None:
        try:
            if step <= 0:
                sock.sendall(payload)
                return
            for i in range(0, len(payload), step):
                sock.sendall(payload[i : i + step])
                if pause_s:
                    time.sleep(pause_s)
        except OSError:
            pass

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def expect_error_response(port: int, payload: bytes, status: bytes) -> str:
    with connect(port) as s:
        sender = send_in_background(s, payload)
        head, _ = read_response(s)
        expect(
            head.startswith(b"HTTP/1.1 " + status + b" "),
            f"expected {status.decode()} for {payload[:40]!r}..., got {head[:60]!r}",
        )
        expect(b"\r\nConnection: close\r\n" in head, f"an error response must close: {head!r}")
        rest, closed_at = wait_eof(s, IO_TIMEOUT_S)
        expect(closed_at is not None, "the server did not close after the error response")
        expect(rest == b"", f"bytes after the error response: {rest[:80]!r}")
        sender.join(IO_TIMEOUT_S)
    return f"{status.decode()} and close"
