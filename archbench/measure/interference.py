"""Whether other work took a trial's CPUs during its load, measured from /proc/stat and the trial's own CPU time.

On a shared machine (a laptop, a VM) another process, or the hypervisor, can take the CPUs a trial was pinned to,
and the trial then measures the machine rather than the server. Per CPU set (the server's, the load generator's),
over the interval between the two /proc/stat readings around the load (archbench.measure.cpustat):

* expected ticks: the interval's wall time x USER_HZ x the CPUs in the set, the ticks the kernel would have counted
  had the CPUs run the whole time;
* foreign ticks: user + nice + system ticks the trial's own processes do not explain (the server's process tree over
  the load window, `server.load_cpu_s`; the load generator's user + sys). Interrupt and softirq ticks are left out:
  on loopback that is where much of the trial's own TCP work runs, on behalf of both sides and in nobody's rusage.
  A process's rusage also holds some interrupt time that struck while it ran, so a quiet trial's foreign ticks are
  slightly negative; they are recorded as measured;
* steal ticks: time the hypervisor ran something else and said so;
* missing ticks: expected minus counted ticks, time the CPUs were not accounted at all. Only on a saturated set
  (busy for at least SATURATED_BUSY of its counted ticks) do they count as taken: a partly idle CPU loses idle
  ticks in the kernel's accounting on its own (on the reference VM a quiet load CPU 20-70 % busy lost a median
  8-15 % of its ticks, a quiet CPU busy 95 % or more at most 4.5 %), so there they say nothing of other work.

A set's taken share is (max(foreign, 0) + steal + counted missing ticks) / expected ticks. The trial is disturbed
when either set's taken share reaches the campaign parameter `interference_share`. Its default, 0.10, was set by a
pilot on a 2-vCPU VM (1-s trials of epoll, nginx and the thread pool): with the machine otherwise idle no trial took
more than 2.4 %, though a quarter to a half of each CPU's ticks went to softirq; a busy loop pinned to the server's
CPU, or to the load generator's, took 34-66 % of that set, and every such trial was caught. Judged after the fact,
the shipped campaigns measured on a quiet machine stay below 7 % (reference-workloads: at most 6.8 %).

`trial_interference` is what the runner records (the trial record's `interference`); `record_interference` gives
the same verdict for a stored record: its own `interference`, or, for records written before it, one derived from
`cpu_shares`, `server.cpus_busy`, `load.cpus_busy`, the own CPU times and `load.wall_s` as the interval.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from archbench.config.params import DEFAULT_INTERFERENCE_SHARE
from archbench.config.values import ParameterError, parse_cpu_list
from archbench.measure.cpustat import FIELD_NAMES, IDLE_FIELDS, ProcStat

SATURATED_BUSY = 0.95
# USER_HZ is 100 on every Linux architecture the study runs on; records before `interference` do not say.
LINUX_USER_HZ = 100
CPU_SETS = ("server_cpus", "load_cpus")
SET_LABELS = {"server_cpus": "server CPUs", "load_cpus": "load CPUs"}
RECORDED = "recorded"
DERIVED = "derived"
TICK_DIGITS = 2
SHARE_DIGITS = 4
_INTERRUPT_FIELDS = tuple(FIELD_NAMES.index(name) for name in ("irq", "softirq"))
_STEAL_FIELD = FIELD_NAMES.index("steal")


def user_hz() -> int:
    try:
        return int(os.sysconf("SC_CLK_TCK"))
    except (ValueError, OSError, AttributeError):
        return LINUX_USER_HZ


@dataclass(frozen=True)
class SetTicks:
    """A CPU set's ticks over an interval: all of them, the busy ones (neither idle nor iowait: interrupt, softirq
    and steal ticks included), and the interrupt (irq + softirq) and steal ticks among those."""

    counted: float
    busy: float
    interrupts: float
    steal: float

    @classmethod
    def between(cls, before: ProcStat, after: ProcStat, cpus: tuple[int, ...]) -> SetTicks | None:
        """The set's ticks between two readings; None if a CPU is missing or a counter went backwards."""
        if not cpus or any(cpu not in before.per_cpu or cpu not in after.per_cpu for cpu in cpus):
            return None
        elapsed = [
            sum(after.per_cpu[cpu][field] - before.per_cpu[cpu][field] for cpu in cpus)
            for field in range(len(FIELD_NAMES))
        ]
        if min(elapsed) < 0 or sum(elapsed) <= 0:
            return None
        idle = sum(elapsed[field] for field in IDLE_FIELDS)
        return cls(
            counted=sum(elapsed),
            busy=sum(elapsed) - idle,
            interrupts=sum(elapsed[field] for field in _INTERRUPT_FIELDS),
            steal=elapsed[_STEAL_FIELD],
        )

    @classmethod
    def from_shares(cls, shares: Any, busy_fraction: Any) -> SetTicks | None:
        """The same from a record's `cpu_shares` entry and the set's `cpus_busy` (older records); None where
        either is missing."""
        if not isinstance(shares, Mapping):
            return None
        try:
            ticks = float(shares["ticks"])
            return cls(
                counted=ticks,
                busy=float(busy_fraction) * ticks,
                interrupts=(float(shares["irq"]) + float(shares["softirq"])) * ticks,
                steal=float(shares["steal"]) * ticks,
            )
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class SetInterference:
    """One CPU set's account of the interval: what it should have counted, what it counted and who used it."""

    cpus: int
    expected: float
    ticks: SetTicks
    own: float | None  # ticks of the trial's own processes on the set; None where unknown

    @property
    def missing(self) -> float:
        return self.expected - self.ticks.counted

    @property
    def foreign(self) -> float | None:
        processes = self.ticks.busy - self.ticks.interrupts - self.ticks.steal
        return None if self.own is None else processes - self.own

    @property
    def saturated(self) -> bool:
        return self.ticks.busy >= SATURATED_BUSY * self.ticks.counted

    def taken(self) -> dict[str, float]:
        """Ticks others took, by kind (each at least 0); missing ticks only on a saturated set."""
        return {
            "foreign": max(0.0, self.foreign or 0.0),
            "steal": max(0.0, self.ticks.steal),
            "missing": max(0.0, self.missing) if self.saturated else 0.0,
        }

    @property
    def taken_share(self) -> float:
        return sum(self.taken().values()) / self.expected if self.expected > 0 else 0.0

    def as_record(self) -> dict[str, Any]:
        foreign = self.foreign
        return {
            "cpus": self.cpus,
            "expected_ticks": round(self.expected, TICK_DIGITS),
            "ticks": round(self.ticks.counted, TICK_DIGITS),
            "busy_ticks": round(self.ticks.busy, TICK_DIGITS),
            "interrupt_ticks": round(self.ticks.interrupts, TICK_DIGITS),
            "steal_ticks": round(self.ticks.steal, TICK_DIGITS),
            "own_ticks": None if self.own is None else round(self.own, TICK_DIGITS),
            "foreign_ticks": None if foreign is None else round(foreign, TICK_DIGITS),
            "missing_ticks": round(self.missing, TICK_DIGITS),
            "saturated": self.saturated,
            "taken_share": round(self.taken_share, SHARE_DIGITS),
        }


@dataclass(frozen=True)
class CpuSetUse:
    """A CPU set of the trial and the CPU seconds the trial's own processes spent on it (None: unknown)."""

    cpus: tuple[int, ...]
    own_cpu_s: float | None


def set_interference(
    ticks: SetTicks | None, cpus: int, interval_s: float, hz: int, own_cpu_s: float | None
) -> SetInterference | None:
    """The set's account, or None without ticks or a positive interval."""
    if ticks is None or cpus <= 0 or interval_s <= 0:
        return None
    own = None if own_cpu_s is None else float(own_cpu_s) * hz
    return SetInterference(cpus=cpus, expected=interval_s * hz * cpus, ticks=ticks, own=own)


def reasons(sets: Mapping[str, SetInterference | None], max_share: float) -> list[str]:
    """Why the trial is disturbed: one sentence per set whose taken share reaches `max_share` (empty: it is not)."""
    out = []
    for name, account in sets.items():
        if account is None or account.taken_share < max_share:
            continue
        parts = [f"{kind} {100 * ticks / account.expected:.0f} %" for kind, ticks in account.taken().items() if ticks]
        out.append(
            f"{SET_LABELS.get(name, name)}: {100 * account.taken_share:.0f} % of the expected ticks taken "
            f"({', '.join(parts)})"
        )
    return out


def verdict(
    sets: Mapping[str, SetInterference | None], interval_s: float, hz: int, max_share: float
) -> dict[str, Any] | None:
    """The record's `interference` from the sets' accounts; None when no set could be measured."""
    if all(account is None for account in sets.values()):
        return None
    why = reasons(sets, max_share)
    return {
        "interval_s": round(interval_s, 6),
        "user_hz": hz,
        "max_share": max_share,
        **{name: None if account is None else account.as_record() for name, account in sets.items()},
        "disturbed": bool(why),
        "reasons": why,
    }


def trial_interference(
    before: ProcStat | None,
    after: ProcStat | None,
    interval_s: float,
    uses: Mapping[str, CpuSetUse],
    max_share: float,
) -> dict[str, Any] | None:
    """What the runner records: each set's account between the two readings, and the verdict."""
    if before is None or after is None:
        return None
    hz = user_hz()
    sets = {
        name: set_interference(SetTicks.between(before, after, use.cpus), len(use.cpus), interval_s, hz, use.own_cpu_s)
        for name, use in uses.items()
    }
    return verdict(sets, interval_s, hz, max_share)


def _cpu_count(text: Any) -> int:
    try:
        return len(parse_cpu_list(str(text), "cpus"))
    except ParameterError:
        return 0


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _sum(*values: Any) -> float | None:
    numbers = [_number(v) for v in values]
    return None if any(n is None for n in numbers) else sum(n for n in numbers if n is not None)


def derived_interference(record: Mapping[str, Any], max_share: float) -> dict[str, Any] | None:
    """The verdict of a record written before `interference`, from what it does hold; None where it holds too
    little (no `cpu_shares`, no wall time)."""
    shares = record.get("cpu_shares") or {}
    server = record.get("server") or {}
    load = record.get("load") or {}
    interval_s = _number(load.get("wall_s"))
    if not shares or interval_s is None:
        return None
    own = {
        "server_cpus": (server.get("cpus"), server.get("cpus_busy"), _number(server.get("load_cpu_s"))),
        "load_cpus": (load.get("cpus"), load.get("cpus_busy"), _sum(load.get("cpu_user_s"), load.get("cpu_sys_s"))),
    }
    sets = {
        name: set_interference(
            SetTicks.from_shares(shares.get(name), busy), _cpu_count(cpus), interval_s, LINUX_USER_HZ, own_cpu_s
        )
        for name, (cpus, busy, own_cpu_s) in own.items()
    }
    return verdict(sets, interval_s, LINUX_USER_HZ, max_share)


def record_interference(record: Mapping[str, Any], max_share: float) -> tuple[dict[str, Any] | None, str]:
    """(the record's verdict, where it came from: RECORDED, DERIVED, or "" when it cannot be told)."""
    recorded = record.get("interference")
    if isinstance(recorded, Mapping):
        return dict(recorded), RECORDED
    derived = derived_interference(record, max_share)
    return (derived, DERIVED) if derived is not None else (None, "")


def campaign_share(meta: Mapping[str, Any]) -> float:
    """A campaign's interference_share (campaign.json's parameters; the default before campaigns recorded one)."""
    share = (meta.get("parameters") or {}).get("interference_share")
    return DEFAULT_INTERFERENCE_SHARE if share is None else float(share)


def judged_disturbed(record: Mapping[str, Any], max_share: float) -> bool:
    """Disturbed by the runner's judgement or, for a record written before the runner judged, by the same judgement
    made from what the record holds (as trials.csv's `disturbed`)."""
    verdict, _ = record_interference(record, max_share)
    return bool((verdict or {}).get("disturbed"))


def is_disturbed(record: Mapping[str, Any]) -> bool:
    """Whether the runner judged this record disturbed (records without the judgement are not)."""
    return bool((record.get("interference") or {}).get("disturbed"))
