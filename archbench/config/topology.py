"""CPU topology: which CPUs this process may use, how they form cores and NUMA nodes, and the default
server / load-generator split.

A measurement pins the server and the load generator to disjoint CPU sets. Pinning both to one CPU each
(the old fixed default "0" and "1") measures oversubscription on any larger machine, so the default split
follows the machine's shape instead:

- usable CPUs: the CPUs under /sys/devices/system/cpu, intersected with the cgroup v2 cpuset
  (cpuset.cpus.effective of this process's cgroup, else of the root cgroup) and this process's affinity;
- cores: a CPU's SMT siblings (core_cpus_list, or the older thread_siblings_list) form one physical core;
  without topology files each CPU is its own core;
- NUMA nodes: /sys/devices/system/node/nodeN/cpulist; without them every CPU is on node 0.

The split gives the server half of the usable physical cores (rounded down, at least one), whole cores with
their siblings, taken from the NUMA node with the most usable cores so that the server's memory stays local
(more nodes only when half the cores do not fit in one); the load generator gets every other usable CPU
(at least one: on a single core the siblings are split). On a 2-CPU machine that is server "0", load "1",
the historical default, so campaigns of the reference machine stay comparable.

Every reader takes a root directory, so tests and `--topology-root` plan for fake trees (tests/fixtures/topology).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archbench.config.values import ParameterError, as_tuple, format_cpu_list, parse_cpu_list

CPU_DIR = Path("sys/devices/system/cpu")
NODE_DIR = Path("sys/devices/system/node")
CGROUP_DIR = Path("sys/fs/cgroup")
CPUSET_FILE = "cpuset.cpus.effective"
# wrk's default thread sweep tops out here even on small machines: today's [1, 2, 4, 8] on 1 server core.
SWEEP_FLOOR = 8
AUTO = "auto"
AUTO_SWEEP = re.compile(r"auto(?::(?P<floor>\d+))?")
# In a thread list, the server's CPU count: one thread, loop or worker per server CPU (nginx's `auto`).
CPUS = "cpus"


@dataclass(frozen=True)
class CpuTopology:
    """The CPUs this process may use, grouped into physical cores and NUMA nodes."""

    cores: tuple[tuple[int, ...], ...]  # usable CPUs by physical core, siblings together, ordered by first CPU
    node_of: tuple[tuple[int, int], ...]  # usable CPU -> NUMA node
    source: str  # where it was read, e.g. "/sys" or "tests/fixtures/topology/16cpu-smt/sys"
    cpuset: str | None = None  # the cgroup cpuset that restricted it, if any

    @property
    def cpus(self) -> tuple[int, ...]:
        return tuple(sorted(cpu for core in self.cores for cpu in core))

    def node(self, cpu: int) -> int:
        return dict(self.node_of).get(cpu, 0)

    def nodes(self) -> tuple[int, ...]:
        return tuple(sorted({node for _, node in self.node_of})) or (0,)

    def cores_of(self, cpus: Iterable[int]) -> int:
        """How many physical cores the given CPUs touch."""
        wanted = set(cpus)
        return sum(1 for core in self.cores if wanted & set(core))

    def describe_source(self) -> str:
        restricted = f", cgroup cpuset {self.cpuset}" if self.cpuset else ""
        return f"from {self.source}{restricted} ({len(self.cpus)} CPUs usable)"


@dataclass(frozen=True)
class CpuSplit:
    """Disjoint server and load-generator CPU sets on a topology."""

    server_cpus: tuple[int, ...]
    load_cpus: tuple[int, ...]
    topology: CpuTopology

    @property
    def server_cores(self) -> int:
        return self.topology.cores_of(self.server_cpus)

    @property
    def load_cores(self) -> int:
        return self.topology.cores_of(self.load_cpus)

    @property
    def server_node(self) -> int | None:
        """The NUMA node holding every server CPU, or None when they span several."""
        nodes = {self.topology.node(cpu) for cpu in self.server_cpus}
        return nodes.pop() if len(nodes) == 1 else None

    def describe(self, load: str = "") -> str:
        """One line for --dry-run: which CPUs each side gets and where the topology came from; `load` says
        how the load generator uses its CPUs (default "wrk -tN", one thread per load CPU)."""
        cores = f"{self.server_cores} core{'s' if self.server_cores != 1 else ''}"
        node = f", NUMA node {self.server_node}" if self.server_node is not None else ", several NUMA nodes"
        return (
            f"CPU split: server CPUs {format_cpu_list(self.server_cpus)} ({cores}{node}), "
            f"load CPUs {format_cpu_list(self.load_cpus)} ({load or f'wrk -t{len(self.load_cpus)}'}); "
            f"{self.topology.describe_source()}"
        )


@dataclass(frozen=True)
class TopologySummary:
    """What a campaign records of the topology its CPU sets came from (campaign.json's
    parameters.cpu_topology), so a report can say how many cores the server had."""

    source: str
    usable_cpus: str  # taskset form
    cpuset: str | None  # the cgroup cpuset that restricted the usable CPUs, if any
    numa_nodes: int
    server_cores: int
    server_numa_node: int | None  # None: the server's CPUs span several nodes
    load_cores: int

    @classmethod
    def of(cls, split: CpuSplit) -> TopologySummary:
        return cls(
            source=split.topology.source,
            usable_cpus=format_cpu_list(split.topology.cpus),
            cpuset=split.topology.cpuset,
            numa_nodes=len(split.topology.nodes()),
            server_cores=split.server_cores,
            server_numa_node=split.server_node,
            load_cores=split.load_cores,
        )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# --------------------------------------------------------------------------- reading


def _read_cpu_list(path: Path) -> tuple[int, ...] | None:
    """A sysfs CPU list file ("0-3,8"); None when missing, empty or unreadable."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if not text:
        return None
    try:
        return parse_cpu_list(text, str(path))
    except ParameterError:
        return None


def _present_cpus(root: Path) -> tuple[int, ...]:
    names = (p.name for p in (root / CPU_DIR).glob("cpu*"))
    return tuple(sorted(int(name[3:]) for name in names if re.fullmatch(r"cpu\d+", name)))


def _own_cgroup(root: Path) -> Path | None:
    """This process's cgroup v2 directory, from the "0::/path" line of /proc/self/cgroup."""
    try:
        lines = (root / "proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("0::"):
            return root / CGROUP_DIR / line[3:].strip().lstrip("/")
    return None


def _cgroup_cpuset(root: Path) -> tuple[int, ...] | None:
    for directory in (_own_cgroup(root), root / CGROUP_DIR):
        if directory is not None:
            cpus = _read_cpu_list(directory / CPUSET_FILE)
            if cpus:
                return cpus
    return None


def _siblings(root: Path, cpu: int) -> tuple[int, ...]:
    topology = root / CPU_DIR / f"cpu{cpu}" / "topology"
    for name in ("core_cpus_list", "thread_siblings_list"):
        siblings = _read_cpu_list(topology / name)
        if siblings:
            return siblings
    return (cpu,)


def _nodes(root: Path) -> dict[int, int]:
    node_of: dict[int, int] = {}
    for directory in sorted((root / NODE_DIR).glob("node*")):
        if re.fullmatch(r"node\d+", directory.name):
            for cpu in _read_cpu_list(directory / "cpulist") or ():
                node_of[cpu] = int(directory.name[4:])
    return node_of


def _process_affinity() -> set[int]:
    if hasattr(os, "sched_getaffinity"):
        return set(os.sched_getaffinity(0))
    return set(range(os.cpu_count() or 1))  # no affinity API (macOS): every CPU


def read_topology(root: Path | str = "/", affinity: Iterable[int] | None = None) -> CpuTopology:
    """The usable CPUs under `root` with their cores and nodes. `affinity` defaults to this process's
    affinity when reading the real "/", and to no restriction for another root (a fake tree describes a
    different machine, so this one's affinity says nothing about it)."""
    root = Path(root)
    present = _present_cpus(root)
    allowed = set(affinity) if affinity is not None else (_process_affinity() if root == Path("/") else None)
    usable = set(present) if present else set(allowed or _process_affinity())
    cpuset = _cgroup_cpuset(root)
    if cpuset:
        usable &= set(cpuset)
    if allowed is not None:
        usable &= allowed
    if not usable:
        raise ParameterError("server_cpus", f"no usable CPU found under {root / CPU_DIR} (affinity, cgroup cpuset)")
    cores: dict[tuple[int, ...], list[int]] = {}
    for cpu in sorted(usable):
        cores.setdefault(_siblings(root, cpu), []).append(cpu)
    node_of = _nodes(root)
    source = "/sys" if root == Path("/") else str(root / "sys")
    return CpuTopology(
        cores=tuple(sorted(tuple(cpus) for cpus in cores.values())),
        node_of=tuple((cpu, node_of.get(cpu, 0)) for cpu in sorted(usable)),
        source=source,
        cpuset=format_cpu_list(cpuset) if cpuset and set(present) - set(cpuset) else None,
    )


# --------------------------------------------------------------------------- the split


def default_split(topology: CpuTopology) -> CpuSplit:
    """Half of the physical cores (at least one) for the server, from the node with most usable cores;
    every other usable CPU for the load generator (at least one)."""
    if len(topology.cpus) < 2:
        raise ParameterError(
            "server_cpus",
            f"only CPU {format_cpu_list(topology.cpus)} is usable {topology.describe_source()}: the server and the "
            "load generator need one CPU each (widen the affinity or cpuset)",
        )
    by_node: dict[int, list[tuple[int, ...]]] = {}
    for core in topology.cores:
        by_node.setdefault(topology.node(core[0]), []).append(core)
    # The node with most usable cores first (lowest number on a tie), then the others in order.
    node_order = sorted(by_node, key=lambda node: (-len(by_node[node]), node))
    ordered_cores = [core for node in node_order for core in by_node[node]]
    wanted = max(1, len(topology.cores) // 2)
    server = [cpu for core in ordered_cores[:wanted] for cpu in core]
    load = [cpu for core in ordered_cores[wanted:] for cpu in core]
    if not load:  # a single core: its siblings are split
        load = [server.pop()]
    return CpuSplit(tuple(sorted(server)), tuple(sorted(load)), topology)


def split_cpus(topology: CpuTopology, server_cpus: object = AUTO, load_cpus: object = AUTO) -> CpuSplit:
    """The split for the given values: "auto" (or None) takes the default split; one explicit side and
    one "auto" gives the auto side every other usable CPU. Explicit lists are checked by the caller."""
    server_auto = server_cpus in (None, AUTO)
    load_auto = load_cpus in (None, AUTO)
    if server_auto and load_auto:
        return default_split(topology)
    server = () if server_auto else parse_cpu_list(server_cpus, "server_cpus")  # type: ignore[arg-type]
    load = () if load_auto else parse_cpu_list(load_cpus, "load_cpus")  # type: ignore[arg-type]
    if server_auto:
        server = tuple(cpu for cpu in topology.cpus if cpu not in load)
        if not server:
            raise ParameterError(
                "load_cpus", f"takes every usable CPU ({format_cpu_list(topology.cpus)}); leave some for server_cpus"
            )
    if load_auto:
        load = tuple(cpu for cpu in topology.cpus if cpu not in server)
        if not load:
            raise ParameterError(
                "server_cpus", f"takes every usable CPU ({format_cpu_list(topology.cpus)}); leave some for load_cpus"
            )
    return CpuSplit(server, load, topology)


def check_usable(split: CpuSplit) -> None:
    """Explicit CPU lists must exist here and not overlap: a clear error before any trial."""
    usable = split.topology.cpus
    for name, cpus in (("server_cpus", split.server_cpus), ("load_cpus", split.load_cpus)):
        missing = [cpu for cpu in cpus if cpu not in usable]
        if missing:
            raise ParameterError(
                name,
                f"CPU {format_cpu_list(missing)} is not available (available: {format_cpu_list(usable)}, "
                f"{split.topology.describe_source()}); list only available CPUs, or leave {name} unset "
                "(auto) for the default split",
            )


# --------------------------------------------------------------------------- sweeps that scale


def thread_sweep(server_cpus: int, floor: int = SWEEP_FLOOR) -> tuple[int, ...]:
    """Powers of two from 1 up to max(floor, 2 x server CPUs), plus 2 x server CPUs if it is no power of
    two: [1, 2, 4, 8] on one server CPU, [1, 2, 4, 8, 16] on eight, [1, 2, 4, 6, 8] on three.

    CPUs, not cores: a worker thread runs on a hardware thread, so 4 SMT cores (8 CPUs) sweep up to 16."""
    top = max(floor, 2 * server_cpus)
    powers = {1 << k for k in range(top.bit_length())}
    return tuple(sorted(powers | {2 * server_cpus}))


def auto_sweep(value: object, server_cpus: int) -> tuple[int, ...] | None:
    """ "auto" or "auto:N" (a sweep reaching at least N) as a thread sweep; None for anything else."""
    if isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    match = AUTO_SWEEP.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return None
    return thread_sweep(server_cpus, int(match["floor"] or SWEEP_FLOOR))


def with_cpu_count(value: object, server_cpus: int, parameter: str) -> object:
    """A thread list with each "cpus" item replaced by the server's CPU count, e.g. [1, "cpus"] -> [1, 4] on four
    server CPUs ([1, 1] on one: the sweep de-duplicates it); anything else unchanged."""
    if value is None or isinstance(value, bool) or isinstance(value, int):
        return value
    items = as_tuple(value, parameter)
    if CPUS not in items:
        return value
    return [server_cpus if item == CPUS else item for item in items]


def fitting_load_threads(load_threads: int, connections: int) -> int:
    """The most wrk threads, at most `load_threads`, that split `connections` evenly (wrk opens
    connections // threads per thread, so an uneven split would silently open fewer)."""
    return max(t for t in range(1, min(load_threads, connections) + 1) if connections % t == 0)
