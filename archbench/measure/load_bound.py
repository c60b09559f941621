"""Whether the load generator, not the server, may have set a trial's rate: the one rule for every study.

A load generator pinned to its own CPUs bounds the rate once those CPUs have no time left. Two records of a trial
say so, and either is enough (`client_bound`):

* its own CPU time over its pinned CPUs' wall time (`load.cpu_utilisation`; computed from `cpu_user_s`,
  `cpu_sys_s`, `wall_s` and `cpus` for records written before it existed);
* the busy share of those CPUs from /proc/stat (`load.cpus_busy`, archbench.measure.cpustat). On loopback the
  kernel does the TCP work of the client's connections in softirq time on the client's CPUs, which the process'
  own CPU time leaves out, so its CPUs can be saturated while its own time is below the threshold.

open_loop also measures its own busy share (`cpu_busy_fraction` in its output), which the latency study passes as
`own_busy`. The runner's stopping rules (archbench.measure.adaptive, archbench.measure.selection), trials.csv's
`client_bound` and `bottleneck` (archbench.analyze), and the echo and latency studies all call this module, so a
trial is client-bound in all of them or in none.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

CLIENT_BOUND_BUSY = 0.95  # the load generator's CPUs this busy: it, not the server, may have set the rate


def _number(value: Any) -> float:
    try:
        return float(value) if value is not None else math.nan
    except (TypeError, ValueError):
        return math.nan


def parse_cpu_list(text: Any) -> set[int]:
    """taskset's CPU list syntax ("0", "0-3", "0,2") as a set; unparseable parts are ignored (records of any age are
    read; archbench.config.values.parse_cpu_list is the strict one for parameters)."""
    cpus: set[int] = set()
    for part in str(text).split(","):
        part = part.strip()
        if re.fullmatch(r"\d+", part):
            cpus.add(int(part))
        elif re.fullmatch(r"\d+-\d+", part):
            low, high = (int(x) for x in part.split("-"))
            cpus.update(range(low, high + 1))
    return cpus


def load_cpu_utilisation(load: Mapping[str, Any]) -> float:
    """The load generator's own CPU time over its pinned CPUs' wall time (NaN when the record cannot say)."""
    recorded = _number(load.get("cpu_utilisation"))
    if not math.isnan(recorded):
        return recorded
    cpus = len(parse_cpu_list(load.get("cpus") or "")) or 1
    cpu_s = _number(load.get("cpu_user_s")) + _number(load.get("cpu_sys_s"))
    wall_s = _number(load.get("wall_s"))
    return cpu_s / (wall_s * cpus) if wall_s > 0 else math.nan


def load_busy_share(load: Mapping[str, Any], own_busy: Any = None) -> float:
    """The highest of the load generator's busy measures (module docstring); NaN when the record has none."""
    measures = [load_cpu_utilisation(load), _number(load.get("cpus_busy")), _number(own_busy)]
    known = [value for value in measures if not math.isnan(value)]
    return max(known) if known else math.nan


def client_bound(load: Mapping[str, Any], own_busy: Any = None, threshold: float = CLIENT_BOUND_BUSY) -> bool:
    """Whether any of the load generator's busy measures reached `threshold`."""
    share = load_busy_share(load, own_busy)
    return not math.isnan(share) and share >= threshold
