"""Workloads: per-request CPU work, blocking calls, idle connections beside the load, one request per connection
and the response's size, as a campaign's `workloads` and as each configuration's settings.

A campaign's `workloads` is a list of *families*, each expanded on its own (never a cross product of all of them):
a family's axes multiply each other, its servers, thread counts and connection counts, e.g. in a profile

    [[workloads]]
    name = "block"                # the family: a label for the report, not part of any config id
    block_us = [100, 1000]        # microseconds of blocking wait per request (--block-us)
    block_dist = "fixed"          # or "exp", or both: ["fixed", "exp"] (--block-dist)
    thread_counts = [1, 8, 64]    # replaces the campaign's thread_counts and its entries' own thread sweeps
    [[workloads]]
    name = "idle"
    idle_connections = [1000, 8000]

Axes (each one value or a list; missing: the default alone): `work_us` (>= 0, --work-us), `block_us` (>= 0,
--block-us), `block_dist` (fixed | exp), `idle_connections` (>= 0: K keep-alive connections build/bin/idle_holder
holds idle during the whole trial), `connection_mode` (keep-alive | close: one request per connection, wrk's
`Connection: close`), `response` (any --response, e.g. "bytes:16384"; replaces the entries' and the campaign's).
Beside them a family may carry `thread_counts`, `connection_counts` (each replacing the campaign's sweep and its
entries' own) and `servers` (its own entries instead of the campaign's, keeping their own sweeps).

A configuration's settings are a `Workload`; its config carries a field only where it differs from the default
(contracts.md section 2), so a campaign without workloads keeps the records, config ids and trial ids it always
had, and a setting at its default in one family (e.g. `work_us = 0`) is the same configuration as the baseline.
Where a workload does not apply to a server (`exclusion_reason`), the combination is left out of the grid and the
plan says why.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from archbench.config.server_entry import ServerEntry, parse_servers
from archbench.config.server_spec import ServerSpec, check_response
from archbench.config.topology import auto_sweep, with_cpu_count
from archbench.config.values import ParameterError, as_tuple, non_negative_int, positive_ints

BLOCK_DISTS = ("fixed", "exp")
CONNECTION_MODES = ("keep-alive", "close")
KEEP_ALIVE, CLOSE = CONNECTION_MODES
MAX_WORK_US = 1_000_000  # the servers' bound on --work-us and --block-us (contracts.md section 1)
FAMILY_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")
AXES = ("work_us", "block_us", "block_dist", "idle_connections", "connection_mode", "response")
FAMILY_KEYS = ("name", *AXES, "thread_counts", "connection_counts", "servers")
# The load generator that can send one request per connection (`-H "Connection: close"`: it reconnects after each
# response and counts every request; checked against the servers' own counts).
CLOSE_LOAD_GENERATORS = ("wrk",)
SEED_MASK = (1 << 63) - 1  # the servers' --seed is 0 to 2^63-1


@dataclass(frozen=True)
class Workload:
    """One configuration's workload: its family and settings (defaults: the plain keep-alive load)."""

    family: str
    work_us: int = 0
    block_us: int = 0
    block_dist: str = "fixed"
    idle_connections: int = 0
    connection_mode: str = KEEP_ALIVE

    def as_dict(self) -> dict[str, Any]:
        """The config fields: `workload` and each setting that differs from its default (`block_dist` with a
        wait only, where it means something)."""
        out: dict[str, Any] = {"workload": self.family}
        if self.work_us:
            out["work_us"] = self.work_us
        if self.block_us:
            out.update(block_us=self.block_us, block_dist=self.block_dist)
        if self.idle_connections:
            out["idle_connections"] = self.idle_connections
        if self.connection_mode != KEEP_ALIVE:
            out["connection_mode"] = self.connection_mode
        return out

    def id_parts(self) -> list[str]:
        """Its parts of a config id: w<work>, b<block>[exp], idle<K>, close; none at the defaults."""
        parts = []
        if self.work_us:
            parts.append(f"w{self.work_us}")
        if self.block_us:
            parts.append(f"b{self.block_us}" + ("" if self.block_dist == "fixed" else self.block_dist))
        if self.idle_connections:
            parts.append(f"idle{self.idle_connections}")
        if self.connection_mode != KEEP_ALIVE:
            parts.append(self.connection_mode)
        return parts


@dataclass(frozen=True)
class WorkloadFamily:
    """One family of the campaign's `workloads`: its axes and what it replaces of the campaign's grid."""

    name: str
    work_us: tuple[int, ...] = (0,)
    block_us: tuple[int, ...] = (0,)
    block_dist: tuple[str, ...] = ("fixed",)
    idle_connections: tuple[int, ...] = (0,)
    connection_mode: tuple[str, ...] = (KEEP_ALIVE,)
    response: tuple[str, ...] | None = None  # None: each entry's, else the campaign's
    thread_counts: tuple[int, ...] | None = None
    connection_counts: tuple[int, ...] | None = None
    servers: tuple[ServerEntry, ...] | None = None

    def workloads(self) -> list[Workload]:
        """Every setting of its axes, in the order they are listed (responses apart: they are the config's)."""
        return [
            Workload(self.name, work, block, dist, idle, mode)
            for work, block, dist, idle, mode in itertools.product(
                self.work_us, self.block_us, self.block_dist, self.idle_connections, self.connection_mode
            )
        ]

    def to_dict(self) -> dict[str, Any]:
        """The stored form (campaign.json's parameters): every axis as a list, the replacements when given."""
        out: dict[str, Any] = {"name": self.name}
        for axis in AXES[:-1]:
            out[axis] = list(getattr(self, axis))
        for key in ("response", "thread_counts", "connection_counts"):
            if getattr(self, key) is not None:
                out[key] = list(getattr(self, key))
        if self.servers is not None:
            out["servers"] = [entry.to_dict() for entry in self.servers]
        return out


# --------------------------------------------------------------------------- parsing and checking


def parse_workloads(raw: Any, server_cpu_count: int) -> tuple[WorkloadFamily, ...]:
    """`workloads`: None or empty (none), a list of families (mappings), or its JSON text; names unique."""
    if raw is None or raw == "" or raw == [] or raw == ():
        return ()
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise ParameterError("workloads", f"{raw!r} is not a JSON list of workload families") from None
    if isinstance(raw, Mapping):
        raw = [raw]
    if not isinstance(raw, (list, tuple)):
        raise ParameterError("workloads", f"{raw!r} is not a list of workload families")
    families = tuple(_family(item, f"workloads[{i}]", server_cpu_count) for i, item in enumerate(raw))
    names = [family.name for family in families]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ParameterError("workloads", f"family name {repeated[0]!r} is used twice; each family needs its own")
    return families


def _family(raw: Any, where: str, server_cpu_count: int) -> WorkloadFamily:
    if not isinstance(raw, Mapping):
        raise ParameterError(where, f"{raw!r} is not a workload family (a table with a name and its axes)")
    unknown = sorted(set(raw) - set(FAMILY_KEYS))
    if unknown:
        raise ParameterError(f"{where}.{unknown[0]}", f"unknown key; a family takes: {', '.join(FAMILY_KEYS)}")
    name = raw.get("name")
    if not isinstance(name, str) or not FAMILY_NAME.fullmatch(name):
        raise ParameterError(
            f"{where}.name", f"{name!r} is not a family name ([a-z][a-z0-9_-]*, at most 32 characters)"
        )

    def values(axis: str, default: tuple[Any, ...]) -> tuple[Any, ...]:
        given = raw.get(axis)
        if given is None:
            return default
        items = as_tuple(given, f"{where}.{axis}")
        if not items:
            raise ParameterError(f"{where}.{axis}", "must not be empty")
        return items

    def unique(checked: Any) -> tuple[Any, ...]:
        return tuple(dict.fromkeys(checked))  # checked values are hashable; order kept

    work = unique(_microseconds(v, f"{where}.work_us") for v in values("work_us", (0,)))
    block = unique(_microseconds(v, f"{where}.block_us") for v in values("block_us", (0,)))
    dists = unique(_choice(v, BLOCK_DISTS, f"{where}.block_dist") for v in values("block_dist", ("fixed",)))
    idle = unique(non_negative_int(v, f"{where}.idle_connections") for v in values("idle_connections", (0,)))
    modes = unique(
        _choice(v, CONNECTION_MODES, f"{where}.connection_mode") for v in values("connection_mode", (KEEP_ALIVE,))
    )
    responses = None
    if raw.get("response") is not None:
        responses = unique(_response(v, f"{where}.response") for v in values("response", ()))
    threads = raw.get("thread_counts")
    connections = raw.get("connection_counts")
    servers = raw.get("servers")
    return WorkloadFamily(
        name=name,
        work_us=work,
        block_us=block,
        block_dist=dists,
        idle_connections=idle,
        connection_mode=modes,
        response=responses,
        thread_counts=None if threads is None else _thread_counts(threads, server_cpu_count, f"{where}.thread_counts"),
        connection_counts=None if connections is None else positive_ints(connections, f"{where}.connection_counts"),
        servers=None if servers is None else parse_servers(servers, server_cpu_count, f"{where}.servers"),
    )


def _microseconds(value: Any, parameter: str) -> int:
    number = non_negative_int(value, parameter)
    if number > MAX_WORK_US:
        raise ParameterError(parameter, f"{number} is above {MAX_WORK_US} (one second per request, the servers' bound)")
    return number


def _choice(value: Any, choices: tuple[str, ...], parameter: str) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ParameterError(parameter, f"{value!r} is not one of {', '.join(choices)}")
    return value


def _response(value: Any, parameter: str) -> str:
    if not isinstance(value, str):
        raise ParameterError(parameter, f"{value!r} is not a --response value (test, hello, file:PATH or bytes:N)")
    problem = check_response(value)
    if problem:
        raise ParameterError(parameter, problem)
    return value


def _thread_counts(raw: Any, server_cpu_count: int, parameter: str) -> tuple[int, ...]:
    """A thread list ("cpus" items: the server's CPU count) or an "auto" sweep (archbench.config.topology)."""
    raw = with_cpu_count(raw, server_cpu_count, parameter)
    sweep = auto_sweep(raw, server_cpu_count)
    return sweep if sweep is not None else positive_ints(raw, parameter)


def check_workloads(families: tuple[WorkloadFamily, ...], *, proto: str, load_generator: str, placement: str) -> None:
    """What no family may ask of this campaign: workloads under proto echo, one request per connection with another
    load generator than wrk, idle connections where idle_holder cannot run beside the load generator (ssh)."""
    if not families:
        return
    if proto != "http":
        raise ParameterError("workloads", f"apply to proto http only (proto is {proto}: echo servers take none)")
    for i, family in enumerate(families):
        if CLOSE in family.connection_mode and load_generator not in CLOSE_LOAD_GENERATORS:
            raise ParameterError(
                f"workloads[{i}].connection_mode",
                f"close (one request per connection) is measured with {' or '.join(CLOSE_LOAD_GENERATORS)}, "
                f"not the campaign's load_generator {load_generator}",
            )
        if placement == "ssh" and any(family.idle_connections):
            raise ParameterError(
                f"workloads[{i}].idle_connections",
                "idle connections need placement loopback or netns (idle_holder runs beside the load generator; "
                "placement ssh runs only wrk on the client hosts)",
            )


def check_family_sweeps(
    families: tuple[WorkloadFamily, ...],
    specs: Mapping[str, ServerSpec],
    thread_counts: tuple[int, ...],
    connection_counts: tuple[int, ...],
) -> None:
    """A family's own servers need thread and connection counts from somewhere: their own, the family's or the
    campaign's."""
    for i, family in enumerate(families):
        for j, entry in enumerate(family.servers or ()):
            where = f"workloads[{i}].servers[{j}]"
            if specs[entry.architecture].takes_threads and not (entry.threads or family.thread_counts or thread_counts):
                raise ParameterError(
                    f"{where}.threads", "needed: neither the family nor the campaign has thread_counts"
                )
            if not (entry.connections or family.connection_counts or connection_counts):
                raise ParameterError(
                    f"{where}.connections", "needed: neither the family nor the campaign has connection_counts"
                )


# --------------------------------------------------------------------------- what applies where


def connection_capacity(config: Mapping[str, Any]) -> tuple[int, str] | None:
    """How many connections an architecture can hold while answering each, and why, when it owns them with a
    thread or worker until they close; None when it has no such bound of its own."""
    architecture = config.get("architecture")
    if architecture == "blocking":
        return 1, "it serves one connection at a time"
    if architecture == "thread_pool" and config.get("dispatch") == "connection":
        threads = int(config.get("threads") or 1)
        return threads, f"with dispatch connection each of its {threads} workers owns a connection until it closes"
    if architecture == "thread_per_conn" and config.get("max_threads"):
        cap = int(config["max_threads"])
        return cap, f"its --max-threads {cap} caps the connections it serves at once"
    return None


def exclusion_reason(spec: ServerSpec, config: Mapping[str, Any]) -> str | None:
    """Why a configuration (a config dict, `TrialConfig.as_dict`) cannot measure its workload on this server, or
    None when it can."""
    if (config.get("work_us") or config.get("block_us")) and not spec.takes_work:
        if spec.upper_bound:
            return f"{spec.name} is the reference floor: it answers without doing any work (no --work-us, --block-us)"
        return f"{spec.name} has no per-request work or blocking call to configure (no --work-us, --block-us)"
    if config.get("connection_mode") == CLOSE:
        if not spec.closes_on_request:
            return (
                f"{spec.name} never parses a request, so it ignores Connection: close and keeps its connections: "
                "one request per connection cannot be measured on it"
            )
        if int(config.get("pipeline") or 1) > 1:
            return "one request per connection leaves nothing to pipeline"
        if config.get("load_generator") not in CLOSE_LOAD_GENERATORS:
            return f"one request per connection is measured with wrk, not {config.get('load_generator')}"
    idle = int(config.get("idle_connections") or 0)
    capacity = connection_capacity(config) if idle else None
    if capacity is not None and capacity[0] < idle + int(config["connections"]):
        return (
            f"{capacity[1]}: {idle} idle connections beside {config['connections']} active ones would not all be "
            "answered (the rest wait for a timeout)"
        )
    return None


def server_seed(campaign_seed: int | None, trial_id: str) -> int:
    """The --seed of a trial's exponential waits: from the campaign's seed and the trial, so that a trial run again
    draws the same waits and two trials draw different ones."""
    digest = hashlib.sha256(f"{campaign_seed}/{trial_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & SEED_MASK


def command_config(config: Mapping[str, Any], campaign_seed: int | None, trial_id: str) -> dict[str, Any]:
    """The config a trial's server command is built from: the record's, with the trial's `seed` where the server
    draws its waits (block_us > 0, block_dist exp), which `archbench.config.server_spec.workload_flags` passes as
    --seed."""
    out = dict(config)
    if config.get("block_us") and config.get("block_dist") == "exp":
        out["seed"] = server_seed(campaign_seed, trial_id)
    return out


# --------------------------------------------------------------------------- workload points

# The settings that make a workload point, with their defaults (a record carries a setting only where it differs):
# the designs measured at one point, with the same connections and pipeline depth, are compared with each other.
POINT_DEFAULTS: dict[str, Any] = {
    "work_us": 0,
    "block_us": 0,
    "block_dist": "fixed",
    "idle_connections": 0,
    "connection_mode": KEEP_ALIVE,
    "response": "test",
}
POINT_FIELDS = (*POINT_DEFAULTS, "connections", "pipeline")
_LOAD_DEFAULTS = {"pipeline": 1}  # a record before pipelining carried no depth


def _setting(config: Mapping[str, Any], name: str) -> Any:
    """A point setting of a config (a record's or a table row's): missing, None or NaN mean the default."""
    value = config.get(name)
    if value is None or (isinstance(value, float) and value != value):
        return POINT_DEFAULTS.get(name, _LOAD_DEFAULTS.get(name))
    return value


def _text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)


def point_key(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The workload point a configuration belongs to, as grouping text (POINT_FIELDS order)."""
    return tuple(_text(_setting(config, name)) for name in POINT_FIELDS)


def point_label(config: Mapping[str, Any]) -> str:
    """A workload point's short name: the settings that differ from the default, e.g. "work 10 us", "block 1000
    us", "idle 8000", "close", "bytes:16384"; "baseline" where none does."""
    parts = []
    work, block = float(_setting(config, "work_us") or 0), float(_setting(config, "block_us") or 0)
    if work > 0:
        parts.append(f"work {int(work)} us")
    if block > 0:
        dist = _text(_setting(config, "block_dist"))
        parts.append(f"block {int(block)} us" + ("" if dist in ("", "fixed") else f" {dist}"))
    if float(_setting(config, "idle_connections") or 0) > 0:
        parts.append(f"idle {int(float(_setting(config, 'idle_connections')))}")
    if _text(_setting(config, "connection_mode")) == "close":
        parts.append("close")
    if _text(_setting(config, "response")) not in ("", "test"):
        parts.append(_text(_setting(config, "response")))
    return ", ".join(parts) or "baseline"
