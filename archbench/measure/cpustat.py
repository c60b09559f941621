"""How the CPUs spent an interval, from the kernel's per-CPU counters (/proc/stat).

A process's rusage (what wait4 returns) leaves out the time its CPU spends in
interrupt and softirq context, and on loopback that is where much of TCP's work
happens: a packet one side sends is processed on the sender's CPU, partly on
behalf of the receiver. So a load generator can saturate its CPU while its own
user + sys time says 50%. The busy fraction of the CPUs it was pinned to says
directly whether the client had any time left; it also counts anything else
that ran on those CPUs, which is itself worth knowing.

The same two readings also give the trial's noise diagnostics (`cpu_shares`):
the share of the interval's ticks that the hypervisor took from the guest
(steal), that went to hardware and software interrupts (irq, softirq) and that
CPUs idled waiting for I/O (iowait), for the whole machine (the aggregate "cpu"
line) and for the server's and the load generator's CPU sets. Steal is time a
trial did not get at all; interrupts on loopback are largely the workload's own
TCP processing, so they are recorded rather than judged. The kernel counts in
USER_HZ ticks (usually 100 per second), so a 2-s trial on one CPU has about 200
ticks and shares are known to about half a percent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROC_STAT = Path("/proc/stat")
# Fields of a "cpu"/"cpuN" line: user nice system idle iowait irq softirq steal (guest time is inside user).
FIELD_NAMES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
IDLE_FIELDS = (3, 4)  # idle, iowait
COUNTED_FIELDS = len(FIELD_NAMES)
# The shares a trial record keeps (the rest of the ticks are user, system and idle time).
NOISE_FIELDS = ("iowait", "irq", "softirq", "steal")
SHARE_DIGITS = 4
AGGREGATE = "cpu"

CpuTimes = Mapping[int, tuple[int, int]]  # CPU -> (busy ticks, total ticks)


@dataclass(frozen=True)
class ProcStat:
    """One reading of /proc/stat: the aggregate line and each CPU's line, as tick counts per field
    (FIELD_NAMES order; an older kernel's shorter lines are padded with zeros)."""

    machine: tuple[int, ...]
    per_cpu: Mapping[int, tuple[int, ...]]

    def cpu_times(self) -> dict[int, tuple[int, int]]:
        """Per-CPU (busy, total) ticks, busy being everything but idle and iowait."""
        return {cpu: (_total(fields) - _idle(fields), _total(fields)) for cpu, fields in self.per_cpu.items()}


def _total(fields: tuple[int, ...]) -> int:
    return sum(fields)


def _idle(fields: tuple[int, ...]) -> int:
    return sum(fields[i] for i in IDLE_FIELDS)


def parse_proc_stat(text: str) -> ProcStat | None:
    """The cpu lines of /proc/stat's text; None without an aggregate line."""
    machine: tuple[int, ...] | None = None
    per_cpu: dict[int, tuple[int, ...]] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith(AGGREGATE):
            continue
        values = [int(v) for v in rest.split()[:COUNTED_FIELDS]]
        fields = tuple(values + [0] * (COUNTED_FIELDS - len(values)))
        if name == AGGREGATE:
            machine = fields
        elif name[len(AGGREGATE) :].isdigit():
            per_cpu[int(name[len(AGGREGATE) :])] = fields
    return None if machine is None else ProcStat(machine=machine, per_cpu=per_cpu)


def read_proc_stat(path: Path = PROC_STAT) -> ProcStat | None:
    """A reading of /proc/stat; None where it is unavailable (not Linux) or unreadable."""
    try:
        return parse_proc_stat(path.read_text(encoding="ascii"))
    except (OSError, ValueError):
        return None


def cpu_times(reading: ProcStat | None) -> dict[int, tuple[int, int]] | None:
    return None if reading is None else reading.cpu_times()


def read_cpu_times(path: Path = PROC_STAT) -> dict[int, tuple[int, int]] | None:
    """Per-CPU (busy, total) ticks since boot; None where /proc/stat is unavailable (not Linux)."""
    return cpu_times(read_proc_stat(path))


def busy_fraction(before: CpuTimes | None, after: CpuTimes | None, cpus: Iterable[int]) -> float | None:
    """Busy share of `cpus` between two readings (0..1), or None if it cannot be told."""
    if before is None or after is None:
        return None
    busy = total = 0
    for cpu in cpus:
        if cpu not in before or cpu not in after:
            return None
        busy += after[cpu][0] - before[cpu][0]
        total += after[cpu][1] - before[cpu][1]
    return round(busy / total, 4) if total > 0 else None


def tick_shares(before: tuple[int, ...], after: tuple[int, ...]) -> dict[str, Any] | None:
    """{"ticks": elapsed ticks, and per NOISE_FIELDS its share of them}; None if no tick elapsed (or the
    counters went backwards, which a reading from another boot would do)."""
    elapsed = [a - b for a, b in zip(after, before, strict=True)]
    ticks = sum(elapsed)
    if ticks <= 0 or min(elapsed) < 0:
        return None
    shares: dict[str, Any] = {"ticks": ticks}
    for name in NOISE_FIELDS:
        shares[name] = round(elapsed[FIELD_NAMES.index(name)] / ticks, SHARE_DIGITS)
    return shares


def set_shares(before: ProcStat, after: ProcStat, cpus: Iterable[int]) -> dict[str, Any] | None:
    """tick_shares over a CPU set (ticks summed over its CPUs); None if a CPU is missing from a reading."""
    chosen = list(cpus)
    if not chosen or any(cpu not in before.per_cpu or cpu not in after.per_cpu for cpu in chosen):
        return None
    summed_before = tuple(map(sum, zip(*(before.per_cpu[cpu] for cpu in chosen), strict=True)))
    summed_after = tuple(map(sum, zip(*(after.per_cpu[cpu] for cpu in chosen), strict=True)))
    return tick_shares(summed_before, summed_after)


def cpu_shares(
    before: ProcStat | None, after: ProcStat | None, server_cpus: Iterable[int], load_cpus: Iterable[int]
) -> dict[str, Any] | None:
    """A trial record's `cpu_shares`: steal, irq, softirq and iowait shares between two readings, for the
    machine and for the server's and load generator's CPU sets; None without both readings."""
    if before is None or after is None:
        return None
    return {
        "machine": tick_shares(before.machine, after.machine),
        "server_cpus": set_shares(before, after, server_cpus),
        "load_cpus": set_shares(before, after, load_cpus),
    }
