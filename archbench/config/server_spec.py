"""What an architecture is to the harness: its binary, its flags and how a configuration becomes argv.

Each architecture is one `ServerSpec` (contracts.md section 1). The registry of every architecture is
`archbench.config.servers`; nginx, which is not a build/bin executable, subclasses `ServerSpec` in
`archbench.config.nginx_spec`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RESPONSES_BUILT_IN = ("test", "hello")
# --response bytes:N, a generated body of N bytes (contracts.md section 1): its bounds, and N written canonically
# (no sign, no leading zero) so that one body has one configuration id.
RESPONSE_BYTES_MIN = 4
RESPONSE_BYTES_MAX = 1 << 20
RESPONSE_BYTES = re.compile(r"bytes:(?P<n>[1-9][0-9]*)")
PROTOCOLS = ("http", "echo")  # --proto values of the build/bin servers


@dataclass(frozen=True)
class ServerOption:
    """One architecture-specific configuration field and the flag it becomes.

    `choices` lists the allowed values of a choice option; an integer option
    has `choices == ()` and a lower bound `minimum`. `omit_when` is a value for
    which the flag is left out (the server's own default, e.g. max_threads 0).
    """

    name: str
    flag: str
    default: Any
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    omit_when: Any = None
    id_prefix: str = ""  # integer options appear in config ids as prefix + value, e.g. "max64"

    def id_part(self, value: Any) -> str | None:
        """This option's part of a config id; None when left out (same rule as the flag)."""
        if value is None or value == self.omit_when:
            return None
        return str(value) if self.choices else f"{self.id_prefix}{value}"

    def check(self, value: Any) -> str | None:
        """None if `value` is allowed, else why not."""
        if self.choices:
            if value not in self.choices:
                return f"{value!r} is not one of {', '.join(self.choices)}"
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{value!r} is not an integer"
        if self.minimum is not None and value < self.minimum:
            return f"{value} is below the minimum {self.minimum}"
        return None


@dataclass(frozen=True)
class ServerVariant:
    """One way of running a build/bin server that the socket suites test: CTest's conformance suites
    (servers_c/tests/CMakeLists.txt registers `conformance_<name>` and its siblings from these) and the abuse
    suite (tests/abuse/variants.py)."""

    name: str
    args: tuple[str, ...] = ()
    # Keep-alive clients the HTTP conformance suite holds open at once; 0 for a server that serves one connection
    # at a time, and no more than `slots` where a thread or worker owns each connection.
    http_concurrency: int = 200
    # More than one thread touches connections: ThreadSanitizer (`make test-sanitize`) runs it.
    threaded: bool = False
    # Connections served at once when a thread or worker owns each one until it closes (None: any number, events
    # or a thread per connection): the abuse suite expects the others to wait.
    slots: int | None = None
    lifo: bool = False  # the slot hand-off is a stack: the newest waiting connection goes first
    # The binary may say it cannot run here (exit status 3, io_uring without liburing >= 2.3): skipped, not failed.
    may_be_unsupported: bool = False


# Which CPU numbers of a trial record measure the server (contracts.md section 2, `server.cpu_source`).
CPU_SOURCE_TREE = "tree"  # server.cpu_user_s/cpu_sys_s: wait4 of the launched process, children included
CPU_SOURCE_STATS = "stats"  # server.stats.cpu_user_s/cpu_sys_s: the server's own, without its launcher


@dataclass(frozen=True)
class ServerSpec:
    """An architecture: its binary and how configuration fields map to its flags.

    `threads_flag` names what the configuration field `threads` becomes: the
    number of worker threads or event loops (`--threads`), of worker processes
    (`--workers`), or nginx's `worker_processes`. None: the architecture has a
    fixed parallelism (one loop, or a thread per connection) and the
    campaign's thread counts do not multiply it.

    `upper_bound` marks a program that is not a correct server but bounds what
    one can do with the load (pong: it finds requests by their terminator and
    answers each with the same bytes, never parsing them).

    Its place in the registry is its place in tables and figures (the
    reference, nginx, always last: `archbench.analyze.fields.architecture_order`);
    `hue` is its colour in every figure, an index into the report's
    architecture palette (`archbench.render.theme`), fixed so that adding an
    architecture recolours none of the others. `variants` are the ways of
    running it that the conformance and abuse suites test.
    """

    name: str
    binary: str
    summary: str
    threads_flag: str | None = None
    options: tuple[ServerOption, ...] = field(default_factory=tuple)
    cpu_source: str = CPU_SOURCE_TREE
    # True: the reference floor (pong, source 002's upper bound), not a correct server: it answers requests it never parses, and the
    # report must say so wherever it appears.
    upper_bound: bool = False
    protocols: tuple[str, ...] = PROTOCOLS  # the --proto values it serves
    # Whether it takes the per-request workload flags --work-us/--block-us/--block-dist/--seed (nginx has no such
    # flags; pong answers without doing any work).
    takes_work: bool = True
    # Whether it closes a connection after answering a request that says `Connection: close` (pong never parses a
    # request, so it keeps every connection open: one request per connection cannot be measured on it).
    closes_on_request: bool = True
    hue: int | None = None  # None: the reference's own grey (nginx)
    # What a unit of `threads` is called in the report, singular and plural (only with a threads_flag).
    parallelism_unit: tuple[str, str] = ("thread", "threads")
    variants: tuple[ServerVariant, ...] = ()

    @property
    def label(self) -> str:
        """How the report names it: pong, which is no correct server, as the reference floor (the cheapest possible
        server, whose CPU per request is the floor of what one costs)."""
        return f"{self.name} (reference floor)" if self.upper_bound else self.name

    @property
    def takes_threads(self) -> bool:
        """Whether the campaign's thread counts (threads or worker processes) apply."""
        return self.threads_flag is not None

    def option(self, name: str) -> ServerOption | None:
        return next((o for o in self.options if o.name == name), None)

    def binary_path(self, build_dir: Path) -> Path:
        return Path(build_dir) / "bin" / self.binary

    def missing_binary(self, build_dir: Path) -> Path | None:
        """The build/bin executable if it is missing (the build fixes that), else None."""
        path = self.binary_path(build_dir)
        return None if path.is_file() else path

    def unavailable_reason(self) -> str | None:
        """Why the architecture cannot run on this machine for reasons the build does not fix, or None."""
        return None

    def environment(self) -> dict[str, str]:
        """Environment variables the server process needs beyond the runner's own."""
        return {}

    def serves(self, proto: str) -> bool:
        """Whether it speaks `proto` (contracts.md section 1: every build/bin server serves http and echo,
        except the reference floor pong, http only)."""
        return proto in self.protocols

    def flags(self, config: Mapping[str, Any]) -> list[str]:
        """The architecture flags for a configuration (no host/port)."""
        flags: list[str] = []
        if self.threads_flag is not None:
            flags += [self.threads_flag, str(config["threads"])]
        for option in self.options:
            value = config.get(option.name, option.default)
            if value is None or value == option.omit_when:
                continue
            flags += [option.flag, str(value)]
        if config.get("proto", "http") == "echo":
            flags += ["--proto", "echo"]  # --response is HTTP's alone
            if config.get("mode") == "max_conns":
                # A ramp holds connections that stay silent between their first echo and the
                # final check, longer than the servers' default keep-alive idle timeout (60 s).
                flags += ["--idle-timeout", "0"]
        else:
            flags += ["--response", str(config.get("response", "test"))]
            flags += workload_flags(config)
        return flags

    def command(self, config: Mapping[str, Any], build_dir: Path, host: str = "127.0.0.1") -> list[str]:
        """argv of the server (without the CPU pinning), on an ephemeral port."""
        return [str(self.binary_path(build_dir)), "--host", host, "--port", "0", *self.flags(config)]


def trigger_option(default: str) -> ServerOption:
    """epoll's level- or edge-triggered notification; each architecture has its own default."""
    return ServerOption("trigger", "--trigger", default=default, choices=("level", "edge"))


def workload_flags(config: Mapping[str, Any]) -> list[str]:
    """--work-us, --block-us, --block-dist and --seed of an HTTP configuration: only those set (a config without
    them runs the servers' defaults, no work and no wait, with the command line campaigns always had). `seed` is
    the trial's, which the runner adds to the config it builds the command from."""
    flags: list[str] = []
    if config.get("work_us"):
        flags += ["--work-us", str(config["work_us"])]
    if config.get("block_us"):
        flags += ["--block-us", str(config["block_us"])]
        if config.get("block_dist", "fixed") != "fixed":
            flags += ["--block-dist", str(config["block_dist"])]
        if config.get("seed") is not None:
            flags += ["--seed", str(config["seed"])]
    return flags


def response_body_bytes(response: str) -> int | None:
    """N of a canonical "bytes:N" response, or None for any other (a bytes:N out of bounds included)."""
    match = RESPONSE_BYTES.fullmatch(response)
    if match is None:
        return None
    n = int(match["n"])
    return n if RESPONSE_BYTES_MIN <= n <= RESPONSE_BYTES_MAX else None


def check_response(response: str) -> str | None:
    """None if `response` is a valid --response value, else why not."""
    if response in RESPONSES_BUILT_IN:
        return None
    if response.startswith("bytes:"):
        if response_body_bytes(response) is None:
            return (
                f"{response!r}: bytes:N needs N, the body's size in bytes, an integer from {RESPONSE_BYTES_MIN} to "
                f"{RESPONSE_BYTES_MAX} (1 MiB) without leading zeros"
            )
        return None
    if response.startswith("file:") and len(response) > len("file:"):
        path = Path(response[len("file:") :])
        if not path.is_file():
            return f"{response!r}: no such file {path}"
        return None
    return f"{response!r} is not test, hello, file:PATH or bytes:N"
