"""The warm-up: the trial's own load, for `warmup_s` seconds, against the measured server process first.

A fresh server starts every trial (archbench.measure.runner), so without it the measured window would include
accepting the connections, first-touch page faults and cold caches of a new process. With campaign parameter
`warmup_s` > 0 the runner, after the ready line (and after idle_holder holds its connections, if any), runs the
same load generator with the same configuration for `warmup_s` seconds (`LoadGenerator.warmup_config`) against
the same server, then the measured load. The campaign's warm-up *trials* (`warmup`) are something else: a whole
trial on a server process of its own, discarded.

What it leaves:

* `<trial-id>.warmup.<tool>.txt`: the warm-up's stdout, verbatim (kept, never parsed into the measurement);
* the record's `load_warmup`: its argv, exit status, wall and CPU time, output file, stderr, the requests it
  completed (its parsed `total_requests`, null if unparsed) and its flags;
* `server.warmup_cpu_s`: the server process tree's CPU seconds over the warm-up (/proc, as `server.load_cpu_s`).

The server prints its counters once, at exit (contracts.md section 1), so they cover the warm-up and the measured
window together. `without_warmup` takes the warm-up's CPU off the server's whole-life CPU time, so that "server
CPU" keeps its meaning (start-up, the measured load and shutdown); the counters (`requests_served`,
`connections_served`, ...) are read with `load_runs` in mind (archbench.analyze.trials).

A warm-up that fails (killed after its time limit, an exit status without a measurement, output that does not
parse) fails the trial with the reason, and the measured load does not run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archbench.config.loadgen import LoadGenerator
from archbench.config.params import Parameters
from archbench.measure.processes import ManagedProcess
from archbench.measure.proctree import tree_cpu_s
from archbench.parse import LoadOutputError, parse_output

if TYPE_CHECKING:  # the analysis reads records through this module and needs no placement
    from archbench.measure.placement import Placement

WARMUP_KEY = "load_warmup"
SERVER_WARMUP_CPU_KEY = "warmup_cpu_s"

Spawn = Callable[[list[str]], ManagedProcess]


@dataclass(frozen=True)
class LoadTarget:
    """What a load run of a trial aims at and how it starts: the generator with the trial's configuration, the
    server's URL and pid (its CPU is read around the run), the placement and parameters that build the command
    line, and `spawn`, which starts and registers a child (the runner's, so an interrupt stops it)."""

    generator: LoadGenerator
    config: Mapping[str, Any]
    url: str
    server_pid: int
    placement: Placement
    params: Parameters
    trial_id: str
    spawn: Spawn

    def argv(self, config: Mapping[str, Any]) -> list[str]:
        """The load generator's command for `config`, pinned to the load CPUs and placed."""
        command = self.generator.command(
            config,
            self.url,
            self.params.wrk_timeout_s,
            build_dir=Path(self.params.build_dir),
            server_pid=self.server_pid,
        )
        return self.placement.load_argv(["taskset", "-c", self.params.load_cpus, *command])


def warmup_output_file(generator: LoadGenerator, trial_id: str) -> str:
    """`<trial-id>.warmup.<tool>.txt`: beside the measured `<trial-id>.<tool>.txt`, never the same name."""
    return f"{trial_id}.warmup.{generator.name}.txt"


def run_warmup(
    target: LoadTarget, warmup_s: int, outputs: dict[str, bytes]
) -> tuple[dict[str, Any], float | None, str | None]:
    """Run the warm-up to its end: (the record's `load_warmup`, the server's CPU seconds over it or None, the
    problem that fails the trial or None); its output is added to `outputs`."""
    generator, params, server_pid = target.generator, target.params, target.server_pid
    warm_config = generator.warmup_config(target.config, warmup_s)
    argv = target.argv(warm_config)
    output_file = warmup_output_file(generator, target.trial_id)
    info: dict[str, Any] = {
        "duration_s": warmup_s,
        "argv": argv,
        "exit_code": None,
        "wall_s": None,
        "cpu_user_s": None,
        "cpu_sys_s": None,
        "output_file": output_file,
        "stderr": None,
        "requests": None,
        "flags": None,
    }
    server_cpu_before = tree_cpu_s(server_pid)
    process = target.spawn(argv)
    limit_s = generator.time_limit_s(warm_config, params.wrk_timeout_s)
    ended = process.wait(limit_s)
    server_cpu_after = tree_cpu_s(server_pid)
    server_cpu_s = None
    if server_cpu_before is not None and server_cpu_after is not None:
        server_cpu_s = round(server_cpu_after - server_cpu_before, 6)
    problem = None
    if ended is None:
        ended = process.kill()
        problem = f"warm-up: {generator.name} still running after {limit_s:g} s; killed"
    stdout, stderr = process.output()
    outputs[output_file] = stdout
    info["stderr"] = stderr.decode("utf-8", "replace")
    if ended is not None:
        info.update(
            exit_code=ended.exit_code,
            wall_s=None if ended.wall_s is None else round(ended.wall_s, 6),
            cpu_user_s=ended.cpu_user_s,
            cpu_sys_s=ended.cpu_sys_s,
        )
        if problem is None and not generator.measured(ended.exit_code):
            text = info["stderr"].strip()[-1000:] or "(no stderr)"
            problem = f"warm-up: {generator.name} exited with status {ended.exit_code}: {text}"
    if problem is None:
        try:
            parsed = parse_output(generator.name, stdout.decode("utf-8", "replace"))
        except LoadOutputError as error:
            problem = f"warm-up: {generator.name} output not understood: {error}"
        else:
            info["requests"] = parsed.get("total_requests", parsed.get("echoes"))
            info["flags"] = list(parsed.get("flags") or [])
    return info, server_cpu_s, problem


def load_runs(record: Mapping[str, Any]) -> int:
    """How many load runs the server's own counters cover: 2 after a warm-up on the same process, else 1."""
    return 2 if record.get(WARMUP_KEY) else 1


def without_warmup(cpu_s: float, server: Mapping[str, Any]) -> float:
    """The server's whole-life CPU seconds `cpu_s` without its warm-up (`server.warmup_cpu_s`), so that it covers
    start-up, the measured load and shutdown as in a trial without one. NaN when the server was warmed up but the
    warm-up's CPU could not be read: the whole-life number would count the warm-up as measured load."""
    if SERVER_WARMUP_CPU_KEY not in server:
        return cpu_s
    warm = server.get(SERVER_WARMUP_CPU_KEY)
    if warm is None or isinstance(warm, bool) or not isinstance(warm, (int, float)):
        return math.nan
    return cpu_s - float(warm)
