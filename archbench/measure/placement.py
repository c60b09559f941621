"""Where the server and the load generator run, and which address joins them (the run parameter `placement`).

* `loopback`: both on this host; the server listens on 127.0.0.1 (the runner's behaviour since the start).
* `netns`: each in its own network namespace, joined by a veth pair whose addresses exist only inside the
  two namespaces (10.213.<k>.1 for the server, .2 for the load generator), optionally shaped by a link model
  ("<rate>" or "<rate> <delay>": a tbf rate on both veth ends, or netem when there is a delay). The server
  command becomes `ip netns exec <srv> taskset -c SERVER_CPUS ...` and wrk's `ip netns exec <load> ...`;
  `ip` and `taskset` both exec, so the runner's pid is still the measured program's and wait4 still counts
  its whole tree.

* `ssh`: the server on one host and a load generator on each client host of a hosts inventory, driven
  through OpenSSH (archbench.measure.ssh_placement; the runner runs its trials with `run_ssh_trial`).

A placement says how to wrap the server's and the load generator's argv, which address the server binds
and the load generator targets, and what the trial record says about it.

The namespaces live as long as one campaign: `network_placement()` sets them up before the first trial and
tears them down after the last, on every way out (normal end, error, SIGINT/SIGTERM via KeyboardInterrupt,
interpreter exit via atexit). A runner killed outright (SIGKILL) cannot clean up, so the namespaces are
named `archbench-<owner pid>-srv|load` and the next set-up removes those whose owner is gone; namespaces
without that prefix, or whose owner lives, are never touched.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from ipaddress import ip_address
from typing import Any, Protocol

from archbench.config.params import Parameters
from archbench.data.storage import signals_deferred
from archbench.measure.ssh_placement import SshPlacement, SshPlacementError

NAMESPACE_PREFIX = "archbench-"
NAMESPACE_PATTERN = re.compile(r"archbench-(?P<pid>\d+)-(?P<role>srv|load)")
SERVER_VETH = "ab-srv"  # created directly inside the namespaces, so no name ever appears on the host
LOAD_VETH = "ab-load"
SUBNET_PREFIX = "10.213"  # private; the pair is isolated, so the third octet only keeps concurrent runs apart
COMMAND_TIMEOUT_S = 10.0
TBF_LATENCY = "50ms"  # how long a packet may wait in the token bucket before tbf drops it
MIN_BURST_BYTES = 131072  # two 64 KiB GSO segments: veth hands tbf segments that large
NETEM_LIMIT_PACKETS = 10000
RATE_UNITS = {"": 1, "k": 1_000, "m": 1_000_000, "g": 1_000_000_000}  # tc's SI units: kbit = 1000 bit/s
RATE_PATTERN = re.compile(r"(?P<value>\d+(?:\.\d+)?)(?P<unit>[kmg]?)bit")
CAP_NET_ADMIN = 12
CAP_SYS_ADMIN = 21  # `ip netns add` bind-mounts the namespace under /run/netns
PRIVILEGE_HINT = (
    "run the campaign as root (e.g. `sudo -E make trials PLACEMENT=netns`), or with CAP_NET_ADMIN and "
    "CAP_SYS_ADMIN, or use placement loopback"
)
NETEM_HINT = (
    "load it with `modprobe sch_netem` (Debian/Ubuntu: package linux-modules-extra-$(uname -r)), or give the "
    "link a rate only, e.g. '1gbit'"
)


class PlacementError(RuntimeError):
    """The placement cannot be set up here; nothing was measured. The runner reports it as a preflight error."""


class Placement(Protocol):
    kind: str

    @property
    def server_address(self) -> str:
        """The address the server listens on and the load generator targets."""
        ...

    def server_argv(self, argv: list[str]) -> list[str]:
        """The pinned server command, run where the server belongs."""
        ...

    def load_argv(self, argv: list[str]) -> list[str]:
        """The pinned load command, run where the load generator belongs."""
        ...

    def unexpected_host(self, host: str) -> str | None:
        """Why the server's ready line names an address the load must not go to, or None."""
        ...

    def record(self) -> dict[str, Any] | None:
        """The trial record's `placement` object; None leaves it out (loopback, as in every older record)."""
        ...


@dataclass(frozen=True)
class Loopback:
    kind: str = "loopback"

    @property
    def server_address(self) -> str:
        return "127.0.0.1"

    def server_argv(self, argv: list[str]) -> list[str]:
        return list(argv)

    def load_argv(self, argv: list[str]) -> list[str]:
        return list(argv)

    def unexpected_host(self, host: str) -> str | None:
        if is_loopback(host):
            return None
        return f"server listens on {host}, not on loopback; not loading it"

    def record(self) -> dict[str, Any] | None:
        return None


def is_loopback(host: str) -> bool:
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


# --------------------------------------------------------------------------- the link model


@dataclass(frozen=True)
class LinkModel:
    """A validated link ("<rate>" or "<rate> <delay>", see archbench.config.params) as tc arguments."""

    text: str
    rate: str
    rate_bits_per_s: float
    delay: str | None

    @classmethod
    def parse(cls, text: str) -> LinkModel:
        rate, _, delay = text.strip().partition(" ")
        match = RATE_PATTERN.fullmatch(rate)
        if match is None:
            raise PlacementError(f"link {text!r}: rate {rate!r} is not a number followed by bit, kbit, mbit or gbit")
        bits = float(match.group("value")) * RATE_UNITS[match.group("unit")]
        if bits <= 0:
            raise PlacementError(f"link {text!r}: the rate must be above zero")
        return cls(text=text, rate=rate, rate_bits_per_s=bits, delay=delay.strip() or None)

    @property
    def burst_bytes(self) -> int:
        # One millisecond at the rate, and never less than the largest segment veth hands the qdisc.
        return max(int(self.rate_bits_per_s / 8 / 1000), MIN_BURST_BYTES)

    def qdisc_arguments(self) -> list[str]:
        """`tc qdisc add dev X root` + these, on each veth end: each direction is shaped (and delayed) once."""
        if self.delay is None:
            return ["tbf", "rate", self.rate, "burst", str(self.burst_bytes), "latency", TBF_LATENCY]
        return ["netem", "delay", self.delay, "rate", self.rate, "limit", str(NETEM_LIMIT_PACKETS)]


# --------------------------------------------------------------------------- commands


def run_ip(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """One bounded `ip`/`tc` command; its result, never an exception for a non-zero status."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, 124, "", f"timed out after {COMMAND_TIMEOUT_S:g} s")


def checked(argv: list[str]) -> None:
    result = run_ip(argv)
    if result.returncode != 0:
        raise PlacementError(f"`{' '.join(argv)}` failed: {result.stderr.strip() or f'status {result.returncode}'}")


def effective_capabilities() -> int:
    try:
        for line in open("/proc/self/status", encoding="ascii"):
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    except OSError:
        pass
    return 0


def missing_privilege() -> str | None:
    """Why this process cannot create network namespaces, or None."""
    if os.geteuid() == 0:
        return None
    capabilities = effective_capabilities()
    if capabilities >> CAP_NET_ADMIN & 1 and capabilities >> CAP_SYS_ADMIN & 1:
        return None
    return f"placement netns needs root or CAP_NET_ADMIN and CAP_SYS_ADMIN (this process has uid {os.geteuid()})"


def preflight_problems(placement: str, link: str | None) -> list[str]:
    """What is missing for `placement` on this machine, each naming its fix (empty for loopback; ssh checks
    its hosts when it is set up, see archbench.measure.ssh_placement.local_problems)."""
    if placement in ("loopback", "ssh"):
        return []
    problems = []
    if shutil.which("ip") is None:
        problems.append("placement netns needs `ip` on PATH (apt-get install iproute2)")
    if link is not None and shutil.which("tc") is None:
        problems.append("a link model needs `tc` on PATH (apt-get install iproute2)")
    privilege = missing_privilege()
    if privilege is not None:
        problems.append(f"{privilege}: {PRIVILEGE_HINT}")
    return problems


def namespace_names() -> list[str]:
    result = run_ip(["ip", "netns", "list"])
    if result.returncode != 0:
        raise PlacementError(f"`ip netns list` failed: {result.stderr.strip()}")
    # Lines look like "name" or "name (id: 3)".
    return [line.split()[0] for line in result.stdout.splitlines() if line.strip()]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def remove_stale_namespaces() -> list[str]:
    """Delete the archbench namespaces whose owner pid is gone (a killed run's); returns their names."""
    removed = []
    for name in namespace_names():
        match = NAMESPACE_PATTERN.fullmatch(name)
        if match is None or pid_alive(int(match.group("pid"))):
            continue
        delete_namespace(name)
        removed.append(name)
    return removed


def delete_namespace(name: str) -> None:
    # The veth pair goes with its first end deleted; deleting it explicitly rather than with the namespace
    # makes it go now (namespace destruction is asynchronous in the kernel).
    for veth in (SERVER_VETH, LOAD_VETH):
        run_ip(["ip", "-n", name, "link", "delete", veth])
    result = run_ip(["ip", "netns", "delete", name])
    if result.returncode != 0 and name in namespace_names():
        raise PlacementError(f"could not delete network namespace {name}: {result.stderr.strip()}")


# --------------------------------------------------------------------------- two namespaces


@dataclass
class NetnsPair:
    """Server and load generator in two namespaces joined by a veth pair (set_up/tear_down: one campaign)."""

    link: LinkModel | None
    owner_pid: int = field(default_factory=os.getpid)
    kind: str = "netns"
    created: list[str] = field(default_factory=list)
    removed_stale: list[str] = field(default_factory=list)

    @property
    def subnet(self) -> str:
        return f"{SUBNET_PREFIX}.{self.owner_pid % 256}"

    @property
    def server_address(self) -> str:
        return f"{self.subnet}.1"

    @property
    def load_address(self) -> str:
        return f"{self.subnet}.2"

    @property
    def server_namespace(self) -> str:
        return f"{NAMESPACE_PREFIX}{self.owner_pid}-srv"

    @property
    def load_namespace(self) -> str:
        return f"{NAMESPACE_PREFIX}{self.owner_pid}-load"

    def server_argv(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.server_namespace, *argv]

    def load_argv(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.load_namespace, *argv]

    def unexpected_host(self, host: str) -> str | None:
        if host == self.server_address:
            return None
        return (
            f"server listens on {host}, not on {self.server_address} (its address in network namespace "
            f"{self.server_namespace}); not loading it"
        )

    def record(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "link": self.link.text if self.link else None,
            "server_address": self.server_address,
            "load_address": self.load_address,
            "namespaces": [self.server_namespace, self.load_namespace],
            "qdisc": " ".join(self.link.qdisc_arguments()) if self.link else None,
        }

    def set_up(self) -> None:
        self.removed_stale = remove_stale_namespaces()
        existing = set(namespace_names())
        clash = [n for n in (self.server_namespace, self.load_namespace) if n in existing]
        if clash:
            raise PlacementError(f"network namespace {clash[0]} already exists (another placement of this process)")
        for name in (self.server_namespace, self.load_namespace):
            checked(["ip", "netns", "add", name])
            self.created.append(name)
        checked(
            ["ip", "link", "add", SERVER_VETH, "netns", self.server_namespace, "type", "veth",
             "peer", "name", LOAD_VETH, "netns", self.load_namespace]
        )  # fmt: skip
        for name, veth, address in (
            (self.server_namespace, SERVER_VETH, self.server_address),
            (self.load_namespace, LOAD_VETH, self.load_address),
        ):
            checked(["ip", "-n", name, "address", "add", f"{address}/30", "dev", veth])
            checked(["ip", "-n", name, "link", "set", veth, "up"])
            checked(["ip", "-n", name, "link", "set", "lo", "up"])
        if self.link is not None:
            self._shape()

    def _shape(self) -> None:
        assert self.link is not None
        kind = self.link.qdisc_arguments()[0]
        for name, veth in ((self.server_namespace, SERVER_VETH), (self.load_namespace, LOAD_VETH)):
            result = run_ip(["tc", "-n", name, "qdisc", "add", "dev", veth, "root", *self.link.qdisc_arguments()])
            if result.returncode == 0:
                continue
            message = result.stderr.strip()
            if "unknown" in message.lower():
                if kind == "netem":
                    raise PlacementError(
                        f"link {self.link.text!r} has a delay, which needs the netem qdisc, but this kernel lacks "
                        f"sch_netem (tc: {message}); {NETEM_HINT}"
                    )
                raise PlacementError(
                    f"link {self.link.text!r} needs the tbf qdisc, but this kernel lacks sch_tbf (tc: {message}); "
                    "load it with `modprobe sch_tbf`"
                )
            raise PlacementError(f"could not shape the link {self.link.text!r} in {name}: {message}")

    def tear_down(self) -> None:
        """Delete what set_up created (idempotent; also after a partial set-up); tries every namespace
        before reporting one it could not delete."""
        failures = []
        for name in reversed(self.created):
            try:
                delete_namespace(name)
            except PlacementError as error:
                failures.append(str(error))
        self.created.clear()
        if failures:
            raise PlacementError("; ".join(failures))


# --------------------------------------------------------------------------- one campaign's placement


def placement_for(params: Parameters) -> Loopback | NetnsPair | SshPlacement:
    if params.placement == "loopback":
        return Loopback()
    if params.placement == "netns":
        return NetnsPair(link=LinkModel.parse(params.link) if params.link else None)
    if params.placement == "ssh":
        return SshPlacement.from_params(params)
    raise PlacementError(f"placement {params.placement!r} is not implemented (loopback, netns, ssh)")


@contextmanager
def network_placement(params: Parameters) -> Iterator[Placement]:
    """The campaign's placement, set up on entry and removed on every way out.

    Set-up and tear-down run with SIGINT/SIGTERM held, so an interrupt cannot leave a half-built pair that
    nobody deletes; one held during set-up arrives after it, inside the try, and tears it down. atexit covers
    an interpreter that exits without unwinding (sys.exit from a thread's excepthook, say). In the main
    thread SIGTERM raises KeyboardInterrupt meanwhile (as the command line does), so a notebook kernel sent
    SIGTERM unwinds through here instead of dying with the namespaces in place.
    """
    placement = placement_for(params)
    if isinstance(placement, Loopback):
        yield placement
        return
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous_sigterm = signal.getsignal(signal.SIGTERM) if in_main_thread else None
    if in_main_thread and previous_sigterm == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, signal.default_int_handler)
    atexit.register(placement.tear_down)
    try:
        with signals_deferred():
            try:
                placement.set_up()
            except SshPlacementError as error:
                raise PlacementError(str(error)) from None
        yield placement
    finally:
        with signals_deferred():
            placement.tear_down()
        atexit.unregister(placement.tear_down)
        if in_main_thread and previous_sigterm is not None:
            signal.signal(signal.SIGTERM, previous_sigterm)
