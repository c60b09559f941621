"""`python -m archbench pick`: one workload point from the user's flags, made into a campaign this machine can run
within the user's time budget.

A pick is an ordinary campaign (profile `pick`) with one workload family, `pick`: the point's settings (work, wait,
idle connections, churn, response size) at one connection count and pipeline depth. What it adds is the choice of
each design's parallelism for this machine and the sizing of the rounds to the budget:

* pools (worker threads, loops or processes: the servers with a parallelism flag) at 1, at the server's CPU count,
  and at the count that covers the blocking: with W microseconds of wait and C of work per request, a pool of
  N = connections x W / (W + C) threads has as many requests waiting as the connections can offer (Little's law
  with the connections as the population), so more threads could only wait idle; capped by the connections and
  the open-file limit;
* the first look after `FIRST_LOOK` rounds (fewer when the budget holds fewer, never under 2, the least MCB can
  compare), the last round where the budget ends (at most `MAX_ROUNDS`), and the selection phase's budget the
  rest of it after the planned rounds.

Everything here is checked before anything runs: a bad flag is a `ParameterError` naming the flag, and no campaign
is created for it.
"""

from __future__ import annotations

import math
import re
import resource
from dataclasses import dataclass, field
from typing import Any

from archbench.config.params import FD_HEADROOM, Parameters, resolve_parameters
from archbench.config.plan import estimate_duration_s, expand_grid
from archbench.config.profiles import TRIAL_OVERHEAD_S
from archbench.config.server_spec import check_response
from archbench.config.servers import server_specs
from archbench.config.topology import CPUS, CpuTopology
from archbench.config.values import ParameterError
from archbench.config.workloads import BLOCK_DISTS, CLOSE, CONNECTION_MODES, KEEP_ALIVE, MAX_WORK_US

PROFILE = "pick"
FAMILY = "pick"
FIRST_LOOK = 3  # as the report's workloads campaigns: three paired rounds before the first look
LEAST_ROUNDS = 2  # MCB needs two rounds to estimate the variance
MAX_ROUNDS = 20
# Seconds before the first trial (provenance: tool versions, the build's flags) and after the last (the selection's
# summary, the answer): measured 2-4 s on the reference machine; the budget keeps them out of the rounds.
START_UP_S = 5.0
# A trial's wall time beyond TRIAL_OVERHEAD_S's estimate: the first rounds of make all's workloads campaign took
# 1.2-1.3 s per 1 s trial against the estimate's 1.15 s; a round is sized with the larger.
ROUND_SLACK = 1.15
DEFAULT_BUDGET_S = 180.0
DEFAULT_DELTA = 0.10
DEFAULT_CONNECTIONS = 64
_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?")


def parse_budget(text: str) -> float:
    """A time budget in seconds from "180", "90s", "3m", "1m30s" or "1h"; ParameterError("--budget") otherwise."""
    match = _DURATION.fullmatch(str(text).strip())
    if not str(text).strip() or match is None or not any(match.groups()):
        raise ParameterError("--budget", f"{text!r} is not a duration such as 90s, 3m, 1m30s or 180")
    hours, minutes, seconds = (float(part) if part else 0.0 for part in match.groups())
    return hours * 3600 + minutes * 60 + seconds


@dataclass(frozen=True)
class PickRequest:
    """The user's workload point and how long, and how finely, to decide it."""

    work_us: int = 0
    block_us: int = 0
    block_dist: str = "fixed"
    idle_connections: int = 0
    connection_mode: str = KEEP_ALIVE
    response: str | None = None  # None: the servers' default response
    connections: int = DEFAULT_CONNECTIONS
    pipeline: int = 1
    budget_s: float = DEFAULT_BUDGET_S
    delta: float = DEFAULT_DELTA
    servers: tuple[str, ...] | None = None  # None: every correct server of the profile
    seed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # other run parameters (CPU sets, raw root, build dir)

    def check(self) -> None:
        """Raise ParameterError naming the flag of the first value that cannot be run."""
        for flag, value in (("--work-us", self.work_us), ("block-us", self.block_us)):
            if not isinstance(value, int) or not 0 <= value <= MAX_WORK_US:
                raise ParameterError(flag, f"{value!r} is not a whole number of microseconds from 0 to {MAX_WORK_US}")
        if self.block_dist not in BLOCK_DISTS:
            raise ParameterError("--block-dist", f"{self.block_dist!r} is not one of {', '.join(BLOCK_DISTS)}")
        if self.connection_mode not in CONNECTION_MODES:
            raise ParameterError("--connection-mode", f"{self.connection_mode!r} is not one of {CONNECTION_MODES}")
        if not isinstance(self.idle_connections, int) or self.idle_connections < 0:
            raise ParameterError("--idle", f"{self.idle_connections!r} is not a number of connections (>= 0)")
        if not isinstance(self.connections, int) or self.connections < 1:
            raise ParameterError("--connections", f"{self.connections!r} is not a number of connections (>= 1)")
        if not isinstance(self.pipeline, int) or self.pipeline < 1:
            raise ParameterError("--pipeline", f"{self.pipeline!r} is not a pipeline depth (>= 1)")
        if self.pipeline > 1 and self.connection_mode == CLOSE:
            raise ParameterError("--pipeline", "one request per connection (--churn) cannot pipeline requests")
        if self.response is not None and (problem := check_response(self.response)):
            raise ParameterError("--response", problem)
        if not 0.0 < self.delta < 1.0:
            raise ParameterError("--delta", f"{self.delta!r} is not a fraction of the best in (0, 1), e.g. 0.10")
        if not self.budget_s > 0:
            raise ParameterError("--budget", f"{self.budget_s!r} is not a positive duration")
        self._check_servers()
        self._check_open_files()

    def _check_servers(self) -> None:
        if self.servers is None:
            return
        candidates = pickable_servers()
        unknown = [name for name in self.servers if name not in candidates]
        if unknown:
            raise ParameterError(
                "--servers", f"{unknown[0]!r} is not a server to pick from; valid: {', '.join(candidates)}"
            )
        if len(set(self.servers)) < 2:
            raise ParameterError("--servers", "a pick compares at least two servers")

    def _check_open_files(self) -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY:
            return
        needed = self.connections + self.idle_connections + FD_HEADROOM
        if needed > hard:
            flag = "--idle" if self.idle_connections else "--connections"
            raise ParameterError(
                flag,
                f"{self.connections} connections and {self.idle_connections} idle ones need {needed} open files in "
                f"the server, but this machine's open-file hard limit is {hard}: this machine cannot test that "
                f"point; use at most {hard - FD_HEADROOM} connections in all (or raise the limit: ulimit -Hn)",
            )

    def family(self, pools: tuple[int | str, ...]) -> dict[str, Any]:
        """The campaign's one workload family."""
        out: dict[str, Any] = {
            "name": FAMILY,
            "work_us": self.work_us,
            "block_us": self.block_us,
            "block_dist": self.block_dist,
            "idle_connections": self.idle_connections,
            "connection_mode": self.connection_mode,
            "thread_counts": list(pools),
        }
        if self.response is not None:
            out["response"] = self.response
        return out


def pickable_servers() -> tuple[str, ...]:
    """The servers a pick compares: every architecture that takes the per-request work and is a correct server."""
    return tuple(name for name, spec in server_specs().items() if spec.takes_work and not spec.upper_bound)


def covering_pool(connections: int, work_us: int, block_us: int) -> int:
    """Threads that cover the blocking: connections x wait / (wait + work), rounded up (0 without a wait)."""
    if block_us <= 0:
        return 0
    return max(1, math.ceil(connections * block_us / (block_us + work_us)))


def pool_sizes(request: PickRequest, open_file_limit: int | None = None) -> tuple[int | str, ...]:
    """1, the server's CPU count ("cpus", resolved by the parameters) and the covering pool, capped by the
    connections (a pool beyond them has nothing to serve) and the open-file limit (a thread per connection at most
    needs one descriptor each)."""
    cover = covering_pool(request.connections, request.work_us, request.block_us)
    if open_file_limit is not None:
        cover = min(cover, max(1, open_file_limit - FD_HEADROOM - request.idle_connections))
    sizes: list[int | str] = [1, CPUS]
    if cover > 1:
        sizes.append(min(cover, request.connections))
    return tuple(sizes)


@dataclass(frozen=True)
class PickPlan:
    """The campaign a pick runs and how its rounds fit the budget."""

    params: Parameters
    designs: int
    round_s: float  # expected wall time of one round of every design
    first_look: int
    max_rounds: int


def plan_pick(request: PickRequest, campaign: str, topology: CpuTopology | None = None) -> PickPlan:
    """The checked campaign parameters for `request`: ParameterError (naming the flag) if it cannot run, including a
    budget shorter than the rounds of one look."""
    request.check()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    pools = pool_sizes(request, None if hard == resource.RLIM_INFINITY else hard)
    overrides: dict[str, Any] = dict(request.extra)
    overrides.update(
        campaign=campaign,
        connection_counts=[request.connections],
        pipeline_depths=[request.pipeline],
        thread_counts=list(pools),
        workloads=[request.family(pools)],
        selection_delta=request.delta,
        seed=request.seed,
    )
    if request.servers is not None:
        overrides["servers"] = [_server_entry(name) for name in dict.fromkeys(request.servers)]
    least = resolve_parameters(PROFILE, topology=topology, trials=LEAST_ROUNDS, **overrides)
    configs = expand_grid(least)
    if len(configs) < 2:
        raise ParameterError("--servers", "fewer than two designs take this workload: nothing to choose between")
    round_s = ROUND_SLACK * estimate_duration_s(least, TRIAL_OVERHEAD_S) / LEAST_ROUNDS
    affordable = int((request.budget_s - START_UP_S) // round_s)
    if affordable < LEAST_ROUNDS:
        shortest = START_UP_S + LEAST_ROUNDS * round_s
        raise ParameterError(
            "--budget",
            f"{request.budget_s:g} s is too short: one round of the {len(configs)} designs takes about "
            f"{round_s:.0f} s here, and the first comparison needs {LEAST_ROUNDS} rounds; give at least "
            f"{math.ceil(shortest)} s",
        )
    first_look = min(FIRST_LOOK, affordable)
    max_rounds = max(first_look, min(MAX_ROUNDS, affordable))
    selection_budget = max(0.0, request.budget_s - START_UP_S - first_look * round_s)
    params = resolve_parameters(
        PROFILE,
        topology=topology,
        trials=first_look,
        selection_max_rounds=max_rounds,
        selection_budget_s=round(selection_budget, 1),
        **overrides,
    )
    return PickPlan(params, len(configs), round_s, first_look, max_rounds)


def _server_entry(name: str) -> str | dict[str, Any]:
    """A server as the profile lists it: thread_pool dispatching requests (the pool that serves the other
    designs' workloads), the others by name."""
    return {"architecture": "thread_pool", "dispatch": "request"} if name == "thread_pool" else name
