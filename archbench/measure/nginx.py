"""nginx as the reference server: a registry entry, and the launcher its command runs.

nginx prints no ready line and no counters, so the runner does not start it
directly. `NginxSpec.command()` runs this module as a launcher,

    python -m archbench.measure.nginx [--nginx PATH] [--host H] [--port 0] [--worker-processes N]
                              [--response test|hello|file:PATH|bytes:N]

which behaves like every `build/bin/` server (contracts.md section 1):

 1. writes nginx.conf into a fresh temporary prefix directory (pid file and
    every temporary path inside it) for a free port on H, starts
    `nginx -p DIR/ -c DIR/nginx.conf -e stderr -g 'daemon off;'` as its child,
    waits until the port accepts, sends ONE request exactly as wrk sends it to
    measure nginx's response length, then prints `listening on H:PORT`;
 2. on SIGTERM or SIGINT reads nginx's stub_status, sends nginx SIGTERM (fast
    shutdown), reaps it with os.wait4 and prints the one JSON line, with the
    launcher's own status and probe requests subtracted, plus
    `response_bytes` and nginx's own `cpu_user_s`/`cpu_sys_s`.

nginx runs in a process group of its own, so the runner's SIGTERM to the
launcher's group does not reach it before its counters are read. The launcher
stops it on every path out, and nginx's master is told by the kernel
(PR_SET_PDEATHSIG) to shut down if the launcher is killed outright, so no nginx
outlives a trial (a launcher killed outright does leave its few-KB temporary
prefix behind in $TMPDIR). The master waits for its workers before it exits, so the
rusage os.wait4 returns holds the CPU time of nginx as a whole, workers
included, and nothing of the launcher's Python. The runner's own wait4 of the
launcher includes both; the trial record says which to use
(`server.cpu_source` = "stats": the numbers in the JSON line).
"""

from __future__ import annotations

import argparse
import grp
import os
import pwd
import re
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from archbench.config.nginx_spec import INSTALL_HINT, SBIN_DIRECTORIES, NginxSpec, find_nginx, nginx_build_options  # noqa: F401  (re-exported for tests)
from archbench.config.server_spec import RESPONSE_BYTES_MAX, RESPONSE_BYTES_MIN, response_body_bytes
from archbench.measure.processes import die_with_parent
from archbench.measure.server_protocol import format_ready_line, format_shutdown_line

STATUS_PATH = "/archbench-status"
# The largest connection count a campaign runs (profile full); worker_connections covers it.
MAX_CONNECTIONS = 10_000
# Descriptors beyond the connections: listener, status connection, logs, epoll, channels.
FD_HEADROOM = 256
# nginx starts closing idle keep-alive connections ("worker_connections are not enough, reusing
# connections") once fewer than 1/16 of worker_connections are free, so the pool is sized with
# that sixteenth to spare: otherwise wrk sees read errors at 10,000 connections.
NGINX_RESERVE_FRACTION = 16
LISTEN_BACKLOG = 4096  # the C servers' default --backlog (nginx's own default on Linux is 511)
READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0
IO_TIMEOUT_S = 5.0
PORT_ATTEMPTS = 3  # a free port can be taken between choosing it and nginx binding it
STDERR_TAIL_CHARS = 4000
# Where nginx lives when PATH lacks the sbin directories (a normal user's PATH on Debian).
# Same table as servers_c/core/responses.c (content_type_for), so both send the same type.
CONTENT_TYPES = {
    ".html": "text/html",
    ".htm": "text/html",
    ".txt": "text/plain",
    ".css": "text/css",
    ".js": "application/javascript",
    ".json": "application/json",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".svg": "image/svg+xml",
}
BUILT_IN_RESPONSES = {"test": ("text/html", "test"), "hello": ("text/plain", "Hello World!")}
# --response bytes:N: the generated body (the C servers' pattern, `generated_body`) is written into the prefix
# directory, in a directory of its own that nginx serves as its root.
BODY_DIRECTORY = "body"
BODY_FILE = "body.txt"
# Temporary-file directives of optional modules; a build without the module rejects its directive.
TEMP_PATH_MODULES = {
    "client_body_temp_path": None,  # part of the core http module
    "proxy_temp_path": "http_proxy",
    "fastcgi_temp_path": "http_fastcgi",
    "uwsgi_temp_path": "http_uwsgi",
    "scgi_temp_path": "http_scgi",
}


# --------------------------------------------------------------------------- the configuration


def nginx_string(text: str) -> str:
    """A double-quoted nginx string; refuses what nginx would interpret ($ variables) or cannot quote."""
    if any(c in text for c in '$"\\') or any(ord(c) < 32 for c in text):
        raise ValueError(f"{text!r} contains $, a quote, a backslash or a control character")
    return f'"{text}"'


def generated_body(size: int) -> bytes:
    """The body of --response bytes:N, byte for byte as the C servers build it (servers_c/core/responses.c,
    responses_fill_pattern): 16-byte lines, each its own offset in 15 lower-case hex digits and a newline, the
    last cut at N."""
    lines = b"".join(b"%015x\n" % offset for offset in range(0, size, 16))
    return lines[:size]


def write_generated_body(prefix: Path, response: str) -> None:
    """For --response bytes:N, the file nginx serves (nothing to write for another response)."""
    size = response_body_bytes(response)
    if size is not None:
        directory = prefix / BODY_DIRECTORY
        directory.mkdir(exist_ok=True)
        (directory / BODY_FILE).write_bytes(generated_body(size))


def response_location(response: str, prefix: Path | None = None) -> list[str]:
    """The directives of `location /` that answer like the C servers' --response (bytes:N: the file
    `write_generated_body` writes into `prefix`)."""
    if response in BUILT_IN_RESPONSES:
        content_type, body = BUILT_IN_RESPONSES[response]
        return [f"default_type {content_type};", f"return 200 {nginx_string(body)};"]
    if response.startswith("bytes:"):
        if response_body_bytes(response) is None:
            raise ValueError(
                f"--response {response!r}: bytes:N needs N from {RESPONSE_BYTES_MIN} to {RESPONSE_BYTES_MAX}"
            )
        return _file_location((prefix or Path(".")).resolve() / BODY_DIRECTORY / BODY_FILE, "text/plain")
    if not response.startswith("file:") or len(response) == len("file:"):
        raise ValueError(f"--response {response!r}: expected test, hello, file:PATH or bytes:N")
    path = Path(response[len("file:") :]).resolve()
    if not path.is_file():
        raise ValueError(f"--response {response!r}: no such file {path}")
    return _file_location(path, CONTENT_TYPES.get(path.suffix.lower(), "application/octet-stream"))


def _file_location(path: Path, content_type: str) -> list[str]:
    return [
        f"root {nginx_string(str(path.parent))};",
        f"default_type {content_type};",
        f"try_files {nginx_string('/' + path.name)} =404;",
        # The C servers read the file once at start-up; the cache spares nginx an open() per request.
        "open_file_cache max=16 inactive=3600s;",
        "open_file_cache_valid 3600s;",
        "sendfile on;",
    ]


def open_file_limit() -> int:
    """What worker_rlimit_nofile may ask for: the hard limit (finite) of this process."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return hard if hard != resource.RLIM_INFINITY else 1 << 20


@dataclass(frozen=True)
class NginxConfig:
    prefix: Path
    host: str
    port: int
    worker_processes: int
    response: str
    open_files: int  # worker_rlimit_nofile
    missing_modules: frozenset[str] = frozenset()  # configure's --without-<module>_module

    @property
    def worker_connections(self) -> int:
        wanted = -(-(MAX_CONNECTIONS + FD_HEADROOM) * NGINX_RESERVE_FRACTION // (NGINX_RESERVE_FRACTION - 1))
        return max(64, min(wanted, self.open_files - FD_HEADROOM))

    def text(self) -> str:
        prefix = self.prefix
        lines = []
        if os.geteuid() == 0:
            # As root nginx would switch its workers to `nobody`, which may lack a group of that
            # name and cannot read the private prefix; the workers run as the launching user.
            user = pwd.getpwuid(os.geteuid()).pw_name
            group = grp.getgrgid(os.getegid()).gr_name
            lines.append(f"user {user} {group};")
        # `daemon off` comes from the command line (-g): nginx rejects it given twice.
        lines += [
            "master_process on;",
            f"worker_processes {self.worker_processes};",
            f"worker_rlimit_nofile {self.open_files};",
            f"pid {nginx_string(str(prefix / 'nginx.pid'))};",
            "error_log stderr warn;",
            "events {",
            "    use epoll;",
            f"    worker_connections {self.worker_connections};",
            "}",
            "http {",
            "    access_log off;",
            "    error_log stderr warn;",
            "    server_tokens off;",
            "    keepalive_requests 1000000000;",
            "    keepalive_timeout 75s;",
            "    types {}",
        ]
        for directive, module in TEMP_PATH_MODULES.items():
            if module is None or module not in self.missing_modules:
                lines.append(f"    {directive} {nginx_string(str(prefix / directive.removesuffix('_temp_path')))};")
        lines += [
            "    server {",
            f"        listen {self.host}:{self.port} backlog={LISTEN_BACKLOG};",
            "        location / {",
            *(f"            {line}" for line in response_location(self.response, prefix)),
            "        }",
            f"        location = {STATUS_PATH} {{",
            "            stub_status;",
            "        }",
            "    }",
            "}",
        ]
        return "\n".join(lines) + "\n"


def missing_modules(build_options: str) -> frozenset[str]:
    return frozenset(re.findall(r"--without-(\w+?)_module", build_options))


# --------------------------------------------------------------------------- HTTP to nginx


class LaunchError(RuntimeError):
    """nginx could not be started, probed, read or stopped; the message says why."""


def read_response(sock: socket.socket) -> tuple[int, bytes, bytes]:
    """(status, head, body) of one HTTP/1.1 response framed by Content-Length."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise LaunchError(f"connection closed before a complete response head: {data[:200]!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    head += b"\r\n\r\n"
    status_match = re.match(rb"HTTP/1\.[01] (\d{3})", head)
    length_match = re.search(rb"\r\ncontent-length:\s*(\d+)", head, re.IGNORECASE)
    if status_match is None or length_match is None:
        raise LaunchError(f"unexpected response head (no status or Content-Length): {head[:300]!r}")
    length = int(length_match.group(1))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise LaunchError(f"connection closed after {len(body)} of {length} body bytes")
        body += chunk
    return int(status_match.group(1)), head, body[:length]


def wrk_request(host: str, port: int, path: str = "/") -> bytes:
    """The request wrk sends (wrk.format with no headers given): request line and Host only."""
    return f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()


def parse_stub_status(body: bytes) -> tuple[int, int]:
    """(accepts, requests) from stub_status's 'server accepts handled requests' lines."""
    match = re.search(rb"server accepts handled requests\s+(\d+)\s+(\d+)\s+(\d+)", body)
    if match is None:
        raise LaunchError(f"not a stub_status page: {body[:300]!r}")
    return int(match.group(1)), int(match.group(3))


# --------------------------------------------------------------------------- processes and signals


class Wakeups:
    """SIGTERM, SIGINT and SIGCHLD wake `sleep()` through a pipe; the first stop signal is kept.

    The launcher sleeps in select() while wrk runs, so it takes no CPU from the
    server CPU it shares with nginx, and still reacts at once to a stop request
    or to nginx exiting.
    """

    def __init__(self) -> None:
        self.stop_signal: int | None = None
        self._read_fd, write_fd = os.pipe()
        for fd in (self._read_fd, write_fd):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(write_fd)
        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, self._on_stop)
        signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)  # a handler, so the wake-up fd gets it

    def _on_stop(self, signum: int, _frame: Any) -> None:
        if self.stop_signal is None:
            self.stop_signal = signum

    def sleep(self, timeout_s: float | None) -> None:
        select.select([self._read_fd], [], [], timeout_s)
        try:
            while os.read(self._read_fd, 4096):
                pass
        except BlockingIOError:
            pass


class StderrCopy(threading.Thread):
    """Copies nginx's stderr to the launcher's (so the trial's server output has it) and keeps a tail."""

    def __init__(self, pipe: Any) -> None:
        super().__init__(name="nginx-stderr", daemon=True)
        self._pipe = pipe
        self._tail = b""
        self._lock = threading.Lock()

    def run(self) -> None:
        for line in iter(self._pipe.readline, b""):
            sys.stderr.buffer.write(line)
            sys.stderr.buffer.flush()
            with self._lock:
                self._tail = (self._tail + line)[-STDERR_TAIL_CHARS:]
        self._pipe.close()

    def tail(self, settle_s: float = 0.0) -> str:
        """The last of nginx's stderr; `settle_s`: first wait that long for the pipe to close
        (after nginx exited, so its last words are in)."""
        if settle_s:
            self.join(settle_s)
        with self._lock:
            return self._tail.decode("utf-8", "replace").strip() or "(nothing on stderr)"


@dataclass
class Nginx:
    """A running nginx master (leader of its own process group) and its stderr."""

    process: subprocess.Popen[bytes]
    stderr: StderrCopy
    exit_code: int | None = None
    usage: resource.struct_rusage | None = None

    @classmethod
    def start(cls, nginx: str, prefix: Path) -> Nginx:
        argv = [nginx, "-p", f"{prefix}/", "-c", str(prefix / "nginx.conf"), "-e", "stderr", "-g", "daemon off;"]
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=die_with_parent(signal.SIGTERM),
        )
        assert process.stdout is not None
        stderr = StderrCopy(process.stdout)
        stderr.start()
        return cls(process=process, stderr=stderr)

    @property
    def pid(self) -> int:
        return self.process.pid

    def poll(self) -> bool:
        """True once the master has exited (reaped here with wait4, for its rusage)."""
        if self.exit_code is None:
            pid, status, usage = os.wait4(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.exit_code = os.waitstatus_to_exitcode(status)
                self.usage = usage
                self.process.returncode = self.exit_code  # Popen must not wait for a reaped pid
        return self.exit_code is not None

    def wait(self, timeout_s: float, wakeups: Wakeups) -> bool:
        deadline = time.monotonic() + timeout_s
        while not self.poll():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            wakeups.sleep(min(left, 0.05))  # SIGCHLD ends the sleep early
        return True

    def kill_group(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def stop(self, wakeups: Wakeups) -> None:
        """Fast shutdown (SIGTERM to the master, which stops its workers and waits for them)."""
        if self.poll():
            return
        os.kill(self.pid, signal.SIGTERM)
        if not self.wait(STOP_TIMEOUT_S, wakeups):
            self.kill_group()
            self.wait(STOP_TIMEOUT_S, wakeups)
            raise LaunchError(f"nginx did not stop within {STOP_TIMEOUT_S:g} s of SIGTERM; killed")
        self.kill_group()  # a worker the master left behind (none expected)


# --------------------------------------------------------------------------- the launcher


@dataclass
class OwnTraffic:
    """The launcher's own connections and requests, which nginx's counters include."""

    connections: int = 0
    requests: int = 0


@dataclass
class Launch:
    nginx: Nginx
    port: int
    response_bytes: int
    own: OwnTraffic = field(default_factory=OwnTraffic)


def log(message: str) -> None:
    print(f"nginx launcher: {message}", file=sys.stderr, flush=True)


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def probe_when_ready(nginx: Nginx, host: str, port: int, wakeups: Wakeups, own: OwnTraffic) -> bytes:
    """Wait until nginx accepts, then send one request as wrk would; returns the whole response."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        if wakeups.stop_signal is not None:
            raise LaunchError(f"stopped by signal {wakeups.stop_signal} before nginx was ready")
        if nginx.poll():
            raise LaunchError(f"nginx exited with status {nginx.exit_code} at start-up: {nginx.stderr.tail(1.0)}")
        try:
            sock = socket.create_connection((host, port), timeout=IO_TIMEOUT_S)
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise LaunchError(
                    f"nginx did not accept on {host}:{port} within {READY_TIMEOUT_S:g} s; "
                    f"its stderr: {nginx.stderr.tail()}"
                ) from None
            wakeups.sleep(0.01)
            continue
        own.connections += 1
        with sock:
            sock.sendall(wrk_request(host, port))
            own.requests += 1
            status, head, body = read_response(sock)
        if status != 200:
            raise LaunchError(f"nginx answered GET / with status {status}: {head!r}")
        return head + body


def launch(nginx_path: str, prefix: Path, host: str, worker_processes: int, response: str, wakeups: Wakeups) -> Launch:
    """Start nginx on a free port (retrying if another process takes it first) and measure its response."""
    modules = missing_modules(nginx_build_options(nginx_path))
    write_generated_body(prefix, response)
    for attempt in range(1, PORT_ATTEMPTS + 1):
        config = NginxConfig(
            prefix=prefix,
            host=host,
            port=free_port(host),
            worker_processes=worker_processes,
            response=response,
            open_files=open_file_limit(),
            missing_modules=modules,
        )
        if config.worker_connections * (NGINX_RESERVE_FRACTION - 1) // NGINX_RESERVE_FRACTION < MAX_CONNECTIONS:
            log(
                f"worker_connections {config.worker_connections} (open-file limit {config.open_files}) keeps fewer "
                f"than {MAX_CONNECTIONS} connections open; raise ulimit -Hn for larger connection counts"
            )
        (prefix / "nginx.conf").write_text(config.text(), encoding="utf-8")
        nginx = Nginx.start(nginx_path, prefix)
        log(
            f"started {nginx_path} (master pid {nginx.pid}) with prefix {prefix}/, port {config.port}, "
            f"worker_processes {worker_processes}, worker_connections {config.worker_connections}, "
            f"worker_rlimit_nofile {config.open_files}"
        )
        own = OwnTraffic()
        try:
            response_bytes = len(probe_when_ready(nginx, host, config.port, wakeups, own))
        except BaseException as error:  # whatever went wrong, this nginx must not outlive it
            nginx.kill_group()
            nginx.wait(STOP_TIMEOUT_S, wakeups)
            taken = isinstance(error, LaunchError) and "Address already in use" in nginx.stderr.tail(1.0)
            if taken and attempt < PORT_ATTEMPTS:
                log(f"port {config.port} was taken meanwhile; trying another")
                continue
            raise
        log(f"GET / answered with {response_bytes} bytes")
        return Launch(nginx=nginx, port=config.port, response_bytes=response_bytes, own=own)
    raise AssertionError("unreachable")


def read_counters(host: str, port: int, own: OwnTraffic) -> tuple[int, int]:
    """stub_status's (accepts, requests), read over one more connection of the launcher's own."""
    with socket.create_connection((host, port), timeout=IO_TIMEOUT_S) as sock:
        own.connections += 1
        sock.sendall(f"GET {STATUS_PATH} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
        own.requests += 1  # stub_status counts the request that asks for it
        status, head, body = read_response(sock)
    if status != 200:
        raise LaunchError(f"{STATUS_PATH} answered with status {status}: {head!r}")
    return parse_stub_status(body)


def shutdown_line(
    *,
    worker_processes: int,
    accepts: int,
    requests: int,
    own: OwnTraffic,
    response_bytes: int,
    usage: resource.struct_rusage | None,
) -> dict[str, Any]:
    """The JSON line of contracts.md section 1, for nginx: stub_status's counters without the launcher's
    own traffic, null for what nginx does not count, and nginx's own CPU time (`usage`, from wait4)."""
    return {
        "architecture": "nginx",
        "threads": worker_processes,
        "connections_accepted": accepts - own.connections,
        "connections_served": None,
        "requests_served": requests - own.requests,
        "bad_requests": None,
        "connection_resets": None,
        "errors": 0,
        "response_bytes": response_bytes,
        "cpu_user_s": usage.ru_utime if usage else None,
        "cpu_sys_s": usage.ru_stime if usage else None,
    }


def serve(args: argparse.Namespace, nginx_path: str, prefix: Path, wakeups: Wakeups) -> int:
    launched: Launch | None = None
    try:
        launched = launch(nginx_path, prefix, args.host, args.worker_processes, args.response, wakeups)
        print(format_ready_line(args.host, launched.port), flush=True)
        while wakeups.stop_signal is None:
            if launched.nginx.poll():
                raise LaunchError(
                    f"nginx exited on its own with status {launched.nginx.exit_code}: {launched.nginx.stderr.tail(1.0)}"
                )
            wakeups.sleep(None)
        accepts, requests = read_counters(args.host, launched.port, launched.own)
        launched.nginx.stop(wakeups)
        line = shutdown_line(
            worker_processes=args.worker_processes,
            accepts=accepts,
            requests=requests,
            own=launched.own,
            response_bytes=launched.response_bytes,
            usage=launched.nginx.usage,
        )
        print(format_shutdown_line(line), flush=True)
        if launched.nginx.exit_code != 0:
            log(f"nginx exited with status {launched.nginx.exit_code}: {launched.nginx.stderr.tail(1.0)}")
            return 1
        return 0
    except (LaunchError, OSError, ValueError) as error:
        log(f"error: {error}")
        return 1
    finally:
        if launched is not None and not launched.nginx.poll():
            launched.nginx.kill_group()
            launched.nginx.wait(STOP_TIMEOUT_S, wakeups)


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m archbench.measure.nginx", description=__doc__.split("\n\n")[0])
    parser.add_argument("--nginx", help="nginx executable (default: found on PATH)")
    parser.add_argument("--host", default="127.0.0.1", help="IPv4 address to listen on (default: %(default)s)")
    parser.add_argument("--port", type=int, default=0, help="0 only: a free port is chosen (default: %(default)s)")
    parser.add_argument("--worker-processes", type=int, default=1, metavar="N", help="nginx worker_processes")
    parser.add_argument("--response", default="test", help="test, hello, file:PATH or bytes:N (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.port != 0:
        parser.error("--port: only 0 (a free port chosen by the launcher) is supported")
    if args.worker_processes < 1:
        parser.error("--worker-processes: must be at least 1")
    return args


def fail(message: str) -> NoReturn:
    log(f"error: {message}")
    sys.exit(1)


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    wakeups = Wakeups()
    nginx_path = shutil.which(args.nginx) if args.nginx else find_nginx()
    if nginx_path is None:
        fail(
            f"nginx {'not found at ' + args.nginx if args.nginx else 'is not installed'} (not on PATH nor in "
            f"{SBIN_DIRECTORIES}); install it: {INSTALL_HINT}"
        )
    try:
        response_location(args.response)  # a bad --response fails before nginx starts
    except ValueError as error:
        fail(str(error))
    prefix = Path(tempfile.mkdtemp(prefix="archbench-nginx-"))
    try:
        return serve(args, nginx_path, prefix, wakeups)
    finally:
        shutil.rmtree(prefix, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
