"""Campaign parameters: one dataclass, built from a profile plus explicit overrides, validated up front.

Every validation failure is a `ParameterError` (a ValueError) whose message
starts with the parameter's name, so a notebook or the command line fails
before any server starts and says which value to fix. `validate` runs one
small validator per group of parameters in a fixed order (the value coercions
they share are in `archbench.config.values`); the shapes of a profile file and
of campaign.json's "parameters" are `archbench.config.parameter_model`.

`servers` entries are architecture names or, for per-architecture variants
and sweeps, mappings (or the command-line form `ARCH:key=v1/v2,key=v`):

    "blocking"
    {"architecture": "thread_pool", "dispatch": ["request", "connection"], "threads": [2, 8]}
    "thread_pool:dispatch=connection,handoff=stack,threads=2/8,connections=100"

`threads`, `connections` and `pipeline` inside an entry replace the
campaign-wide `thread_counts` / `connection_counts` / `pipeline_depths` for that
entry only. `threads` is the architecture's parallelism, worker threads or
worker processes (see `archbench.config.servers.ServerSpec.threads_flag`).

`workloads` lists workload families (per-request work, blocking calls, idle connections, one request per
connection, response sizes), each expanded on its own over the servers: `archbench.config.workloads`.

CPU placement follows the machine (`archbench.config.topology`): `server_cpus` and
`load_cpus` default to "auto", the topology's default split, resolved here so that
campaign.json records the CPU lists used (and `cpu_topology` what they came from);
`load_threads` "auto" is the load CPU count, fitted per configuration to its
connections; `thread_counts` and an entry's `threads` may be "auto" (or "auto:N")
for a sweep that scales with the server's CPUs (`topology.thread_sweep`).
"""

from __future__ import annotations

import dataclasses
import json
import re
import resource
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from archbench.config.hosts import InventoryError, load_inventory
from archbench.config.loadgen import (
    check_httperf_load,
    httperf_pipeline_depths,
    httperf_values,
    load_generators,
    open_loop_generators,
)
from archbench.config.parameter_model import LATER_PARAMETER_DEFAULTS
from archbench.config.paths import RAW_MANIFEST_DIR
from archbench.config.profiles import PROFILE_NAMES, profile_values
from archbench.config.server_entry import (  # parse_server_entry: re-exported, where callers have found it
    ServerEntry,
    entry_mapping_from_text,
    parse_servers,
)
from archbench.config.server_entry import parse_server_entry as parse_server_entry
from archbench.config.servers import PROTOCOLS, check_response, server_specs
from archbench.config.topology import (
    AUTO,
    CpuSplit,
    CpuTopology,
    TopologySummary,
    auto_sweep,
    check_usable,
    read_topology,
    split_cpus,
    with_cpu_count,
)
from archbench.config.values import (
    ParameterError,
    boolean,
    format_cpu_list,
    non_negative_int,
    parse_cpu_list,
    positive_float,
    positive_floats,
    positive_int,
    positive_ints,
)
from archbench.config.workloads import WorkloadFamily, check_family_sweeps, check_workloads, parse_workloads

SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# What adaptive repetition's ci_target bounds (archbench.measure.adaptive: MEAN_, PAIRED_, PAIRED_MEDIAN_CRITERION).
ADAPTIVE_CRITERIA = ("mean", "paired", "paired_median")
ARRIVALS = ("fixed", "poisson")
# The campaign-wide sweep that replaces each per-entry one when given explicitly.
CAMPAIGN_SWEEPS = {"threads": "thread_counts", "connections": "connection_counts", "pipeline": "pipeline_depths"}
# Parameters that do not change what a campaign measures, so a re-run may differ in them. The CPU lists
# themselves are identity; the topology they came from, and whether load_threads was "auto" (which only
# fits the counts per configuration, as an explicit list must already fit), are not.
NOT_IDENTITY = ("campaign", "raw_root", "cpu_topology", "load_threads_auto", "baseline_s")
# Open files each trial needs beyond one per connection, in the server and in wrk alike
# (listening socket, epoll and event descriptors, pipes, libraries, nginx's logs).
FD_HEADROOM = 256
# echo_client --sources K binds to 127.0.0.(1 + i mod K): K at most 254 stays inside 127.0.0.1-254.
MAX_SOURCES = 254
DEFAULT_INTERFERENCE_SHARE = LATER_PARAMETER_DEFAULTS["interference_share"]
DEFAULT_MAX_RERUNS = LATER_PARAMETER_DEFAULTS["max_reruns"]


def default_campaign_name(profile: str) -> str:
    host = re.sub(r"[^A-Za-z0-9._-]", "-", socket.gethostname().split(".")[0]) or "host"
    return f"{profile}-{host}"


# --------------------------------------------------------------------------- the parameters


@dataclass(frozen=True)
class Parameters:
    """Everything that defines a campaign. Build with `resolve_parameters`, which validates."""

    profile: str = "default"
    campaign: str = ""
    servers: tuple[ServerEntry, ...] = ()
    thread_counts: tuple[int, ...] = ()  # worker threads or worker processes, per architecture
    connection_counts: tuple[int, ...] = ()
    load_threads: tuple[int, ...] = (1,)
    pipeline_depths: tuple[int, ...] = (1,)  # requests per connection per write (wrk's pipeline.lua when > 1)
    duration_s: int = 3
    trials: int = 5
    warmup: bool = True
    # Seconds of the same load against the same server process after its ready line (and the idle connections'
    # hold) and before the measured window, so that the window sees the steady state (archbench.measure.warmup);
    # 0: none. Unlike `warmup` (a whole trial, discarded, on a server process of its own) it warms the measured one.
    warmup_s: int = 0
    server_cpus: str = "0"
    load_cpus: str = "1"
    seed: int | None = None  # None: chosen when the campaign is created, then recorded
    wrk_timeout_s: int = 2
    ready_timeout_s: float = 5.0
    stop_grace_s: float = 5.0
    response: str = "test"
    load_generator: str = "wrk"
    raw_root: str = "data/raw"
    build_dir: str = "build"
    # Echo (source 004's workload): the servers run --proto echo, echo_client is the load.
    proto: str = "http"  # http | echo
    message_size: int = 64  # echo: bytes per message
    sources: int = 0  # echo: bind connection i to 127.0.0.(1 + i mod K); 0: no bind
    connect_rate: int = 0  # echo: connections opened per second; 0: all at once
    max_conns_cap: int | None = None  # echo: also one --max-conns trial per server variant, up to this cap (0: none)
    max_conns_duration_s: int = 60  # echo: the longest a --max-conns ramp may take
    # Open loop (oha, wrk2): offered rates, absolute or as fractions of a saturation throughput.
    rate_fractions: tuple[float, ...] = ()
    offered_rates: tuple[int, ...] = ()  # requests/s in total over all connections
    saturation_rates: tuple[tuple[str, float], ...] = ()  # saturation key (plan.saturation_key) -> req/s
    rate_reference: str | None = None  # fractions of this key's saturation for every configuration
    saturation_source: str | None = None  # where saturation_rates came from (campaign, statistic)
    arrival: str = "fixed"  # open_loop's schedule: "fixed" (evenly spaced) or "poisson"
    # Adaptive repetition (archbench.measure.adaptive): more trials until the 95% CI half-width of the
    # mean throughput is at most ci_target % of the mean, or a configuration has max_trials.
    ci_target: float | None = None
    max_trials: int | None = None
    # What ci_target bounds: "mean" (each configuration's mean throughput, above), "paired" (every paired ratio
    # to the reference the report compares, in whole rounds) or "paired_median" (their median); and an optional
    # wall-time budget of the adaptive phase in seconds (archbench.measure.adaptive).
    adaptive_criterion: str = "mean"
    adaptive_budget_s: float | None = None
    # Selection of the best per workload point (archbench.measure.selection, archbench.stats.selection): with an
    # indifference zone selection_delta (a fraction), rounds are added after the planned ones only where a point is
    # still open, up to selection_max_rounds rounds per point, within selection_budget_s seconds if set.
    selection_delta: float | None = None
    selection_max_rounds: int | None = None
    selection_budget_s: float | None = None
    # httperf's workload (archbench.config.loadgen.Httperf): --num-calls, --rate (0: none), --hog.
    httperf_calls: int = 1
    httperf_rate: int = 0
    httperf_hog: bool = True
    baseline_s: int = 2  # iperf3 bandwidth baseline at campaign creation (archbench.measure.baseline); 0: none
    # Where the server and the load generator run (archbench.measure.placement): both on this host over
    # loopback, or each in its own network namespace joined by a veth pair, optionally shaped by a link model
    # ("<rate>" or "<rate> <delay>", tc's units, e.g. "1gbit" or "1gbit 50us").
    placement: str = "loopback"
    link: str | None = None
    # placement ssh: the hosts inventory (archbench.config.hosts), server and client hosts reached by ssh.
    hosts: str | None = None
    # load_threads was "auto": load_threads holds the load CPU count, and each configuration runs the most
    # wrk threads up to it that divide its connections (archbench.config.topology.fitting_load_threads).
    load_threads_auto: bool = False
    # The topology the CPU lists were resolved on (None in campaigns recorded before it was).
    cpu_topology: TopologySummary | None = None
    # Workload families (archbench.config.workloads), each expanded on its own; () : the plain grid.
    workloads: tuple[WorkloadFamily, ...] = ()
    # Interference (archbench.measure.interference): a trial is disturbed when other work, steal or uncounted
    # ticks took this share of either CPU set's ticks during its load; the runner then runs it again in its round,
    # up to max_reruns times (archbench.measure.reruns). 0.10 passes every quiet trial of the shipped campaigns
    # and catches a busy loop pinned beside the server.
    interference_share: float = DEFAULT_INTERFERENCE_SHARE
    max_reruns: int = DEFAULT_MAX_RERUNS

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form, as stored in campaign.json."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["servers"] = [entry.to_dict() for entry in self.servers]
        for name in (
            "thread_counts",
            "connection_counts",
            "load_threads",
            "pipeline_depths",
            "rate_fractions",
            "offered_rates",
        ):
            out[name] = list(out[name])
        out["saturation_rates"] = dict(self.saturation_rates)
        out["cpu_topology"] = None if self.cpu_topology is None else self.cpu_topology.to_dict()
        out["workloads"] = [family.to_dict() for family in self.workloads]
        return out

    def identity(self) -> dict[str, Any]:
        """The values that must match when a campaign is run again."""
        return {k: v for k, v in self.to_dict().items() if k not in NOT_IDENTITY}

    def with_seed(self, seed: int) -> Parameters:
        return dataclasses.replace(self, seed=seed)


FIELD_NAMES = tuple(f.name for f in dataclasses.fields(Parameters))


def resolve_parameters(
    profile: str = "default", *, check_host: bool = True, topology: CpuTopology | None = None, **overrides: Any
) -> Parameters:
    """Profile defaults, then the explicit overrides (None = not given), validated.

    `check_host` also checks the CPU sets against the usable CPUs and the open-file limit; turn it off
    only to plan for another machine. `topology` is the machine "auto" values are resolved on (default:
    this one's, `archbench.config.topology.read_topology`).
    """
    if profile not in PROFILE_NAMES:
        raise ParameterError("profile", f"{profile!r} is not one of {', '.join(PROFILE_NAMES)}")
    unknown = sorted(set(overrides) - set(FIELD_NAMES) - {"profile"})
    if unknown:
        raise ParameterError(unknown[0], f"unknown parameter; valid: {', '.join(FIELD_NAMES)}")
    given = {k: v for k, v in overrides.items() if v is not None and k != "profile"}

    values: dict[str, Any] = profile_values(profile)
    if "servers" not in given:
        # An explicit campaign-wide sweep replaces the per-entry sweeps of the profile's servers.
        replaced = {key for key, parameter in CAMPAIGN_SWEEPS.items() if parameter in given}
        values["servers"] = [_without_sweeps(s, replaced) for s in values["servers"]]
    values.update(given)
    values["profile"] = profile
    return validate(values, check_host=check_host, topology=topology)


def _without_sweeps(spec: str | Mapping[str, Any] | ServerEntry, keys: set[str]) -> Any:
    """A server entry without the given per-entry sweeps, still in its raw form: an "auto" sweep is
    resolved by `validate`, which knows the server's CPUs."""
    if not keys:
        return spec
    if isinstance(spec, ServerEntry):
        return spec.without_sweeps(
            threads="threads" in keys, connections="connections" in keys, pipeline="pipeline" in keys
        )
    mapping = entry_mapping_from_text(spec, "servers") if isinstance(spec, str) else spec
    if not isinstance(mapping, Mapping):
        return spec  # not an entry at all: validate names the problem
    return {key: value for key, value in mapping.items() if key not in keys}


def validate(values: Mapping[str, Any], *, check_host: bool = True, topology: CpuTopology | None = None) -> Parameters:
    """Coerce and check raw values into Parameters, failing on the first bad one.

    The groups run in a fixed order, so when several values are wrong the same one is reported every time.
    The CPU sets come first: "auto" sweeps scale with the server's CPUs.
    """
    v = dict(values)
    profile = _profile(v)
    cpus = _cpu_sets(v, check_host, topology)
    server_cpu_count = len(parse_cpu_list(cpus["server_cpus"], "server_cpus"))
    servers = _servers(v, server_cpu_count)
    sweeps = _sweeps(v, servers, server_cpu_count, len(parse_cpu_list(cpus["load_cpus"], "load_cpus")))
    workloads = parse_workloads(v.get("workloads"), server_cpu_count)
    if not sweeps["load_threads_auto"]:
        _check_load_threads(sweeps["connection_counts"], sweeps["load_threads"], servers)
        for family in workloads:
            _check_load_threads(family.connection_counts or (), sweeps["load_threads"], family.servers or ())
    check_family_sweeps(workloads, server_specs(), sweeps["thread_counts"], sweeps["connection_counts"])
    if check_host:
        _check_open_file_limit(sweeps["connection_counts"], servers)
        _check_idle_open_files(workloads, sweeps["connection_counts"], servers)
    duration_s = positive_int(v.get("duration_s", 3), "duration_s")
    warmup = boolean(v.get("warmup", True), "warmup")
    warmup_s = non_negative_int(0 if v.get("warmup_s") is None else v["warmup_s"], "warmup_s")
    seed = _seed(v.get("seed"))
    response = _response(v)
    load = _load_values(v, servers)
    echo = _echo_values(v, load["proto"])
    open_loop = _open_loop_values(v, load_generators()[load["load_generator"]].open_loop, load["load_generator"])
    if open_loop["rate_fractions"] or open_loop["offered_rates"]:
        _check_closed_loop_depths(sweeps["pipeline_depths"], servers, load["load_generator"])
    if check_host and echo["max_conns_cap"] is not None:
        _check_open_file_limit((echo["max_conns_cap"],), (), parameter="max_conns_cap")
    trials = positive_int(v.get("trials", 5), "trials")
    adaptive = _adaptive_values(v, trials)
    httperf_depths = httperf_pipeline_depths(servers, load["load_generator"], sweeps["pipeline_depths"])
    httperf = httperf_values(v, used=bool(httperf_depths))
    if httperf_depths:
        check_httperf_load(sweeps["load_threads"], sweeps["load_threads_auto"], httperf_depths)
    campaign = _campaign(v, profile)
    placement = _placement(v)
    _check_warmup_s(warmup_s, placement["placement"], bool(httperf_depths))
    check_workloads(
        workloads, proto=load["proto"], load_generator=load["load_generator"], placement=placement["placement"]
    )
    return Parameters(
        profile=profile,
        campaign=campaign,
        servers=servers,
        **sweeps,
        duration_s=duration_s,
        trials=trials,
        warmup=warmup,
        warmup_s=warmup_s,
        **cpus,
        seed=seed,
        wrk_timeout_s=positive_int(v.get("wrk_timeout_s", 2), "wrk_timeout_s"),
        baseline_s=non_negative_int(2 if v.get("baseline_s") is None else v["baseline_s"], "baseline_s"),
        ready_timeout_s=positive_float(v.get("ready_timeout_s", 5.0), "ready_timeout_s"),
        stop_grace_s=positive_float(v.get("stop_grace_s", 5.0), "stop_grace_s"),
        response=response,
        raw_root=str(v.get("raw_root") or "data/raw"),
        build_dir=str(v.get("build_dir") or "build"),
        **load,
        **echo,
        **open_loop,
        **adaptive,
        **_selection_values(v, trials, bool(open_loop["rate_fractions"] or open_loop["offered_rates"])),
        **httperf,
        **placement,
        workloads=workloads,
        **_interference_values(v),
    )


# --------------------------------------------------------------------------- validators, one per group

PLACEMENTS = ("loopback", "netns", "ssh")
LINK_PATTERN = re.compile(r"(?P<rate>\d+(?:\.\d+)?[kmg]?bit)(?: (?P<delay>\d+(?:\.\d+)?(?:us|ms|s)))?")


def _placement(v: Mapping[str, Any]) -> dict[str, Any]:
    """placement (loopback | netns | ssh), its link model (netns only): "<rate>" or "<rate> <delay>", and
    its hosts inventory (ssh only, required there)."""
    placement = v.get("placement") or "loopback"
    if placement not in PLACEMENTS:
        raise ParameterError("placement", f"{placement!r} is not one of {', '.join(PLACEMENTS)}")
    hosts = _hosts(v.get("hosts"), placement)
    link = v.get("link")
    if link in (None, ""):
        return {"placement": placement, "link": None, "hosts": hosts}
    if placement != "netns":
        raise ParameterError("link", f"a link model needs placement netns (placement is {placement})")
    text = " ".join(str(link).split()).lower()
    if not LINK_PATTERN.fullmatch(text):
        raise ParameterError("link", f"{link!r} is not '<rate>' or '<rate> <delay>' (e.g. '1gbit' or '1gbit 50us')")
    return {"placement": placement, "link": text, "hosts": hosts}


def _check_warmup_s(warmup_s: int, placement: str, httperf_used: bool) -> None:
    """A warm-up runs the trial's load generator for warmup_s seconds first: it needs a generator with a duration
    (httperf has none) and one client on this machine (placement ssh starts one wrk per client host at an agreed
    instant; a warm-up there is not implemented)."""
    if not warmup_s:
        return
    if placement == "ssh":
        raise ParameterError("warmup_s", f"{warmup_s}: placement ssh runs no warm-up; set warmup_s to 0")
    if httperf_used:
        raise ParameterError(
            "warmup_s", f"{warmup_s}: httperf has no duration to run a warm-up for; set warmup_s to 0 or use wrk"
        )


def _hosts(value: Any, placement: str) -> str | None:
    """The inventory path, read once here so that a bad file is an error before anything is planned."""
    if value in (None, ""):
        if placement == "ssh":
            raise ParameterError("hosts", "placement ssh needs a hosts inventory (--hosts FILE, make HOSTS=FILE)")
        return None
    if placement != "ssh":
        raise ParameterError("hosts", f"a hosts inventory needs placement ssh (placement is {placement})")
    try:
        load_inventory(str(value))
    except InventoryError as error:
        raise ParameterError("hosts", str(error)) from None
    return str(value)


def _profile(v: Mapping[str, Any]) -> str:
    profile = v.get("profile", "default")
    if profile not in PROFILE_NAMES:
        raise ParameterError("profile", f"{profile!r} is not one of {', '.join(PROFILE_NAMES)}")
    return profile


def _servers(v: Mapping[str, Any], server_cpu_count: int) -> tuple[ServerEntry, ...]:
    """servers: one entry, a list, or a JSON list; duplicates kept once, order kept; "auto" threads resolved."""
    return parse_servers(v.get("servers"), server_cpu_count, "servers")


def _sweeps(
    v: Mapping[str, Any], servers: tuple[ServerEntry, ...], server_cpu_count: int, load_cpu_count: int
) -> dict[str, Any]:
    """thread_counts and connection_counts (needed only by entries without their own sweep),
    load_threads (and whether it was "auto") and pipeline_depths."""
    specs = server_specs()
    needs_threads = any(specs[s.architecture].takes_threads and s.threads is None for s in servers)
    raw_threads = with_cpu_count(v.get("thread_counts"), server_cpu_count, "thread_counts")
    auto_threads = auto_sweep(raw_threads, server_cpu_count)
    if auto_threads is not None:
        thread_counts = auto_threads
    else:
        thread_counts = positive_ints(raw_threads, "thread_counts") if raw_threads else ()
    if needs_threads and not thread_counts:
        without = sorted({s.architecture for s in servers if specs[s.architecture].takes_threads and s.threads is None})
        raise ParameterError("thread_counts", f"needed by {', '.join(without)} entries without their own threads")
    needs_connections = any(s.connections is None for s in servers)
    connection_counts = positive_ints(v["connection_counts"], "connection_counts") if v.get("connection_counts") else ()
    if needs_connections and not connection_counts:
        raise ParameterError("connection_counts", "must not be empty")
    load_threads, load_threads_auto = _load_threads(v, load_cpu_count)
    raw_depths = v.get("pipeline_depths")
    pipeline_depths = (1,) if raw_depths is None else positive_ints(raw_depths, "pipeline_depths")
    return {
        "thread_counts": thread_counts,
        "connection_counts": connection_counts,
        "load_threads": load_threads,
        "pipeline_depths": pipeline_depths,
        "load_threads_auto": load_threads_auto,
    }


def _load_threads(v: Mapping[str, Any], load_cpu_count: int) -> tuple[tuple[int, ...], bool]:
    """load_threads: "auto" (the default) is one wrk thread per load CPU; a stored campaign keeps the
    resolved count with load_threads_auto, so it re-validates to the same thing."""
    raw = v.get("load_threads", AUTO)
    if raw == AUTO or (isinstance(raw, (list, tuple)) and list(raw) == [AUTO]):
        return (load_cpu_count,), True
    load_threads = positive_ints(raw, "load_threads")
    if boolean(v.get("load_threads_auto", False), "load_threads_auto"):
        if len(load_threads) != 1:
            raise ParameterError("load_threads", f"{list(load_threads)}: load_threads_auto needs one count")
        return load_threads, True
    return load_threads, False


def _check_load_threads(
    connection_counts: tuple[int, ...], load_threads: tuple[int, ...], servers: tuple[ServerEntry, ...]
) -> None:
    """wrk splits the connections evenly over its threads: every connection count must allow that."""
    all_connections = set(connection_counts)
    for entry in servers:
        all_connections.update(entry.connections or ())
    for connections in sorted(all_connections):
        for threads in load_threads:
            if connections < threads:
                raise ParameterError(
                    "load_threads", f"{threads} load threads exceed {connections} connections (wrk needs c >= t)"
                )
            if connections % threads:
                raise ParameterError(
                    "load_threads",
                    f"{connections} connections are not a multiple of {threads} load threads "
                    f"(wrk would open only {connections // threads * threads})",
                )


def _cpu_sets(v: Mapping[str, Any], check_host: bool, topology: CpuTopology | None) -> dict[str, Any]:
    """server_cpus and load_cpus: "auto" (the default) from the topology's split, or valid lists, usable
    here (check_host), disjoint; with cpu_topology, the summary of the topology they came from."""
    raw_server = AUTO if v.get("server_cpus") is None else v["server_cpus"]
    raw_load = AUTO if v.get("load_cpus") is None else v["load_cpus"]
    recorded = v.get("cpu_topology")
    if not check_host and AUTO not in (raw_server, raw_load):  # e.g. a stored campaign, from any machine
        split = None
        server_cpus = parse_cpu_list(raw_server, "server_cpus")
        load_cpus = parse_cpu_list(raw_load, "load_cpus")
    else:
        split = split_cpus(topology or read_topology(), raw_server, raw_load)
        if check_host:
            check_usable(split)
        server_cpus, load_cpus = split.server_cpus, split.load_cpus
    overlap = set(server_cpus) & set(load_cpus)
    if overlap:
        raise ParameterError(
            "load_cpus",
            f"overlaps server_cpus on CPU {format_cpu_list(overlap)}; the two sets must be disjoint "
            "(list other CPUs, or leave load_cpus unset: auto takes the CPUs server_cpus leaves)",
        )
    return {
        "server_cpus": format_cpu_list(server_cpus),
        "load_cpus": format_cpu_list(load_cpus),
        "cpu_topology": _topology_summary(recorded, split),
    }


def _topology_summary(recorded: Any, split: CpuSplit | None) -> TopologySummary | None:
    """The recorded summary when the values carry one (a stored campaign), else the split's."""
    if isinstance(recorded, TopologySummary):
        return recorded
    if isinstance(recorded, Mapping):
        try:
            return TopologySummary(**recorded)
        except TypeError:
            raise ParameterError("cpu_topology", f"{dict(recorded)!r} is not a topology summary") from None
    return None if split is None else TopologySummary.of(split)


def _seed(seed: Any) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, str) and re.fullmatch(r"\d+", seed):
        seed = int(seed)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ParameterError("seed", f"{seed!r} is not a non-negative integer")
    return seed


def _response(v: Mapping[str, Any]) -> str:
    response = str(v.get("response", "test"))
    problem = check_response(response)
    if problem:
        raise ParameterError("response", problem)
    return response


def _load_values(v: Mapping[str, Any], servers: tuple[ServerEntry, ...]) -> dict[str, str]:
    """proto and load_generator (echo_client for echo, else wrk), which must speak it, as every server must."""
    proto = v.get("proto") or "http"
    if proto not in PROTOCOLS:
        raise ParameterError("proto", f"{proto!r} is not one of {', '.join(PROTOCOLS)}")
    load_generator = v.get("load_generator") or ("echo_client" if proto == "echo" else "wrk")
    generators = load_generators()
    if load_generator not in generators:
        raise ParameterError("load_generator", f"{load_generator!r}; valid: {', '.join(generators)}")
    if generators[load_generator].protocol != proto:
        speaking = [name for name, g in generators.items() if g.protocol == proto]
        raise ParameterError(
            "load_generator", f"{load_generator} does not speak {proto}; for proto {proto} use {' or '.join(speaking)}"
        )
    specs = server_specs()
    for index, entry in enumerate(servers):
        if not specs[entry.architecture].serves(proto):
            raise ParameterError(f"servers[{index}]", f"{entry.architecture} does not serve proto {proto}")
        own = generators.get(entry.load_generator or load_generator)
        if entry.load_generator and own is not None and (own.protocol != proto or own.open_loop):
            raise ParameterError(
                f"servers[{index}].load_generator",
                f"{entry.load_generator} must speak {proto} in a closed loop (open-loop generators are campaign-wide)",
            )
    return {"proto": proto, "load_generator": load_generator}


def _check_closed_loop_depths(
    pipeline_depths: tuple[int, ...], servers: tuple[ServerEntry, ...], load_generator: str
) -> None:
    """Offered rates come from oha or wrk2, which cannot pipeline."""
    deep = [d for d in pipeline_depths if d != 1] + [d for e in servers for d in (e.pipeline or ()) if d != 1]
    if deep:
        raise ParameterError(
            "pipeline_depths",
            f"{load_generator} sends one request at a time per connection; "
            f"pipeline depth {deep[0]} is wrk's (with pipeline.lua)",
        )


def _campaign(v: Mapping[str, Any], profile: str) -> str:
    campaign = v.get("campaign") or default_campaign_name(profile)
    if not isinstance(campaign, str) or not SAFE_NAME.fullmatch(campaign):
        raise ParameterError(
            "campaign", f"{campaign!r} is not a file-system-safe name ([A-Za-z0-9._-], no leading dot)"
        )
    if campaign == RAW_MANIFEST_DIR:
        raise ParameterError("campaign", f"{campaign!r} is data/raw's directory of checksum manifests")
    return campaign


def _echo_values(v: Mapping[str, Any], proto: str) -> dict[str, Any]:
    """message_size, sources, connect_rate, max_conns_cap, max_conns_duration_s (echo only)."""
    sources = non_negative_int(v.get("sources", 0) or 0, "sources")
    if sources > MAX_SOURCES:
        raise ParameterError(
            "sources", f"{sources} source addresses exceed 127.0.0.1-{MAX_SOURCES} (at most {MAX_SOURCES})"
        )
    cap = v.get("max_conns_cap")
    values = {
        "message_size": positive_int(v.get("message_size", 64), "message_size"),
        "sources": sources,
        "connect_rate": non_negative_int(v.get("connect_rate", 0) or 0, "connect_rate"),
        # 0 turns the --max-conns trials off (None would mean "not given": the profile's value).
        "max_conns_cap": None if cap is None or cap == 0 else positive_int(cap, "max_conns_cap"),
        "max_conns_duration_s": positive_int(v.get("max_conns_duration_s", 60), "max_conns_duration_s"),
    }
    if proto != "echo":
        for name, default in (("max_conns_cap", None), ("sources", 0), ("connect_rate", 0)):
            if values[name] != default:
                raise ParameterError(name, f"applies to proto echo only (proto is {proto})")
    return values


def _open_loop_values(v: Mapping[str, Any], open_loop: bool, load_generator: str) -> dict[str, Any]:
    """rate_fractions, offered_rates, saturation_rates, rate_reference, saturation_source."""
    fractions = positive_floats(v["rate_fractions"], "rate_fractions") if v.get("rate_fractions") else ()
    rates = positive_ints(v["offered_rates"], "offered_rates") if v.get("offered_rates") else ()
    raw = v.get("saturation_rates") or {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise ParameterError("saturation_rates", f"{raw!r} is not a JSON object") from None
    if isinstance(raw, (list, tuple)):
        raw = dict(raw)
    if not isinstance(raw, Mapping):
        raise ParameterError("saturation_rates", f"{raw!r} is not a mapping of saturation key to requests/s")
    saturation = tuple((str(key), positive_float(rate, f"saturation_rates[{key!r}]")) for key, rate in raw.items())
    reference = v.get("rate_reference")
    if reference is not None and reference not in dict(saturation):
        raise ParameterError(
            "rate_reference",
            f"{reference!r} is not a key of saturation_rates ({', '.join(k for k, _ in saturation) or 'none'})",
        )
    if open_loop and not (fractions or rates):
        raise ParameterError(
            "rate_fractions",
            f"{load_generator} offers a fixed rate: give rate_fractions (with saturation_rates) or offered_rates",
        )
    if not open_loop and (fractions or rates):
        name = "rate_fractions" if fractions else "offered_rates"
        raise ParameterError(
            name,
            f"{load_generator} is a closed loop; offered rates need load_generator "
            f"{' or '.join(open_loop_generators())}",
        )
    source = v.get("saturation_source")
    arrival = v.get("arrival") or "fixed"
    if arrival not in ARRIVALS:
        raise ParameterError("arrival", f"{arrival!r}; valid: {', '.join(ARRIVALS)}")
    if arrival != "fixed" and open_loop and load_generator != "open_loop":
        raise ParameterError(
            "arrival",
            f"{arrival}: only the open_loop client draws its schedule ({load_generator} spaces requests evenly); "
            "use load_generator open_loop or arrival fixed",
        )
    return {
        "arrival": arrival,
        "rate_fractions": fractions,
        "offered_rates": rates,
        "saturation_rates": saturation,
        "rate_reference": reference,
        "saturation_source": None if source is None else str(source),
    }


def _adaptive_values(v: Mapping[str, Any], trials: int) -> dict[str, Any]:
    """ci_target (percent), max_trials (default 3 x trials), adaptive_criterion and adaptive_budget_s (seconds)."""
    target, most = v.get("ci_target"), v.get("max_trials")
    criterion = v.get("adaptive_criterion") or "mean"
    budget = v.get("adaptive_budget_s")
    if criterion not in ADAPTIVE_CRITERIA:
        raise ParameterError("adaptive_criterion", f"{criterion!r}; valid: {', '.join(ADAPTIVE_CRITERIA)}")
    if target is None:
        for name, value in (("max_trials", most), ("adaptive_budget_s", budget)):
            if value is not None:
                raise ParameterError(name, "applies only with ci_target (adaptive repetition)")
        if criterion != "mean":
            raise ParameterError("adaptive_criterion", "applies only with ci_target (adaptive repetition)")
        return {"ci_target": None, "max_trials": None, "adaptive_criterion": criterion, "adaptive_budget_s": None}
    ci_target = positive_float(target, "ci_target")
    if ci_target >= 100:
        raise ParameterError("ci_target", f"{target!r}: a half-width of 100% of the mean or more is no target")
    max_trials = 3 * trials if most is None else positive_int(most, "max_trials")
    if max_trials < trials:
        raise ParameterError("max_trials", f"{max_trials} is below trials ({trials})")
    return {
        "ci_target": ci_target,
        "max_trials": max_trials,
        "adaptive_criterion": criterion,
        "adaptive_budget_s": None if budget is None else positive_float(budget, "adaptive_budget_s"),
    }


# Trial ids number rounds with repetition_width(trials) digits, at least 2: a point stays below round 100.
MAX_SELECTION_ROUNDS = 99


def _selection_values(v: Mapping[str, Any], trials: int, open_loop: bool) -> dict[str, Any]:
    """selection_delta (a fraction, 0 < delta < 1), selection_max_rounds (default 3 x trials) and
    selection_budget_s (seconds); the last two only with the first, and none with an offered load."""
    delta, most, budget = v.get("selection_delta"), v.get("selection_max_rounds"), v.get("selection_budget_s")
    if delta is None:
        for name, value in (("selection_max_rounds", most), ("selection_budget_s", budget)):
            if value is not None:
                raise ParameterError(name, "applies only with selection_delta (the selection of the best)")
        return {"selection_delta": None, "selection_max_rounds": None, "selection_budget_s": None}
    if open_loop:
        raise ParameterError("selection_delta", "selects by throughput, which an offered load fixes; not with rates")
    fraction = positive_float(delta, "selection_delta")
    if fraction >= 1:
        raise ParameterError("selection_delta", f"{delta!r}: a fraction of the best below 1 (0.1: within 10 %)")
    if trials < 2:
        raise ParameterError("trials", f"{trials}: the selection's first look needs at least 2 rounds")
    rounds = 3 * trials if most is None else positive_int(most, "selection_max_rounds")
    if not trials <= rounds <= MAX_SELECTION_ROUNDS:
        raise ParameterError("selection_max_rounds", f"{rounds}: between trials ({trials}) and {MAX_SELECTION_ROUNDS}")
    return {
        "selection_delta": fraction,
        "selection_max_rounds": rounds,
        "selection_budget_s": None if budget is None else positive_float(budget, "selection_budget_s"),
    }


def _interference_values(v: Mapping[str, Any]) -> dict[str, Any]:
    """interference_share, a share of a CPU set's ticks (0 < share < 1), and max_reruns (0: none)."""
    raw_share = v.get("interference_share")
    share = DEFAULT_INTERFERENCE_SHARE if raw_share is None else positive_float(raw_share, "interference_share")
    if share >= 1:
        raise ParameterError(
            "interference_share",
            f"{raw_share!r}: a share of a CPU set's ticks below 1 (0.1: other work took a tenth of them)",
        )
    raw_reruns = v.get("max_reruns")
    return {
        "interference_share": share,
        "max_reruns": DEFAULT_MAX_RERUNS if raw_reruns is None else non_negative_int(raw_reruns, "max_reruns"),
    }


def _check_open_file_limit(
    connection_counts: tuple[int, ...], servers: tuple[ServerEntry, ...], parameter: str = "connection_counts"
) -> None:
    """Every trial needs connections + FD_HEADROOM descriptors in the server and in wrk; the
    runner raises the soft limit as far as that, but not beyond the hard limit."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        return
    most = hard - FD_HEADROOM
    sources = [(parameter, connection_counts)] + [
        (f"servers[{i}].connections", entry.connections or ()) for i, entry in enumerate(servers)
    ]
    for parameter, counts in sources:
        too_many = [c for c in counts if c > most]
        if too_many:
            raise ParameterError(
                parameter,
                f"{max(too_many)} connections need {max(too_many) + FD_HEADROOM} open files (in the server and in "
                f"wrk), but the open-file hard limit is {hard}: at most {most} connections (raise it with ulimit -Hn)",
            )


def _check_idle_open_files(
    families: tuple[WorkloadFamily, ...], connection_counts: tuple[int, ...], servers: tuple[ServerEntry, ...]
) -> None:
    """The server holds a family's idle connections beside its active ones: the most of both, plus FD_HEADROOM,
    must fit under the hard limit (idle_holder, which holds them, needs fewer)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        return
    for i, family in enumerate(families):
        idle = max(family.idle_connections)
        if not idle:
            continue
        entries = family.servers if family.servers is not None else servers
        active = max(
            [*(family.connection_counts or connection_counts), *(c for e in entries for c in e.connections or ())],
            default=0,
        )
        if idle + active + FD_HEADROOM > hard:
            raise ParameterError(
                f"workloads[{i}].idle_connections",
                f"{idle} idle connections beside {active} active ones need {idle + active + FD_HEADROOM} open files "
                f"in the server, but the open-file hard limit is {hard}: at most {hard - FD_HEADROOM - active} idle "
                "connections (raise it with ulimit -Hn)",
            )


def parameters_from_dict(stored: Mapping[str, Any]) -> Parameters:
    """Rebuild Parameters from campaign.json's "parameters" (no host checks: it may come from elsewhere)."""
    return validate(stored, check_host=False)


def differing_parameters(stored: Mapping[str, Any], current: Parameters) -> list[str]:
    """Names of identity parameters whose values differ, each with both values."""
    now = current.identity()
    differences = []
    for name in sorted(set(now) | (set(stored) - set(NOT_IDENTITY))):
        if name == "seed" and current.seed is None:
            continue  # no explicit seed: the campaign's recorded one is used
        was = stored.get(name, LATER_PARAMETER_DEFAULTS.get(name))
        if was != now.get(name):
            differences.append(f"{name} (campaign has {was!r}, now {now.get(name)!r})")
    return differences
