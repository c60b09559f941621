"""CPU time of a live process and its descendants, from /proc/<pid>/stat.

The server's rusage (wait4, at its end) covers its whole life: start-up, the calibration of its work loop, the idle
connections idle_holder opens before the load (accepting and answering K connections costs poll far more than epoll)
and shutdown. Read before and after the load, the CPU time of the server's process tree gives the load window alone
(`server.load_cpu_s`), so CPU per request is the load's. Each process's line counts all its threads; descendants
(prefork's workers, the nginx master and workers under their launcher) are found through their parent pids. The
kernel counts in USER_HZ ticks (usually 100 per second): a 1-s window is known to about 1 %.
"""

from __future__ import annotations

import os
from pathlib import Path

PROC = Path("/proc")
# Fields after the command name's closing parenthesis: state, ppid, ... utime (index 11), stime (index 12).
PPID, UTIME, STIME = 1, 11, 12


def _stat_fields(path: Path) -> list[str] | None:
    try:
        text = path.read_text()
    except OSError:
        return None  # gone meanwhile, or not readable
    _, _, rest = text.rpartition(")")  # the name may contain spaces and parentheses
    fields = rest.split()
    return fields if len(fields) > STIME else None


def tree_cpu_s(pid: int, proc: Path = PROC) -> float | None:
    """User + sys seconds of `pid` and every live descendant so far; None if `pid` cannot be read."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in proc.iterdir() if proc.is_dir() else ():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(entry / "stat")
        if fields is not None:
            parents[int(entry.name)] = int(fields[PPID])
            ticks[int(entry.name)] = int(fields[UTIME]) + int(fields[STIME])
    if pid not in ticks:
        return None
    tree = {pid}
    grew = True
    while grew:  # a descendant's parent is in the tree once its own parent is
        added = {child for child, parent in parents.items() if parent in tree and child not in tree}
        tree |= added
        grew = bool(added)
    return sum(ticks[p] for p in tree) / os.sysconf("SC_CLK_TCK")
