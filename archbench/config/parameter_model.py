"""The shapes of campaign parameters as data: a profile file (with a study's `[catalogue]` table) and
campaign.json's "parameters".

These pydantic models check structure (which keys, which JSON types) and generate the JSON Schemas in
docs/schemas/. What a value means and whether it fits the machine and the other values (a known
architecture, CPU sets that do not overlap, c >= load threads, ...) is `archbench.config.params.validate`,
which stays the one place that turns values into `Parameters`; the models never coerce, so a value they
accept reaches `validate` exactly as written.

Server entries are open in the registry's sense only: their option keys are the options of the
architectures in `archbench.config.servers` (`OPTION_NAMES`, kept equal to `all_option_names()` by
tests/test_records.py), so the models forbid any other key.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

# Parameters added after campaigns were first recorded, with the value a campaign.json without them
# meant, so that such a campaign still resumes (`archbench.config.params.differing_parameters`).
LATER_PARAMETER_DEFAULTS: dict[str, Any] = {
    "pipeline_depths": [1],
    "proto": "http",
    "message_size": 64,
    "sources": 0,
    "connect_rate": 0,
    "max_conns_cap": None,
    "max_conns_duration_s": 60,
    "rate_fractions": [],
    "offered_rates": [],
    "saturation_rates": {},
    "rate_reference": None,
    "saturation_source": None,
    "arrival": "fixed",
    "ci_target": None,
    "max_trials": None,
    "adaptive_criterion": "mean",
    "adaptive_budget_s": None,
    "httperf_calls": 1,
    "httperf_rate": 0,
    "httperf_hog": True,
    "baseline_s": 0,
    "placement": "loopback",
    "link": None,
    "hosts": None,
    "load_threads_auto": False,
    "cpu_topology": None,
    "workloads": [],
    "warmup_s": 0,
    # A campaign.json without them ran its trials unjudged; resumed, it judges the rest with the defaults.
    "interference_share": 0.10,
    "max_reruns": 2,
    # A campaign.json without them ran its planned rounds only.
    "selection_delta": None,
    "selection_max_rounds": None,
    "selection_budget_s": None,
}

# Every option of every architecture, as a trial record's config carries them.
OPTION_NAMES = ("max_threads", "dispatch", "handoff", "trigger")

PositiveInts = list[int]
# A thread list in a profile: counts, or "cpus", the server's CPU count (archbench.config.topology.with_cpu_count).
ThreadCounts = list[int | Literal["cpus"]]
# "auto": a thread sweep that scales with the server's CPUs (archbench.config.topology.thread_sweep);
# "auto:N" reaches at least N threads.
AutoSweep = Annotated[str, StringConstraints(pattern=r"^auto(:[1-9][0-9]*)?$")]
Auto = Literal["auto"]
# Which of the five write-ups an entry reproduces (docs/sources.md): "000" to "004".
SourceNumber = Annotated[str, StringConstraints(pattern=r"^[0-9]{3}$")]


class _Closed(BaseModel):
    """A closed format: unknown keys are errors, and values must already have their JSON type."""

    model_config = ConfigDict(extra="forbid", strict=True)


class StoredServerEntry(_Closed):
    """A server entry as campaign.json stores it (`ServerEntry.to_dict`): every value a list."""

    architecture: str
    max_threads: list[int] | None = None
    dispatch: list[str] | None = None
    handoff: list[str] | None = None
    trigger: list[str] | None = None
    threads: PositiveInts | None = Field(None, description="Own thread sweep; replaces thread_counts for this entry")
    connections: PositiveInts | None = Field(None, description="Own connection sweep; replaces connection_counts")
    pipeline: PositiveInts | None = Field(None, description="Own pipeline-depth sweep; replaces pipeline_depths")
    source: SourceNumber | None = Field(None, description="the write-up it reproduces (docs/sources.md)")
    response: str | None = Field(None, description="its own --response; missing: the campaign's")
    load_generator: str | None = Field(None, description="its own closed-loop load generator; missing: the campaign's")


class StoredCpuTopology(_Closed):
    """What campaign.json records of the CPU topology (`archbench.config.topology.TopologySummary`)."""

    source: str = Field(description='where it was read: "/sys", or a fake tree given with --topology-root')
    usable_cpus: str = Field(description="CPUs this process could use (affinity and cgroup cpuset), taskset form")
    cpuset: str | None = Field(description="the cgroup cpuset that restricted the usable CPUs, if any")
    numa_nodes: int
    server_cores: int = Field(description="physical cores the server's CPUs belong to")
    server_numa_node: int | None = Field(description="the NUMA node of every server CPU; null: several")
    load_cores: int = Field(description="physical cores the load generator's CPUs belong to")


class StoredWorkloadFamily(_Closed):
    """One workload family as campaign.json stores it (`WorkloadFamily.to_dict`): every axis a list, the
    replacements of the campaign's grid only when the family gives them."""

    name: str = Field(description="the family: a label for the report's grouping, not part of any config id")
    work_us: list[int] = Field(description="microseconds of CPU per request (--work-us), 0 = none")
    block_us: list[int] = Field(description="microseconds of blocking wait per request (--block-us), 0 = none")
    block_dist: list[Literal["fixed", "exp"]] = Field(description="--block-dist of the waits")
    idle_connections: list[int] = Field(description="keep-alive connections idle_holder holds idle beside the load")
    connection_mode: list[Literal["keep-alive", "close"]] = Field(
        description="close: one request per connection (wrk -H 'Connection: close')"
    )
    response: list[str] | None = Field(None, description="--response values; missing: the entries' or campaign's")
    thread_counts: list[int] | None = Field(None, description="replaces thread_counts and the entries' own")
    connection_counts: list[int] | None = Field(None, description="replaces connection_counts and the entries' own")
    servers: list[StoredServerEntry] | None = Field(None, description="its own entries; missing: the campaign's")


class StoredParameters(_Closed):
    """campaign.json's "parameters": `Parameters.to_dict()`. Closed (extra="forbid").

    Fields with a default were added after the first campaigns; a campaign.json without one means
    that default (LATER_PARAMETER_DEFAULTS).
    """

    profile: str
    campaign: str
    servers: list[StoredServerEntry]
    thread_counts: list[int]
    connection_counts: list[int]
    load_threads: list[int]
    pipeline_depths: list[int] = Field(default_factory=lambda: [1])
    duration_s: int
    trials: int
    warmup: bool
    warmup_s: int = Field(
        0,
        description="seconds of the same load against the measured server process before its measured window "
        "(0: none; campaigns before it had none)",
    )
    server_cpus: str = Field(description='taskset -c form, e.g. "0" or "0-2,5"')
    load_cpus: str
    seed: int | None = Field(description="null only before the campaign is created; campaign.json has it")
    wrk_timeout_s: int
    ready_timeout_s: float
    stop_grace_s: float
    response: str
    load_generator: str
    raw_root: str
    build_dir: str
    proto: Literal["http", "echo"] = "http"
    message_size: int = 64
    sources: int = 0
    connect_rate: int = 0
    max_conns_cap: int | None = None
    max_conns_duration_s: int = 60
    rate_fractions: list[float] = Field(default_factory=list)
    offered_rates: list[int] = Field(default_factory=list)
    saturation_rates: dict[str, float] = Field(default_factory=dict, description="saturation key -> req/s")
    rate_reference: str | None = None
    saturation_source: str | None = None
    arrival: Literal["fixed", "poisson"] = Field(
        "fixed", description="open_loop's request schedule: evenly spaced, or a Poisson process of the offered rate"
    )
    ci_target: float | None = Field(None, description="95% CI half-width target, percent of the mean")
    max_trials: int | None = None
    adaptive_criterion: Literal["mean", "paired", "paired_median"] = Field(
        "mean",
        description="what ci_target bounds: each configuration's mean throughput (mean), every paired ratio to the "
        "reference in whole rounds (paired), or their median (paired_median); missing: mean",
    )
    adaptive_budget_s: float | None = Field(None, description="wall-time budget of the adaptive phase, seconds")
    selection_delta: float | None = Field(
        None,
        description="indifference zone of the selection of the best per workload point, a fraction (0.10: within 10 "
        "% of the best); set, rounds are added where a point is still open (archbench.measure.selection); missing: "
        "none",
    )
    selection_max_rounds: int | None = Field(None, description="the most rounds a workload point may reach")
    selection_budget_s: float | None = Field(None, description="wall-time budget of the selection's added rounds, s")
    httperf_calls: int = Field(1, description="httperf --num-calls (requests per connection)")
    httperf_rate: int = Field(0, description="httperf --rate (connections per second); 0: no --rate, one after another")
    httperf_hog: bool = Field(True, description="httperf --hog")
    baseline_s: int = Field(
        0, description="seconds of the iperf3 bandwidth baseline at creation (0: none; campaigns before it had none)"
    )
    placement: Literal["loopback", "netns", "ssh"] = Field(
        "loopback",
        description="where server and load generator ran: loopback, one network namespace each, or other hosts "
        "reached by ssh",
    )
    link: str | None = Field(None, description="netns: the veth link's tc model, '<rate>' or '<rate> <delay>'")
    hosts: str | None = Field(None, description="ssh: the hosts inventory file (TOML); null otherwise")
    load_threads_auto: bool = Field(
        False,
        description='load_threads was "auto": one wrk thread per load CPU (load_threads), fewer where a '
        "configuration's connections need it (c >= t, c a multiple of t)",
    )
    cpu_topology: StoredCpuTopology | None = Field(
        None, description="the CPU topology server_cpus and load_cpus were resolved on (null: not recorded)"
    )
    workloads: list[StoredWorkloadFamily] = Field(
        default_factory=list,
        description="workload families, each expanded on its own (archbench.config.workloads); missing or empty: "
        "none, the plain grid",
    )
    interference_share: float = Field(
        0.10,
        description="a trial is disturbed when other work, steal or uncounted ticks took this share of its server's "
        "or load generator's CPU ticks during the load (archbench.measure.interference); missing: 0.10",
    )
    max_reruns: int = Field(
        2, description="re-runs of a disturbed trial in its round (archbench.measure.reruns); missing: 2"
    )


class LegacyParameters(_Closed):
    """The first campaigns' "parameters" (before profiles and server entries; tests/fixtures only).
    Closed (extra="forbid")."""

    duration_s: int
    repetitions: int
    load_threads: int
    server_cpus: str
    load_cpus: str


class ProfileServerEntry(_Closed):
    """A server entry in a profile: an option or sweep is one value or a list of values to run."""

    architecture: str
    max_threads: int | list[int] | None = None
    dispatch: str | list[str] | None = None
    handoff: str | list[str] | None = None
    trigger: str | list[str] | None = None
    threads: ThreadCounts | AutoSweep | None = None
    connections: PositiveInts | None = None
    pipeline: PositiveInts | None = None
    source: SourceNumber | None = None
    response: str | None = None
    load_generator: str | None = None


class ProfileWorkloadFamily(_Closed):
    """A workload family in a profile (`[[workloads]]`): each axis one value or a list of values to run."""

    name: str
    work_us: int | list[int] | None = None
    block_us: int | list[int] | None = None
    block_dist: Literal["fixed", "exp"] | list[Literal["fixed", "exp"]] | None = None
    idle_connections: int | list[int] | None = None
    connection_mode: Literal["keep-alive", "close"] | list[Literal["keep-alive", "close"]] | None = None
    response: str | list[str] | None = None
    thread_counts: ThreadCounts | AutoSweep | None = None
    connection_counts: PositiveInts | None = None
    servers: list[str | ProfileServerEntry] | None = None


class MeasuredCampaign(_Closed):
    """One campaign this machine may measure for a study, and the command that makes it."""

    campaign: str = Field(description="its name; {host} is the short host name (hostname -s)")
    command: str | None = Field(None, description="the command that makes it; missing: make study NAME=<profile>")


class ProfileCatalogue(_Closed):
    """A profile's `[catalogue]` table: the study of the profile's name measures its campaigns with this profile,
    and this is its entry in the campaign catalogue (`archbench.config.catalogue.CampaignRule`, whose fields these
    are). Not a parameter: loading a profile's values leaves it out."""

    order: int | None = Field(
        None, description="its place in the catalogue (main is first; missing: after every entry with one)"
    )
    measured: list[MeasuredCampaign] | None = Field(
        None,
        description="this machine's campaigns, the most complete first; missing: <profile>-{host}, made by "
        "make study NAME=<profile>",
    )
    reference: str | None = Field(None, description="the campaign shipped in git, read when this machine has none")
    measure_with: str | None = Field(
        None, description="the command a reader is told measures it; missing: the first measured campaign's"
    )
    read_with: list[str] = Field(
        default_factory=lambda: [""],
        description='suffixes of the campaigns read beside the chosen one when they exist ("": the chosen one)',
    )
    expected_runs: int = Field(1, description="how many campaigns one measurement writes")
    also_writes: list[str] = Field(
        default_factory=list, description="suffixes of the campaigns a measurement writes that the report does not read"
    )


class ProfileValues(_Closed):
    """A profile file (archbench/config/profiles.d/<name>.toml): default values of any parameter but
    `profile` itself, and for a study's profile its entry in the campaign catalogue (`catalogue`). Closed
    (extra="forbid"): a misspelt parameter is an error, not silently ignored. A server entry is an architecture name
    or a mapping."""

    servers: list[str | ProfileServerEntry] | None = None
    campaign: str | None = None
    thread_counts: ThreadCounts | AutoSweep | None = None
    connection_counts: PositiveInts | None = None
    load_threads: PositiveInts | Auto | None = None
    pipeline_depths: PositiveInts | None = None
    duration_s: int | None = None
    trials: int | None = None
    warmup: bool | None = None
    warmup_s: int | None = None
    server_cpus: str | None = Field(None, description='taskset CPU list, or "auto" (the topology\'s split)')
    load_cpus: str | None = None
    seed: int | None = None
    wrk_timeout_s: int | None = None
    ready_timeout_s: float | None = None
    stop_grace_s: float | None = None
    response: str | None = None
    load_generator: str | None = None
    raw_root: str | None = None
    build_dir: str | None = None
    proto: Literal["http", "echo"] | None = None
    message_size: int | None = None
    sources: int | None = None
    connect_rate: int | None = None
    max_conns_cap: int | None = None
    max_conns_duration_s: int | None = None
    rate_fractions: list[float] | None = None
    offered_rates: list[int] | None = None
    saturation_rates: dict[str, float] | None = None
    rate_reference: str | None = None
    saturation_source: str | None = None
    arrival: Literal["fixed", "poisson"] | None = None
    ci_target: float | None = None
    max_trials: int | None = None
    adaptive_criterion: Literal["mean", "paired", "paired_median"] | None = None
    adaptive_budget_s: float | None = None
    httperf_calls: int | None = None
    httperf_rate: int | None = None
    httperf_hog: bool | None = None
    baseline_s: int | None = None
    workloads: list[ProfileWorkloadFamily] | None = None
    interference_share: float | None = None
    max_reruns: int | None = None
    selection_delta: float | None = None
    selection_max_rounds: int | None = None
    selection_budget_s: float | None = None
    catalogue: ProfileCatalogue | None = Field(
        None, description="the study's entry in the campaign catalogue (not a parameter)"
    )
