"""How busy a set of CPUs was over an interval, from the kernel's per-CPU counters (/proc/stat).

A process's rusage (what wait4 returns) leaves out the time its CPU spends in
interrupt and softirq context, and on loopback that is where much of TCP's work
happens: a packet one side sends is processed on the sender's CPU, partly on
behalf of the receiver. So a load generator can saturate its CPU while its own
user + sys time says 50%. The busy fraction of the CPUs it was pinned to says
directly whether the client had any time left; it also counts anything else
that ran on those CPUs, which is itself worth knowing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

PROC_STAT = Path("/proc/stat")
# Fields of a "cpuN" line: user nice system idle iowait irq softirq steal (guest time is inside user).
IDLE_FIELDS = (3, 4)  # idle, iowait
COUNTED_FIELDS = 8

CpuTimes = Mapping[int, tuple[int, int]]  # CPU -> (busy ticks, total ticks)


def read_cpu_times(path: Path = PROC_STAT) -> dict[int, tuple[int, int]] | None:
    """Per-CPU (busy, total) ticks since boot; None where /proc/stat is unavailable (not Linux)."""
    try:
        lines = path.read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    times = {}
    for line in lines:
        name, _, rest = line.partition(" ")
        if not (name.startswith("cpu") and name[3:].isdigit()):
            continue
        fields = [int(v) for v in rest.split()[:COUNTED_FIELDS]]
        total = sum(fields)
        idle = sum(fields[i] for i in IDLE_FIELDS if i < len(fields))
        times[int(name[3:])] = (total - idle, total)
    return times


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
